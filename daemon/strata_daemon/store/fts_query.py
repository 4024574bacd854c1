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
