"""How a value reads to a person, in the CLI and the inspector alike (JSON keeps the values)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

# Control characters (but newline and tab) shown as \xNN: a memory holds what the agent read
# (mail, web pages), and an escape sequence in it must not drive the terminal of whoever looks,
# whether at the CLI's output or at a capsule or dossier file.
_VISIBLE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if c not in (0x09, 0x0a)}


def printable(text: str) -> str:
    return text.translate(_VISIBLE)


def field(key: str, value: Any) -> str:
    """A named field's value as `plain` says it, a count of bytes as every text form writes one
    (`1,937,408`)."""
    return f"{value:,}" if str(key).endswith("bytes") and type(value) is int else plain(value)


def plain(value: Any) -> str:
    """Yes or no, "—" for nothing, a list or a flat table as words (`environment=prod, goal=ship`,
    the form --context takes)."""
    if value is None or (isinstance(value, (list, tuple, dict)) and not value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(plain, value))
    if isinstance(value, dict):
        if any(isinstance(v, (dict, list)) for v in value.values()):
            return worded(value)
        return ", ".join(f"{k}={plain(v)}" for k, v in value.items())
    return str(value)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 memory`, `2 memories`: a count in words agrees with its number (`1,024 lines`)."""
    if n == 1:
        return f"1 {noun}"
    many = plural or (noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s")
    return f"{n:,} {many}"


def _is_time(key: str) -> bool:
    return key.endswith("_at") or key in ("at", "valid_from", "valid_to")


def worded(value: Any, key: str = "") -> str:
    """A nested record (an audit entry's data, a table of tables) in words: `key=value` pairs, a
    nested table or list in parentheses, yes and no, "—" for nothing, and a time (a number under
    a key ending in `_at`) as its UTC minute, never JSON or a Python repr."""
    if value is None or (isinstance(value, (list, tuple, dict)) and not value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and _is_time(key) and value > 0:
        return datetime.fromtimestamp(value, timezone.utc).strftime("%Y-%m-%d %H:%M")
    if isinstance(value, dict):
        return ", ".join(f"{k}={_nested(v, str(k))}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_nested(v, key) for v in value)
    return str(value)


def _nested(value: Any, key: str) -> str:
    text = worded(value, key)
    return f"({text})" if isinstance(value, dict) and value or isinstance(value, (list, tuple)) and len(value) > 1 \
        else text


def record(data: Any) -> str:
    """An audit entry's data, stored as JSON text, in words (`kind=event, source=—, hash=…`)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return data
    return worded(data)


QUOTE_CHARS = 40


def quoted(value: Any, limit: int = QUOTE_CHARS) -> str:
    """VALUE as an error quotes it: its repr, cut to its first LIMIT characters. An error read
    in a terminal or a journal names the input; it never echoes 100 KB of it back."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(text) if isinstance(value, str) else text
    cut = repr(text[:limit]) if isinstance(value, str) else text[:limit]
    return f"{cut}… ({len(text):,} characters)"
