"""What makes a memory about a topic. Pure: no I/O.

A topic is named by phrases:
- its name (`mail_relay` is the phrase "mail relay");
- its fact-key prefixes (the keys whose facts it shows);
- its query, when it says more than the name: each part of a query split by commas, `;`,
  `|` or ` OR ` is a phrase, and a quoted part too; a query without such separators is a list
  of words, each one a phrase (as recall reads it: `bridge gw-01` is bridge or gw-01).
  Stopwords and `-negated` words are not phrases.

A memory mentions a phrase when the phrase's words appear in it in order, side by side,
whatever the case, accents or separators between them (`gw-01`, `gw 01`, `GW_01`), a word
also matching its plural or -ed/-ing form (`backups`, `relayed`; a plural its singular); a
phrase of plain words also when each of them appears anywhere in it (`nas backups` in `moved
the backups to nas-2`). A topic that is a person
(an entity `person:Amara Okafor`) is also mentioned by the person's first name, written with
its capital and not followed by another capitalised name (`Amara on chat`, not `Amara Lopez`).

The spiderweb links a memory to a topic too (strata_daemon/dossier/about.py reads them): a
`mentions` link to one of the topic's entities (an entity whose value is one of its phrases,
such as `person:Amara Okafor` when the memory's source is Amara) or facts, or an explicit link
(related, supports, contradicts, supersedes) to one of them or to a memory that mentions the
topic.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from strata_daemon.dossier.topics import Topic, default_query
from strata_daemon.store.fts_query import STOPWORDS

_PIECE = re.compile(r"[^\W_]+")
_SEPARATOR = re.compile(r"\s*(?:,|;|\||\bOR\b)\s*")
_QUOTED = re.compile(r'"([^"]*)"')
_SUFFIXES = ("s", "es", "ed", "d", "ing")


def spelled(text: str) -> tuple[str, ...]:
    """Lower-cased words and numbers, accents kept."""
    return tuple(p.casefold() for p in _PIECE.findall(unicodedata.normalize("NFKC", text)))


def _plain(words: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for w in words:
        flat = unicodedata.normalize("NFKD", w)
        out.append("".join(ch for ch in flat if not unicodedata.combining(ch)))
    return tuple(out)


def pieces(text: str) -> tuple[str, ...]:
    """Lower-cased words and numbers without accents, as the full-text index splits them."""
    return _plain(spelled(text))


def _kept(phrase: tuple[str, ...]) -> bool:
    return bool(phrase) and not all(p in STOPWORDS or len(p) < 2 for p in phrase)


def _trimmed(phrase: tuple[str, ...]) -> tuple[str, ...]:
    """Without stopwords at either end: `the bridge` names what `Bridge: DOWN` does."""
    words = list(phrase)
    while len(words) > 1 and words[0] in STOPWORDS:
        words.pop(0)
    while len(words) > 1 and words[-1] in STOPWORDS:
        words.pop()
    return tuple(words)


def query_phrases(query: str) -> list[tuple[str, ...]]:
    """The phrases a query names (see the module's docstring), spelled with their accents."""
    quoted = [spelled(q) for q in _QUOTED.findall(query)]
    rest = _QUOTED.sub(" , ", query) if quoted else query
    if quoted or _SEPARATOR.search(rest):
        parts = [spelled(part) for part in _SEPARATOR.split(rest)]
    else:
        parts = [spelled(chunk) for chunk in rest.split() if not chunk.startswith("-")]
    return [p for p in dict.fromkeys([*quoted, *parts]) if _kept(p)]


@dataclass(frozen=True)
class Terms:
    spellings: tuple[tuple[str, ...], ...]  # each phrase's words as written, lower-cased
    first_names: tuple[str, ...] = ()  # a person topic's first name, as written (`Amara`)

    @property
    def phrases(self) -> tuple[tuple[str, ...], ...]:
        return tuple(dict.fromkeys(_plain(s) for s in self.spellings))

    def with_person(self, full_name: str) -> "Terms":
        first = full_name.split()[0] if len(full_name.split()) > 1 else ""
        if not first or not first[:1].isupper() or first in self.first_names:
            return self
        return Terms(self.spellings, (*self.first_names, first))


def terms_of(topic: Topic) -> Terms:
    name = spelled(default_query(topic.name))
    found = [name, *(spelled(p) for p in topic.fact_prefixes)]
    if spelled(topic.query) != name:
        found += query_phrases(topic.query)
    return Terms(tuple(dict.fromkeys(_trimmed(p) for p in found if _kept(p))))


def _same_word(word: str, term: str) -> bool:
    if word == term or (len(term) > 3 and term.endswith("s") and word == term[:-1]):  # `backups`: a `backup` job
        return True
    if len(term) < 3 or not term.isalpha() or not word.startswith(term[:-1]):
        return False
    # A final e or y gives way to the ending: "resolve" -> "resolving", "policy" -> "policies".
    stems = {term, term[:-1]} if term.endswith(("e", "y")) else {term}
    if term.endswith("y"):
        stems.add(term[:-1] + "i")
    return any(word == stem + suffix for stem in stems for suffix in _SUFFIXES)


def _has_phrase(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    for i in range(len(words) - n + 1):
        if all(_same_word(words[i + j], phrase[j]) for j in range(n)):
            return True
    return False


def _first_name(text: str, first: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(first)}(?![\w-])(?!\s+[A-Z])", text) is not None


def _has_words(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """A phrase of two or more plain words (`nas backups`) also named by all of them anywhere in
    the text (`moved the nightly backups to nas-2`): people put a topic's words apart. Numbers
    and identifiers stay side by side (`gw 01` is no `01 ... gw`)."""
    if len(phrase) < 2 or not all(p.isalpha() and p not in STOPWORDS for p in phrase):
        return False
    return all(any(_same_word(w, p) for w in words) for p in phrase)


def mentions(text: str, terms: Terms) -> bool:
    """Whether the text names the topic (one of its phrases, or a person topic's first name)."""
    words = pieces(text)
    return any(_has_phrase(words, p) or _has_words(words, p) for p in terms.phrases) or \
        any(_first_name(text, f) for f in terms.first_names)


def mentioning(memories: list[dict], terms: Terms) -> set[int]:
    """The ids of the memories whose content names the topic."""
    return {m["id"] for m in memories if mentions(m["content"], terms)}


def entity_matches(value: str, terms: Terms) -> bool:
    """Whether an entity (its value) is one of the topic's: a host `gw-01` for the phrase gw 01,
    a person for the topic's name. Whole values only: `person:Amara` is not `Amara Okafor`."""
    got = pieces(value.lstrip("@"))
    return any(got == p for p in terms.phrases)


def entity_candidates(terms: Terms) -> list[str]:
    """The values an entity of the topic may be stored under (entities keep the case and
    separators they were written with), to look them up by index rather than scan them all."""
    out: dict[str, None] = {}
    for p in dict.fromkeys((*terms.spellings, *terms.phrases)):
        for sep in (" ", "-", "_", ".", ""):
            for word in (p, tuple(w.capitalize() for w in p), tuple(w.upper() for w in p)):
                joined = sep.join(word)
                out[joined] = None
                out["@" + joined] = None
    return list(out)
