"""Deep recall's cross-encoder: it reads the question with each of the best candidates and takes
a share of their relevance (deep.reranked)."""

from __future__ import annotations

import asyncio

from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.recall.deep import reranked
from strata_daemon.recall.request import Request, Sources, State


async def cross_encoder(req: Request, src: Sources, st: State) -> dict | None:
    """Deep recall: the cross-encoder reads the question with each of the `rerank_depth` best
    candidates (with its source, as memories are embedded; fewer when their pairs would hold more
    than `rerank_tokens`) and takes `rerank` of their relevance (deep.reranked). Those below keep
    the rest of theirs. Without the model, deep recall goes on without it, and says why."""
    if req.mode != "deep" or req.tuning.rerank_weight <= 0 or not st.candidates or src.reranker is None:
        return None
    try:
        model = await src.reranker.get()
    except EmbeddingUnavailable as e:
        st.warnings.append(f"deep recall ranked without its cross-encoder: {e.message}"
                           + (f" ({e.hint})" if e.hint else ""))
        return {"skipped": "no cross-encoder"}
    st.candidates.sort(key=lambda c: (-c.relevance, -c.row["id"]))
    texts = [f"{c.row['source']}: {c.row['content']}" if c.row["source"] else c.row["content"]
             for c in st.candidates[:req.tuning.rerank_depth]]
    scores = await asyncio.to_thread(model.scores, req.query, texts, req.tuning.rerank_tokens)
    after = reranked([c.relevance for c in st.candidates], scores, req.tuning.rerank_weight)
    for c, relevance in zip(st.candidates, after):
        c.relevance = relevance
    for rank, i in enumerate(sorted(range(len(scores)), key=lambda i: -scores[i]), 1):
        st.candidates[i].retrievers["cross_encoder"] = {"score": round(scores[i], 3), "rank": rank,
                                                        "of": len(scores)}
    return {"read": len(scores), "model": model.name}
