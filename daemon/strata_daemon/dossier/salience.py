"""Salience of a memory for a dossier, after Park et al. (2023): recency x importance x
relevance. Pure: no I/O.

- recency: 2^(-age / half_life), age from when it happened; the default half-life of 138 h is
  Park et al.'s decay of 0.995 per hour;
- importance: the memory's own, 0..1;
- relevance: what recall found, 0..1 (the same code path as a user's recall).

A product rather than Park et al.'s weighted sum: a memory must be all
three to lead. Old memories that matter are still shown, in the context section, ranked by
importance x relevance alone.
"""

from __future__ import annotations

import math


def recency(event_at: float, now: float, half_life_hours: float) -> float:
    age_hours = max(0.0, now - event_at) / 3600.0
    return math.pow(2.0, -age_hours / half_life_hours)


def salience(event_at: float, importance: float, relevance: float, now: float, half_life_hours: float) -> float:
    return recency(event_at, now, half_life_hours) * importance * relevance


def ranked(sources: list[dict], now: float, half_life_hours: float) -> list[dict]:
    """Sources (dicts with event_at, importance, relevance, id) with their `salience`, best
    first; ties go to the newer memory, then the higher id."""
    out = [{**s, "salience": round(salience(s["event_at"], s["importance"], s["relevance"], now, half_life_hours), 6)}
           for s in sources]
    out.sort(key=lambda s: (-s["salience"], -s["event_at"], -s["id"]))
    return out
