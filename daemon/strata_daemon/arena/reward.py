"""How well one recall served one evaluation episode (the arena's score). Pure: no I/O.

reward = recall x 0.55 (did it find what the agent used?) + precision x 0.15 + session recall
x 0.20 (document recall: did it reach the right conversations?) + latency x 0.07
+ diversity x 0.03, each part on 0..1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

PARTS = ("recall", "precision", "session_recall", "latency", "diversity")


@dataclass(frozen=True)
class RewardWeights:
    recall: float = 0.55
    precision: float = 0.15
    session_recall: float = 0.20
    latency: float = 0.07
    diversity: float = 0.03

    def __post_init__(self) -> None:
        values = [getattr(self, p) for p in PARTS]
        if min(values) < 0 or sum(values) <= 0:
            raise ValueError(f"arena weights must be >= 0 and not all zero: {self!r}")

    @property
    def total(self) -> float:
        return sum(getattr(self, p) for p in PARTS)


def session_key(episode_id: int, session: str | None) -> str:
    """A memory outside any session is a session of its own, so session recall falls back to recall."""
    return f"s:{session}" if session else f"#{episode_id}"


def episode_reward(hits: Sequence[tuple[int, str | None]], useful: Sequence[tuple[int, str | None]],
                   elapsed_ms: float, *, latency_budget_ms: float, weights: RewardWeights) -> dict[str, float]:
    """`hits` and `useful` as (memory id, session); the parts and their weighted mean, `reward`."""
    wanted = {i for i, _ in useful}
    found = {i for i, _ in hits} & wanted
    wanted_sessions = {session_key(i, s) for i, s in useful}
    hit_sessions = [session_key(i, s) for i, s in hits]
    parts = {
        "recall": len(found) / len(wanted) if wanted else 0.0,
        "precision": len(found) / len(hits) if hits else 0.0,
        "session_recall": len(wanted_sessions & set(hit_sessions)) / len(wanted_sessions) if wanted_sessions else 0.0,
        "latency": max(0.0, 1.0 - elapsed_ms / latency_budget_ms) if latency_budget_ms > 0 else 0.0,
        "diversity": len(set(hit_sessions)) / len(hit_sessions) if hit_sessions else 0.0,
    }
    parts["reward"] = sum(getattr(weights, p) * parts[p] for p in PARTS) / weights.total
    return parts
