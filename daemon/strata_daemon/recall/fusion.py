"""Turning the retrievers' candidate lists into one relevance per memory. Pure: no I/O.

Balanced recall runs three steps, each switchable in config so its effect can be measured
(`strata bench locomo` does):
1. fusion of the full-text and vector lists, by normalised scores (default) or by
   reciprocal rank;
2. spreading within a session: a memory passes part of its full-text relevance to the
   memory right after it (typically the reply to what matched) and to the one before it;
3. session aggregation: a memory gains part of the relevance of the best memory of its session.
Every step records what it added in the candidate's `retrievers` (unrounded: recall rounds
what it shows), so `--explain` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Candidate:
    row: dict
    retrievers: dict = field(default_factory=dict)  # retriever -> {"rank": n, <its score name>: s, ...}
    relevance: float = 0.0
    raw: dict = field(default_factory=dict)  # retriever -> raw score, higher is better


def normalised(candidates: list[Candidate], name: str) -> dict[int, float]:
    """Min-max normalised raw scores of one retriever's list: best 1, worst 0 (all 1 when equal)."""
    scores = {c.row["id"]: c.raw[name] for c in candidates}
    if not scores:
        return {}
    hi, lo = max(scores.values()), min(scores.values())
    return {i: (s - lo) / (hi - lo) if hi > lo else 1.0 for i, s in scores.items()}


def spread(candidates: list[Candidate], neighbours: dict[int, tuple[int | None, int | None]],
           rows: dict[int, dict], *, to_next: float, to_previous: float, further: float = 0.0) -> list[Candidate]:
    """Each candidate passes `to_next` of its relevance to the memory after it in its session and
    `to_previous` to the one before, and `further` of what it passed one step on (an answer often
    comes two turns after what it answers, a question between). `neighbours` maps id ->
    (previous id, next id); `rows` holds the neighbours' rows (a neighbour outside the recall's
    scope is absent, gets nothing and passes nothing on)."""
    out = {c.row["id"]: c for c in candidates}
    base = {c.row["id"]: c.relevance for c in candidates}
    for source_id, rel in base.items():
        if rel <= 0:
            continue
        for way, share in ((1, to_next), (0, to_previous)):
            target, given_share = source_id, share
            for _ in range(2 if further > 0 else 1):
                target = neighbours.get(target, (None, None))[way]
                if target is None or given_share <= 0 or (target not in out and target not in rows):
                    break
                c = out.get(target) or out.setdefault(target, Candidate(rows[target]))
                c.relevance += given_share * rel
                given = c.retrievers.setdefault("neighbours", {"from": [], "added": 0.0})
                given["from"].append(source_id)
                given["added"] += given_share * rel
                given_share *= further
    return list(out.values())


def fuse(ranked: dict[str, list[Candidate]], weights: dict[str, float], *, method: str = "scores",
         k: int = 60) -> list[Candidate]:
    """One list from several. `scores`: sum of each retriever's weighted relevance (already on a
    0..1 scale); `rrf`: sum of weight / (k + rank). Relevance ends relative to the best."""
    merged: dict[int, Candidate] = {}
    for name, candidates in ranked.items():
        w = weights.get(name, 1.0)
        # Ranks by relevance, so a memory that spreading added to a list has a rank too.
        ordered = sorted(candidates, key=lambda c: (-c.relevance, -c.row["id"]))
        for rank, c in enumerate(ordered, 1):
            m = merged.get(c.row["id"])
            if m is None:
                m = merged[c.row["id"]] = Candidate(c.row)
            m.retrievers.update(c.retrievers)
            m.relevance += w * (c.relevance if method == "scores" else 1.0 / (k + rank))
    for m in merged.values():
        m.retrievers["fused"] = {"method": method, "score": m.relevance}
    return relative(list(merged.values()))


def session_boost(candidates: list[Candidate], weight: float) -> list[Candidate]:
    """Each memory with a session gains `weight` times the relevance of its session's best."""
    if weight <= 0:
        return candidates
    best: dict[str, Candidate] = {}
    for c in candidates:
        s = c.row.get("session")
        if s is not None and (s not in best or c.relevance > best[s].relevance):
            best[s] = c
    tops = {s: (c.row["id"], c.relevance) for s, c in best.items()}
    for c in candidates:
        s = c.row.get("session")
        if s is not None and tops[s][1] > 0:
            c.relevance += weight * tops[s][1]
            c.retrievers["session"] = {"best": tops[s][0], "added": weight * tops[s][1]}
    return relative(candidates)


def relative(candidates: list[Candidate]) -> list[Candidate]:
    """Relevance divided by the best (0 when none is positive), best first."""
    if not candidates:
        return []
    best = max(c.relevance for c in candidates)
    for c in candidates:
        c.relevance = c.relevance / best if best > 0 else 0.0
    return sorted(candidates, key=lambda c: (-c.relevance, -c.row["id"]))
