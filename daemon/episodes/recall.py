"""Recall: candidates from the retrievers, composite scoring, filters, explanations."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from ..scoring import EpisodeFeatures, ScoringParams, learning_phase, score_episode
from ..embedding import index as vectors
from ..embedding.cache import VectorCache
from ..storage.db import Database
from .fts_plan import Scope, search
from .fusion import Candidate, fuse, normalised, session_boost, spread

_CANDIDATE_COLUMNS = ("e.id, e.kind, e.content, e.event_at, e.last_access_at, e.access_count, e.importance, "
                      "e.success_count, e.failure_count, e.factual, e.context, e.state, e.source, e.session")


@dataclass(frozen=True)
class Tuning:
    """The recall.* settings that shape candidates and their fusion."""
    candidates: int
    fts_budget: int
    source_weight: float
    fusion: str
    rrf_k: int
    fts_weight: float
    vector_weight: float
    spread_to_next: float
    spread_to_previous: float
    session_weight: float

    @classmethod
    def from_config(cls, cfg) -> "Tuning":
        return cls(int(cfg["recall.candidates"]), int(cfg["recall.fts_budget"]), float(cfg["recall.source_weight"]),
                   cfg["recall.fusion"], int(cfg["recall.rrf_k"]), float(cfg["recall.fts_weight"]),
                   float(cfg["recall.vector_weight"]), float(cfg["recall.spread_to_next"]),
                   float(cfg["recall.spread_to_previous"]), float(cfg["recall.session_weight"]))


async def fts_candidates(db: Database, scope: Scope, query: str, tuning: Tuning,
                         params: ScoringParams) -> tuple[list[Candidate], dict, str]:
    """Candidates, the FTS plan and the namespace's learning phase, read in one hop."""
    def read(conn):
        found = search(conn, query, scope, _CANDIDATE_COLUMNS, limit=tuning.candidates, budget=tuning.fts_budget,
                       source_weight=tuning.source_weight)
        counts = conn.execute("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?",
                              (scope.agent,)).fetchone()
        return found, counts

    (rows, plan), counts = await db.run(read)
    phase = learning_phase(*(counts or (0, 0)), params)
    best = rows[0][1] if rows else 0.0
    out = []
    for rank, (r, score) in enumerate(rows, 1):
        c = Candidate(r, raw={"fts": score})
        c.retrievers["fts"] = {"rank": rank, plan["scorer"]: round(score, 4)}
        # In a tiny corpus every word is in every memory and BM25 is ~0: treat hits as equally relevant.
        c.relevance = score / best if best > 1e-6 else 1.0
        out.append(c)
    return out, plan, phase


async def namespace_phase(db: Database, agent: str, params: ScoringParams) -> str:
    row = await db.fetchone("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?", (agent,))
    episodes, feedback = (row[0], row[1]) if row else (0, 0)
    return learning_phase(episodes, feedback, params)


def rank_candidates(candidates: list[Candidate], *, query_context: dict, now: float, params: ScoringParams,
                    phase: str, k: int) -> tuple[list[dict], int]:
    """Score, filter and order. Returns (hits, how many the thresholds filtered out)."""
    scored, filtered = [], 0
    for c in candidates:
        r = c.row
        feats = EpisodeFeatures(
            event_at=r["event_at"], last_access_at=r["last_access_at"], access_count=r["access_count"],
            importance=r["importance"], successes=r["success_count"], failures=r["failure_count"],
            factual=bool(r["factual"]), context=json.loads(r["context"]) if query_context else {})
        b = score_episode(feats, c.relevance, query_context, now, params, phase)
        if not b.eligible:
            filtered += 1
            continue
        scored.append((b.composite, r["id"], c, b, feats))
    scored.sort(key=lambda t: (-t[0], -t[1]))
    hits = []
    for rank, (score, _, c, b, feats) in enumerate(scored[:k], 1):
        r = c.row
        hits.append({
            "rank": rank, "id": r["id"], "score": round(score, 6), "kind": r["kind"], "content": r["content"],
            "event_at": r["event_at"], "source": r["source"], "session": r["session"],
            "factual": feats.factual, "context": feats.context or json.loads(r["context"]),
            "explain": {"signals": {k_: round(v, 6) for k_, v in b.as_dict().items()
                                    if k_ in ("relevance", "recency", "strength", "priority", "wilson", "context")},
                        "retrievers": c.retrievers,
                        "features": {"access_count": feats.access_count, "successes": feats.successes,
                                     "failures": feats.failures, "importance": feats.importance}},
        })
    return hits, filtered


async def nearest(db: Database, agent: str, vector, limit: int, cache: VectorCache | None) -> list[tuple[int, float]]:
    """The namespace's nearest vectors: (episode id, cosine distance). With a cache, only the
    catch-up read uses the database thread; the search itself overlaps the full-text search."""
    if cache is None:
        return await db.run(vectors.nearest, agent, vector, limit)
    await db.run(cache.sync)
    return await asyncio.to_thread(cache.search, vector, limit)


async def vector_candidates(db: Database, scope: Scope, near: list[tuple[int, float]]) -> list[Candidate]:
    """The nearest memories filtered to the recall's scope, in vector rank order."""
    def read(conn):
        if not near:
            return []
        where, params = scope.where(by_id=True)
        rows = {r["id"]: dict(r) for r in conn.execute(
            f"SELECT {_CANDIDATE_COLUMNS} FROM episodes e WHERE e.id IN ({', '.join('?' * len(near))}) AND {where}",
            (*[i for i, _ in near], *params))}
        return [(rows[i], d) for i, d in near if i in rows]

    out = []
    for rank, (row, distance) in enumerate(await db.run(read), 1):
        c = Candidate(row, raw={"vector": 1.0 - distance})
        c.retrievers["vector"] = {"rank": rank, "cosine": round(1.0 - distance, 4)}
        out.append(c)
    return with_normalised(out, "vector")


def with_normalised(candidates: list[Candidate], name: str) -> list[Candidate]:
    """Relevance on a 0..1 scale within the list (min-max of the raw scores), as fusion by scores needs."""
    scaled = normalised(candidates, name)
    for c in candidates:
        c.relevance = scaled[c.row["id"]]
    return candidates


async def session_neighbours(db: Database, scope: Scope, ids: list[int]) -> tuple[dict, dict]:
    """For memories with a session: (id -> (previous id, next id) in the session by id order,
    the neighbours' rows within the recall's scope), in one hop."""
    def read(conn):
        around = {}
        for i in ids:
            row = conn.execute(
                "SELECT (SELECT p.id FROM episodes p WHERE p.agent = e.agent AND p.session = e.session "
                "AND p.id < e.id ORDER BY p.id DESC LIMIT 1), "
                "(SELECT n.id FROM episodes n WHERE n.agent = e.agent AND n.session = e.session "
                "AND n.id > e.id ORDER BY n.id LIMIT 1) "
                "FROM episodes e WHERE e.id = ? AND e.agent = ? AND e.session IS NOT NULL", (i, scope.agent)).fetchone()
            if row:
                around[i] = (row[0], row[1])
        wanted = sorted({n for pair in around.values() for n in pair if n is not None} - set(ids))
        if not wanted:
            return around, {}
        where, params = scope.where(by_id=True)
        rows = {r["id"]: dict(r) for r in conn.execute(
            f"SELECT {_CANDIDATE_COLUMNS} FROM episodes e WHERE e.id IN ({', '.join('?' * len(wanted))}) AND {where}",
            (*wanted, *params))}
        return around, rows

    return await db.run(read)


async def balanced_candidates(db: Database, scope: Scope, fts: list[Candidate], near: list[tuple[int, float]],
                              tuning: Tuning) -> list[Candidate]:
    """Full-text and vector candidates as one list: spreading within sessions (full text only:
    spreading vector similarity measured worse), fusion, session aggregation."""
    lexical = with_normalised(fts, "fts")
    if lexical and (tuning.spread_to_next > 0 or tuning.spread_to_previous > 0):
        around, rows = await session_neighbours(db, scope, [c.row["id"] for c in lexical])
        lexical = spread(lexical, around, rows, to_next=tuning.spread_to_next, to_previous=tuning.spread_to_previous)
    fused = fuse({"fts": lexical, "vector": await vector_candidates(db, scope, near)},
                 {"fts": tuning.fts_weight, "vector": tuning.vector_weight}, method=tuning.fusion, k=tuning.rrf_k)
    return session_boost(fused, tuning.session_weight)
