"""Attribute statements in plain sentences: "Dana Whitfield's email address is dana@x.example"
becomes the fact `dana whitfield.email` = `dana@x.example`. Pure: no I/O, no model.

A content is cut into sentences; each is read by the forms of facts/forms.py and, when none
applies, by the plain clauses of facts/clauses.py (`Callum pays 950 GBP a month`). The
attribute is canonical (facts/attributes.py), so two wordings of one attribute are one key.
First-person statements use the key `my <attribute>` when the memory has no source or a
person's generic source (user, person, ...); in a transcript with named speakers, the speaker
is the subject. A question states nothing, and neither does what someone said someone said.
"""

from __future__ import annotations

import re

from strata_daemon.facts.canonical import Claim, canonical, label as label_of
from strata_daemon.facts.clauses import clause_values
from strata_daemon.facts.forms import new_value, read, words_of
from strata_daemon.facts.vocabulary import DEFAULT, Vocabulary

GENERIC_SOURCES = frozenset({"user", "person", "me", "self", "owner", "human", "cli", "api", "mcp", "http"})
MAX_VALUE_WORDS = 8
MAX_VALUE_CHARS = 80

# A full stop after a title or an initial does not end a sentence ("Dr. Alvarez").
_TITLES = ("Dr", "Mr", "Ms", "St", "Mrs", "Prof", "Jr", "Sr", "[A-Z]")
_NOT_AFTER = "".join(rf"(?<!\b{t})" for t in _TITLES)  # before a full stop
_NOT_PAST = "".join(rf"(?<!\b{t}\.)" for t in _TITLES)  # just past one
# A semicolon joins two statements as a full stop does: `We rebuilt monitoring; Grafana lives on
# obs-2 now` states where Grafana lives.
_MAY_SPLIT = re.compile(r"[.!?;]\s|\n")
_SENTENCES = re.compile(_NOT_PAST + r"(?<=[.!?])\s+(?=[A-Z\"'“])|;\s+|\n")
# `ap-southeast-1 after the APAC move`: what came after a value is why it changed, not the value
# (a value that starts with `after`, `after the retro`, is kept); nor is what it replaced
# (`04:00 instead of 03:00`), when it changed (`mx-2 last night`) or what it is for (`Postgres 16
# for the main database`).
_CLAUSE_END = re.compile(r",\s*(?:and|but|so|which|because|since|though|although|while)\b|;|\s+(?:but|because|which|"
                         r"so\s+that|while|now\s+that|ever\s+since|after\s+(?:the|a|an|our|my|his|her|their|its|last|"
                         r"this|that))\s|\s+-\s|\s+—\s|\s+(?:instead\s+of|rather\s+than)\s|"
                         r"\s+(?:(?:last|this)\s+(?:night|week|weekend|month|year)|yesterday|today|tonight)\b|"
                         r"\s+for\s+(?:the|our|my|his|her|their)\s|" + _NOT_AFTER
                         + r"\.\s|[.!?]$|\s+and\s+(?:I|we|he|she|they|it|my|our|his|her|their|the|[A-Z][\w.-]*['’]s)\b")
# Reported speech: `Jonas said the dinner on Friday is cancelled`.
_REPORTED = re.compile(r"\b(?:said|says|saying|told|tells|mentioned|asked|asks|wonders?|wondered|heard|claims?|"
                       r"claimed|reckons?|whether)\b")
# Words that open a sentence without being part of it: `Actually the meeting room is now Lovelace`.
_OPENER = re.compile(r"(?i)^\s*(?:actually|fyi|btw|update|heads\s+up|also|so|ok|okay|note|psa|correction|"
                     r"quick\s+update|edit|oh|sorry|ps|reminder\s+that|just\s+so\s+you\s+know)\b[,:!]?\s+")
# No value but a judgement or a filler: `The graphics are awesome`, `Dance practice has been fun`.
_NOT_A_VALUE = re.compile(r"(?i)^(?:not|no longer|a bit|so|very|really|too|also|just|about|going|coming|getting|"
                          r"that|this|what|how|why|where|when|who|he|she|it|they|we|you|i|there|here|been|"
                          r"awesome|amazing|great|awful|sweet|cool|fun|crazy|wild|tough|nice|lovely|beautiful|"
                          r"terrible|incredible|fantastic|wonderful|perfect|hard|easy|tricky|important|key|super|"
                          r"kinda|pretty|happened|indeed|mine|yours|hers|ours|theirs|me|him|her|us|them|"
                          r"the\s+best|the\s+worst|a\s+mix|a\s+lot|my\s+motivation|"
                          r"an?\s+(?:smart|good|great|bad|nice|huge|big|real|perfect)\b|"
                          r"[a-z]+ing(?![.\w-])|[a-z]+ed\s+by)\b(?![/-])")
_PRONOUNS = frozenset("his her their its".split())
# A statement of what no longer holds states no value (`Jenkins no longer runs on ci-1`,
# `Grafana doesn't run on mon-2 anymore`): it ends one (facts/updates.py).
_DENIED = re.compile(r"(?i)\bno\s+longer\b|\bany\s*more\s*[.!]?$|\b(?:is|are|was|were|does|do|did)\s+not\b|"
                     r"\b(?:isn|aren|wasn|weren|doesn|don|didn)['’]t\b")
# A subject that points back (`Wiki moved off web-4; it lives on app-9 now`): whose it is, the
# sentence before says, and a key `it.location` would be every thing's.
_POINTING = frozenset("it he she they this that these those there here".split())
# A chat line: a name, a colon, and what they said.
_SAID_BY = re.compile(r"^\s*(?P<name>[A-Z][\w'’-]+(?:\s[A-Z][\w'’-]+)?):\s+(?P<text>\S.*)$", re.DOTALL)
_LABELS = frozenset("""note notes update correction reminder todo fyi ps re fwd fw nb tip idea lesson
announcement edit summary question answer q a important warning info journal diary log update""".split())
_MINE = re.compile(r"(?i)\b(?:i|i['’]m|i['’]ve|my|me)\b")
# A subject that is one plain word (`key`, `kids`, `goal`), and a value that is a phrase with no
# name or number in it: together a general remark, not a thing's value (`rent is 1,250` stays).
_GENERAL = re.compile(r"^[a-z]+$")
_REMARK = re.compile(r"^(?:to\s+\w+|(?:our|your|so|truly|really|very|pretty|quite)\s+\w+)(?:\s+\S+)*$")
_PARTICIPLE = re.compile(r"(?i)[a-z]+(?:ed|en)\s+by\b|[a-z]+ing\s+(?:with|in|at|on|until|till|from)\b")


def _value(raw: str, *, participle: bool = False) -> str | None:
    """The value a statement gives, cut at the end of its clause; None when it is no value (a
    pronoun, an -ing verb, `not ...`). With PARTICIPLE, `occupied by ...` is a value."""
    text = raw.strip()
    m = _CLAUSE_END.search(text)
    if m:
        text = text[:m.start()]
    text = text.strip().strip("\"'“”‘’").rstrip(".!?,;:").strip()
    if text.casefold().endswith(" now"):
        text = text[:-4].rstrip()
    if text.casefold().startswith("now "):
        text = text[4:]
    if len(text.split()) > MAX_VALUE_WORDS and ", " in text:
        text = text.split(", ", 1)[0]  # `on holiday from 1 to 14 August, no new jobs`
    longest = MAX_VALUE_WORDS + 4 * participle  # `insured with Direct Line for 612 GBP a year`
    if not text or (_NOT_A_VALUE.match(text) and not (participle and _PARTICIPLE.match(text))) or \
            len(text) > MAX_VALUE_CHARS or len(text.split()) > longest:
        return None
    return text


def _first_person(source: str | None) -> str | None:
    """Whose `my` it is: None for the person the home belongs to, else the speaker's name."""
    if source is None or source.strip().casefold() in GENERIC_SOURCES:
        return None
    return source.strip()


def statements(content: str, source: str | None = None, *, vocab: Vocabulary = DEFAULT) -> list[tuple[str, str]]:
    """(key label, value) for each attribute statement in CONTENT, in order (claims())."""
    return [(c.label, c.value) for c in claims(content, source, vocab=vocab)]


def claims(content: str, source: str | None = None, *, vocab: Vocabulary = DEFAULT) -> list[Claim]:
    """Each attribute statement in CONTENT, in order; one per key (the last wins). A label is
    `subject.attribute`, `my attribute` in the first person, or a thing's name alone for its own
    state (facts/canonical.py)."""
    speaker = _first_person(source)
    said = _SAID_BY.match(content) if speaker is None else None
    if said and _MINE.search(said.group("text")) and said.group("name").casefold() not in _LABELS:
        # `Zainab: my number is ...` is Zainab's (`Note: my number is ...` is the speaker's own)
        speaker, content = said.group("name"), said.group("text")
    found: dict[str, Claim] = {}

    def add(subject: str | None, attribute: str, raw: str | None, participle: bool = False) -> None:
        value = None if raw is None else _value(raw, participle=participle)
        if subject is None or not attribute.strip() or value is None or attribute.casefold() in _PRONOUNS or \
                subject.casefold() in _POINTING:
            return
        subject, attribute, value = canonical(subject, attribute, value, vocab=vocab)
        label = label_of(subject, attribute, speaker)
        if label is None or not value or (not attribute and _GENERAL.match(subject) and _REMARK.match(value)):
            return  # `The key is to find what keeps you going`, `Kids are our future`: a remark, no fact
        found.pop(label.casefold(), None)
        found[label.casefold()] = Claim(label, speaker if speaker and subject in ("my", "our") else subject,
                                        attribute, value)

    for sentence in _SENTENCES.split(content) if _MAY_SPLIT.search(content) else (content,):
        sentence = _OPENER.sub("", sentence, count=1)
        if not sentence or sentence.rstrip().endswith("?") or _REPORTED.search(sentence) or _DENIED.search(sentence):
            continue
        before, words = len(found), words_of(sentence)
        for read_one in read(sentence, content, words):
            for subject, attribute, raw in read_one:
                add(subject, attribute, raw)
            if len(found) > before:
                break  # the first form that reads a sentence says what it states: one key, not two
        if len(found) == before:
            for subject, attribute, raw in clause_values(sentence, words):
                add(subject, attribute, raw, participle=True)
    if "new" in content:
        for subject, attribute, raw in new_value(content):
            add(subject, attribute, raw)
    return list(found.values())
