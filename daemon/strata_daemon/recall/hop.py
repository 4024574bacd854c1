"""The second hop's words: what the best hits of the first hop say that the question did not.
Pure: no I/O.

A multi-hop question names one end of what it needs ("What might Caroline study, given her
work?"): the first hop finds the memories about her work, and their own words ("counseling",
"mental health") find the memories the answer sits in. Pseudo-relevance feedback, as search
engines have long done it, with the full-text index weighing the words (rare ones count more).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from strata_daemon.store.fts_query import STOPWORDS

_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]", re.UNICODE)
# Words of talk that say nothing about what a memory is about.
_FILLER = frozenset("""really think thing things lot much also just like well know good great thanks thank yeah
wow glad hope sure maybe still even feel felt make made going gonna want wanted time times way always never
something anything everything someone anyone everyone hey hi hello awesome amazing cool nice love loved
totally definitely actually pretty super kind sounds sound let lets got get getting take took see seen look
looking""".split())


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def expansion(query: str, seeds: Sequence[str], limit: int, found: Sequence[str] = ()) -> list[str]:
    """Up to `limit` words the seed texts share most, that the query does not hold: those in
    more seeds first, then the more frequent; stopwords, filler and short words never, nor a
    word at least half of what the first hop `found` holds (it would tell nothing apart)."""
    asked = set(words_of(query))
    in_seeds: Counter = Counter()
    total: Counter = Counter()
    for text in seeds:
        words = [w for w in words_of(text) if len(w) >= 4 and w not in STOPWORDS and w not in _FILLER
                 and w not in asked]
        total.update(words)
        in_seeds.update(set(words))
    if len(found) >= 2 and total:
        # Only the seeds' words are counted in what was found: a recall finds a few hundred
        # memories, and counting every word of each cost more than the search it feeds.
        held = Counter()
        for text in found:
            held.update(set(words_of(text)).intersection(total))
        total = Counter({w: n for w, n in total.items() if 2 * held[w] < len(found)})
    ranked = sorted(total, key=lambda w: (-in_seeds[w], -total[w], w))
    return ranked[:limit]
