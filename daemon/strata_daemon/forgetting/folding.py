"""Finding a text in memories the way a person means it: any case and any accents ("MÜLLER"
and "Muller" find "Müller", a decomposed "é" finds a composed one). Pure: no I/O.

SQLite's lower() folds ASCII only, so `forget --matching` compares in Python, and reports the
spellings it found, which the purge then removes wherever they are quoted.
"""

from __future__ import annotations

import re
import unicodedata

# The combining marks of the scripts that write accents this way (Latin, Greek, Cyrillic...).
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """Without case or accents. Whole-string operations: a forget reads every memory."""
    if text.isascii():
        return text.lower()
    return _MARKS.sub("", unicodedata.normalize("NFKD", text)).casefold()


def spellings(needle: str, text: str) -> set[str]:
    """Each stretch of TEXT that folds to the folded NEEDLE, as TEXT spells it (with the accents
    that follow its last letter)."""
    want = fold(needle)
    if not want or want not in fold(text):
        return set()
    folded, origin = [], []
    for i, ch in enumerate(text):
        for c in fold(ch):
            folded.append(c)
            origin.append(i)
    flat = "".join(folded)
    found, at = set(), flat.find(want)
    while at >= 0:
        start, end = origin[at], origin[at + len(want) - 1] + 1
        while end < len(text) and _MARKS.fullmatch(text[end]):
            end += 1
        found.add(text[start:end])
        at = flat.find(want, at + 1)
    return found
