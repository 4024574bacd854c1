"""How far an evaluation episode's question is worded from the memories that served it. Pure: no I/O.

An arm that searches less than the default (`fast`, which keeps to the question's words) loses
on the questions an agent words unlike what it stored: the ones a memory is for. An agent's
everyday questions repeat its own words, so they cannot show that loss; such an arm is
therefore confirmed only on the episodes whose questions share the fewest words with their
useful memories (`worded_apart`)."""

from __future__ import annotations

from typing import Mapping, Sequence

from strata_daemon.store.fts_query import content_words as terms

# Which half of the confirmation episodes, by least shared words, confirm an arm that searches less.
WORDED_APART_SHARE = 0.5


def overlap(query: str, texts: Sequence[str]) -> float:
    """The share of the question's content words that its useful memories hold (1 when the
    question has none: nothing says it is worded apart)."""
    asked = terms(query)
    if not asked:
        return 1.0
    held = frozenset().union(*(terms(t) for t in texts))
    return len(asked & held) / len(asked)


def worded_apart(episodes: Sequence[Mapping], share: float = WORDED_APART_SHARE) -> list:
    """The `share` of `episodes` (each with "id", "query" and "texts") whose questions overlap
    least with their memories, in their original order; ties go to the older episode."""
    if not episodes:
        return []
    n = max(1, round(len(episodes) * share))
    chosen = {e["id"] for e in sorted(episodes, key=lambda e: (overlap(e["query"], e["texts"]), e["id"]))[:n]}
    return [e for e in episodes if e["id"] in chosen]
