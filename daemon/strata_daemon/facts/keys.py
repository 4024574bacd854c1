"""Fact keys, values and sources: validation and normalisation. Pure: no I/O.

Key rules (documented in docs/concepts.md): Unicode NFKC, case-folded, surrounding space and one
trailing colon removed, every run of whitespace, `_` or `-` between words made one space, except
that `_` or `-` before a digit joins an identifier and is kept as `-`. So `Bridge`, ` BRIDGE:`
and `bridge` are one key; `backup_job`, `Backup-Job` and `backup  job` are another; `db-01` and
`DB_01` a third, not `db 01`. The key as first written is kept as its label.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from strata_daemon.base.text import require_text
from strata_daemon.base.timeutil import UNIT_SECONDS
from strata_daemon.errors import InvalidInput

MAX_KEY_CHARS = 200
SOURCE_KINDS = ("person", "episode", "capsule", "rule", "agent", "import")
# A host, a node or a ticket (`db-01`, `node_2`, `2026-11-28`) is one name, not two words.
_SEPARATORS = re.compile(r"(?P<joins>(?<=\w)[_\-]+(?=\d))|[\s_\-]+")
# Control characters other than newline and tab; a value may span lines, a key may not.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _text(value: Any, what: str) -> str:
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidInput(f"the {what} is not valid UTF-8 (byte {e.start})") from None
    if not isinstance(value, str):
        raise InvalidInput(f"the {what} must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"the {what} holds characters that are not valid UTF-8") from None
    return value


def label_of(raw: Any) -> str:
    """The key as a person wrote it, trimmed; checked for what no key may hold."""
    text = _text(raw, "key").strip()
    if text.endswith(":"):
        text = text[:-1].rstrip()
    if not text:
        raise InvalidInput("the key is empty", hint="name what the fact is about, e.g. `bridge` or `backup job`")
    if "\n" in text or "\r" in text or _CONTROL.search(text):
        raise InvalidInput("the key holds a line break or a control character", hint="keys are one line")
    if len(text) > MAX_KEY_CHARS:
        raise InvalidInput(f"the key is {len(text)} characters long; the limit is {MAX_KEY_CHARS}")
    return text


def normalise_key(raw: Any) -> str:
    folded = unicodedata.normalize("NFKC", label_of(raw)).casefold()
    key = _SEPARATORS.sub(lambda m: "-" if m["joins"] else " ", folded).strip()
    if not any(c.isalnum() for c in key):  # `:::` or `...` names nothing a person could ask for
        raise InvalidInput(f"the key {raw!r} has no letters or digits")
    return key


def clean_value(raw: Any, max_bytes: int) -> str:
    """A value is any non-empty text without NUL or control characters; line breaks are kept
    (as \\n) and surrounding space trimmed. To clear a fact, retract it."""
    text = _text(raw, "value").replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise InvalidInput("the value is empty", hint="to clear a fact, use `strata fact retract KEY`")
    bad = _CONTROL.search(text)
    if bad:
        raise InvalidInput(f"the value holds a control character (U+{ord(bad.group()):04X}) "
                           f"at character {bad.start()}", hint="store text; binary data has no place in a fact")
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput(f"the value is {size} bytes; the limit is {max_bytes} (facts.max_value_bytes)",
                           hint="a fact is a short statement; put long text in an observation")
    return text


@dataclass(frozen=True)
class Source:
    """Where a value came from: kind (person, episode, capsule, rule, agent, import) and a reference."""
    kind: str
    ref: str | None = None

    def __str__(self) -> str:
        return self.kind if self.ref is None else f"{self.kind}:{self.ref}"

    @classmethod
    def parse(cls, text: str | None, *, default: "Source") -> "Source":
        if text is None or not str(text).strip():
            return default
        require_text(str(text), "the source")
        kind, _, ref = str(text).strip().partition(":")
        kind = kind.strip().lower()
        if kind not in SOURCE_KINDS:
            raise InvalidInput(f"unknown source kind {kind!r}",
                               hint=f"write KIND[:REF] with KIND one of {', '.join(SOURCE_KINDS)}, e.g. person:alice")
        ref = ref.strip() or None
        if ref is not None and (len(ref) > 256 or _CONTROL.search(ref) or "\n" in ref):
            raise InvalidInput("the source reference is longer than 256 characters or holds control characters")
        if kind == "episode" and (ref is None or not ref.isdigit()):
            raise InvalidInput("an episode source needs the episode id, e.g. episode:42")
        return cls(kind, ref)


def parse_duration(text: Any) -> float | None:
    """Seconds from `90`, `30m`, `12h`, `7d`, `2w`; None for `none`, `off` or 0 (no TTL)."""
    if text is None:
        return None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        s = str(text).strip().lower()
        if s in ("none", "off", "never", ""):
            return None
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?", s)
        if not m:
            raise InvalidInput(f"cannot read duration {text!r}", hint="use seconds or a number with s, m, h, d or w")
        seconds = float(m.group(1)) * UNIT_SECONDS[m.group(2) or "s"]
    if seconds < 0:
        raise InvalidInput("a duration cannot be negative")
    return seconds or None
