"""Recall for one namespace: the request checked, what was just observed embedded first, the
question embedded beside the full-text search, the pipeline run, and the recall recorded (its
log, the access events, and its best hits fed to the spiderweb's working set)."""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterable, Mapping

from strata_daemon.arena.arms import Arm
from strata_daemon.base import timeutil
from strata_daemon.base.numbers import whole
from strata_daemon.config.load import Config, overlay
from strata_daemon.config.settings import MODES
from strata_daemon.embedding.models import Models
from strata_daemon.episodes.model import Limits, clean_context
from strata_daemon.errors import EmbeddingUnavailable, InvalidInput
from strata_daemon.recall import pipeline
from strata_daemon.recall.candidates import fallback
from strata_daemon.recall.request import Request, Sources
from strata_daemon.scoring import ScoringParams
from strata_daemon.store import episodes as writes, recall as store, vectors
from strata_daemon.store.db import Database
from strata_daemon.store import fulltext
from strata_daemon.store.fts_query import MAX_TERMS, terms
from strata_daemon.store.fulltext import Scope

# Forgetting demotes, it never hides: recall reaches the cold tier (memories consolidation
# archived, and those a merge superseded) as well as the hot one. Only an explicit forget
# (state archived) takes a memory out, unless the recall includes archived memories.
RECALLED = ("active", "superseded")


def _few(phrases: list[list[str]], shown: int = 6) -> str:
    words = [" ".join(p) for p in phrases[:shown]]
    return ", ".join(words) + (", ..." if len(phrases) > shown else "")


class Recall:
    def __init__(self, db: Database, agent: str, *, config: Config, params: ScoringParams, limits: Limits,
                 models: Models, web: Any, read_only: bool):
        self.db, self.agent, self.config, self.limits = db, agent, config, limits
        self.models, self.web, self.read_only = models, web, read_only
        self._tuned: dict[str, tuple[ScoringParams, Any]] = {"": (params, config.tuning.recall)}

    def tuned(self, arm: Arm | None) -> tuple[ScoringParams, Any]:
        """(scoring params, recall's tuned constants) of the configuration, or of an arena arm's
        preset laid over it."""
        key = arm.name if arm is not None and arm.overrides else ""
        if key not in self._tuned:
            cfg = overlay(self.config, dict(arm.overrides))
            self._tuned[key] = (ScoringParams.configured(cfg["scoring.preset"], cfg.tuning.scoring),
                                cfg.tuning.recall)
        return self._tuned[key]

    async def catch_up(self, mode: str, warnings: list[str]) -> None:
        """Recall by meaning finds what was just observed even with no daemon running: a small
        backlog of the namespace is embedded first; a large one is left to the daemon and said."""
        if mode == "fast":
            return
        waiting = await self.db.run(vectors.backlog, self.agent)
        if not waiting:
            return
        if self.read_only or waiting > int(self.config["recall.embed_waiting"]):
            many = "memory waits" if waiting == 1 else "memories wait"
            warnings.append(f"{waiting} {many} for a vector, found by words only until the daemon embeds them "
                            "(`strata run`) or `strata embed` does")
            return
        try:
            await self.models.embed_pending(self.db, agent=self.agent, limit=waiting)
        except EmbeddingUnavailable:
            pass  # the query cannot be embedded either: the fallback to fast says why

    def _checked(self, query: str, mode: str | None, k: int | None) -> tuple[str, int]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("the query is empty", hint="say what to look for")
        try:
            size = len(query.encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidInput("the query is not valid UTF-8 text (it holds a lone surrogate)") from None
        if "\x00" in query:
            raise InvalidInput("the query holds a NUL byte", hint="send text: NUL bytes are not searchable")
        if size > self.limits.max_content_bytes:
            raise InvalidInput(f"the query is {size:,} bytes, longer than store.max_content_bytes "
                               f"({self.limits.max_content_bytes:,})",
                               hint="ask with the words that matter; a long text is searched by its rarest "
                                    f"{MAX_TERMS} words anyway")
        mode = mode or self.config["recall.mode"]
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
        k = whole(self.config["recall.k"] if k is None else k, "k")
        if not 1 <= k <= 1000:
            raise InvalidInput(f"k must be between 1 and 1000, not {k}", hint="ask for 1 to 1000 memories (recall.k is the default)")
        return mode, k

    def _redacted(self, query: str) -> str:
        """The query as it is searched and logged: a credential in it is the placeholder the
        memories holding it were stored with, so asking by a token finds them and logs no token."""
        return query if self.limits.redactor is None else self.limits.redactor.clean(query)

    async def ranked(self, query: str, *, k: int | None, mode: str | None, context: Mapping | None,
                     kinds: Iterable[str], include_archived: bool, now: float, arm: Arm | None = None,
                     hot_only: bool = False, as_of: bool = False, hop: bool | None = None) -> dict:
        """Recall's reading half: candidates, scores and order, without recording anything. With
        `as_of`, each candidate is scored with its use (accesses, feedback) as it stood at `now`.
        `hop` lets the second hop bring in memories the question's words do not find; by default
        every mode but `fast` (words only) does."""
        mode, k = self._checked(query, mode, k)
        query = self._redacted(query)
        kinds = self.limits.known_kinds(kinds)
        query_context = {str(a): str(b) for a, b in clean_context(context).items()}
        warnings: list[str] = []
        states = (*RECALLED, "archived") if include_archived else RECALLED
        params, tuned = self.tuned(arm)
        request = Request(query, mode, k, Scope(self.agent, states, kinds, hot_only), query_context, now,
                          params, tuned, self.config.tuning.facts.in_recall, tuned.overlap_embedding, as_of,
                          mode != "fast" if hop is None else hop)
        embedding, meant = None, query
        if (said := len(terms(query))) > MAX_TERMS:  # a long text: its words that tell it apart stand for it
            kept = await self.db.run(fulltext.telling, self.agent, query)
            meant = " ".join(" ".join(p) for p in kept)
            warnings.append(f"the query holds {said:,} distinct words and recall searches at most "
                            f"{MAX_TERMS}: it searched the rarest that memories hold ({_few(kept)}), by words and "
                            "by meaning")
        if mode != "fast":
            try:
                embedding = await self.models.embed_query(meant)
            except EmbeddingUnavailable as e:
                warnings.append(fallback(e))
        m = self.models
        r = await pipeline.run(request, Sources(self.db, embedding, m.spec_of, m.vectors, self.web, m.reranker))
        r["warnings"][:0] = warnings
        return r

    async def _empty_namespace(self) -> str | None:
        """A warning when the namespace holds no memory at all: a mistyped `--agent` reads one."""
        if (await self.db.run(store.namespace_counts, self.agent))[0]:
            return None
        configured = self.config["agent.namespace"]
        other = f"; this home's namespace is {configured!r} (agent.namespace)" if configured != self.agent else ""
        return f"namespace {self.agent!r} holds no memories yet{other}"

    async def recall(self, query: str, *, k: int | None, mode: str | None, context: Mapping | None,
                     kinds: Iterable[str], include_archived: bool, explain: bool, arm: Arm | None,
                     strategy: dict, hop: bool | None = None,
                     given: Callable[[dict], list[dict]] | None = None) -> dict:
        """Ranked memories, logged as a recall (its id takes feedback): with `arm` (the arena's
        choice) when no mode is given. Without `explain`, hits leave out why they ranked. `given`
        picks from the ranked result the hits its caller hands on (a context block keeps those
        that fit): only they are logged, as what the agent was shown."""
        now = timeutil.now()
        started = time.perf_counter()
        caught_up: list[str] = []
        await self.catch_up(mode or arm.mode, caught_up)
        r = await self.ranked(query, k=k, mode=mode or arm.mode, context=context, kinds=kinds,
                              include_archived=include_archived, now=now, arm=arm, hop=hop)
        hits, query_context = r["hits"], r.pop("query_context")
        r["warnings"][:0] = caught_up
        if not r["candidates"] and (empty := await self._empty_namespace()):
            r["warnings"].append(empty)
        if "warning" in strategy:
            r["warnings"].append(strategy.pop("warning"))

        shown = hits if given is None else given(r)  # before the write: the lock is held for the write alone

        def record(conn):
            rid = writes.record_recall(conn, self.agent, r["query"], r["mode_used"], r["k"],
                                       json.dumps(query_context, sort_keys=True),
                                       [(h["id"], h["rank"], h["score"]) for h in shown], now, strategy["arm"])
            return rid, self.web.feed_in(conn, shown, rid, now)

        recall_id, fed = (None, None) if self.read_only else await self.db.transact(record, upkeep=True)
        if not explain:
            r.pop("stages")
            for hit in hits:
                hit.pop("explain", None)
        return {"recall_id": recall_id, "agent": self.agent, **r, "strategy": strategy, "hits": hits,
                "weights": dict(vars(self.tuned(arm)[0].weights)),
                "working_set": None if fed is None else {"activated": fed["activated"], "evicted": fed["evicted"]},
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 3)}

    async def for_arena(self, query: str, k: int, arm: Arm, context: dict,
                        at: float | None = None) -> tuple[list[dict], float]:
        """The arena's replay of a question: ranked as the arm would, with the memories' use as of
        `at` when given, nothing recorded; (hits, seconds)."""
        started = time.perf_counter()
        r = await self.ranked(query, k=k, mode=arm.mode, context=context, kinds=(), include_archived=False,
                              now=timeutil.now() if at is None else at, arm=arm, as_of=at is not None)
        return r["hits"], time.perf_counter() - started

    async def for_dossier(self, query: str, k: int, mode: str) -> tuple[list[dict], str, list[str]]:
        """A dossier's topic, over the hot tier, nothing recorded; (hits, mode used, warnings)."""
        r = await self.ranked(query, k=k, mode=mode, context=None, kinds=(), include_archived=False,
                              now=timeutil.now(), hot_only=True)
        return r["hits"], r["mode_used"], r["warnings"]
