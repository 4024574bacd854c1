"""The [experimental] table of strata.toml: a tuned constant (config/tuning.py) given another
value by its name, `recall.vector_weight = 0.9`, for an experiment. It carries no promise: a
constant may be renamed or go in any release, and only its type is checked."""

from __future__ import annotations

import difflib

import dataclasses
import math
from typing import Any, Mapping

from strata_daemon.config.tuning import Tuning

SECTION = "experimental"


def _keys(node: Any, prefix: str = "") -> dict[str, tuple[type, Any]]:
    out: dict[str, tuple[type, Any]] = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if dataclasses.is_dataclass(value):
            out.update(_keys(value, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = (f.type, value)
    return out


# name -> (type, default) of every tuned constant: recall.candidates, scoring.weights.relevance, ...
KEYS: dict[str, tuple[type, Any]] = _keys(Tuning())
_TYPES = {"int": int, "float": float, "str": str, "bool": bool}
_WORDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}
_DURATIONS = ("_seconds", "_hours", "_days", "_ms")
# The lengths of time that may be none at all: no window for conflicts, no wait before archiving.
_MAY_BE_NONE = ("facts.conflict_window_seconds", "consolidation.archive_min_days", "consolidation.min_interval_hours")


def value_type(key: str) -> type:
    kind, default = KEYS[key]
    if isinstance(kind, str):  # annotations are text here: "float", "float | None"
        return _TYPES.get(kind.split("|")[0].strip(), type(default))
    return kind


def problem(key: str, value: Any) -> str | None:
    """Why `value` cannot stand for the constant `key`, or None."""
    if key not in KEYS:
        near = difflib.get_close_matches(key, list(KEYS), n=2, cutoff=0.75)
        return ("is no tuned constant" + (f"; did you mean {' or '.join(near)}?" if near else "")
                + " (`strata config show --experimental` lists them, with their values)")
    kind = value_type(key)
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, (int, float) if kind is float else kind):
        return f"must be {_WORDS[kind]}, like its default ({KEYS[key][1]!r})"
    if kind in (int, float) and not math.isfinite(value):
        return "must be a finite number"
    if kind is int and value < 0:
        return "must be 0 or more"
    if key.endswith(_DURATIONS) and (value < 0 or value == 0 and key not in _MAY_BE_NONE):
        return "must be a length of time above 0"  # a phase every 0 s, or -5 s, would never rest
    return None


def coerced(key: str, value: Any) -> Any:
    return float(value) if value_type(key) is float else value


def laid_over(tuning: Tuning, overrides: Mapping[str, Any]) -> Tuning:
    """The constants with these overrides (checked already) in place of their defaults."""
    if not overrides:
        return tuning
    nested: dict[str, Any] = {}
    for key, value in overrides.items():
        head, _, rest = key.partition(".")
        nested.setdefault(head, {})[rest] = value
    changes = {}
    for head, inner in nested.items():
        part = getattr(tuning, head)
        plain = {k: coerced(f"{head}.{k}", v) for k, v in inner.items() if "." not in k}
        deeper = {k: v for k, v in inner.items() if "." in k}
        part = dataclasses.replace(part, **plain) if plain else part
        changes[head] = _deeper(part, deeper, head) if deeper else part
    return dataclasses.replace(tuning, **changes)


def _deeper(part: Any, inner: Mapping[str, Any], where: str) -> Any:
    grouped: dict[str, dict[str, Any]] = {}
    for key, value in inner.items():
        head, _, rest = key.partition(".")
        grouped.setdefault(head, {})[rest] = coerced(f"{where}.{head}.{rest}", value)
    return dataclasses.replace(part, **{h: dataclasses.replace(getattr(part, h), **v) for h, v in grouped.items()})
