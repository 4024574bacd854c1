"""Meaning: the nearest memories by vector, fused with the full-text list, with spreading
within sessions and session aggregation (fusion.py)."""

from __future__ import annotations

from strata_daemon.config.tuning import Recall
from strata_daemon.embedding.cache import VectorCache
from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.recall.candidates import fallback, vector_list, with_normalised
from strata_daemon.recall.fusion import Candidate, fuse, session_boost, spread
from strata_daemon.recall.request import Lexical, Request, Sources, State
from strata_daemon.store import recall as store, vectors
from strata_daemon.store.db import Database
from strata_daemon.store.fulltext import Scope


async def nearest(db: Database, scope: Scope, vector, limit: int, spec: vectors.Spec, cache: VectorCache | None,
                  known: dict[int, dict], exact_below: int) -> tuple[list[tuple[int, float]], dict[int, dict]]:
    """The namespace's nearest vectors, (episode id, cosine distance), and the rows of those in
    the recall's scope that `known` lacks, in one hop, after checking that the index holds
    vectors of `spec`. The in-memory copy is searched on the database thread (about 3 ms at
    100,000 memories): searching it in a worker thread beside the full-text hop was measured
    slower on two cores (`bench recall` at 100k: p50 21.0 against 19.8 ms, p95 31 against 25)."""
    def read(conn):
        vectors.check(conn, spec)
        if cache is None:
            near = vectors.nearest(conn, scope.agent, vector, limit, exact_below=exact_below)
        else:
            cache.sync(conn)
            near = cache.search(vector, limit)
        return near, store.rows_in_scope(conn, scope, {i for i, _ in near} - known.keys())

    return await db.run(read)


def balanced_candidates(lexical: Lexical, near: list[tuple[int, float]], rows: dict[int, dict],
                        tuning: Recall) -> list[Candidate]:
    """Full-text and vector candidates as one list: spreading within sessions (full text only:
    spreading vector similarity measured worse), fusion, session aggregation. `rows` holds
    every memory in scope that the vector search or the spreading reached."""
    fts = with_normalised(lexical.candidates, "fts")
    if lexical.around:
        fts = spread(fts, lexical.around, lexical.rows, to_next=tuning.spread_to_next,
                     to_previous=tuning.spread_to_previous, further=tuning.spread_further)
    fused = fuse({"fts": fts, "vector": vector_list({**lexical.rows, **rows}, near, tuning.min_similarity)},
                 {"fts": tuning.fts_weight, "vector": tuning.vector_weight}, method=tuning.fusion, k=tuning.rrf_k)
    return session_boost(fused, tuning.session_weight)


async def meaning(req: Request, src: Sources, st: State) -> dict | None:
    """The nearest memories by meaning, fused with the full-text list (spreading within sessions
    and session aggregation included); a model that fails leaves full text alone, and says why."""
    if src.embedding is None:
        return None
    emb, future = src.embedding
    try:
        near, rows = await nearest(src.db, req.scope, (await future)[0], req.tuning.candidates, src.spec_of(emb),
                                   src.vectors, st.lexical.rows, req.tuning.vector_exact_below)
    except EmbeddingUnavailable as e:
        st.warnings.append(fallback(e))
        return {"skipped": "the model failed"}
    st.candidates, st.used = balanced_candidates(st.lexical, near, rows, req.tuning), "balanced"
    return {"nearest": len(near)}
