"""The attributes facts are kept under, one name each, and the words and values that name them.
Pure: no I/O.

A fact key is `subject.attribute`; people name one attribute in many ways (`email address`,
`e-mail`, `inbox`; `lives in`, `moved to`, `is based in`; `P0`, `priority`, `escalated`), and
two wordings of one attribute must land on one key. The vocabulary maps each wording to its
attribute: the nouns that name it, the verbs that imply it, and the forms of value that can
only be it (an email address, a phone number, a version, a price, a clock time). A person
extends it with `facts.attributes` (attribute = [more nouns]) in strata.toml.

A word before an attribute's noun that says which one (`work phone`, `home phone`,
`staging host`) is kept: the two are different facts. Words that say which statement of it
(`new`, `current`, `main`) are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from strata_daemon.errors import ConfigError

# attribute -> the nouns (and noun phrases) that name it.
NOUNS: dict[str, tuple[str, ...]] = {
    "email": ("email", "e-mail", "email address", "e-mail address", "mail address", "inbox", "mailbox"),
    "phone": ("phone", "phone number", "mobile", "mobile number", "cell", "cell number", "cell phone", "telephone",
              "telephone number", "number", "phone line", "landline", "mobile phone"),
    "location": ("location", "address", "home address", "street address", "postal address", "mailing address",
                 "city", "home", "place", "office", "region", "datacenter", "data center", "room", "meeting room", "venue", "whereabouts",
                 "hometown", "residence"),
    "owner": ("owner", "maintainer", "lead", "manager", "head", "assignee", "steward", "captain",
              "ownership", "driver"),
    "contact": ("contact", "point of contact", "rep", "representative", "account manager", "account rep",
                "liaison"),
    "on-call": ("on-call", "on call", "pager", "on-call engineer", "primary on-call"),
    "employer": ("employer", "company", "workplace"),
    "role": ("role", "title", "job title", "position"),
    "version": ("version", "release", "firmware"),
    "price": ("price", "cost", "fee", "rate", "charge", "monthly cost", "subscription", "premium"),
    "priority": ("priority", "severity", "sev"),
    "status": ("status", "state", "condition"),
    "name": ("name", "full name"),
    "username": ("username", "handle", "user name", "login", "account name"),
    "time": ("time", "start time", "slot", "hour"),
    "deadline": ("deadline", "due date", "due", "cutoff", "cut-off"),
    "date": ("date", "day"),
    "port": ("port", "listen port"),
    "ip": ("ip", "ip address", "address ip"),
    "endpoint": ("endpoint", "url", "webhook", "uri"),
    "host": ("host", "hostname", "server", "node", "primary"),

    "diet": ("diet", "dietary restriction", "dietary restrictions"),
    "partner": ("partner", "husband", "wife", "spouse", "boyfriend", "girlfriend", "fiance", "fiancee"),
    "plan": ("plan", "tier", "package", "tariff", "subscription plan"),
    "doctor": ("doctor", "gp", "physician"),
    "dentist": ("dentist",),
    "school": ("school",),
    "timezone": ("timezone", "time zone"),
    "password": ("password", "passphrase"),
    "pin": ("pin", "pin code", "pin number"),
    "birthday": ("birthday", "date of birth"),
    "car": ("car", "vehicle", "van"),
    "model": ("model", "make"),
    "provider": ("provider", "supplier", "vendor", "insurer", "bank", "carrier"),
}
# Values that can only be one attribute's (`vegan` is a diet).
VALUE_WORDS: dict[str, frozenset[str]] = {
    "diet": frozenset("vegan vegetarian pescatarian flexitarian keto paleo gluten-free lactose-free halal kosher "
                      "carnivore omnivore low-carb low-sodium diabetic".split()),
}
# Nouns that end a thing's name more often than they name its attribute: `media server`, `order
# number`, `care home`, `nightly build`; a phrase ending in one is not split into a subject and it.
NAMING = frozenset("server number home place node primary line release company office host".split())
# Words before an attribute's noun that say which statement of it, not which attribute.
NEUTRAL = frozenset("new current old previous former latest main primary usual regular own actual present "
                    "updated preferred".split())
# Verbs (as written) that imply an attribute whatever the value: `moved to`, `escalated to`.
VERBS: dict[str, str] = {
    **dict.fromkeys("lives live living lived resides reside moved relocated based located settled hosted sits "
                    "kept stored housed migrated".split(), "location"),
    **dict.fromkeys("works work working employed joined".split(), "employer"),
    **dict.fromkeys("own owns owned maintain maintains maintained lead leads led manage manages managed runs handle "
                    "handles handled".split(), "owner"),
    **dict.fromkeys("escalated de-escalated deescalated reprioritised reprioritized".split(), "priority"),
    **dict.fromkeys("upgraded downgraded deployed released".split(), "version"),
    **dict.fromkeys("costs charges priced billed".split(), "price"),
    **dict.fromkeys("called named renamed".split(), "name"),
    **dict.fromkeys("married dating".split(), "partner"),
    **dict.fromkeys("drives drive driving".split(), "car"),
    **dict.fromkeys("arrives arrive comes come meets meet happens happen held".split(), "time"),
    **dict.fromkeys("report reports reporting".split(), "owner"),
    "listens": "port",
}
# Forms of value that can only be one attribute, most specific first.
SHAPES: tuple[tuple[str, re.Pattern], ...] = (
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("endpoint", re.compile(r"\b(?:https?|amqp|wss?|ftp|s3|redis|postgres(?:ql)?)://\S+")),
    ("phone", re.compile(r"(?<![\w.:/-])(?!\d{4}-\d\d-\d\d)(?:\+\d{1,3}[ -]?)?(?:\(\d{2,4}\)[ -]?)?\d{1,4}"
                         r"(?:[ -]\d{2,6}){1,4}(?![\w.:/-])")),
    ("version", re.compile(r"(?i)\bv\d+(?:\.\d+)*\b|(?<![\d.])\d+\.\d+\.\d+(?![\d.])")),
    ("price", re.compile(r"[$€£]\s?\d[\d,.]*|\b\d[\d,.]*\s?(?:EUR|USD|GBP|CHF|euros?|dollars?|pounds?|/mo|/month|a month|"
                         r"per month|/yr|a year|per year|an hour|per hour|/h)\b")),
    ("priority", re.compile(r"\b(?:P[0-4]|[Ss]ev-?[1-5]|SEV-?[1-5])\b")),
    ("time", re.compile(r"(?i)\b(?:[01]?\d|2[0-3])[:.][0-5]\d\s?(?:am|pm)?\b|\b(?:1[0-2]|[1-9])\s?(?:am|pm)\b|\bnoon\b|"
                        r"\bmidnight\b")),
    ("ip", re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?(?![\d.])")),
    ("location", re.compile(r"\b(?:us|eu|ap|sa|ca|me|af)-(?:north|south|east|west|central|northeast|southeast|"
                            r"northwest|southwest)-\d\b")),
)
TYPED = frozenset(attr for attr, _ in SHAPES) - {"location"}  # attributes whose values have a form of their own
_PHONE_DIGITS = 7  # fewer digits than this is a count or a code, not a phone number
_SPACE = re.compile(r"\s+")


def _norm(phrase: str) -> str:
    return _SPACE.sub(" ", phrase.casefold().replace("’", "'")).strip(" .:")


@dataclass(frozen=True)
class Vocabulary:
    """The built-in attributes, with what a person added (facts.attributes)."""
    nouns: Mapping[str, str] = field(default_factory=dict)  # noun phrase -> attribute

    @classmethod
    def build(cls, extra: Mapping[str, Iterable[str]] | None = None) -> Vocabulary:
        nouns = {_norm(n): attr for attr, words in NOUNS.items() for n in (attr, *words)}
        for attr, words in (extra or {}).items():
            if not isinstance(attr, str) or not attr.strip() or isinstance(words, str) or not all(
                    isinstance(w, str) and w.strip() for w in words):
                raise ConfigError(f"facts.attributes: {attr!r} must name a list of words",
                                  hint='e.g. [facts.attributes] room = ["meeting room", "venue"]')
            for w in (attr, *words):
                nouns[_norm(w)] = _norm(attr)
        return cls(nouns)

    def attribute(self, phrase: str) -> str:
        """The attribute a noun phrase names: `e-mail address` -> email, `work phone number` ->
        `work phone`, `new mobile` -> phone; an unknown phrase is its own attribute."""
        words = _norm(phrase).split()
        while words and (words[0] in NEUTRAL or words[0] in ("is", "are", "be")):
            words = words[1:]  # `new number` is a number; `is due` a deadline
        if not words:
            return ""
        whole = " ".join(words)
        if whole in self.nouns:
            return self.nouns[whole]
        for cut in range(1, len(words)):  # `work phone number`: `phone number` names it, `work` says which
            tail = " ".join(words[cut:])
            if tail in self.nouns:
                return " ".join([*words[:cut], self.nouns[tail]])
        return whole

    def known(self, phrase: str) -> str | None:
        """The attribute when the phrase ends in one of the vocabulary's nouns, else None."""
        attr = self.attribute(phrase)
        head = attr.rsplit(" ", 1)[-1] if attr else ""
        return attr if attr and (attr in self.nouns.values() or head in self.nouns.values()) else None

    def split(self, phrase: str) -> tuple[str, str] | None:
        """A phrase that ends in an attribute's noun, as (subject, attribute): `gateway port` ->
        (gateway, port), `INC-4471 priority` -> (INC-4471, priority); None when it does not."""
        words = phrase.split()
        if _norm(phrase) in self.nouns:
            return None  # `meeting room` is an attribute's name, not a meeting's room
        for cut in range(1, len(words)):
            tail = " ".join(words[cut:])
            owner = words[cut - 1].casefold()
            if _norm(tail) in self.nouns and (_norm(tail) not in NAMING or owner.endswith(("'s", "’s"))):
                return " ".join(words[:cut]), self.nouns[_norm(tail)]
        return None

    def leading(self, value: str) -> tuple[str, str] | None:
        """A value that opens with an attribute's noun, as (attribute, the rest): `priority P0`
        -> (priority, P0), `version 2.4.0` -> (version, 2.4.0), `owner = messaging team`."""
        assigned = re.match(r"^(?P<noun>[\w -]+?)\s*[=:]\s*(?P<rest>\S.*)$", value)
        if assigned and _norm(assigned.group("noun")) in self.nouns:
            return self.nouns[_norm(assigned.group("noun"))], assigned.group("rest")
        words = value.split()
        for n in (3, 2, 1):
            if len(words) > n and _norm(" ".join(words[:n])) in self.nouns:
                attr = self.nouns[_norm(" ".join(words[:n]))]
                if attr in LEADING:
                    return attr, " ".join(words[n:])
        return None


# Attributes whose noun may open a value and be dropped from it (`priority P0` is P0). A room or
# a plan keeps its noun: `room Lark`, `Growth plan`.
LEADING = frozenset("priority version port severity status email phone endpoint time deadline date".split())


def shape_of(value: str) -> str | None:
    """The attribute a value's form names (`dana@x.example` email, `+44 7700 900412` phone,
    `v2.4.0` version, `$59/month` price, `P0` priority, `14:20` time), or None."""
    for attr, form in SHAPES:
        m = form.search(value)
        if m is None:
            continue
        if attr == "phone" and sum(c.isdigit() for c in m.group()) < _PHONE_DIGITS:
            continue
        return attr
    return None


_MAY_HAVE_SHAPE = re.compile(r"[\d@$€£]|://|(?i:noon|midnight)")


def shaped_values(text: str) -> list[tuple[str, str]]:
    """(attribute, value) for each value in TEXT whose form names its attribute, in order."""
    if not _MAY_HAVE_SHAPE.search(text):
        return []  # every form needs a digit, an @, a currency or a scheme (most texts have none)
    out = []
    taken: list[tuple[int, int]] = []
    for attr, form in SHAPES:
        for m in form.finditer(text):
            if attr == "phone" and sum(c.isdigit() for c in m.group()) < _PHONE_DIGITS:
                continue
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue  # a phone number inside an address, a version inside a URL
            taken.append(m.span())
            out.append((m.start(), attr, m.group().strip().rstrip(".,;")))
    return [(attr, value) for _, attr, value in sorted(out)]


# States that follow `in`/`on`/`at` (`in review`, `on hold`): a change to one moves no place.
_STATES = frozenset("review progress hold track testing production staging qa triage backlog maintenance".split())
# A date: a month or a day's name, a numeric date, `next ...`; not a number alone (`5 Mill Yard`).
_DATE_WORDS = re.compile(r"(?i)(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
                         r"mon|tue|wed|thu|fri|sat|sun|next|tomorrow|today|end\s+of|mid|early|late|q[1-4])\w*\b|"
                         r"\d{4}-\d\d-\d\d|\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b")
_WHO = re.compile(r"^(?:(?:the\s+)?[Tt]eam\s+\S|(?:the\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*(?:\s+team)?\b|me\b|him\b|her\b|them\b)")


def change_attribute(verb: str, value: str) -> str:
    """The attribute a change names by its verb and the value it changed to: `moved to room Lark`
    a location, `moved to 3pm` a time, `pushed back to 1 September` a date, `escalated to P0` a
    priority, `handed over to Rui` an owner; `` when the verb does not say (`raised to 60s`)."""
    verb = " ".join(verb.casefold().split())
    value = value.strip()
    if value.split(" ", 1)[0].casefold() in ("in", "on", "at") and value.split(" ", 2)[1:2] and \
            value.split(" ", 2)[1].casefold() in _STATES:
        return ""  # `moved to in review`: a state, not a place
    shape = shape_of(value.split(" after ")[0])
    if shape in ("priority", "version", "email", "phone", "endpoint", "price"):
        return shape  # `downgraded to P2`, `moved to v2.4.0`
    timed = shape == "time"
    if verb in ("moved", "migrated", "relocated", "shifted"):
        return "time" if timed else "date" if _DATE_WORDS.match(value) else "location"
    if verb in ("pushed", "pushed back", "postponed", "rescheduled", "delayed", "brought forward", "pulled in"):
        return "time" if timed else "date"
    if verb in ("escalated", "de-escalated", "deescalated", "reprioritised", "reprioritized"):
        return "priority"
    if verb == "renamed":
        return "name"
    if verb in ("transferred", "reassigned", "assigned", "handed over", "handed", "rotated", "passed"):
        return "owner" if _WHO.match(value) else "location"
    if verb in ("upgraded", "downgraded"):
        return "version" if shape_of(value) == "version" or re.match(r"(?i)v?\d", value) else "plan"
    return ""


# Each attribute with the nouns that name it, the attribute's own name first.
NOUNS_OF: dict[str, tuple[str, ...]] = {attr: (attr, *words) for attr, words in NOUNS.items()}
# Kinds of value, and the attributes whose values are of each: a thing's own key holding a value
# of a kind is that attribute's key (`physio = May 2 at 11:00` is the physio's date).
KIND_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "when": ("date", "time", "deadline"), "price": ("price",), "version": ("version",), "email": ("email",),
    "phone": ("phone",), "endpoint": ("endpoint",), "priority": ("priority",), "location": ("location",),
    "ip": ("ip",),
}
_KIND_OF = {a: kind for kind, attrs in KIND_ATTRIBUTES.items() for a in attrs}


def kind_of(attribute: str) -> str | None:
    return _KIND_OF.get(attribute.rsplit(" ", 1)[-1])


def value_kind(value: str) -> str | None:
    """The kind of a value by its form: a time or a date (`May 2 at 11:00`), a price, a version,
    an email, ...; None for words."""
    shape = shape_of(value)
    if shape == "time" or (shape is None and _DATE_WORDS.match(value.strip())):
        return "when"
    return shape


DEFAULT = Vocabulary.build()
