"""Episode input validation and row shaping. Pure: no I/O."""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strata_daemon.base.credentials import Redactor
from strata_daemon.base.text import HINT as TEXT_HINT, broken_part, require_text
from strata_daemon.base.timeutil import parse_time
from strata_daemon.base.wording import quoted
from strata_daemon.errors import InvalidInput

STATES = ("active", "superseded", "archived", "quarantined")
MAX_CONTEXT_DEPTH = 4
MAX_CONTEXT_BYTES = 64 * 1024  # as store.max_content_bytes's default: a context is no place for a document
MAX_SHORT_FIELD = 256
# Ids and counts past this lose precision in JSON clients, and an id near SQLite's limit would
# leave no room for the ids after it.
MAX_WHOLE = 2**53 - 1

QUALITIES = ("unknown", "good")
TIERS = ("hot", "cold")


@dataclass(frozen=True)
class Limits:
    max_content_bytes: int
    kinds: tuple[str, ...]
    default_kind: str
    default_importance: float
    redactor: Redactor | None = None  # credentials out of the text and the context before they are stored

    def known_kinds(self, kinds) -> tuple[str, ...]:
        """The kinds asked for, each one store.kinds allows."""
        kinds = tuple(str(k).lower() if str(k).lower() in self.kinds else k for k in kinds)  # `Event` is `event`
        unknown = [x for x in kinds if x not in self.kinds]
        if unknown:
            raise InvalidInput(f"unknown kind {unknown[0]!r}", hint=f"use one of: {', '.join(self.kinds)}")
        return kinds


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:32]


def clean_content(value: Any, limits: Limits) -> str:
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidInput(f"text is not valid UTF-8 (byte {e.start})",
                               hint="convert it to UTF-8 first, e.g. with iconv") from None
    if not isinstance(value, str):
        raise InvalidInput(f"content must be text, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInput(f"text contains a NUL byte (at character {value.index(chr(0))})",
                           hint="binary data is not stored; strip NUL bytes or store a description")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("text is not valid UTF-8 (it holds undecodable bytes)",
                           hint="convert it to UTF-8 first, e.g. with iconv") from None
    text = value.strip()
    if limits.redactor is not None:
        text = limits.redactor.clean(text).strip()
    if not text or all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text):
        # Only blanks, or only marks that show nothing (zero-width spaces, direction marks).
        raise InvalidInput("text is empty", hint="give the observation some words")
    if size > limits.max_content_bytes:
        raise InvalidInput(f"text is {size} bytes, over the limit of {limits.max_content_bytes}",
                           hint="split it, or raise store.max_content_bytes in strata.toml")
    return text


def _too_deep(value: Any, limit: int) -> bool:
    # Iterative: a hostile document can nest deeper than Python's recursion limit.
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            if level + 1 > limit:
                return True
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def clean_context(value: Any) -> dict:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, too deep, or a number of too many digits
            # `"env=prod"` in an import line is valid JSON, a string: say what a context is.
            raise InvalidInput("context must be an object of KEY: VALUE pairs (or the JSON text of one), not the "
                               f"text {quoted(value[:60])}", hint='write it as {"env": "prod"}') from None
    if not isinstance(value, Mapping):
        raise InvalidInput("context must be an object of KEY: VALUE pairs")
    if _too_deep(value, MAX_CONTEXT_DEPTH):
        raise InvalidInput(f"context is nested deeper than {MAX_CONTEXT_DEPTH} levels")
    if (where := broken_part(value)) is not None:
        raise InvalidInput(f"the context{' at ' + where if where else ''} is not valid UTF-8 text", hint=TEXT_HINT)
    for key in value:
        if not isinstance(key, str) or not key.strip() or len(key) > MAX_SHORT_FIELD:
            raise InvalidInput(f"context key {quoted(key)} must be a non-empty string of at most {MAX_SHORT_FIELD} "
                               "characters")
    size = len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))
    if size > MAX_CONTEXT_BYTES:
        raise InvalidInput(f"context is {size:,} bytes of JSON, over the limit of {MAX_CONTEXT_BYTES:,}",
                           hint="a context is a few short KEY: VALUE pairs of the situation; store long text "
                                "as the observation itself")
    return dict(value)


def _redacted(value: Any, redactor: Redactor | None) -> Any:
    """A context with the credentials in its texts replaced (`{"env": {"TOKEN": "ghp_..."}}`)."""
    if redactor is None:
        return value
    if isinstance(value, str):
        return redactor.clean(value)
    if isinstance(value, dict):
        return {k: _redacted(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, redactor) for v in value]
    return value


def parse_context_pairs(pairs: list[str] | None) -> dict:
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, val = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"context {pair!r} is not KEY=VALUE")
        out[key.strip()] = val.strip()
    return out


def _importance(value: Any, default: float, name: str = "importance", *, above_zero: bool = False) -> float:
    if value is None:
        return default
    try:
        imp = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} {value!r} is not a number between 0 and 1") from None
    if isinstance(value, bool) or math.isnan(imp) or not 0.0 <= imp <= 1.0 or (above_zero and imp == 0.0):
        raise InvalidInput(f"{name} {value!r} is outside {'0 (excluded)' if above_zero else '0'}-1")
    return imp


def _optional_time(raw: Mapping, name: str, now: float) -> float | None:
    return parse_time(raw[name], reference=now) if raw.get(name) is not None else None


def _short(value: Any, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InvalidInput(f"{name} must be a string")
    text = str(value)
    if len(text) > MAX_SHORT_FIELD or "\x00" in text:
        raise InvalidInput(f"{name} must be at most {MAX_SHORT_FIELD} characters of text")
    require_text(text, f"the {name}")
    return text


def _count(raw: Mapping, name: str) -> int:
    value = raw.get(name, 0) or 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WHOLE:
        raise InvalidInput(f"{name} must be a whole number from 0 to {MAX_WHOLE}")
    return value


def _flag(raw: Mapping, name: str) -> int:
    value = raw.get(name, False)
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise InvalidInput(f"{name} must be true or false")
    return int(bool(value))


def normalize(raw: Mapping[str, Any], limits: Limits, *, agent: str, now: float) -> dict:
    """Validate one observation (from the CLI, the API or a JSONL line) into column values.

    Fields an export carries (counts, state, recorded time) are kept, so export/import round-trips.
    """
    if not isinstance(raw, Mapping):
        raise InvalidInput("an observation must be a JSON object")
    if raw.get("content") is None:
        others = [k for k in ("text", "message", "body", "memory") if isinstance(raw.get(k), str)]
        raise InvalidInput("an observation has no `content`" + (f" (it has `{others[0]}`)" if others else ""),
                           hint="the text of a memory goes in `content`; docs/guide.md shows an import line")
    content = clean_content(raw.get("content"), limits)
    given = raw.get("content")
    said_hash = content_hash(given.strip()) if isinstance(given, str) and given.strip() != content else None
    kind = limits.default_kind if raw.get("kind") is None else raw["kind"]
    if isinstance(kind, str) and kind.lower() in limits.kinds:  # `--kind Event` is `event`, as keys ignore case
        kind = kind.lower()
    if kind not in limits.kinds:
        raise InvalidInput(f"unknown kind {kind!r}", hint=f"use one of: {', '.join(limits.kinds)} "
                           "(or add it to store.kinds in strata.toml)")
    event_at = parse_time(raw["event_at"] if raw.get("event_at") is not None else raw.get("at", now), reference=now)
    recorded_at = parse_time(raw["recorded_at"], reference=now) if raw.get("recorded_at") is not None else now
    state = raw.get("state") or "active"
    if state not in STATES:
        raise InvalidInput(f"unknown state {state!r}", hint=f"use one of: {', '.join(STATES)}")
    last_access = raw.get("last_access_at")
    occurrences = _count(raw, "occurrences") or 1
    row = {
        "agent": agent, "kind": kind, "content": content, "content_hash": content_hash(content),
        **({"said_hash": said_hash} if said_hash else {}),
        "event_at": event_at, "recorded_at": recorded_at,
        "last_seen_at": parse_time(raw["last_seen_at"], reference=now) if raw.get("last_seen_at") else event_at,
        "occurrences": occurrences,
        "source": _short(raw.get("source"), "source"), "session": _short(raw.get("session"), "session"),
        "importance": _importance(raw.get("importance"), limits.default_importance),
        "factual": _flag(raw, "factual"), "irrelevant": _flag(raw, "irrelevant"),
        "context": json.dumps(_redacted(clean_context(raw.get("context")), limits.redactor), ensure_ascii=False,
                              sort_keys=True),
        "access_count": _count(raw, "access_count"),
        "last_access_at": parse_time(last_access, reference=now) if last_access is not None else None,
        "success_count": _count(raw, "success_count"), "failure_count": _count(raw, "failure_count"),
        "state": state, "superseded_by": None, "updated_at": now,
        # What consolidation set, carried by an export.
        "confidence": _importance(raw.get("confidence"), 1.0, "confidence"),
        "quality": raw.get("quality") or "unknown",
        "strength_factor": _importance(raw.get("strength_factor"), 1.0, "strength_factor", above_zero=True),
        **{name: _optional_time(raw, name, now) for name in ("potentiated_at", "stale_at", "replayed_at", "tier_at")},
        "tier": raw.get("tier") or ("cold" if state == "superseded" else "hot"),
    }
    if row["quality"] not in QUALITIES:
        raise InvalidInput(f"unknown quality {row['quality']!r}", hint=f"use one of: {', '.join(QUALITIES)}")
    if row["tier"] not in TIERS:
        raise InvalidInput(f"unknown tier {row['tier']!r}", hint=f"use one of: {', '.join(TIERS)}")
    rid = raw.get("id")
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, int) or not 0 < rid <= MAX_WHOLE):
        raise InvalidInput(f"id must be a whole number from 1 to {MAX_WHOLE}")
    row["id"] = rid
    return row
