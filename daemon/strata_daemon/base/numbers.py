"""Counts and ids a caller hands the Python API, checked as strata says it: int() would turn
NaN, infinity or a word into a ValueError that no face expects, and 2.5 into 2 unsaid."""

from __future__ import annotations

from typing import Any

from strata_daemon.base.wording import quoted
from strata_daemon.errors import InvalidInput


def whole(value: Any, name: str) -> int:
    """VALUE as an int: an int, a float with nothing after the point, or digits as text."""
    if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
        raise InvalidInput(f"{name} must be a whole number, not {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{name} must be a whole number, not {quoted(value)}") from None
