"""What a text speaks of: the subject and attribute of a fact's key read back, and whether a
memory names that subject (its name, its identifier, a person's first name; for a fact of the
first person, `I`, `we` or `me` acting). Pure: no I/O; facts/updates.py decides with it whether a
memory updates a fact."""

from __future__ import annotations

import re
from dataclasses import dataclass

from strata_daemon.facts.subjects import KINDS
from strata_daemon.facts.vocabulary import DEFAULT

# The first person acting: `I moved`, `we switched`, `reach me`, `my phone`; `my sister` is someone else.
_FIRST_ACTING = re.compile(r"(?i)\b(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll|im|ive|we|we['’]re|we['’]ve|me|us)\b")


_FIRST_OF = re.compile(r"(?i)\b(?:my|our)\s+(?:new\s+|current\s+|old\s+|usual\s+|main\s+)?(?P<noun>[\w-]+)")


# A diary line with no subject: `Went vegan in January`, `Sold the Civic, got an Outback`.
_IMPLIED_I = re.compile(r"(?i)^\W*(?:just\s+|finally\s+|also\s+)?(?:went|got|sold|bought|left|quit|took|made|switched|"
                        r"moved|started|joined|changed|registered|signed|cancell?ed|dropped|traded|booked|upgraded|"
                        r"downgraded|renewed|gave|picked|found|became|began|set|cut|stopped|started)\b")


THIRD_OF = re.compile(r"\b[A-Z][\w-]*['’]s\b")


_WORD = re.compile(r"[\w][\w'’.@+/:-]*[\w]|[\w]")


@dataclass(frozen=True)
class Known:
    """A current fact as the matcher reads it."""
    key: str
    subject: str  # as first written; `my` for the first person; `` for a key of its own
    attribute: str  # canonical; `` for a thing's own state
    value: str


@dataclass(frozen=True)
class Update:
    """The fact's new value (None: it is no longer current), and why the text updates it. `weak`:
    no word of the text names the fact's attribute; only a switch said, or a value of the old
    value's form, ties the two."""
    value: str | None
    why: str
    weak: bool = False
    loose: bool = False  # only a change said ties them: held to a higher likeness (facts.loose_floor)


def parse_key(key: str, label: str) -> Known:
    """A key split back into subject and attribute, as canonical.label() joined them."""
    text = label.strip()
    low = text.casefold()
    if low.startswith(("my ", "our ")) and "." not in text:
        return Known(key, "my", text.split(" ", 1)[1].casefold(), "")
    if "." in text:
        subject, _, attribute = text.rpartition(".")
        words = attribute.strip().casefold().split()
        # An attribute of more than one word (`Leo.piano lesson`), unless the dot is a host name's
        # (`gw-02.example.com cpu temp`, `db-01.internal disk usage`).
        several = "." not in subject and bool(words) and len(words[0]) > 3 and words[0] not in _HOST_WORDS
        if subject and words and not any(c.isdigit() for c in attribute) and (len(words) == 1 or several) or \
                attribute.casefold().strip() in DEFAULT.nouns.values():
            return Known(key, subject.strip(), attribute.strip().casefold(), "")
    return Known(key, text, "", "")


_HOST_WORDS = frozenset("internal local localdomain corp intra intranet example home arpa cloud".split())


def first_person(text: str) -> bool:
    """Whether TEXT speaks in the first person: `I`, `we`, `me`, `my`, or a diary line (`Went vegan`)."""
    return bool(_FIRST_ACTING.search(text) or _IMPLIED_I.match(text) or re.search(r"(?i)\b(?:my|our)\b", text))


def stems(text: str) -> set[str]:
    """TEXT's words as mentions() compares them: case-folded, a plural's `s` dropped."""
    return {stem(w) for w in words_of(text)}


def words_of(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text.replace("’", "'"))]


# `it's` is `it is`, no possessive: `... it's closer` speaks of nothing called `it`.
_CONTRACTED = frozenset("it's that's there's here's what's who's he's she's let's where's how's".split())


def stem(word: str) -> str:
    if word.endswith("'s") and len(word) > 3 and word not in _CONTRACTED:  # `Leo's team` speaks of Leo
        word = word[:-2]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def mentions(subject: str, text: str) -> bool:
    """Whether TEXT speaks of SUBJECT (see the module's rules)."""
    if subject.casefold() == "my":
        if _FIRST_ACTING.search(text) or _IMPLIED_I.match(text):
            return True
        return any(m.group("noun").casefold() not in _RELATIVES for m in _FIRST_OF.finditer(text))
    words = {stem(w) for w in words_of(text)}
    subject_words = [w for w in words_of(subject) if w not in ("the", "our", "my", "a", "an")]
    if not subject_words:
        return False
    ids = [w for w in subject_words if re.search(r"\d|[-_.#]", w)]
    if ids:
        return all(stem(w) in words or w in text.casefold() for w in ids)
    core = [w for w in subject_words if w not in KINDS] or subject_words
    if all(stem(w) in words for w in core):
        return True
    first = subject.split()[0]
    return first[:1].isupper() and len(first) > 2 and stem(first.casefold()) in words and len(core) > 1


# `my sister`, `our cleaner`: people of one's own, whose attributes are theirs.
_RELATIVES = frozenset("""
sister brother mum mom dad father mother son daughter wife husband partner boyfriend girlfriend kid kids child children
parents parent aunt uncle cousin niece nephew grandma grandpa grandmother grandfather friend boss manager colleague
neighbour neighbor landlord cleaner dog cat team flatmate roommate
""".split())
