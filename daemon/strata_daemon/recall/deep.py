"""`deep` recall: the balanced candidates seed a spread over the spiderweb, and each memory's
relevance combines what the retrievers found with what the graph adds (hybrid
retrieval). Pure: no I/O.

relevance = alpha x retrieval + gamma x graph activation + delta x Hebbian association (the
deep_*_weight constants of config/tuning.py),
then relative to the best. Retrieval is the balanced (fused) relevance; graph activation is
what a spread from the seeds reached (edges and typed links); Hebbian association is the
strongest direct edge to a seed, over the edge cap. The temporal part is the
composite's strength and recency, which every mode applies after this.

After every other stage, a cross-encoder reads the question with each of the best candidates
and takes a share of their relevance (`reranked`; the model is embedding/rerank.py).
"""

from __future__ import annotations

from strata_daemon.config.tuning import Recall
from strata_daemon.recall.fusion import Candidate, relative


def seeds_of(candidates: list[Candidate], count: int) -> list[int]:
    """The ids of the best candidates, which seed the spread."""
    ranked = sorted(candidates, key=lambda c: (-c.relevance, -c.row["id"]))
    return [c.row["id"] for c in ranked[:count]]


def combine(candidates: list[Candidate], reached: dict[int, dict], hebbian: dict[int, tuple[float, int]],
            rows: dict[int, dict], weights: Recall) -> list[Candidate]:
    """Candidates with graph and Hebbian signals folded into their relevance; memories only the
    graph reached join them when their row is in `rows` (in the recall's scope).
    `reached`: episode id -> {"activation", "path", "via"}; `hebbian`: id -> (weight 0..1, seed id)."""
    by_id = {c.row["id"]: c for c in candidates}
    for i in set(reached) | set(hebbian):
        if i not in by_id and i in rows:
            by_id[i] = Candidate(rows[i])
    out = []
    for i, c in by_id.items():
        graph = reached.get(i)
        assoc = hebbian.get(i)
        if graph:
            c.retrievers["graph"] = {"activation": graph["activation"], "path": graph["path"], "via": graph["via"]}
        if assoc:
            c.retrievers["hebbian"] = {"weight": round(assoc[0], 6), "with": assoc[1]}
        c.relevance = (weights.deep_retrieval_weight * c.relevance + weights.deep_graph_weight * (graph["activation"] if graph else 0.0)
                       + weights.deep_hebbian_weight * (assoc[0] if assoc else 0.0))
        out.append(c)
    return relative(out)


def reranked(relevance: list[float], scores: list[float], weight: float) -> list[float]:
    """Relevance after the cross-encoder read the first `len(scores)` candidates (best first):
    (1 - weight) of each one's relevance against the best, plus, for those it read, `weight`
    times where its score puts them between the lowest and the highest it gave (0..1). Its raw
    scores are logits on no fixed scale (a right answer may score -2.6 and a wrong one -8), so
    only their spread within this question counts."""
    top = max(relevance, default=0.0) or 1.0
    low, high = min(scores, default=0.0), max(scores, default=0.0)
    span = high - low
    read = [weight * ((s - low) / span if span > 0 else 1.0) for s in scores]
    return [(1 - weight) * r / top + (read[i] if i < len(read) else 0.0) for i, r in enumerate(relevance)]
