"""Which facts a capsule shows when it can show only some. Pure: no I/O.

Each current fact scores `importance_weight * importance + (1 - importance_weight) * 2^(-age / half_life)`,
where age is the time since its value last changed: an important fact stays however old, and
a fresh change surfaces however minor. Ties go to the more recent change, then the key.
"""

from __future__ import annotations

import math
from typing import Iterable


def capsule_score(importance: float, changed_at: float, now: float, *, half_life_hours: float = 24.0,
                  importance_weight: float = 0.6) -> float:
    age_hours = max(0.0, now - changed_at) / 3600.0
    freshness = math.pow(2.0, -age_hours / half_life_hours) if half_life_hours > 0 else 0.0
    return importance_weight * importance + (1.0 - importance_weight) * freshness


def for_capsule(facts: Iterable[dict], now: float, *, limit: int = 30, half_life_hours: float = 24.0,
                importance_weight: float = 0.6) -> list[dict]:
    """The `limit` facts to show, best first, each with its `capsule_score`. Takes facts as
    `strata fact list` shapes them (importance, valid_from = when the current value began)."""
    scored = [{**f, "capsule_score": round(capsule_score(f["importance"], f["valid_from"], now,
                                                         half_life_hours=half_life_hours,
                                                         importance_weight=importance_weight), 6)}
              for f in facts if f.get("value") is not None]
    scored.sort(key=lambda f: (-f["capsule_score"], -f["valid_from"], f["key"]))
    return scored[:max(0, limit)]
