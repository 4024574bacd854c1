"""How much of a memory tells rather than asks. Pure: no I/O.

"What's your best camping memory?" holds the words of a question about camping and answers
none: in the LoCoMo conversations a turn that ends in a question is evidence for some question
half as often as one that does not (14% against 29%), yet it shares the asker's words. Recall
lowers a candidate by the share of its words that ask (`recall.asking_discount`); a memory
with no question mark keeps all of its relevance, however short ("bridge is DOWN").
"""

from __future__ import annotations

import re

# A sentence ends at . ! ? (and any closing quote or bracket) followed by white space and no
# lower-case letter, so that "GET /search?q=1 failed", "v2.3" and 'she asked "why?" and left'
# stay one sentence.
_SENTENCE_END = re.compile(r"([.!?]+)[\"'”’)\]]*\s+(?![a-z])")
_CLOSING = " \t\"'”’)]"


def told_share(text: str) -> float:
    """The share of the text's words (runs of non-space) that sit in sentences not ending in a
    question mark; 1.0 for a text without words. About 3 µs for a two-line memory that asks."""
    if "?" not in text:  # most memories (and a text without words): nothing to count
        return 1.0
    total = len(text.split())  # at least the run holding the "?"
    asked = start = 0
    for end in _SENTENCE_END.finditer(text):
        if "?" in end.group(1):  # "Really?!" asks too
            asked += len(text[start:end.start()].split())
        start = end.end()
    if text.rstrip(_CLOSING).rstrip(".!").endswith("?"):
        asked += len(text[start:].split())
    return 1.0 - asked / total
