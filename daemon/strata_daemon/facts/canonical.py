"""One key per subject and attribute, whatever the wording. Pure: no I/O.

The readers (facts/forms.py, facts/clauses.py, facts/changes.py, the capture rules) say what a
sentence states as (subject, attribute phrase, value) in the words it used. Here that becomes
the key and the value a fact is kept under:

- the attribute is the vocabulary's (facts/vocabulary.py): `e-mail address` is `email`,
  `lives` and `moved to` are `location`, a value shaped like a phone number is `phone`;
- an attribute named inside the subject or the value moves to its place: `gateway port: 8443`
  is `gateway.port = 8443`, `The ticket is priority P2` is `ticket.priority = P2`;
- the value is the value: `at 01:00` is `01:00`, `called Biscuit` is `Biscuit`;
- a thing's own state (`Bridge: DOWN`, `auth-service is down`) is kept under the thing's name
  alone, as the status lines always were;
- the first person is `my <attribute>`; `the` and `our` before a thing are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from strata_daemon.facts.clauses import SINGLE as RELATIONS
from strata_daemon.facts.vocabulary import (
    DEFAULT,
    VERBS,
    Vocabulary,
    shape_of,
    shaped_values,
)

# Prepositions that open a value without being part of it, for attributes that are a place, a
# time or a number (`in eu-west-1`, `at 01:00`, `on 8080`).
_LEADING_PREPOSITION = re.compile(r"(?i)^(?:at|on|in|to|into|with|from|for|over\s+to|across\s+to|onto)\s+(?=\S)")
_UNWRAPPED = frozenset("location time date deadline port employer provider host school endpoint owner".split())
# A word that says when (`at night`, `on Mondays`, `every day`).
_WHEN_WORD = re.compile(r"(?i)\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekday|weekend|morning|afternoon|"
                        r"evening|night|noon|midnight|daily|nightly|weekly|monthly|every|each)s?\b")
# A value that says when: a day, a clock time, a date, `every ...` (`Marta comes on Wednesdays`).
_WHEN = re.compile(r"(?i)\b(?:mon|tue|wed|thu|fri|sat|sun)\w*|\b(?:daily|weekly|monthly|every|each|weekday|weekend|"
                   r"morning|afternoon|evening|night|noon|midnight|tonight|tomorrow)\w*\b|\d")
_NAMED = re.compile(r"(?i)^(?:called|named|known\s+as)\s+(?P<name>\S.*)$")
_ARTICLE = re.compile(r"(?i)^(?:the|our)\s+")
# A verb the clause readers keep as the attribute (`prod.runs = in eu-west-1`), read with its value.
_RUNS = frozenset("run runs running".split())
# Attributes a change's verb guessed (facts/vocabulary.change_attribute), which a subject that
# names its attribute overrides.
_GUESSED = frozenset("location time date priority name owner version plan".split())
_PORT = re.compile(r"^\d{2,5}$")
_HOST = re.compile(r"^[a-z][\w-]*(?:\.[\w-]+)+$|^[a-z]+-\d+$")  # `mon-1.internal.example`, `web-3`
_OF_PHRASE = re.compile(r"(?i)^(?P<attr>.+?)\s+(?:at|for|of|on)\s+(?:the\s+|our\s+)?(?P<subj>\S.*)$")
_OWN_TASTE = re.compile(r"(?i)^(?:favou?rite|preferred|usual|go-to)\s+\S")
# Typed attributes whose value is its form alone: a time or a price keeps its qualifier (`15:30 on
# weekdays`, `12 USD per seat`).
_BARE = frozenset("email phone endpoint version priority".split())
# Nouns that, said with no subject (`New number: 555-0202`), name the speaker's own attribute.
PERSONAL_NOUNS = frozenset(("email", "e-mail", "email address", "phone", "phone number", "number", "mobile",
                            "mobile number", "cell", "address", "home address", "home", "employer", "diet", "partner",
                            "doctor", "gp", "dentist", "username", "handle", "birthday", "timezone"))


def _norm_phrase(phrase: str) -> str:
    return " ".join(phrase.casefold().split())


# When a key was said, not what it names: `Database on-call this week`.
# A first person's clause before an attribute's noun: `I got a new number: ...`.
_I_GOT = re.compile(r"(?i)^(?:i|we)\s+(?:have|got|now\s+have|just\s+got|\'ve\s+got)\s+(?:a|an)(?:\s+new)?$")
# A subject's possessive and the words that say which statement: `Ines's new`, `Dan's`.
_SUBJECT_TAIL = re.compile(r"(?i)(?:['’]s)?(?:\s+(?:new|current|latest|main|primary|usual|old))*$")
# A key worded as the change that set it: `Wifi password rotated again: ...`.
_CHANGED_TAIL = re.compile(r"(?i)\s+(?:was\s+|has\s+been\s+)?(?:changed|updated|rotated|reset|renamed|moved|"
                           r"switched|raised|lowered)(?:\s+again)?$")
# Verbs whose subject holds what they name: `Keiko leads the mobile team` (not `Sofia reports to`).
_HOLDS = frozenset("own owns owned lead leads led manage manages managed runs maintain maintains maintained handle "
                   "handles handled".split())
_WHEN_SAID = re.compile(r"(?i)\s+(?:this|next|for\s+the)\s+(?:week|month|quarter|sprint|weekend|year)$|\s+(?:today|tonight|"
                        r"now)$")
_NEUTRAL_LEAD = re.compile(r"(?i)^(?:new|current|latest|updated)\s+(?=\S)")
# A state that is a place: `in room Kite`, `at the Leeds office`, `based in Rotterdam`.
_BASED = re.compile(r"(?i)^(?:based|located|living|staying|settled)\s+(?:in|at)\s+(?=\S)|"
                    r"^(?=(?:under|inside|behind|beside|next\s+to|on\s+top\s+of)\s+(?:the|a|an|my|our)\s)")
_IN_A_PLACE = re.compile(r"(?i)^(?:in|at)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:room|office|building|floor|hall|lab|"
                         r"studio|warehouse|datacenter|data\s+center|region|rack|cupboard|closet|drawer|garage|shed|"
                         r"basement|attic)\b")


_AT_TIME = re.compile(r"(?i)^at\s+(?=\d)")


def _value_after(attr: str, value: str) -> str:
    v = value.strip()
    if attr in _UNWRAPPED:
        v = _LEADING_PREPOSITION.sub("", v, count=1)
    return v.strip()


def _verb_attribute(verb: str, value: str) -> tuple[str, str] | None:
    """(attribute, value) for an attribute that is a verb the clause readers kept: `runs on 8080`
    is a port, `runs in eu-west-1` a location, `runs 2.4.0` a version."""
    word = verb.casefold()
    bare = _LEADING_PREPOSITION.sub("", value.strip(), count=1)
    if word in _RUNS:
        if _PORT.match(bare):
            return "port", bare
        if shape_of(bare) == "version":
            return "version", bare
        if shape_of(bare) == "time" or _WHEN_WORD.search(bare):  # `runs at night`, `runs every day at 1am`
            return "time", value.strip() if re.match(r"(?i)(?:every|each|daily|nightly|weekly)\b", value.strip()) \
                else bare
        if re.match(r"(?i)(?:in|at)\s", value.strip()) or (re.match(r"(?i)on\s", value.strip()) and _HOST.match(bare)):
            return "location", bare  # `runs on mon-1.internal.example`, as `lives on ...` says
        return None
    if word in VERBS:
        attr = VERBS[word]
        if attr == "time" and not _WHEN.search(value):
            return ("provider", _value_after("provider", value)) if re.match(r"(?i)from\s", value.strip()) else None
        return attr, _value_after(attr, value)
    return None


def _phrase(phrase: str, value: str, vocab: Vocabulary) -> tuple[str, str] | None:
    """A phrase that names both a subject and an attribute, as (subject, attribute): `contact at
    Veridian Print`, `ownership of billing-api`, `gateway port`; None when it names no attribute,
    or one that a typed value belies (`consulting tier: 1500 per month` names a price)."""
    of = _OF_PHRASE.match(phrase)
    both = (_ARTICLE.sub("", of.group("subj")), vocab.attribute(of.group("attr"))) \
        if of and vocab.known(of.group("attr")) else vocab.split(phrase)
    if both:  # `Ines's new place`: Ines; `my main inbox`, `I got a new number`: mine
        subject = _SUBJECT_TAIL.sub("", _I_GOT.sub("my", both[0])).strip()
        first = subject.casefold() in ("my", "our", "") or subject.casefold().startswith(("my ", "our "))
        both = ("my" if first and subject.casefold() in ("my", "our") else subject, both[1]) if subject else None
    typed = shape_of(value)
    if both and typed and typed != both[1] and not (both[1] == "price" and typed in ("price", "plan")):
        return None
    return both


def canonical(subject: str, attribute: str, value: str, *, vocab: Vocabulary = DEFAULT) -> tuple[str, str, str]:
    """(subject, attribute, value) as a fact keeps them. SUBJECT is `` (none named: the
    attribute phrase may hold it), `my`/`our` (the first person), or a name; ATTRIBUTE the words
    the sentence used."""
    subject, attribute, value = " ".join(subject.split()), " ".join(attribute.split()), value.strip()
    subject = re.sub(r"(?i)(?<=\w)\s+(?:now|currently|still)$", "", subject)  # `Backups now run at 04:00`
    if subject.casefold() in ("my", "our"):
        subject = subject.casefold()
    said = attribute
    verb = _verb_attribute(attribute, value) if subject and attribute and " " not in attribute else None
    if verb is not None:  # `We live at 14 Alder Lane`: the verb names the attribute
        attribute, value = verb
        if attribute == "owner" and subject not in ("my", "our") and said.casefold() in _HOLDS and \
                attribute != value:
            # `Keiko leads the mobile team`: the team is what is owned, Keiko its owner
            subject, value = _ARTICLE.sub("", value), subject
    phrased = not subject
    if phrased:
        phrase = _CHANGED_TAIL.sub("", _WHEN_SAID.sub("", _NEUTRAL_LEAD.sub("", _ARTICLE.sub("", attribute))))
        phrase = re.sub(r"(?i)^as\s+", "", phrase)  # `Kemi took over as head chef`
        both = _phrase(phrase, value, vocab)
        if both:
            subject, attribute = both
        elif _norm_phrase(phrase) in PERSONAL_NOUNS or _OWN_TASTE.match(phrase):
            # `New number: 555-0202`, `Favourite band: Big Thief`: the speaker's own
            subject, attribute = "my", vocab.attribute(phrase)
        else:
            subject, attribute = phrase, ""
    elif subject in ("my", "our") and not vocab.known(attribute) and (of := _OF_PHRASE.match(attribute)) and \
            vocab.known(of.group("attr")):
        subject, attribute = _ARTICLE.sub("", of.group("subj")), of.group("attr")  # `our account manager at Velto`
    elif subject == "our" and vocab.known(attribute):
        subject = "my"  # `our address` is the household's, the person's own
    elif subject == "our" and attribute.casefold() not in RELATIONS:
        subject, attribute = attribute, ""  # `our standup` is the standup; `our rehearse` a relation of ours
    if subject not in ("my", "our"):
        subject = _ARTICLE.sub("", subject)
        both = _phrase(subject, value, vocab) if not phrased and (attribute in _GUESSED or not attribute) else None
        if both:  # `the Q3 report deadline` moved: the subject names the attribute better than the verb
            subject, attribute = both
    verb = _verb_attribute(attribute, value) if attribute and " " not in attribute else None
    if verb is not None:
        attribute, value = verb
    else:
        attribute = vocab.attribute(attribute) if attribute else ""
    if attribute == "location" and (shape := shape_of(value)) in ("endpoint", "email", "phone"):
        attribute = shape  # `Staging lives at https://...` is an address of another kind
    if attribute == "status" and subject not in ("my", "our"):
        attribute = ""  # a thing's own state: `auth-service: down` and `auth-service is down` are one key
    if not attribute or attribute == "status":
        lead = vocab.leading(value)
        if lead is not None:
            attribute, value = lead
        elif _IN_A_PLACE.match(value) or shape_of(value) == "location" or _BASED.match(value) or \
                re.match(r"(?:in|at)\s+[A-Z][a-z]", value):
            attribute, value = "location", _BASED.sub("", value)  # `standup is in room Kite`, `based in Rotterdam`
        elif (at := _AT_TIME.match(value)) and shape_of(value[at.end():]) == "time":
            attribute = "time"  # `standup is at 9:30` is when, as `standup moved to 10:00` says
    elif (lead := vocab.leading(value)) is not None and lead[0] == attribute:
        value = lead[1]  # `escalated to priority P0`: P0
    named = _NAMED.match(value)
    if named and attribute in ("", "name"):
        attribute, value = "name", named.group("name")
    elif named and subject:
        subject, attribute, value = f"{subject}'s {attribute}", "name", named.group("name")
    return subject, attribute, _typed(attribute, _value_after(attribute, value))


def _typed(attribute: str, value: str) -> str:
    """A value of a typed attribute is what has its form: `+46 8 555 873 12, call after six` is
    `+46 8 555 873 12`."""
    if attribute.rsplit(" ", 1)[-1] in _BARE:
        found = [v for a, v in shaped_values(value) if a == attribute.rsplit(" ", 1)[-1]]
        if len(found) == 1:
            return found[0]
    return value


def label(subject: str, attribute: str, speaker: str | None = None) -> str | None:
    """The key as written: `subject.attribute`, `my attribute` (the first person, or the speaker's
    name in a transcript), or the subject alone for its own state."""
    first = subject.casefold()
    if first in ("my", "our"):
        if not attribute:
            return None
        return f"{first} {attribute}" if speaker is None else f"{speaker}.{attribute}"
    if not subject:
        return attribute or None
    if first.startswith(("my ", "our ")) and speaker is not None:
        return None  # whose dog? a transcript's speakers each have their own
    return f"{subject}.{attribute}" if attribute else subject


@dataclass(frozen=True)
class Claim:
    """What one sentence states: a value of a subject's attribute, under its key's label."""
    label: str
    subject: str
    attribute: str
    value: str
