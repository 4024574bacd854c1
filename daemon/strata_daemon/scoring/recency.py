"""Recency with a frequency boost, on a 0..100 scale.

The formula, and why each part reads as it does:

    S = clamp(S0 * wt * 0.5 ** (t / h)  +  S0 * wf * min(1, log10(f + 1) / 4),  0, 100)

* The frequency term is scaled by ``S0`` like the time term: without it, on a
  0..100 scale it could never add more than about one point, which would defeat
  its purpose of letting frequently used memories resist decay. ``log10(f+1)/4``
  reaches 1 at f = 9999 accesses; it is capped there so the weights keep their
  meaning.
* ``h`` is a true half-life (168 h: 7 days), so the time term is
  ``0.5 ** (t/h)``, not ``e^(-t/h)``, which would halve at 0.69 h.
* Elapsed time below zero (clock skew, future timestamps) counts as zero, and a
  negative access count as zero. Factual memories bypass decay and score 100.
"""

from __future__ import annotations

import math

__all__ = ["recency_score"]

# log10(f+1) reaches this value at f = 9999; the boost saturates there.
_FREQUENCY_SATURATION = 4.0


def recency_score(
    hours_since_access: float,
    access_count: int,
    *,
    half_life_hours: float = 168.0,
    time_weight: float = 0.6,
    frequency_weight: float = 0.4,
    base: float = 100.0,
    factual: bool = False,
) -> float:
    """0..100."""
    if factual:
        return 100.0
    if half_life_hours <= 0:
        raise ValueError(f"half_life_hours must be > 0, got {half_life_hours!r}")
    t = hours_since_access if hours_since_access > 0 else 0.0
    f = access_count if access_count > 0 else 0
    time_term = base * time_weight * 0.5 ** (t / half_life_hours)
    boost = math.log10(f + 1) / _FREQUENCY_SATURATION
    if boost > 1.0:
        boost = 1.0
    score = time_term + base * frequency_weight * boost
    if score < 0.0:
        return 0.0
    if score > 100.0:
        return 100.0
    return score
