"""How the inspector words things: pure functions, testable without a terminal."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from strata_daemon.base.timeutil import duration

SIGNALS = ("relevance", "recency", "strength", "priority", "wilson", "context")


def age(seconds: float | None) -> str:
    return "never" if seconds is None else duration(max(0.0, float(seconds)))


def when(ts: float | None) -> str:
    """A timestamp as 'YYYY-MM-DD HH:MM' in the machine's local time, as details show it; '-'
    when there is none."""
    return "-" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def local_time(ts: float, now: float) -> str:
    """A time as a person reads it: '2026-11-26 10:31 (3 h ago)' in the machine's local time."""
    stamp = when(ts)
    return f"{stamp} ({age(now - ts)} ago)" if ts <= now else f"{stamp} (in {age(ts - now)})"


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
    if "match" in hit:
        rows.append(("score", "match", match(hit)))
    signals = hit["explain"]["signals"]
    for name in SIGNALS:
        if name in signals:
            w = weights.get(name, 0.0)
            # Relevance is rescaled so that the best candidate has 1: what ranking weighs, not a
            # measure of how well any hit matches (that is `match`).
            label = "relevance (vs best)" if name == "relevance" else name
            rows.append(("signal", label, f"{signals[name]:.3f} × {w:g} = {signals[name] * w:.3f}"))
    for factor in ("trust", "tier", "penalty"):
        if factor in signals:
            rows.append(("signal", factor, f"× {signals[factor]:.3f}"))
    if "penalised" in hit["explain"]:
        rows.append(("signal", "penalised", hit["explain"]["penalised"]))
    for key, what in (("superseded_by", "a newer memory replaces it (a supersedes link)"),
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
        rows.append(("memory", "context", ", ".join(f"{k}={v}" for k, v in sorted(hit["context"].items()))))
    return rows


def match(hit: dict) -> str:
    """How well a hit matches the question, as measured (not relative to the best hit), and
    what it was measured by: '0.270 (meaning 0.270, words 0.100)'."""
    parts = hit["explain"].get("match", {})
    by = [f"{name} {parts[key]:.3f}" for key, name in (("cosine", "meaning"), ("words", "words"))
          if parts.get(key) is not None]
    return f"{hit['match']:.3f}" + (f" ({', '.join(by)})" if by else "")


def fact_value(value: str | None) -> str:
    return "(retracted)" if value is None else value


def node_text(node: str, text: str | None) -> str:
    """A spiderweb node as a person reads it: `#12 what the memory says`, `key = value`,
    `web-01 (host)`; the bare name when its text is unknown."""
    kind, _, ident = node.partition(":")
    if text is None:
        return node
    if kind == "episode":
        return f"#{ident} {one_line(text, 10_000)}"
    if kind == "entity":
        return f"{text} ({ident.split(':', 1)[0]})"
    return one_line(text, 10_000)


def node_short(node: str) -> str:
    """A node in a path: `#12`, a fact's key, an entity's value."""
    kind, _, ident = node.partition(":")
    return {"episode": f"#{ident}", "entity": ident.split(":", 1)[-1]}.get(kind, ident)


def nothing_reached(weights: list[float], links: int, *, threshold: float, cap: float, fan_out: bool,
                    link_weight: float) -> str:
    """Why a spread from a node reached nothing, given its edges' weights and how many typed
    links it has. A first hop passes weight ÷ cap (÷ √edges with fan-out) and must reach the
    threshold (see web/spread.py)."""
    followed = weights + ([link_weight] * links if link_weight > 0 else [])
    if not followed:
        unfollowed = f"; its {links} typed link(s) are not followed (graph.link_weight is 0)" if links else ""
        return "it has no edges yet: nothing has been used together with it" + unfollowed
    need = threshold * cap
    strongest = max(followed)
    if strongest < need:
        return (f"every edge is below the threshold: the strongest weighs {strongest:.3f}, and a spread keeps "
                f"activation ≥ {threshold:g} (graph.spread_threshold), which needs a weight of {need:g} "
                f"(threshold × graph.edge_cap {cap:g})")
    heavy = sum(w >= need for w in followed)
    if fan_out and strongest / cap / heavy ** 0.5 < threshold:
        return (f"fan-out normalisation shares the strongest edge ({strongest:.3f}) among {heavy} edges: "
                f"{strongest / cap / heavy ** 0.5:.3f} is below the threshold {threshold:g} (graph.spread_threshold)")
    return "everything it reaches is archived (strata web spread --include-archived shows it)"
