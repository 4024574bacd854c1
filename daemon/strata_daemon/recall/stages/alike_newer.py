"""For a question about the present, the newer of two alike first hits moves above the older
(currency.py says when two are alike and which updates the other)."""

from __future__ import annotations

from strata_daemon.embedding.cache import VectorCache
from strata_daemon.recall.currency import asks_present, newer_alike
from strata_daemon.recall.fusion import Candidate
from strata_daemon.recall.request import Request, Sources, State


def alike_newer(candidates: list[Candidate], cache: VectorCache | None, query: str, k: int,
                similarity: float, parallel: float) -> dict[int, dict[int, float]]:
    """For a question about the present: among the most relevant candidates, older id -> the
    newer ones alike it, with their cosine (episodes/currency.py). Needs the vectors in memory (recall.vector_cache)."""
    if cache is None or similarity <= 0 or not asks_present(query):
        return {}
    top = sorted(candidates, key=lambda c: -c.relevance)[:max(10, 2 * k)]
    vectors = cache.vectors(c.row["id"] for c in top)
    return newer_alike([(c.row["id"], c.row["event_at"], c.row["content"]) for c in top], vectors, query,
                       similarity=similarity, parallel=parallel)


async def alike(req: Request, src: Sources, st: State) -> dict | None:
    if st.used == "fast":
        return None
    st.alike = alike_newer(st.candidates, src.vectors, req.query, req.k, req.tuning.present_similarity,
                           req.tuning.present_parallel)
    return {"moved_up": len(st.alike)}
