"""How well one recall served one evaluation episode (the arena's score). Pure: no I/O.

reward = the weighted mean (config/tuning.py, ArenaWeights) of recall (did it find what the agent
used?), precision, session recall (document recall: did it reach the right conversations?),
latency and diversity, each part on 0..1. Precision and diversity count over the k hits asked
for: an arm that returns fewer hits (fast returns only those holding the question's words)
must not score higher for finding less. Speed counts only past arena.latency_budget_ms: a
recall within the budget a person set loses nothing for being slower than another (no agent
notices tens of milliseconds, and an arm that searches less must not win on them); past it,
the latency part falls to 0 at twice the budget.
"""

from __future__ import annotations

from typing import Sequence

from strata_daemon.config.tuning import ArenaWeights

PARTS = ("recall", "precision", "session_recall", "latency", "diversity")


def check(weights: ArenaWeights) -> None:
    """Weights the reward can be the weighted mean of: >= 0, not all zero."""
    values = [getattr(weights, p) for p in PARTS]
    if min(values) < 0 or sum(values) <= 0:
        raise ValueError(f"arena weights must be >= 0 and not all zero: {weights!r}")


def session_key(episode_id: int, session: str | None) -> str:
    """A memory outside any session is a session of its own, so session recall falls back to recall."""
    return f"s:{session}" if session else f"#{episode_id}"


def latency_score(elapsed_ms: float, budget_ms: float) -> float:
    """1 within the budget, falling to 0 at twice it."""
    if budget_ms <= 0:
        return 0.0
    return min(1.0, max(0.0, 2.0 - elapsed_ms / budget_ms))


def episode_reward(hits: Sequence[tuple[int, str | None]], useful: Sequence[tuple[int, str | None]],
                   elapsed_ms: float, *, k: int, latency_budget_ms: float, weights: ArenaWeights) -> dict[str, float]:
    """`hits` (at most `k`, asked for) and `useful` as (memory id, session); the parts and their
    weighted mean, `reward`."""
    wanted = {i for i, _ in useful}
    found = {i for i, _ in hits} & wanted
    wanted_sessions = {session_key(i, s) for i, s in useful}
    hit_sessions = [session_key(i, s) for i, s in hits]
    parts = {
        "recall": len(found) / len(wanted) if wanted else 0.0,
        "precision": len(found) / max(k, len(hits)) if hits else 0.0,
        "session_recall": len(wanted_sessions & set(hit_sessions)) / len(wanted_sessions) if wanted_sessions else 0.0,
        "latency": latency_score(elapsed_ms, latency_budget_ms),
        "diversity": len(set(hit_sessions)) / max(k, len(hit_sessions)) if hit_sessions else 0.0,
    }
    parts["reward"] = sum(getattr(weights, p) * parts[p] for p in PARTS) / sum(getattr(weights, p) for p in PARTS)
    return parts
