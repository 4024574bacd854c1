"""The composite of many candidates at once, in numpy: what recall ranks by.

A recall scores about 150 candidates; one `score_episode` call per candidate costs about 10
microseconds of Python, most of it calls and tuples, which made scoring the largest Python
step of a recall. These are the same formulas as the scalar functions of this package, which
stay the reference (the tests hold the two equal on random inputs) and still give the
breakdown of each memory shown.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from strata_daemon.scoring.composite import ACTIVE, PASSIVE, ScoringParams, _z_for
from strata_daemon.scoring.decay import BOUNDARY_DAYS, FLOOR, POTENTIATION_FACTOR, POWER_EXPONENT, TIME_CONSTANT_DAYS
from strata_daemon.scoring.recency import _FREQUENCY_SATURATION
from strata_daemon.scoring.rfm import _LN2, FREQUENCY_CAP, WEIGHTS

__all__ = ["Columns", "composites"]

_HOUR, _DAY = 3600.0, 86400.0


class Columns(NamedTuple):
    """The scoring inputs of n candidates, one array each (see EpisodeFeatures)."""
    event_at: np.ndarray
    last_access_at: np.ndarray  # event_at where never accessed
    access_count: np.ndarray
    importance: np.ndarray
    successes: np.ndarray
    failures: np.ndarray
    factual: np.ndarray  # bool
    confidence: np.ndarray
    good: np.ndarray  # bool
    strength_factor: np.ndarray
    cold: np.ndarray  # bool

    @classmethod
    def of(cls, rows: list) -> "Columns":
        """From stored rows (the columns recall reads)."""
        f = np.array([(r["event_at"], r["event_at"] if r["last_access_at"] is None else r["last_access_at"],
                       r["access_count"], r["importance"], r["success_count"], r["failure_count"], r["factual"],
                       r["confidence"], r["quality"] == "good", r["strength_factor"], r["tier"] == "cold")
                      for r in rows], dtype=np.float64).reshape(len(rows), 11)
        return cls(f[:, 0], f[:, 1], f[:, 2], f[:, 3], f[:, 4], f[:, 5], f[:, 6] != 0, f[:, 7], f[:, 8] != 0,
                   f[:, 9], f[:, 10] != 0)


def _recency(hours: np.ndarray, count: np.ndarray, p: ScoringParams) -> np.ndarray:
    time_term = 100.0 * p.time_weight * 0.5 ** (np.maximum(hours, 0.0) / p.half_life_hours)
    boost = np.minimum(np.log10(np.maximum(count, 0.0) + 1) / _FREQUENCY_SATURATION, 1.0)
    return np.clip(time_term + 100.0 * p.frequency_weight * boost, 0.0, 100.0) / 100.0


def _strength(days: np.ndarray, count: np.ndarray, p: ScoringParams) -> np.ndarray:
    age = np.maximum(days, 0.0)
    m = np.where(count >= p.potentiation_accesses, POTENTIATION_FACTOR, 1.0)
    early = np.exp(-m * age / TIME_CONSTANT_DAYS)
    late = (np.exp(-m * BOUNDARY_DAYS / TIME_CONSTANT_DAYS)
            * (np.maximum(age, BOUNDARY_DAYS) - BOUNDARY_DAYS + 1.0) ** (-POWER_EXPONENT * m))
    return np.maximum(np.minimum(np.where(age <= BOUNDARY_DAYS, early, late), 1.0), FLOOR)


def _priority(hours: np.ndarray, count: np.ndarray, importance: np.ndarray, p: ScoringParams) -> np.ndarray:
    wr, wf, wi = WEIGHTS
    r = np.exp(-_LN2 / p.half_life_hours * np.maximum(hours, 0.0))
    f = np.minimum(np.log(np.maximum(count, 0.0) + 1) / math.log(FREQUENCY_CAP + 1), 1.0)
    return (wr * r + wf * f + wi * np.clip(importance, 0.0, 1.0)) / (wr + wf + wi)


def _wilson(successes: np.ndarray, failures: np.ndarray, z: float, upper: bool = False) -> np.ndarray:
    s = np.maximum(successes, 0.0)
    n = s + np.maximum(failures, 0.0)
    rated = n > 0
    n = np.where(rated, n, 1.0)
    p = s / n
    z2 = z * z
    spread = z * np.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    if upper:
        return np.where(rated, np.minimum((p + z2 / (2 * n) + spread) / (1.0 + z2 / n), 1.0), 1.0)
    return np.where(rated, np.maximum((p + z2 / (2 * n) - spread) / (1.0 + z2 / n), 0.0), 0.0)


def composites(c: Columns, relevance: np.ndarray, context: np.ndarray, now: float, params: ScoringParams,
               phase: str = PASSIVE) -> tuple[np.ndarray, np.ndarray]:
    """(composite, eligible) of each candidate, as score_episode gives them one at a time.
    `context` holds each candidate's context match (0 when the query has no context)."""
    if phase != PASSIVE and phase != ACTIVE:
        raise ValueError(f"phase must be 'passive' or 'active', got {phase!r}")
    age = now - c.event_at
    recency = np.where(c.factual, 1.0, _recency((now - c.last_access_at) / _HOUR, c.access_count, params))
    strength = c.strength_factor * _strength(age / _DAY, c.access_count, params)
    priority = _priority(age / _HOUR, c.access_count, c.importance, params)
    wilson = _wilson(c.successes, c.failures, _z_for(params.confidence))
    rel = np.clip(relevance, 0.0, 1.0)
    w = params.weights
    trust = (1.0 - params.confidence_weight * (1.0 - c.confidence)) * np.where(c.good, 1.0 + params.quality_boost, 1.0)
    trust = trust * np.where(c.cold, params.cold_factor, 1.0)
    eligible = np.ones(len(age), dtype=bool)
    if phase == ACTIVE:
        stale = ~c.factual & (recency < params.stability_threshold)
        judged = ~c.factual & ((c.successes + c.failures) >= params.min_feedback_trials)
        bound = _wilson(c.successes, c.failures, _z_for(params.confidence), upper=params.thresholds != "filter")
        failing = judged & (bound < params.success_threshold)
        if params.thresholds == "filter":
            eligible = ~(stale | failing)
        else:
            penalty = np.where(stale, params.stability_penalty, 1.0) * np.where(failing, params.success_penalty, 1.0)
            trust = trust * penalty
    composite = trust * (w.relevance * rel + w.recency * recency + w.strength * strength + w.priority * priority
                         + w.wilson * wilson + w.context * context) / w.total
    return composite, eligible
