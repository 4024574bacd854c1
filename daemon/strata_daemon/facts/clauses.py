"""Values stated in plain present-tense clauses that name no attribute: `Callum pays 950 GBP a
month for Flat B`, `We rehearse on Tuesdays at 19:30`, `There are 5 appointment slots left`,
`Mum's amlodipine was increased to 10 mg`. Pure: no I/O, no model.

A fact holds one value per key, so only relations that hold one value at a time are read: the
verbs in SINGLE (someone lives in one place, a router runs one firmware, a club has one chair);
`loves`, `likes` or `has` take many values and are left alone, or `Caroline loves hiking` would
make `Caroline loves painting` look replaced. A clause in the past, the future, a question, a
wish or an opinion is not a state, and neither is one that says when it happened (`today`).
The key is the subject and the verb (`callum.pays`, `our rehearse`), so a later clause of the
same shape replaces the value: `Callum pays 990 GBP a month` updates `callum.pays`.
"""

from __future__ import annotations

import re

from strata_daemon.facts.judge import STATUS_WORDS
from strata_daemon.facts.vocabulary import change_attribute

# Verbs of relations that hold one value at a time (base forms).
SINGLE = frozenset("""
live drive run cost pay charge earn lead manage chair own host sing teach study attend bank park commute rent
weigh stand point forward report belong supply handle cover maintain serve rehearse meet train sleep go shop
""".split())
# Changes that set a new value: `was moved to`, `has been increased to`.
CHANGES = (r"moved|changed|increased|reduced|raised|lowered|set|extended|pushed(?:\s+back)?|postponed|rescheduled|"
           r"switched|upgraded|downgraded|reassigned|transferred|migrated|relocated|renamed|cut|bumped|limited|capped|"
           r"let|rented|leased|escalated|de-escalated|delayed|brought\s+forward|handed\s+over|rotated|passed|shifted|"
           r"assigned|going\s+(?:up|down)|went\s+(?:up|down)|gone\s+(?:up|down)")
_SUBJECT = (r"(?P<subj>(?:(?:[Tt]he|[Oo]ur|[Mm]y)\s+)?(?:[A-Z][\w'’.&-]*|[a-z][\w'’-]*|\d\w*)(?:\s+(?:[A-Z][\w'’.&-]*|"
            r"[a-z][\w'’-]*|\d[\w.-]*)){0,4}?|We|I)")
_ADVERB = r"(?:(?:now|still|currently|usually|only|always|normally|also)\s+)?"
_SUBJECT_ONLY = re.compile(_SUBJECT + r"$")
# Verbs that hold one value only with one preposition: `go to school`, `The thesis stands at 61,300 words`.
_WITH = {"go": "to", "stand": "at"}
_PARTICLES = frozenset("off out up down away over back but".split())  # `pays off`, `stands out`
_ADVERBS = frozenset("now still currently usually only always normally also".split())
_CHANGED = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:(?:was|were|has\s+been|have\s+been|is|are|got|has|have)\s+)?(?:now\s+)?"
                      r"(?P<change>" + CHANGES + r")\s+(?:to|until|till|back\s+to)\s+(?P<value>\S.*?)[.!]?\s*$")
_COUNT = re.compile(r"^\s*(?:[Tt]here\s+(?:are|is)|(?P<who>We|I)(?:\s+have|['’]ve\s+got|\s+have\s+got|['’]re\s+down\s+to|"
                    r"\s+are\s+down\s+to)|[Oo]nly)\s+(?:now\s+|still\s+|only\s+)?(?P<value>\d[\d,.]*)\s+"
                    r"(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?(?:\s+of\s+[\w-]+)?)"
                    r"(?:\s+(?:left|remaining|now|in\s+stock|are\s+left|waiting|to|on|in|at|for)\b(?:\s+\S+){0,5})?"
                    r"[.!]?\s*$")
# A clause that is not a state: past, future, modal, wish, opinion, or said to happen at a time.
_NOT_A_STATE_WORDS = frozenset("""
was were did had will would should could might must shall cannot think thinks feel feels hope hopes wish wonder guess
reckon maybe perhaps probably yesterday today tonight tomorrow ago just later soon
""".split())
_NOT_A_STATE = re.compile(r"(?i)\b(?:won|can|don|doesn|didn|isn|aren)['’]t\b|\bnext\s+(?:week|month|year|time)\b|"
                          r"\bthis\s+(?:morning|afternoon|evening)\b|\blast\s+(?:night|week|month|year|time)\b|"
                          r"\b(?:going|about)\s+to\b")
# Words one of the forms below needs: a clause without them states no value they read.
_GATE = frozenset("is are has have been was were got there only i'm we're i've we've".split()) | frozenset(
    w for w in re.sub(r"\\s\+|\(\?:|\)", " ", CHANGES).replace("|", " ").split() if w.isalpha())


# -ing words that judge rather than say what goes on (`amazing at`, `going on`).
_JUDGING = (r"(?!(?:amazing|interesting|exciting|boring|inspiring|refreshing|annoying|frustrating|relaxing|charming|"
            r"stunning|surprising|amusing|encouraging|rewarding|challenging|going)\b)")
# A condition stated with is/are or has been: `Kennel 4 is still occupied by the greyhound`, `The
# shop's returns are handled by Ana now`, `My Trados licence has expired`, `Mum is staying with Aunt
# Rosa until Sunday`.
_CONDITION = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:(?:is|are|['’]s|['’]re|has\s+been|have\s+been)\s+" + _ADVERB
                        + r"(?P<value>(?:(?!been\b)[a-z]+(?:ed|en)|" + _JUDGING
                        + r"[a-z]+ing\s+(?:with|in|at|on|until|till|from))\b.*?)"
                        r"|(?:has|have)\s+" + _ADVERB + r"(?P<done>(?:expired|lapsed|ended|closed|stopped|gone|finished|"
                        r"moved|changed)\b.*?))[.!]?\s*$")
# A named thing and its value: `Royal Mail collection time is 15:30 on weekdays`.
_NAMED_VALUE = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:is|are)\s+(?:now\s+|still\s+)?(?P<value>(?:[$€£]\s?)?\d.*?|"
                          r"[A-Z][\w.-]*(?:\s+[A-Z][\w.&-]*){0,3})[.!]?\s*$")
# A measure of a host or device: `load average on gw-01`, `temperature of nas-2`.
_READING = re.compile(r"\b(?:on|of|for|at)\s+[a-z][\w]*-[\w-]+$")
# Words that no subject holds: `When everyone works together`, `It's like the virtual world is ...`.
_NO_SUBJECT = re.compile(r"(?i)\b(?:what|who|which|that|where|when|how|if|because|all|it['’]s|that['’]s|i['’]m|i|we|"
                         r"you|bet|think|guess|like)\b|['’](?:re|ve|ll|d)\b")
_PRONOUNS = frozenset("he she it they you his her their its your this that these those there here what who which "
                      "everyone everything someone something nobody nothing".split())


# Third-person forms of the SINGLE verbs: `pays`, `charges`, `studies`.
_FORMS = {**{v + "s": v for v in SINGLE}, **{v + "es": v for v in SINGLE}, **{v[:-1] + "ies": v for v in SINGLE if
                                                                            v.endswith("y")}}


_VERBS = frozenset(_FORMS) | SINGLE
_DIGIT = re.compile(r"\d")


def _base(verb: str, first_person: bool) -> str | None:
    """The base form of VERB when it is a SINGLE verb in the person the subject asks for."""
    if first_person:
        return verb if verb in SINGLE else None
    return _FORMS.get(verb)


def _subject(raw: str) -> tuple[str, str] | None:
    """(determiner, subject) with `my`/`our` kept and `the` dropped; None for a pronoun."""
    words = raw.split()
    det = ""
    if raw in ("I", "We"):
        return ("my" if raw == "I" else "our"), ""
    if _NO_SUBJECT.search(raw):
        return None  # `When everyone works together`, `It's like the virtual world is ...`
    if words[0].casefold() in ("the", "our", "my"):
        det, words = words[0].casefold(), words[1:]
    if not words or words[0].casefold() in _PRONOUNS or (det in ("my", "our") and re.search(r"['’]s\b", raw)):
        return None  # `my dog's name` is the possessive form's to read
    if not det and words[0].islower() and not re.search(r"[\d-]", words[0]):
        return None  # `busy with`, `taking risks`: no subject, a name or a host starts one
    return ("" if det == "the" else det), " ".join(words)


def clause_values(sentence: str, words: frozenset[str]) -> list[tuple[str, str, str]]:
    """(subject, attribute, value) for the state SENTENCE (of case-folded WORDS) states, at most
    one: the subject a name, `my`/`our` (`I`, `We`) or `my dog`, or empty when the attribute is
    the whole key."""
    if "?" in sentence or (words.isdisjoint(_GATE) and words.isdisjoint(_VERBS)):
        return []
    if _DIGIT.search(sentence) and (m := _COUNT.match(sentence)):
        return [({"We": "our", "I": "my"}.get(m.group("who") or "", ""), m.group("what"), m.group("value"))]
    if m := _CHANGED.match(sentence):  # `was moved to ...` sets a value however it is worded
        subject = _subject(m.group("subj"))
        if not subject or not subject[1]:
            return []
        attribute = change_attribute(m.group("change"), m.group("value"))
        if attribute:
            return [(f"{subject[0]} {subject[1]}".strip(), attribute, m.group("value"))]
        return [(subject[0], subject[1], m.group("value"))]
    if not _NOT_A_STATE_WORDS.isdisjoint(words) or _NOT_A_STATE.search(sentence):
        return []
    for form, attribute in ((_CONDITION, "status"), (_NAMED_VALUE, "")):
        if (m := form.match(sentence)) and (subject := _subject(m.group("subj"))) is not None:
            det, name = subject
            if m.groupdict().get("value") and " " not in m.group("value").strip(" .!") and \
                    m.group("value").strip(" .!").casefold() not in STATUS_WORDS:
                continue  # `has been renewed` says what was done; `is closed`, `is occupied by ...` how it is
            if not name or (form is _NAMED_VALUE and _READING.search(name) and m.group("value")[:1].isdigit()):
                continue  # `load average on gw-01 is 6.85`: a host's reading
            value = m.group("value") or m.group("done")
            return [(det, name, value)] if not attribute else [(f"{det} {name}".strip(), attribute, value)]
    return _relation(sentence.strip().rstrip(".!").split())


def _relation(words: list[str]) -> list[tuple[str, str, str]]:
    """`<subject> [adverb] <verb> <value>` with a SINGLE verb after a subject of one to five words."""
    for at in range(1, min(len(words) - 1, 6)):
        verb_at = at + (words[at] in _ADVERBS)
        if verb_at >= len(words) - 1 or (words[verb_at] not in _FORMS and words[verb_at] not in SINGLE):
            continue
        raw = " ".join(words[:at])
        verb = _base(words[verb_at], first_person=raw in ("I", "We"))
        if verb is None or not _SUBJECT_ONLY.match(raw):
            continue
        subject = _subject(raw) if verb else None
        if subject is None or words[verb_at + 1] in _PARTICLES or (verb in _WITH and words[verb_at + 1] != _WITH[verb]):
            continue
        det, name = subject
        return [(f"{det} {name}".strip(), verb, " ".join(words[verb_at + 1:]))]
    return []
