"""A question about the present favours the newer of two memories that state one thing. Pure: no I/O.

Capture links the knowledge updates it can read (`supersedes`, facts/statements.py); people
word updates in more ways than patterns cover (`Warehouse is in ap-southeast-1 after the APAC
move` after `The analytics warehouse lives in us-east-2`). When a question asks how things
are (`Where is the analytics warehouse hosted?`, not `Where was ...` or `When did ...`), two
of its first hits are read as an older and a newer statement of one thing when they speak of
the same subject of the question (same_subject) and the newer either words itself as an
update or says the same as the older in other values (their vectors very close): the newer
ranks first. Memories that only mention the subject (a message from Dana, a lesson about
invoice-bot versions, a reading of nas-01) are not statements of it and never move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from strata_daemon.store.fts_query import (
    STOPWORDS,
    WORD as _WORD,
    content_words as words_of,
    term as _term,
    term_list as _tokens,
)

# Past tense, or a question about a time or an order, asks for the history, not the state.
_PAST = re.compile(r"(?i)\b(?:did|was|were|had|used\s+to|previous(?:ly)?|formerly|former|original(?:ly)?|"
                   r"first|old|ago|last\s+(?:year|month|week|time)|history|earlier|back\s+then|until|since|"
                   r"how\s+long\s+(?:ago|did|was|were|has|have|had))\b")
_PRESENT = re.compile(r"(?i)^\s*(?:(?:in|at|on|for|from|to|with|by)\s+)?(?:what|who|whom|whose|where|which|when|how|"
                      r"is|are|does|do)\b|"
                      r"\b(?:now|current(?:ly)?|these\s+days|latest|today|at\s+the\s+moment|nowadays)\b")
# Words that say a statement replaces an earlier one.
_UPDATE = re.compile(r"(?i)\b(?:now|new|newly|changed?|moved?|switched|actually|instead|no\s+longer|any\s*more|"
                     r"from\s+now\s+on|going\s+forward|as\s+of|relocated|renamed|replaced|took\s+over|"
                     r"handed\s+over|these\s+days|updated?|stopped|started|quit|transferred|migrated|reassigned|"
                     r"raised|lowered|increased|reduced|pushed|postponed|rescheduled|extended|renewed|upgraded|"
                     r"downgraded|promoted|became|joined|back)\b")
# A record of a message or a labelled note (`Email from Dana <...>: asks about ...`, `Lesson: pin
# invoice-bot versions`, `Cycle 4327 notes: ...`) says who wrote or what was learnt, not what is
# true of the subject now.
_RECORD = re.compile(r"(?i)^\W*(?:(?:e-?mail|mail|message|msg|call|text|sms|dm|letter|voicemail|invite|invitation|"
                     r"reply)\s+(?:from|to|by)\b|(?:[\w-]+\s+){0,3}?(?:lesson|notes?|idea|tip|reminder|todo|til|"
                     r"observation|thought|question|q|diary|journal|log)s?\s*:|(?:sent|replied|forwarded|"
                     r"wrote|emailed|called)\b)")
# Words that name an attribute, to the attribute (synonyms together): two texts naming only
# different ones state two things. `address` is left out: an email, a street and an IP have one.
_ATTRIBUTES = {**dict.fromkeys(("email", "e-mail", "mail"), "email"),
               **dict.fromkeys(("phone", "mobile", "cell", "telephone"), "phone"),
               **dict.fromkeys(("price", "cost", "fee"), "price"),
               **dict.fromkeys(("owner", "maintainer", "owned", "ownership"), "owner"),
               **dict.fromkeys(("city", "lives", "located", "location", "based", "relocated"), "location"),
               **dict.fromkeys(("version", "release"), "version"),
               **{w: w for w in ("birthday", "diet", "salary", "budget", "deadline", "website", "username",
                                 "timezone", "port", "status")}}
# Values whose form names their attribute (`write to lorcan@fastmail.com` speaks of an email).
_VALUES = (("email", re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")),
           ("phone", re.compile(r"(?<![\w.])\+?\d{1,4}(?:[ -]\(?\d{2,4}\)?){2,4}(?![\w.-])")),
           ("website", re.compile(r"\bhttps?://")),
           ("version", re.compile(r"\bv\d+(?:\.\d+)+\b|(?<![\d.])\d+\.\d+\.\d+(?![\d.])")),
           ("price", re.compile(r"[$€£]\s?\d|\d[\d,.]*\s?(?:EUR|USD|GBP|CHF|euros?|dollars?|pounds?)\b")))


def asks_present(query: str) -> bool:
    return bool(_PRESENT.search(query)) and not _PAST.search(query)


# An identifier names one thing (`search-index`, `gw-02`, `api.example.com`).
_IDENTIFIER = re.compile(r"[\w]+(?:[-.][\w]+)+|\w*\d\w*")
# Modifiers that say which statement of a thing, not which thing (`new number`, `old office`).
_NEUTRAL = STOPWORDS | frozenset("new old current latest previous former now also".split())


def names_in(query: str) -> list[frozenset[str]]:
    """The names a question asks about, each as the set of its terms: runs of capitalised words
    after the first word (`Mateo Quiroga`, `Halloran's Bakery`) and identifiers (`search-index`,
    `gw-02`)."""
    words = _WORD.findall(query)
    runs: list[set[str]] = []
    run: set[str] = set()
    for i, word in enumerate(words):
        if _IDENTIFIER.fullmatch(word.strip(".")):
            runs.append({_term(word)})
        if i > 0 and word[:1].isupper() and not (word.isupper() and len(word) <= 4):  # not URL, API, DNS
            run.add(_term(word))
            continue
        if run:
            runs.append(run)
            run = set()
    if run:
        runs.append(run)
    return [frozenset(r - STOPWORDS) for r in runs if r - STOPWORDS]


def _attributes(terms) -> set[str]:
    return {_ATTRIBUTES[w] for w in terms if w in _ATTRIBUTES}


def _stated(text: str, terms) -> set[str]:
    """The attributes a text speaks of: by name, or by the form of a value it gives."""
    return _attributes(terms) | {name for name, form in _VALUES if form.search(text)}


_AUXILIARIES = frozenset("is are was were be been now still currently also".split())
# A question about where (`Where does Oskar live?`), not about what is live.
_WHERE = re.compile(r"(?i)^\s*(?:in\s+)?where\b|\b(?:do|does)\b.*\blive\b")


@dataclass(frozen=True)
class _Said:
    """What a text says, read once (texts recur across recalls): its terms in order and as a
    set, its plain words (for modifiers), the attributes it states, whether it is a record of a
    message or a note, and whether it words itself as an update."""
    terms: tuple[str, ...]
    words: frozenset[str]
    plain: tuple[str, ...]
    stated: frozenset[str]
    record: bool
    update: bool


@lru_cache(maxsize=8192)
def _said(text: str) -> _Said:
    terms = tuple(_tokens(text))
    words = frozenset(terms)
    return _Said(terms, words, tuple(_term(w) for w in _WORD.findall(text)), frozenset(_stated(text, words)),
                 bool(_RECORD.match(text)), bool(_UPDATE.search(text)))


def _modifier(plain: tuple[str, ...], term: str) -> str | None:
    """The word before TERM when it can qualify it (`analytics` in `analytics warehouse`), not
    a verb before its object (`leading` in `leading Aurora`)."""
    at = next((i for i, w in enumerate(plain) if w == term or term in re.split(r"[-.]", w)), 0)
    if at == 0:
        return None
    before = plain[at - 1]
    verb = before.endswith(("ing", "ed")) and at > 1 and plain[at - 2] in _AUXILIARIES
    return None if verb else before


def same_subject(older: str, newer: str, asked: frozenset[str], names: list[frozenset[str]],
                 wanted: set[str], parallel: bool = False) -> bool:
    """Whether two texts speak of the same thing the question asks about: a term of the question
    in both (or, PARALLEL texts, any content term); a name of the question that the older names
    also in the newer (`Mateo` for `Mateo Quiroga`); no shared term modified by a word of the
    question in the older and by another word in the newer (`the analytics warehouse` is not
    `the billing warehouse`); and no attribute named in one but not the other, or other than
    the one WANTED (`Dana's email is ...` is not `Dana's mobile is now ...`)."""
    old, new = _said(older), _said(newer)
    w_old, w_new = old.words, new.words
    shared = (w_old & w_new & asked) - STOPWORDS
    if not shared and not (parallel and (w_old & w_new) - STOPWORDS):
        return False
    named = [name for name in names if name & w_old]
    if named and not any(name & w_new for name in named):
        return False
    a_old, a_new = old.stated, new.stated
    if (a_old and a_new and not a_old & a_new) or (wanted and a_new and not a_new & wanted) or (
            a_old & wanted and not a_new & wanted):
        return False
    for term in shared:
        m_old, m_new = _modifier(old.plain, term), _modifier(new.plain, term)
        if (m_old in asked and m_old not in _NEUTRAL and m_new is not None and len(m_new) >= 3
                and m_new not in _NEUTRAL and m_new not in w_old and m_new not in asked):
            return False
    return True


def restates(newer: str, parallel: bool) -> bool:
    """Whether a text can replace an older statement: not a record of a message or a note, and
    worded as an update or PARALLEL to the older (the same sentence with other values)."""
    said = _said(newer)
    return not said.record and (parallel or said.update)


def wanted_attributes(query: str) -> set[str]:
    """The attributes (of _ATTRIBUTES) a question names (`Where does Oskar live?`: location)."""
    return _attributes(_tokens(query)) | ({"location"} if _WHERE.search(query) else set())


def newer_alike(items: list[tuple[int, float, str]], vectors: dict[int, np.ndarray], query: str, *,
                similarity: float, parallel: float) -> dict[int, dict[int, float]]:
    """For (id, event time, text) candidates, older id -> {newer id: reach} that state the same thing:
    vectors at least `similarity` alike, the same subject of the question (same_subject), the
    newer restating it (restates; vectors at least `parallel` alike count as the same sentence).
    The reach is the cosine of a newer worded as an update, 0 for one only parallel (`My brother
    lives in Cardiff` beside `My sister lives in Leeds`): how far down it may be found to move up."""
    asked, names, wanted = words_of(query), names_in(query), wanted_attributes(query)
    known = [(i, at, text) for i, at, text in items if i in vectors]
    if len(known) < 2:
        return {}
    matrix = np.stack([vectors[i] for i, _, _ in known])
    alike = matrix @ matrix.T
    out: dict[int, dict[int, float]] = {}
    for a, b in zip(*np.nonzero(np.triu(alike >= similarity, 1))):
        (i, at_i, text_i), (j, at_j, text_j) = known[a], known[b]
        if at_i == at_j:
            continue
        (older, t_old), (newer, t_new) = ((i, text_i), (j, text_j)) if at_i < at_j else ((j, text_j), (i, text_i))
        close = bool(alike[a, b] >= parallel)
        if restates(t_new, close) and same_subject(t_old, t_new, asked, names, wanted, close):
            out.setdefault(older, {})[newer] = float(alike[a, b]) if _said(t_new).update else 0.0
    return out
