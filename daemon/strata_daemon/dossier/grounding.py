"""The check an LLM's dossier lines pass before they are stored. Pure: no I/O.

A line is kept only if
- it cites at least one source, and every id it cites was among the sources it was given;
- every number in it (digits, with thousands separators and decimals) appears in the text of
  the sources it cites, their times included;
- every proper name in it (a capitalised word, unless it is an ordinary sentence opener such
  as "The" or "After", or a word with a capital or digit inside, such as gw-01 or PostgreSQL)
  appears in those sources too, so a line that starts with a word its sources lack is dropped;
  month and weekday names count as names and may also come from the sources' dates.
Matching ignores case and thousands separators, and takes whole numbers and words (3 is
not found in 2023). What a small model adds from outside its
sources (a figure, a person, a date) fails the line; wording it chose itself does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])|(?<=[A-Za-z-])\d+")
_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_WORD = re.compile(r"[^\W_][\w'’.-]*[^\W_]|[^\W_]")
# Capitalised words that start clauses or are ordinary in any English dossier line.
_ORDINARY = {"a", "an", "the", "this", "that", "these", "those", "it", "its", "we", "i", "you", "he", "she", "they",
             "there", "here", "and", "but", "or", "so", "if", "when", "while", "after", "before", "since", "until",
             "as", "at", "on", "in", "of", "for", "to", "from", "by", "with", "no", "not", "yes", "also", "then",
             "now", "today", "yesterday", "tomorrow", "current", "currently", "recent", "recently", "open",
             "todo", "done", "up", "down", "ok", "note", "notes", "task", "tasks", "decision", "lesson", "event",
             "observation", "message", "fact", "status", "summary", "update", "overall", "key", "new", "old",
             "however", "meanwhile", "both", "all", "several", "some", "most", "many", "each", "every", "one",
             "two", "three", "latest", "last", "first", "next", "previous", "earlier", "later", "still", "again",
             "pending", "blocked", "is", "was", "are", "were", "has", "had", "have", "will", "should", "must"}


@dataclass(frozen=True)
class Verdict:
    kept: bool
    reason: str | None = None


def source_text(content: str, event_at: float | None) -> str:
    """The text a citation of this source vouches for: its content and its time, written as
    the prompt shows it and in words (so `3 November 2026` and `Tuesday` can be checked)."""
    if event_at is None:
        return content
    dt = datetime.fromtimestamp(event_at, timezone.utc)
    return f"{content}\n{dt:%Y-%m-%d %H:%M}Z {dt.day} {dt:%B %Y %A}"


def _fold(text: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3})", "", text.casefold())


def numbers(text: str) -> list[str]:
    return [_fold(m.group(0)).rstrip(".,") for m in _NUMBER.finditer(text)]


def names(text: str) -> list[str]:
    """Proper-name-like words: capitalised words other than ordinary sentence openers, and
    words with a capital or a digit after their first letter."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group(0).rstrip(".")
        inner = any(ch.isupper() or ch.isdigit() for ch in w[1:]) and any(ch.isalpha() for ch in w)
        if inner or (w[:1].isupper() and w.casefold() not in _ORDINARY):
            out.append(w)
    return out


def check(text: str, cites: list[str], sources: dict[str, str]) -> Verdict:
    """`sources`: id -> its `source_text`, for every source the model was given."""
    if not text.strip():
        return Verdict(False, "empty line")
    if not cites:
        return Verdict(False, "cites no source")
    unknown = [c for c in cites if c not in sources]
    if unknown:
        return Verdict(False, f"cites {unknown[0]}, which it was not given")
    body = _fold("\n".join(sources[c] for c in cites))
    for n in numbers(text):
        if not re.search(rf"(?<![\d.]){re.escape(n)}(?!\d)", body):
            return Verdict(False, f"the number {n} is not in its sources")
    for w in names(text):
        if not re.search(rf"(?<!\w){re.escape(_fold(w))}(?!\w)", body):
            return Verdict(False, f"the name {w!r} is not in its sources")
    return Verdict(True)


def strip_marker(text: str) -> str:
    """A line without the list marker a model may put before it ("1. ", "- ")."""
    return _MARKER.sub("", text, count=1).strip()
