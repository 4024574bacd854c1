"""A record (a memory, a fact, a dossier) as rows of (field, value) a person reads: times in
local time with their age, yes/no, "—" for nothing, context as key=value. Pure."""

from __future__ import annotations

import json
from typing import Any

from strata_daemon.faces.tui.format import age, local_time

NOTHING = "—"
TIME_KEYS = ("valid_from", "valid_to", "at")  # times whose names do not end in _at


def _is_time(key: str) -> bool:
    return key.endswith("_at") or key in TIME_KEYS


def value(key: str, v: Any, now: float) -> str:
    """One value in words, by what its key says it is."""
    if v is None or v == "" or v == [] or v == {}:
        return NOTHING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)) and _is_time(key):
        return local_time(float(v), now)
    if isinstance(v, (int, float)) and key.endswith("_seconds"):
        return age(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={value(k, x, now)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "\n".join(value(key, x, now) for x in v)
    if isinstance(v, str) and v[:1] in "{[":
        try:  # a JSON document stored as text, as an audit entry's data
            return value(key, json.loads(v), now)
        except ValueError:
            pass
    return str(v)


def rows(record: dict, now: float, *, first: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Every field of the record, the `first` ones at the top; `x_iso` copies of a time `x`
    are left out (the time is shown once, in local time)."""
    keys = [k for k in first if k in record] + [k for k in record if k not in first]
    return [(k.replace("_", " "), value(k, record[k], now)) for k in keys
            if not (k.endswith("_iso") and k[:-4] in record)]
