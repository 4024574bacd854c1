"""An update no rule ties to its fact: the newer memory says a change but names the fact's
subject in other words (`Gold SLA updated: 4 hours` after `Support SLA for Gold customers: 8
hours`; `ETL now kicks off at 03:30 UTC` after `Nightly ETL runs at 02:00 UTC`). Pure: no I/O.

The current facts sharing a word with such a memory (of their subject, their attribute or their
value) are its candidates, the few sharing most; superseding.py holds an update of each, and
Facts.weigh takes only the one whose memory the newer one is most alike, when at least
`facts.near_floor` alike. The words are a cheap first sieve, the likeness decides: a change
said of one thing shares a word with many facts of a home. What shares no word (`The kids
renamed the kitten Miso` after `Our cat is called Biscuit`) is not found.
"""

from __future__ import annotations

import re

from strata_daemon.facts.newvalue import new_value
from strata_daemon.facts.speaking import Known, stem, stems, words_of
from strata_daemon.facts.updates import CHANGE, may_update, named_attribute, restates, says_change
from strata_daemon.facts.vocabulary import NOUNS_OF, TYPED, Vocabulary, shape_of, shaped_values
from strata_daemon.store.fts_query import STOPWORDS

# Most facts of one memory weighed: the MiniLM embeds two texts for each.
CANDIDATES = 3
# A word of a name that names one thing: a digit, or a joint inside it (`db-main-02`, `api.v2`).
_IDENTIFIER = re.compile(r"\d|\w[-_.]\w")
# Words that say which statement, not which thing.
_NEUTRAL = STOPWORDS | frozenset("my our new old now current latest previous former also".split())


def words(text: str) -> set[str]:
    """TEXT's words that can name a thing: three letters or more, no change said (`moved`)."""
    return {w for w in stems(text) if len(w) > 2 and w not in _NEUTRAL and not CHANGE.fullmatch(w)}


def fact_words(k: Known) -> set[str]:
    """The words a memory speaking of K in other words may still share with it: its subject's, its
    attribute's and the attribute's other names, its value's."""
    nouns = " ".join(NOUNS_OF.get(k.attribute.split()[-1], ())) if k.attribute else ""
    return words(" ".join(("" if k.subject == "my" else k.subject, k.attribute, nouns, k.value)))


class Index:
    """Current facts by the words of fact_words()."""

    def __init__(self) -> None:
        self.by_word: dict[str, set[str]] = {}
        self.words: dict[str, set[str]] = {}

    def add(self, k: Known) -> None:
        self.words[k.key] = found = fact_words(k)
        for w in found:
            self.by_word.setdefault(w, set()).add(k.key)

    def drop(self, key: str) -> None:
        for w in self.words.pop(key, ()):
            self.by_word.get(w, set()).discard(key)

    def sharing(self, text: str, skip: set[str]) -> list[str]:
        """The keys of the CANDIDATES facts sharing most words with TEXT, none of SKIP."""
        shared: dict[str, int] = {}
        for w in words(text):
            for key in self.by_word.get(w, ()):
                if key not in skip:
                    shared[key] = shared.get(key, 0) + 1
        return sorted(shared, key=lambda key: (-shared[key], key))[:CANDIDATES]


def another_thing(k: Known, label: str, sentence: str, vocab: Vocabulary, *, leaving: bool = False) -> bool:
    """Whether SENTENCE speaks of something other than K's subject though it shares words with it:
    a person not named (people are named by their names: `Maya gets 3 pounds a week` is not of
    Sam), an identifier not held (`orders-db upgraded` is not of `db-main-02`), someone's
    relative not named (`Tomasz moved` is not of `Tomasz's sister`), the subject's head word
    with another qualifier (`Upload timeout`, `Standard shipping`, `payments webhook` of
    `download timeout`, `express shipping`, `refunds webhook`), with K's attribute not named: a
    value of a form K's value does not hold (an email of `ana.phone` or of `oskar.location`), or
    no value of the form K's value has (no email for `ingrid.email`)."""
    subject = "" if k.subject == "my" else label[:len(k.subject)] if label.casefold().startswith(
        k.subject.casefold()) else k.subject
    said = [stem(w) for w in words_of(sentence)]
    own = [stem(w) for w in words_of(subject) if w not in _NEUTRAL]
    names = [stem(w.casefold()) for w in subject.split() if w[:1].isupper()]
    # The value named leaving (`Priya handed on-call over to Marco` of `Ops on-call = Priya`) says
    # whose it is, when the subject's name is not said.
    if names and not set(names) & set(said) and not leaving:
        return True
    if any(_IDENTIFIER.search(w) and w.casefold() not in sentence.casefold() for w in subject.split()):
        return True  # an identifier names one thing: `orders-db upgraded` is not of `db-main-02`
    if "'s" in subject.replace("’", "'") and own and own[-1] not in said:
        return True
    for i, w in enumerate(own[1:], 1):
        for j, s in enumerate(said):
            if s == w and j and said[j - 1] not in own and said[j - 1] not in _NEUTRAL and said[j - 1] != own[i - 1]:
                return True
    if not k.attribute or named_attribute(k.attribute, sentence, vocab):
        return False
    head, forms = k.attribute.split()[-1], {a for a, _ in shaped_values(sentence) if a in TYPED}
    held = {a for a, _ in shaped_values(k.value)} | {shape_of(k.value)}
    # A value of a form the fact's does not hold speaks of another attribute (`moved: their email
    # is now ...` is no location); a value of a form of its own (an email) changes to another of
    # that form.
    return head not in forms and (bool(forms - held) or shape_of(k.value) == head)


def repeats(value: str, sentence: str) -> bool:
    """Whether SENTENCE holds the fact's VALUE as still true, not as the one leaving (`Priya
    handed on-call over to Marco` of `on-call = Priya`)."""
    return value.casefold() in sentence.casefold() and not leaves(value, sentence)


def leaves(value: str, sentence: str) -> bool:
    """Whether SENTENCE names VALUE as the one leaving: `Priya handed ... over`, `Priya left`."""
    return restates(value, sentence)[1]


def changes(text: str) -> str | None:
    """TEXT as a near update would read it, when it says a change and may update at all."""
    sentence = may_update(text)
    return sentence if sentence is not None and says_change(sentence) else None


def value_of(k: Known, sentence: str, vocab: Vocabulary, *, leaving: bool = False) -> str | None:
    """The new value, only when the text says outright that it is the attribute's (its form,
    `new <attribute>: X`) or that the old one left for it (`Priya handed on-call over to
    Marco`); else the fact ends, named by the newer memory."""
    value, strong = new_value(k, sentence, vocab)
    return value if strong or leaving else None
