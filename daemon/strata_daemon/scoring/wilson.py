"""Wilson score lower bound on success/failure feedback.

With n = s + f rated recalls and p = s / n::

    lower = (p + z²/2n - z * sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)

This is the textbook interval: ``(1-p)/n`` under the square root, without the
factor p, would penalise a memory with a perfect record as if it had none. With no
feedback at all the bound is 0, and it never goes below 0: sparse good news
earns little, sparse bad news cannot push a score negative.
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["wilson_lower_bound", "wilson_upper_bound", "z_for_confidence"]


def z_for_confidence(confidence: float) -> float:
    """Two-sided z for a confidence level, e.g. 0.95 -> 1.959964."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    # Two-sided: the bound leaves (1 - confidence) / 2 in each tail.
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _interval(successes: int, failures: int, z: float) -> tuple[float, float] | None:
    s = successes if successes > 0 else 0
    n = s + (failures if failures > 0 else 0)
    if n == 0:
        return None
    p = s / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    return (centre - spread) / (1.0 + z2 / n), (centre + spread) / (1.0 + z2 / n)


def wilson_lower_bound(successes: int, failures: int, z: float = 1.96) -> float:
    """Conservative estimate of the success rate; 0 when there is no feedback."""
    bounds = _interval(successes, failures, z)
    return 0.0 if bounds is None or bounds[0] < 0.0 else bounds[0]


def wilson_upper_bound(successes: int, failures: int, z: float = 1.96) -> float:
    """Optimistic estimate of the success rate; 1 when there is no feedback. Below a bar, the
    record is bad beyond doubt: what the success threshold's penalty judges, since the lower
    bound of a short perfect record (3 of 3: 0.44) is below any useful bar too."""
    bounds = _interval(successes, failures, z)
    return 1.0 if bounds is None or bounds[1] > 1.0 else bounds[1]
