"""What an agent's reply says about the block it was given, and what a session decided and
learnt. Pure: no I/O.

A reply uses a memory when it cites its id (`#123`, as the block writes it, or `e123`, as the
capsule does) or repeats a run of its words (QUOTED words in a row, so that a memory is not
counted used for sharing a phrase or two with the reply)."""

from __future__ import annotations

import re
from typing import Iterable, Mapping

QUOTED = 6
_CITED = re.compile(r"(?<![\w#])[#e](\d{1,12})\b")
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
# A line of an agent's own text that records a decision or a lesson, as it would be worth
# remembering after the session: `Decided to ...`, `Lesson: ...`, `From now on ...`.
_DECISION = re.compile(r"(?i)^(?:decision\s*:|(?:decided|we(?:'ll| will) (?:use|keep|go with|switch)|going forward|"
                       r"from now on|agreed)\b)")
_LESSON = re.compile(r"(?i)^(?:(?:lesson(?: learned| learnt)?|til|root cause)\s*:|(?:learned|learnt|note to self|"
                     r"the root cause|it turns out|turns out)\b)")
MAX_LINE = 500


def _runs(text: str) -> set[tuple[str, ...]]:
    words = [w.casefold() for w in _WORD.findall(text)]
    return {tuple(words[i:i + QUOTED]) for i in range(len(words) - QUOTED + 1)}


def used(reply: str, given: Mapping[int, str]) -> list[int]:
    """The memories of `given` (id -> text) the reply cites or quotes, in the order given."""
    cited = {int(m) for m in _CITED.findall(reply)}
    said = _runs(reply)
    return [i for i, text in given.items() if i in cited or (said and _runs(text) & said)]


def _lines(text: str) -> Iterable[str]:
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*•> ").strip()
        if line:
            yield line


def worth_keeping(texts: Iterable[str], limit: int = 20) -> list[tuple[str, str]]:
    """(kind, line) for each line of an agent's text that records a decision or a lesson,
    each once, at most `limit`."""
    out: dict[str, str] = {}
    for text in texts:
        for line in _lines(text):
            kind = "decision" if _DECISION.match(line) else "lesson" if _LESSON.match(line) else None
            line = line[:MAX_LINE]
            if kind and line not in out and len(out) < limit:
                out[line] = kind
    return [(kind, line) for line, kind in out.items()]
