"""Latency summaries for the benchmarks. Pure."""

from __future__ import annotations

import math
import statistics


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sample."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), math.ceil(q * len(ordered) / 100)))
    return ordered[rank - 1]


def summary_ms(seconds: list[float]) -> dict:
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": round(statistics.median(ms), 3), "p95_ms": round(percentile(ms, 95), 3),
            "p99_ms": round(percentile(ms, 99), 3), "mean_ms": round(statistics.fmean(ms), 3)}


def ratio(a: float, b: float, digits: int = 3) -> float | None:
    return round(a / b, digits) if b else None
