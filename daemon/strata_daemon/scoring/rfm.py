"""RFM priority: recency, frequency and importance in 0..1.

* R = exp(-ln2 / h * t): t is the age since creation, h a true half-life.
* F = min(1, ln(n + 1) / ln(N + 1)): logarithmic in the access count n, so the
  first recalls matter most; it saturates at the cap N (100).
* I = the importance given when the memory was stored, clamped to 0..1.

The priority is the weighted mean of the three. The weights
(0.3, 0.2, 0.5) already sum to 1; dividing by their sum keeps the result in
0..1 when a caller passes weights that do not.
"""

from __future__ import annotations

import math

__all__ = ["rfm_priority", "rfm_components"]

_LN2 = math.log(2.0)
FREQUENCY_CAP, WEIGHTS = 100, (0.3, 0.2, 0.5)  # N; weights of R, F, I


def rfm_components(
    age_hours: float,
    access_count: int,
    importance: float,
    *,
    half_life_hours: float = 168.0,
    frequency_cap: int = FREQUENCY_CAP,
) -> tuple[float, float, float]:
    """(R, F, I), each in 0..1."""
    if half_life_hours <= 0:
        raise ValueError(f"half_life_hours must be > 0, got {half_life_hours!r}")
    if frequency_cap < 1:
        raise ValueError(f"frequency_cap must be >= 1, got {frequency_cap!r}")
    t = age_hours if age_hours > 0 else 0.0
    n = access_count if access_count > 0 else 0
    r = math.exp(-_LN2 / half_life_hours * t)
    f = math.log(n + 1) / math.log(frequency_cap + 1)
    if f > 1.0:
        f = 1.0
    i = 0.0 if importance < 0.0 else (1.0 if importance > 1.0 else float(importance))
    return r, f, i


def rfm_priority(
    age_hours: float,
    access_count: int,
    importance: float,
    *,
    half_life_hours: float = 168.0,
    frequency_cap: int = FREQUENCY_CAP,
    weights: tuple[float, float, float] = WEIGHTS,
) -> float:
    """0..1. R = exp(−ln2/h · t), F = min(1, ln(n+1)/ln(N+1)), I = importance clamped to 0..1."""
    wr, wf, wi = weights
    total = wr + wf + wi
    if wr < 0 or wf < 0 or wi < 0 or total <= 0:
        raise ValueError(f"RFM weights must be >= 0 and not all zero, got {weights!r}")
    r, f, i = rfm_components(
        age_hours, access_count, importance,
        half_life_hours=half_life_hours, frequency_cap=frequency_cap,
    )
    return (wr * r + wf * f + wi * i) / total
