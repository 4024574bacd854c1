"""How the inspector words things: pure functions, testable without a terminal."""

from __future__ import annotations

import json
from typing import Any

from ..timeutil import duration, iso

SIGNALS = ("relevance", "recency", "strength", "priority", "wilson", "context")


def age(seconds: float | None) -> str:
    return "never" if seconds is None else duration(max(0.0, float(seconds)))


def when(ts: float | None) -> str:
    """A timestamp as 'YYYY-MM-DD HH:MM' (UTC), '-' when there is none."""
    return (iso(ts) or "-").replace("T", " ").replace("Z", "")[:16]


def one_line(text: str, width: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def size(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return " → ".join(map(str, v))
    return str(v)


def explain(hit: dict, weights: dict[str, float]) -> list[tuple[str, str, str]]:
    """The rows of a hit's explanation as (group, name, value): each signal with its weight and
    its share of the score, the trust factor, every retriever's rank and score (and the graph
    path for deep recall), and the features behind frequency and Wilson."""
    rows: list[tuple[str, str, str]] = [("score", "composite", f"{hit['score']:.4f}")]
    signals = hit["explain"]["signals"]
    for name in SIGNALS:
        if name in signals:
            w = weights.get(name, 0.0)
            rows.append(("signal", name, f"{signals[name]:.3f} × {w:g} = {signals[name] * w:.3f}"))
    for factor in ("trust", "tier", "penalty"):
        if factor in signals:
            rows.append(("signal", factor, f"× {signals[factor]:.3f}"))
    if "penalised" in hit["explain"]:
        rows.append(("signal", "penalised", hit["explain"]["penalised"]))
    for key, what in (("superseded_by", "a newer memory states another value of the same fact"),
                      ("newer_alike", "a newer memory alike it answers the question")):
        if key in hit["explain"]:
            rows.append(("order", key.replace("_", " "),
                         ", ".join(f"#{i}" for i in hit["explain"][key]) + f": {what}"))
    for retriever, detail in hit["explain"]["retrievers"].items():
        rows.append(("retriever", retriever, ", ".join(f"{k} {_value(v)}" for k, v in detail.items())))
    for name, v in hit["explain"]["features"].items():
        rows.append(("feature", name, _value(v)))
    rows.append(("memory", "kind", hit["kind"]))
    if "tier" in hit:
        rows.append(("memory", "tier", hit["tier"]))
    rows.append(("memory", "factual", "yes" if hit.get("factual") else "no"))
    if hit.get("context"):
        rows.append(("memory", "context", json.dumps(hit["context"], sort_keys=True, ensure_ascii=False)))
    return rows


def fact_value(value: str | None) -> str:
    return "(retracted)" if value is None else value
