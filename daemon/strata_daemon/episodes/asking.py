"""How much of a memory tells rather than asks. Pure: no I/O.

"What's your best camping memory?" holds the words of a question about camping and answers
none: in the LoCoMo conversations a turn made only of questions is evidence for some question
half as often as one that tells (14% against 29%), yet it shares the asker's words. Recall
lowers a candidate by the share of its words that ask (`recall.asking_discount`); a memory
with no question mark keeps all of its relevance, however short ("bridge is DOWN").
"""

from __future__ import annotations

import re

# A sentence ends at . ! ? (and any closing quote or bracket) followed by white space and no
# lower-case letter, so that "GET /search?q=1 failed", "v2.3" and 'she asked "why?" and left'
# stay one sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?![a-z])")
_CLOSING = " \t\"'”’)]"
_WORD = re.compile(r"\w+")


def told_share(text: str) -> float:
    """The share of the text's words that sit in sentences not ending in a question mark; 1.0
    for a text without words."""
    total = told = 0
    for sentence in _SENTENCE_END.split(text):
        words = len(_WORD.findall(sentence))
        total += words
        if not sentence.rstrip(_CLOSING).endswith("?"):
            told += words
    return told / total if total else 1.0
