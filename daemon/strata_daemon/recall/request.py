"""A recall as the pipeline's stages see it: what is asked (Request), what they read
besides the database (Sources), and what they hand each other (State)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable

from strata_daemon.config.tuning import Recall
from strata_daemon.embedding.cache import VectorCache
from strata_daemon.recall.fusion import Candidate
from strata_daemon.scoring import ScoringParams
from strata_daemon.store.db import Database
from strata_daemon.store.fulltext import Scope


@dataclass
class Lexical:
    """What the full-text read found: candidates in rank order, the plan, the namespace's learning
    phase, and (when spreading) each hit's session neighbours with their rows."""
    candidates: list[Candidate]
    plan: dict
    phase: str
    around: dict[int, tuple[int | None, int | None]]
    rows: dict[int, dict]
    facts: list[dict]  # current facts the query names, longest key first
    fact_rows: dict[int, dict]  # the memories their current values came from


@dataclass
class Request:
    """A recall, checked: what to look for and with which settings."""
    query: str
    mode: str
    k: int
    scope: Scope
    query_context: dict[str, str]
    now: float
    params: ScoringParams
    tuning: Recall  # the tuned constants of recall (config/tuning.py), an arena arm's preset laid over
    facts_in_recall: bool
    overlap_embedding: bool
    as_of: bool = False
    hop_joins: bool = True  # the second hop may bring in memories the question's words did not find


@dataclass
class Sources:
    """What the stages read besides the database: the query's embedding (started by the caller
    on its own thread, or None for full text only), the in-memory vectors and the spiderweb."""
    db: Database
    embedding: tuple[Any, asyncio.Future] | None  # (embedder, future vector)
    spec_of: Callable[[Any], Any]
    vectors: VectorCache | None
    web: Any
    reranker: Any = None  # embedding.rerank.Loaded, for deep recall


@dataclass
class State:
    candidates: list[Candidate] = field(default_factory=list)
    lexical: Lexical | None = None
    used: str = "fast"
    first: dict[int, int] = field(default_factory=dict)
    superseded: dict = field(default_factory=dict)
    alike: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    stages: list[dict] = field(default_factory=list)
