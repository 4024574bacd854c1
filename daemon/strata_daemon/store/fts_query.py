"""Turn any user string into a safe FTS5 query. Pure.

Users type quotes, operators, punctuation and emoji; none of it may reach FTS5 as syntax.
Each whitespace-separated chunk becomes its word pieces: one piece is a term, several
(gw-02, ERR_CONN_RESET, nginx.conf) a phrase so identifiers match as written. Terms are
OR-ed and BM25 ranks documents that match more and rarer terms first.
"""

from __future__ import annotations

import re

# unicode61 splits on everything that is not a letter or digit, "_" included; mirror it.
_PIECE = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset("""
a about after again all am an and any are as at be been before being but by can could did do does doing
for from had has have having he her here hers him his how i if in into is it its itself just me more most my
no nor not of off on once only or other our ours out over own same she should so some such than that the
their theirs them then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours
""".split())


# A word as written: letters and digits, then any of them or `'`, `-`, `_` (`gw-02`, `Dana's`).
WORD = re.compile(r"[^\W_][\w'-]*")


def term(word: str) -> str:
    """A word as compared: case-folded, a possessive `'s` and a plural `s` dropped."""
    w = word.casefold().removesuffix("'s").removesuffix("’s")
    return w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")) else w


def term_list(text: str) -> list[str]:
    """Terms in order; an identifier (`billing-api`, `api.example.com`) also gives its parts."""
    out = []
    for word in WORD.findall(text):
        out.append(term(word))
        if "-" in word or "." in word.strip("."):
            out.extend(term(p) for p in re.split(r"[-.]", word) if len(p) >= 3)
    return out


def content_words(text: str) -> frozenset[str]:
    """Content terms (see term_list), stopwords and words under three letters dropped: what a
    question and a memory are compared by, outside full-text search."""
    return frozenset(w for w in term_list(text) if len(w) >= 3 and w not in STOPWORDS)


def terms(query: str) -> list[list[str]]:
    """Word pieces per chunk, lower-cased, stopword-only chunks dropped unless nothing else remains."""
    chunks = []
    for chunk in query.split():
        pieces = [p.lower() for p in _PIECE.findall(chunk)]
        if pieces:
            chunks.append(pieces)
    kept = [c for c in chunks if not (len(c) == 1 and c[0] in STOPWORDS)]
    out, seen = [], set()
    for c in kept or chunks:
        key = " ".join(c)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def pieces(text: str) -> list[str]:
    """Every word piece of a text, lower-cased, stopwords included: what the index holds of it."""
    return [p.lower() for p in _PIECE.findall(text)]


MAX_TERMS = 32


def phrase(pieces: list[str]) -> str:
    # Pieces are letters and digits only, so wrapping them in double quotes is always safe.
    return '"' + " ".join(pieces) + '"'


def any_of(phrases: list[str]) -> str:
    return " OR ".join(phrases)


def all_of(phrases: list[str]) -> str:
    return " AND ".join(phrases)


def match_expression(query: str) -> str | None:
    """The plain FTS5 MATCH expression (any term), or None when the query has no searchable words."""
    parts = terms(query)[:MAX_TERMS]
    return any_of([phrase(p) for p in parts]) if parts else None
