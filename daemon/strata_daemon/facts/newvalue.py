"""The value a memory gives a fact it updates, when one can be read: a value of the attribute's
form, the words after `new <attribute>`, `<attribute> is`, a change's `to`, `now`; a place, an
organisation or a person where the attribute takes one; another state of a thing that has one.
Pure: no I/O."""

from __future__ import annotations

import re

from strata_daemon.facts.judge import STATUS_WORDS
from strata_daemon.facts.speaking import Known, mentions, words_of
from strata_daemon.facts.subjects import KINDS
from strata_daemon.facts.vocabulary import NOUNS_OF, TYPED, VALUE_WORDS, Vocabulary, shaped_values

_CLAUSE_END = re.compile(r"(?i)\s*(?:,(?=\s)|[;()]|\.(?:\s|$)|!|\?|\s+(?:and|but|because|since|after|as|so|which|while|"
                         r"from\s+now|going\s+forward|instead|now|anymore|for\s+(?:the|a|now)|until|starting|"
                         r"effective|this|last|today|yesterday|on\s+(?:monday|tuesday|wednesday|thursday|friday|"
                         r"saturday|sunday)))\b")


_LEAD = re.compile(r"(?i)^(?:the|a|an|our|my|his|her|their|its|new|now|over)\s+")


MAX_VALUE_WORDS = 6


_PLACE = re.compile(r"\b(?:in|at|to|into|near)\s+(?P<v>(?:[A-Z][\w'’.&-]*|\d[\w/-]*)(?:[\s,]+(?:[A-Z][\w'’.&-]*|"
                    r"\d[\w/-]*|de|la|del|da|of|upon|on|am|im))*)")


_ORG = re.compile(r"\b(?:at|with|for|joined|to)\s+(?P<v>[A-Z][\w'’.&-]*(?:\s+(?:[A-Z][\w'’.&-]*|&|of|and))*)")


_PERSON = re.compile(r"\b(?:to|by|with|is|now)\s+(?P<v>(?:[Tt]eam\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2})")
# Someone who now does what the old holder did: `Kemi took over as head chef`, `Marcus runs
# Eastgate now`, `Lotte has the DB pager now`, `Theo does the walks now`.
_DOER = re.compile(r"(?:\bCoach\s+)?(?P<v>\b(?:Dr\.?\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?)\s+(?:now\s+|is\s+now\s+)?"
                   r"(?:has|runs|manages|leads|owns|handles|coaches|does|covers|babysits|looks\s+after|"
                   r"(?:is\s+)?(?:covering|running|managing|leading|handling)|(?:has\s+)?t(?:ook|akes|aken)\s+over|"
                   r"is\s+taking\s+over|is\s+in\s+charge)\b")
# A value that is a person's name: one to three capitalised words, no digits.
_A_NAME = re.compile(r"^(?:Dr\.?\s+|Mr\.?\s+|Mrs\.?\s+|Ms\.?\s+)?[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+){0,2}$")


def _clip(raw: str) -> str | None:
    m = _CLAUSE_END.search(raw)
    text = (raw[:m.start()] if m else raw).strip(" :-–—\"'“”")
    text = _LEAD.sub("", text)
    text = _LEAD.sub("", text)
    words = text.split()
    if not words or len(words) > MAX_VALUE_WORDS:
        return None
    return text.rstrip(".!,;")


# Where a value is read from, strongest first: its shape; `new <attribute>: X`, `X is our new
# <attribute>`, `<attribute> is X` (strong: the text says what the attribute is); then the words
# after a change (`moved to X`, `is now X`, `it's X now`), which only a change word backs.
_STRONG = 4


# A thing named after `on`, `at`, `in` is where something else happened (`the exporter restarts
# on nas-01: ECONNREFUSED`): what follows is not its value.
_NOT_AFTER_PLACE = "".join(rf"(?<!\b{p}\s)" for p in ("on", "at", "in", "for", "from", "to"))


def _patterns(nouns: str) -> tuple[str, ...]:
    return (
        rf"(?i)\bnew\s+(?:[\w-]+\s+)?(?:{nouns})\s*(?:is|:|,|-|–|—|=)?\s*(?P<v>[^;!?]+)",
        rf"(?P<v>\b(?:[A-Z0-9][\w.'’&-]*|[a-z][\w]*[-.\d][\w.-]*)(?:\s+[A-Z0-9][\w.'’&-]*){{0,3}})\s+(?:is|are)\s+"
        rf"(?:now\s+)?(?:our|my|the|his|her|their)?\s*(?:new\s+)?(?:{nouns})\b",
        rf"(?i){_NOT_AFTER_PLACE}\b(?:{nouns})\s*(?::|=|\bis\b|\bare\b|was\s+changed\s+to|has\s+changed\s+to|changed\s+to)\s*(?:now\s+)?"
        rf"(?P<v>[^;!?]+)",
        # `node-4 won the election and is leader`, `Ines became the new captain`
        rf"(?P<v>\b(?:[A-Z0-9][\w.'’&-]*|[a-z][\w]*[-.\d][\w.-]*)(?:\s+[A-Z][\w.'’&-]*){{0,2}})\s+(?:became|becomes|"
        rf"(?:was|got|has\s+been)\s+(?:elected|appointed|named|made)|won\s+\S+(?:\s+\S+){{0,3}}?\s+and\s+is(?:\s+now)?)\s+"
        rf"(?:as\s+)?(?:our|the|his|her|their)?\s*(?:new\s+)?(?:[\w-]+\s+)?(?:{nouns})\b",
        r"(?i)\b(?:moved|switched|changed|escalated|downgraded|bumped|pushed(?:\s+back)?|rescheduled|postponed|"
        r"renamed|transferred|reassigned|rotated|handed(?:\s+\w+)?\s+over|handed|passed|migrated|relocated|set|"
        r"upgraded|updated|raised|lowered|increased|reduced|cut|repointed|re-?routed|points?|pointed|went|gone|"
        r"cut\s+over|failed\s+over|swapped|dropped|scaled|turned|extended|shortened|capped|limited|brought|"
        r"shifted|flipped|ramped|rolled|revised(?:\s+(?:up|down))?)\b(?:\s+\S+){0,4}?\s+(?:to|into|onto|at)\s+"
        r"(?P<v>[^;!?]+)",
        r"(?i)\breplac(?:ed|ing)\s+.+?\s+with\s+(?P<v>[^;!?]+)|\bswapped\s+.+?\s+for\s+(?P<v2>[^;!?]+)",
        # `Renewed the car insurance with Brightshore instead`, `switched the account over with Alder`
        r"(?i)\b(?:renewed|re-?signed|signed\s+up|insured|switched|moved|went)\b(?:\s+\S+){0,4}?\s+with\s+"
        r"(?P<v>[A-Z][^;!?]*)",
        r"(?i)\b(?:it['’]s|it\s+is|is|are|['’]s)\s+now\s+(?P<v>[^;!?]+)",
        r"(?i)\bnow\s+(?:is|are|at|in|with|on|uses?|using|runs?|has|goes\s+to|go\s+to|pays?|charges?|costs?|gets?|"
        r"takes?)\s+(?P<v>[^;!?]+)",
        rf"(?i)\b(?:{nouns})\s+(?:now|is\s+now|at|down\s+to|up\s+to)\s+(?P<v>[^;!?]+)",
        rf"(?P<v>\d[\d.,]*\s*%?)\s+(?:{nouns})\b",
        r"(?i)\b(?:it['’]s|it\s+is)\s+(?P<v>[^;!?]+?)\s+now\b",
        r"(?i)\bnew\s+[\w-]+\s+(?:is|:)\s+(?P<v>[^;!?]+)",
    )


def _head_noun(subject: str) -> list[str]:
    """The noun a key of its own names its value by: `rent`, `replicas` of `checkout replicas`,
    `usage` of `disk usage on nas-1`."""
    words = words_of(re.split(r"(?i)\s+(?:on|of|for|at|in)\s+", subject, maxsplit=1)[0])
    return [w for w in words if w not in KINDS][-1:] or words[-1:]


def _fits(k: Known, value: str | None, old: str) -> bool:
    return bool(value) and value.casefold() not in old and old not in value.casefold() and (
        k.subject == "my" or not mentions(k.subject, value))


def new_value(k: Known, text: str, vocab: Vocabulary) -> tuple[str | None, bool]:
    """The value TEXT gives the fact's attribute, when one can be read, and whether the text says
    outright that it is the attribute's (its shape, `new <attribute>: X`, `<attribute> is X`)."""
    head = k.attribute.split()[-1] if k.attribute else ""
    old = k.value.casefold()
    own = _head_noun(k.subject) if not head else []
    shaped = [v for a, v in shaped_values(text) if a == head and v.casefold() not in old]
    if shaped:
        return shaped[-1], True
    # A word that can only be a value of the attribute: `she's fully vegetarian now` of a diet.
    said = sorted((m.start(), w) for w in VALUE_WORDS.get(head, ()) if w not in old
                  for m in re.finditer(rf"(?i)\b{re.escape(w)}\b", text))
    if said:
        return said[-1][1], True
    # `moved the backup job from nas-2 to nas-3`: the old value named, then the new one.
    for m in re.finditer(rf"(?i)\bfrom\s+(?:the\s+)?{re.escape(k.value.strip())}\s+(?:to|into|onto|for)\s+(?P<v>[^;!?]+)",
                         text) if k.value.strip() else ():
        value = _clip(m.group("v"))
        if _fits(k, value, old):
            return value, True
    if head in TYPED:
        return None, False  # a typed attribute whose value has no such form here is not read by words
    nouns = "|".join(re.escape(n) for n in sorted(NOUNS_OF.get(head, (head,) if head else tuple(own)), key=len,
                                                       reverse=True) if n) or r"(?!x)x"
    form = {"location": _PLACE, "employer": _ORG, "provider": _ORG, "school": _ORG}.get(head) or (
        _PERSON if head in PEOPLE_ATTRIBUTES else None)
    doer = _DOER if head in PEOPLE_ATTRIBUTES or _A_NAME.match(k.value.strip()) else None
    patterns = _patterns(nouns)
    for strength, pattern in enumerate((*patterns[:_STRONG], form, doer, *patterns[_STRONG:])):
        if pattern is None:
            continue
        for m in re.finditer(pattern, text):
            value = _clip(m.group("v") or m.groupdict().get("v2") or "")
            if _fits(k, value, old):
                return value, strength < _STRONG
    return None, False


PEOPLE_ATTRIBUTES = frozenset("owner contact on-call partner doctor dentist".split())


def new_state(subject: str, old: str, text: str) -> str | None:
    """For a thing whose value is a state (`open`, `DEGRADED`), another state TEXT gives it close
    after naming it: `Garage door: closed at 22:10`, `web-3 drained and marked OFFLINE`."""
    words = words_of(old)
    if not words or words[0] not in STATUS_WORDS:
        return None
    said = words_of(text)
    last = max((i for i, w in enumerate(said) if w in set(words_of(subject))), default=None)
    if last is None:
        return None
    near = [w for w in said[last + 1:last + 12] if (w in STATUS_WORDS or w in _OUTCOMES) and w not in _VAGUE_STATES]
    fresh = [w for w in near if w != words[0]]
    if not fresh or words[0] in near:
        return None
    return fresh[-1].upper() if old.split()[0].isupper() else fresh[-1]


# Outcomes a state ends in that are not conditions a status line names: `succeeded on retry`.
_OUTCOMES = frozenset("succeeded recovered restored settled cleared green".split())


_VAGUE_STATES = frozenset("no out on off back up down full low high normal done in".split())
