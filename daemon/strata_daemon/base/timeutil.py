"""Times are stored as UTC unix seconds (REAL); people see ISO 8601."""

from __future__ import annotations

import contextlib
import math
import re
import time
from datetime import datetime, timezone
from typing import Callable, Iterator

from strata_daemon.errors import InvalidInput

# "3h ago", "90m", "2 days ago", "1 week ago": a unit is known by its first letter.
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?)"
                       r"\s*(?:ago)?\s*$", re.I)
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_NAMED = {"now": 0, "today": 0, "yesterday": 86400}  # seconds back from the reference


_clock: Callable[[], float] = time.time


def now() -> float:
    """The time every layer reads (recall, feedback, phases, consolidation)."""
    return _clock()


@contextlib.contextmanager
def clock(read: Callable[[], float]) -> Iterator[None]:
    """Within the block, `now()` is `read()`: how `strata bench lived` lets a home live months
    in minutes. Only benchmarks move the clock; the daemon never does."""
    global _clock
    before, _clock = _clock, read
    try:
        yield
    finally:
        _clock = before


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


_SPANS = ((86400, "day"), (3600, "h"), (60, "min"), (1, "s"))


def duration(seconds: float) -> str:
    """A length of time as a person reads it: "1 day", "6 h", "15 min", "90 s", "2.4 min".

    A whole number of a unit is said in that unit, the largest one that keeps it under a
    hundred (5400 s is "90 min", not "1.5 h"); any other length is rounded in the largest unit
    it reaches ("2.4 min", "12 s", "0.25 s"). Lengths in `--json` stay in seconds."""
    if not math.isfinite(seconds):
        return f"{seconds} s"
    if seconds < 0:
        return "-" + duration(-seconds)
    reached = next(((size, unit) for size, unit in _SPANS if seconds >= size), _SPANS[-1])
    for size, unit in _SPANS:
        count = seconds / size
        if count >= 1 and count == int(count) and (count < 100 or size == reached[0]):
            return _count(int(count), unit)
    size, unit = reached
    count = seconds / size
    if count < 1:  # under a second: two digits, so 0.25 s is not 0.2 s
        return _count(f"{count:.2g}", unit)
    return _count(f"{count:.0f}" if count >= 10 else f"{count:.1f}".removesuffix(".0"), unit)


def _count(n: int | str, unit: str) -> str:
    return f"{n} {unit}" + ("s" if unit == "day" and str(n) != "1" else "")


# Years 1 to 9999: what a timestamp can be shown as (and what anyone means by a time).
EARLIEST, LATEST = -62135596800.0, 253402300799.0


def parse_time(value: str | float | int, *, reference: float | None = None) -> float:
    """Accept unix seconds, ISO 8601 (naive means UTC), 'now', 'today', 'yesterday' (a day
    back from the reference), or '3h ago' / '2d' / '2 days ago'."""
    t = _parse_time(value, reference)
    if not EARLIEST <= t <= LATEST:  # also NaN
        raise InvalidInput(f"the time {value!r} is outside the years 1 to 9999")
    return t


def _parse_time(value: str | float | int, reference: float | None) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if not text:
        raise InvalidInput("empty time", hint="use ISO 8601 like 2026-03-25T12:00Z, unix seconds, or '3h ago'")
    if text.lower() in _NAMED:
        return (reference if reference is not None else now()) - _NAMED[text.lower()]
    m = _RELATIVE.match(text)
    if m:
        base = reference if reference is not None else now()
        return base - float(m.group(1)) * UNIT_SECONDS[m.group(2)[0].lower()]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"cannot read time {text!r}",
            hint="use ISO 8601 like 2026-03-25T12:00Z, unix seconds, or a relative time like '3h ago'",
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()
