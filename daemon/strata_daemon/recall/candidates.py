"""What the stages share to weigh candidates: lifting some and keeping relevance within 0..1,
the question's vector and cosines, a vector list normalised, the memories behind facts."""

from __future__ import annotations

from typing import Any, Callable

from strata_daemon.embedding.cache import VectorCache
from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.recall.fusion import Candidate, normalised
from strata_daemon.recall.request import Sources
from strata_daemon.store import vectors as vector_index


def lift(candidates: list[Candidate], chosen: Callable[[Candidate], bool], lift: float, name: str,
          **shown: Any) -> int:
    """Raise the relevance of the chosen candidates by `lift`; returns how many were lifted."""
    lifted = 0
    for c in candidates:
        if chosen(c):
            c.relevance *= 1.0 + lift
            c.retrievers[name] = {"lift": lift, **shown}
            lifted += 1
    within_one(candidates)
    return lifted


def within_one(candidates: list[Candidate]) -> None:
    """Relevance back within 0..1, as the composite expects, after a stage raised some."""
    top = max((c.relevance for c in candidates), default=0.0)
    if top > 1.0:
        for c in candidates:
            c.relevance /= top


async def query_vector(src: Sources):
    """The question's embedding, or None (full text only, or the model failed: `meaning` said so)."""
    if src.embedding is None:
        return None
    try:
        return (await src.embedding[1])[0]
    except EmbeddingUnavailable:
        return None


def cosines(conn, held: VectorCache | None, ids, query) -> dict[int, float]:
    """Each embedded memory's cosine to the question: from the in-memory copy, or the index."""
    if held is not None:
        return held.cosines(ids, query)
    return {i: float(v @ query) for i, v in vector_index.vectors_of(conn, ids).items()}  # both normalised


def fallback(e: EmbeddingUnavailable) -> str:
    return f"semantic recall unavailable, used fast: {e.message}" + (f" ({e.hint})" if e.hint else "")


def vector_list(rows: dict[int, dict], near: list[tuple[int, float]], min_similarity: float = 0.0) -> list[Candidate]:
    """The nearest memories within the recall's scope (those in `rows`), in vector rank order;
    those less alike than `min_similarity` are no match at all, only the least far of strangers."""
    out = []
    kept = ((i, d) for i, d in near if i in rows and 1.0 - d >= min_similarity)
    for rank, (i, distance) in enumerate(kept, 1):
        c = Candidate(rows[i], raw={"vector": 1.0 - distance})
        c.retrievers["vector"] = {"rank": rank, "cosine": 1.0 - distance}
        out.append(c)
    return with_normalised(out, "vector")


def with_normalised(candidates: list[Candidate], name: str) -> list[Candidate]:
    """Relevance on a 0..1 scale within the list (min-max of the raw scores), as fusion by scores needs."""
    scaled = normalised(candidates, name)
    for c in candidates:
        c.relevance = scaled[c.row["id"]]
    return candidates


def fact_source_ids(facts: list[dict]) -> list[int]:
    return [int(f["source"].split(":", 1)[1]) for f in facts if f["source"].startswith("episode:")]
