"""A question about the present favours the newer of two memories that say the same kind of
thing. Pure: no I/O.

Capture links the knowledge updates it can read (`supersedes`, facts/statements.py); people
word updates in more ways than patterns cover (`Warehouse is in ap-southeast-1 after the APAC
move` after `The analytics warehouse lives in us-east-2`). When a question asks how things
are (`Where is the analytics warehouse hosted?`, not `Where was ...` or `When did ...`), two
candidates that are alike (their vectors close) and both answer the question's own words are
read as an older and a newer statement of one thing: the newer ranks first.
"""

from __future__ import annotations

import re

import numpy as np

from ..facts.statements import CUES
from .fts import STOPWORDS

# Past tense, or a question about a time or an order, asks for the history, not the state.
_PAST = re.compile(r"(?i)\b(?:did|was|were|had|used\s+to|before|previous(?:ly)?|formerly|former|original(?:ly)?|"
                   r"first|old|ago|last\s+(?:year|month|week|time)|when|history|earlier|back\s+then|until|since|"
                   r"how\s+long)\b")
_PRESENT = re.compile(r"(?i)^\s*(?:what|who|whom|whose|where|which|how|is|are|does|do)\b|"
                      r"\b(?:now|current(?:ly)?|these\s+days|latest|today|at\s+the\s+moment|nowadays)\b")
_WORD = re.compile(r"[^\W_][\w'-]*")
# Words that say a statement replaces an earlier one.
_UPDATE = re.compile(r"(?i)\b(?:now|new|newly|changed?|moved|switched|actually|instead|no\s+longer|any\s*more|"
                     r"from\s+now\s+on|relocated|renamed|replaced|took\s+over|these\s+days|updated?|stopped|"
                     r"started|quit)\b")


def asks_present(query: str) -> bool:
    return bool(_PRESENT.search(query)) and not _PAST.search(query)


def updates(text: str, key: str) -> bool:
    """Whether TEXT words itself as replacing the value of the fact KEY: an update word and a
    word of the key's attribute, or one that asks for it (`I got a new number` for `my phone`)."""
    if not _UPDATE.search(text):
        return False
    attribute = key.split(".", 1)[1] if "." in key else key.removeprefix("my ").removeprefix("our ")
    named = {w for w in attribute.split() if w not in STOPWORDS} | set(CUES.get(attribute, ()))
    return bool(named & set(_WORD.findall(text.casefold())))


def words_of(text: str) -> frozenset[str]:
    """Content words, case-folded, a possessive `'s` dropped."""
    out = set()
    for w in _WORD.findall(text.casefold()):
        w = w.removesuffix("'s")
        if len(w) >= 3 and w not in STOPWORDS:
            out.add(w)
    return frozenset(out)


def newer_alike(items: list[tuple[int, float, str]], vectors: dict[int, np.ndarray], query: str, *,
                similarity: float) -> dict[int, set[int]]:
    """For (id, event time, text) candidates, older id -> newer ids that say the same kind of
    thing: vectors at least `similarity` alike, a word of the query in both texts, and none in
    the older that the newer lacks (`the price of the homepage plan` is no update of `the
    price of the ledger-sync plan` for a question naming ledger-sync)."""
    asked = words_of(query)
    known = [(i, at, words_of(text) & asked) for i, at, text in items if i in vectors]
    out: dict[int, set[int]] = {}
    for a in range(len(known)):
        i, at_i, w_i = known[a]
        for b in range(a + 1, len(known)):
            j, at_j, w_j = known[b]
            if at_i == at_j or not (w_i & w_j) or float(vectors[i] @ vectors[j]) < similarity:
                continue
            (older, w_old), (newer, w_new) = ((i, w_i), (j, w_j)) if at_i < at_j else ((j, w_j), (i, w_i))
            if w_old <= w_new:  # the newer names all the older names of the question: the same subject
                out.setdefault(older, set()).add(newer)
    return out
