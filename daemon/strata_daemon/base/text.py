"""Whether a value is text strata can store.

Python holds bytes that are not UTF-8 as lone surrogates (an argument typed as $'\\xff', a
careless JSON encoder's "\\ud800"). They are nobody's words, SQLite cannot store them, and a
field that let one through would fail later, deep in a write, as a traceback."""

from __future__ import annotations

from typing import Any

from strata_daemon.errors import InvalidInput

HINT = "convert it to UTF-8 first (e.g. with iconv); strata stores text only"


def is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def broken_part(value: Any) -> str | None:
    """The path ('', 'code', 'tags[2]') of the first string in VALUE, a key or a value at any
    depth, that is not valid text; None when all are. Iterative: a body can nest deep."""
    stack = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not is_text(item):
                return path
        elif isinstance(item, dict):
            for key, inner in item.items():
                inner_path = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and not is_text(key):
                    return f"{path}.<key>" if path else "<key>"
                stack.append((inner, inner_path))
        elif isinstance(item, (list, tuple)):
            stack.extend((inner, f"{path}[{n}]") for n, inner in enumerate(item))
    return None


def require_text(value: Any, what: str) -> None:
    """Refuse VALUE (a string, or an object or list holding strings) unless all of it is text."""
    if broken_part(value) is not None:
        raise InvalidInput(f"{what} is not valid UTF-8 text", hint=HINT)
