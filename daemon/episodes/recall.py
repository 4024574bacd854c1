"""Recall: candidates from the retrievers, composite scoring, filters, explanations."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from ..scoring import EpisodeFeatures, ScoringParams, learning_phase, score_episode
from ..embedding import index as vectors
from ..embedding.cache import VectorCache
from ..storage.db import Database
from .fts_plan import Scope, search

_CANDIDATE_COLUMNS = ("e.id, e.kind, e.content, e.event_at, e.last_access_at, e.access_count, e.importance, "
                      "e.success_count, e.failure_count, e.factual, e.context, e.state, e.source, e.session")


@dataclass
class Candidate:
    row: dict
    retrievers: dict = field(default_factory=dict)  # retriever name -> {"rank": n, "score": s}
    relevance: float = 0.0


async def fts_candidates(db: Database, scope: Scope, query: str, limit: int, budget: int,
                         params: ScoringParams) -> tuple[list[Candidate], dict, str]:
    """Candidates, the FTS plan and the namespace's learning phase, read in one hop."""
    def read(conn):
        found = search(conn, query, scope, _CANDIDATE_COLUMNS, limit=limit, budget=budget)
        counts = conn.execute("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?",
                              (scope.agent,)).fetchone()
        return found, counts

    (rows, plan), counts = await db.run(read)
    phase = learning_phase(*(counts or (0, 0)), params)
    best = rows[0][1] if rows else 0.0
    out = []
    for rank, (r, score) in enumerate(rows, 1):
        c = Candidate(r)
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
        c = Candidate(row)
        c.retrievers["vector"] = {"rank": rank, "cosine": round(1.0 - distance, 4)}
        out.append(c)
    return out


def fuse(ranked: dict[str, list[Candidate]], weights: dict[str, float], k: int) -> list[Candidate]:
    """Reciprocal rank fusion: each retriever adds weight / (k + rank); relevance is the fused
    score relative to the best. Pure: each candidate's retriever ranks are already set."""
    merged: dict[int, Candidate] = {}
    for name, candidates in ranked.items():
        for c in candidates:
            m = merged.setdefault(c.row["id"], Candidate(c.row))
            m.retrievers.update(c.retrievers)
            m.relevance += weights.get(name, 1.0) / (k + c.retrievers[name]["rank"])
    if not merged:
        return []
    best = max(m.relevance for m in merged.values())
    for m in merged.values():
        m.retrievers["rrf"] = {"score": round(m.relevance, 6)}
        m.relevance /= best
    return sorted(merged.values(), key=lambda m: (-m.relevance, -m.row["id"]))
