"""Hybrid memory strength: exponential, then a power-law tail.

For the first ``boundary_days`` a memory consolidates and fades exponentially;
after that it fades by a power law, whose heavy tail means an old memory grows
faint but is never lost outright. The power phase is multiplied by the value of
the exponential at the boundary, so the curve is continuous there::

    age <= B:  s = exp(-m * age / tau)
    age >  B:  s = exp(-m * B / tau) * (age - B + 1) ** (-p * m)
    result  = max(floor, s)

``m`` is 1, or ``potentiation_factor`` (0.1: ten times slower) once a memory
has been accessed ``potentiation_accesses`` times: long-term potentiation.

``tau`` is an e-folding time constant, not a half-life (``exp(-age/tau)`` drops
to 37 %, not 50 %, after one ``tau``). It is 1 day because the 3-day boundary and
the shape of the tail were tuned against that curve; the parameter is therefore
called ``time_constant_days`` here. A negative age counts as zero.
"""

from __future__ import annotations

import math

__all__ = ["hybrid_strength", "is_potentiated"]


def is_potentiated(access_count: int, potentiation_accesses: int = 10) -> bool:
    """True once a memory has been recalled often enough to decay slowly."""
    return access_count >= potentiation_accesses


# The curve above; batch.py reads the same constants.
TIME_CONSTANT_DAYS, POWER_EXPONENT, BOUNDARY_DAYS, POTENTIATION_FACTOR, FLOOR = 1.0, 0.3, 3.0, 0.1, 0.01


def hybrid_strength(
    age_days: float,
    access_count: int,
    *,
    time_constant_days: float = TIME_CONSTANT_DAYS,
    power_exponent: float = POWER_EXPONENT,
    boundary_days: float = BOUNDARY_DAYS,
    potentiation_accesses: int = 10,
    potentiation_factor: float = POTENTIATION_FACTOR,
    floor: float = FLOOR,
) -> float:
    """0..1 (floor..1)."""
    if time_constant_days <= 0:
        raise ValueError(f"time_constant_days must be > 0, got {time_constant_days!r}")
    age = age_days if age_days > 0 else 0.0
    m = potentiation_factor if access_count >= potentiation_accesses else 1.0
    if age <= boundary_days:
        strength = math.exp(-m * age / time_constant_days)
    else:
        at_boundary = math.exp(-m * boundary_days / time_constant_days)
        # +1 makes the power term exactly 1 at the boundary (continuity).
        strength = at_boundary * (age - boundary_days + 1.0) ** (-power_exponent * m)
    if strength > 1.0:
        strength = 1.0
    return strength if strength > floor else floor


WEAK_BELOW = 0.05


def strength_summary(memories: list[tuple[float, int]], *, potentiation_accesses: int = 10) -> dict:
    """The spread of memory strength over (age in days, access count) pairs: what the nightly
    snapshot records, so a person can watch forgetting and potentiation over weeks."""
    values = sorted(hybrid_strength(age, count, potentiation_accesses=potentiation_accesses)
                    for age, count in memories)
    n = len(values)

    def quantile(q: float) -> float | None:
        return round(values[min(n - 1, int(q * n))], 6) if n else None

    return {"episodes": n, "mean": round(sum(values) / n, 6) if n else None, "p10": quantile(0.1),
            "p50": quantile(0.5), "p90": quantile(0.9), "weak": sum(v < WEAK_BELOW for v in values),
            "potentiated": sum(c >= potentiation_accesses for _, c in memories)}
