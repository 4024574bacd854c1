"""Ranking the candidates by the composite score, every candidate at once (scoring/batch.py),
with the rules of order that scoring alone does not give, and a breakdown of why for the k shown."""

from __future__ import annotations

import json

import numpy as np

from strata_daemon.recall.fusion import Candidate
from strata_daemon.scoring import EpisodeFeatures, ScoringParams, context_match, score_episode
from strata_daemon.scoring.batch import Columns, composites

SUPERSESSION_DEPTH = 4  # most passes that settle a chain of supersessions among the candidates


def _below_superseders(score: list[float], index: dict[int, int], eligible, superseded: dict[int, set[int]],
                       factor: float) -> dict[int, list[int]]:
    """Rank each superseded memory just below what supersedes it: a superseder scoring less is
    lifted to the superseded memory's score, which then falls to `factor` times that (in
    chains, from the newest down). A query that matches the old statement best thus finds the
    new one first and the old one next, not the old one pushed down to the new one's weaker
    match. Returns, for each superseded memory, the ranked superseders it stays below."""
    below = {old: sorted(i for i in news if i in index and eligible[index[i]]) for old, news in superseded.items()}
    for _ in range(SUPERSESSION_DEPTH + 1):
        changed = False
        for old, news in below.items():
            j = index[old]
            for new in news:
                k = index[new]
                if score[k] < score[j]:
                    score[k], changed = score[j], True
                if score[j] > score[k] * factor + 1e-12:
                    score[j], changed = score[k] * factor, True
        if not changed:
            break
    return {old: news for old, news in below.items() if news}


# Alike memories are reordered only among the first hits: which memories a recall returns in its
# top 5 (and top 10) stays what scoring chose. Reordering all k hits, or capping scores as a
# `supersedes` link does, cost 0.014 (0.073) of LoCoMo evidence recall@5 in turns that are alike
# without one updating the other. A newer memory worded as an update and very alike an older one
# in the top 5 (cosine at least `present_reach`) moves above it from the top 10: the
# update ranked 7th behind the statement it updates at 4th (the truth development set) is the
# answer; one only parallel to it (`My brother lives in Cardiff`) may be another thing.
ALIKE_WINDOW = 5


def _newer_above(shown: list[int], ids: list[int], alike: dict[int, dict[int, float]], *, window: int,
                 reach: float) -> tuple[list[int], dict[int, list[int]]]:
    """The hits shown (candidate positions, best first) with each newer memory alike an older
    one of the first WINDOW moved just above it, when it ranked below: from within the window,
    or from the next WINDOW when at least REACH alike; the set stays the same, so only the order
    changes. Returns the order and, per older id, the newer ids moved above it.

    What moves up is read again in its new place, so a chain of updates (A, then B, then C)
    ends newest first whichever order the hits were in: C moves above B as B moved above A.
    Each move puts a later statement above an earlier one, so this ends."""
    if not alike:
        return shown, {}
    order = list(shown)
    moved: dict[int, list[int]] = {}
    at = 0
    while at < min(window, len(order)):
        old = ids[order[at]]
        newer = alike.get(old, {})
        later = [p for n, p in enumerate(order[at + 1:2 * window], at + 1)
                 if ids[p] in newer and (n < window or newer[ids[p]] >= reach)]
        if not later:
            at += 1
            continue
        for p in later:
            order.remove(p)
        order[at:at] = later
        moved.setdefault(old, []).extend(ids[p] for p in later)
    return order, moved


def features_of(r, context: dict) -> EpisodeFeatures:
    """A stored row's scoring inputs."""
    return EpisodeFeatures(
        event_at=r["event_at"], last_access_at=r["last_access_at"], access_count=r["access_count"],
        importance=r["importance"], successes=r["success_count"], failures=r["failure_count"],
        factual=bool(r["factual"]), context=context, confidence=r["confidence"], good=r["quality"] == "good",
        strength_factor=r["strength_factor"], cold=r["tier"] == "cold")


# Retrievers record raw scores; they are rounded only for the k memories shown (a recall
# ranks ~150 candidates, and rounding every score of every one cost more than the fusion).
_FOUR_PLACES = ("cosine", "bm25", "idf-sum")


def _shown(explained: dict) -> dict:
    return {k: round(v, 4 if k in _FOUR_PLACES else 6) if isinstance(v, float) else v for k, v in explained.items()}


# The breakdown's parts a hit's explanation shows: the six signals and the three factors.
_SIGNALS = ("relevance", "recency", "strength", "priority", "wilson", "context", "trust", "tier", "penalty")


def rank_candidates(candidates: list[Candidate], *, query_context: dict, now: float, params: ScoringParams,
                    phase: str, k: int, first: dict[int, int] | None = None,
                    superseded: dict[int, set[int]] | None = None,
                    alike: dict[int, dict[int, float]] | None = None, superseded_factor: float = 0.9,
                    alike_reach: float = 1.0) -> tuple[list[dict], int]:
    """Score and order (memories in `first` lead; a superseded memory ranks below what
    supersedes it, and, for a question about the present, below a newer one alike it); in the
    thresholds' filter mode, also filter. Returns (hits, how many the thresholds filtered out).
    Every candidate is scored at once; the breakdown that explains a hit is worked out for the
    k shown."""
    rows = [c.row for c in candidates]
    contexts = [json.loads(r["context"]) for r in rows] if query_context else None
    matches = np.array([context_match(query_context, x) for x in contexts]) if contexts else np.zeros(len(rows))
    composite, eligible = composites(Columns.of(rows), np.array([c.relevance for c in candidates]), matches, now,
                                     params, phase)
    kept = np.flatnonzero(eligible).tolist()
    score = composite.tolist()
    superseded = superseded or {}
    below = _below_superseders(score, {r["id"]: j for j, r in enumerate(rows)}, eligible, superseded,
                               superseded_factor) if superseded else {}
    first = first or {}
    kept.sort(key=lambda j: (first.get(rows[j]["id"], len(first)), -score[j], -rows[j]["id"]))
    kept[:k], moved = _newer_above(kept[:k], [r["id"] for r in rows], alike or {}, window=ALIKE_WINDOW,
                                   reach=alike_reach)
    above: dict[int, list[int]] = {}  # the newer side of each move: what it now ranks above
    for old, news in moved.items():
        for n in news:
            above.setdefault(n, []).append(old)
    hits = []
    for rank, j in enumerate(kept[:k], 1):
        c, r = candidates[j], rows[j]
        feats = features_of(r, contexts[j] if contexts else {})
        b = score_episode(feats, c.relevance, query_context, now, params, phase)
        hits.append({
            "rank": rank, "id": r["id"], "score": round(score[j], 6), "kind": r["kind"], "content": r["content"],
            "event_at": r["event_at"], "source": r["source"], "session": r["session"],
            "factual": feats.factual, "context": feats.context or json.loads(r["context"]),
            "tier": r["tier"], "state": r["state"], **({"led": True} if r["id"] in first else {}),
            **({"moved_above": above[r["id"]]} if r["id"] in above else {}),
            "explain": {"signals": {k_: round(v, 6) for k_, v in b.as_dict().items() if k_ in _SIGNALS},
                        "retrievers": {name: _shown(v) for name, v in c.retrievers.items()},
                        "features": {"access_count": feats.access_count, "successes": feats.successes,
                                     "failures": feats.failures, "importance": feats.importance},
                        **({"penalised": b.reason} if b.reason else {}),
                        **({"superseded_by": below[r["id"]]} if r["id"] in below else {}),
                        **({"newer_alike": moved[r["id"]]} if r["id"] in moved else {})},
        })
    return hits, len(rows) - len(kept)
