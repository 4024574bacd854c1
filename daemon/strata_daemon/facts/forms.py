"""The forms of attribute statements in plain sentences, each a pattern behind a gate of words
it needs (most sentences pass no gate and cost a set lookup). Pure: no I/O, no model.

Covered, with examples in docs/concepts.md: possessives (`Dana Whitfield's email address is [now]
X`), a pronoun after a named subject (`Dana moved: her email address is now X`), `the price of
the pro plan is X`, the first person (`my phone number is X`, `I work at X`, `I live in X`,
`I'm vegan`, `I'm on holiday until ...`), `Tom moved to X`, `X is now owned by Y`, roles (`Jenna
is the on-call engineer`), schedules (`The office closes at 6pm`), conditions (`Production is
frozen until ...`, `Mum is in hospital`), where a thing lives, what something was switched to,
the version something runs, a change and its value (`Our rent went up, it's 1600 now`).
A reader gives (subject, attribute, raw value); facts/statements.py turns them into keys.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from strata_daemon.facts.attributes import KNOWN

_IS = r"(?:is\s+now|are\s+now|is|are|has\s+changed\s+to|have\s+changed\s+to|changed\s+to|has\s+become|became)"
_ATTR = r"(?P<attr>(?:[A-Za-z][\w-]*\s+){0,3}?[A-Za-z][\w-]*)"
_REST = r"\s+" + _IS + r"\s+(?P<value>.+)"
_POSSESSIVE = re.compile(r"['’]s\s+" + _ATTR + _REST)
_OWNER_BEFORE = re.compile(
    r"(?:\b(?P<det>[Mm]y|[Oo]ur|[Tt]he)\s+(?P<common>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)"
    r"|(?P<proper>(?:[A-Z][\w.&-]*\s+){0,2}[A-Z][\w.&-]*)"
    r"|(?P<host>\b[a-z][\w]*[\d.-][\w.-]*|^[a-z][\w]*))$")
_PRONOUN = re.compile(r"\b(?:his|her|their|its)\s+(?:new\s+|current\s+)?(?P<attr>" + KNOWN + r")" + _REST, re.I)
_CHANGED = re.compile(r"(?P<subj>\b(?:[Mm]y|[Oo]ur|[Tt]he)\s+[a-z][\w-]*|(?:[A-Z][\w.-]*\s+){0,2}[A-Z][\w.-]*)\s+"
                      r"(?:has\s+)?(?:moved|changed)\s*[:,;-]\s*(?:his|her|their|its|the)\s+(?:new\s+)?"
                      r"(?P<attr>" + KNOWN + r")" + _REST)
# `The on-call engineer is Jenna`, `Jenna is the on-call engineer this week`: a role and who holds it.
_THE = re.compile(r"^\s*[Tt]he\s+(?P<attr>(?:(?!of\s|for\s)[A-Za-z][\w-]*\s+){0,5}?[A-Za-z][\w-]*)" + _REST)
_HOLDS = re.compile(r"^\s*(?P<value>(?:[A-Z][\w.-]*\s+){0,2}[A-Z][\w.-]*)\s+is\s+(?:now\s+|still\s+)?"
                    r"(?P<det>the|our|my)\s+(?:new\s+)?(?P<attr>(?:[a-zA-Z][\w'’-]*\s+){0,2}?[a-zA-Z][\w-]*)"
                    r"(?:\s+at\s+(?P<org>(?:[A-Z][\w.&-]*\s+){0,2}[A-Z][\w.&-]*))?"
                    r"(?:\s+(?:this|for|until|since|from|now)\b.*)?[.!]?\s*$")
_OF = re.compile(r"\b[Tt]he\s+(?:new\s+|current\s+)?(?P<attr>" + KNOWN + r")\s+(?:of|for)\s+(?:the\s+|our\s+|my\s+)?"
                 r"(?P<subj>[\w][\w.&-]*(?:\s+[\w][\w.&-]*){0,2}?)" + _REST)
_FIRST = re.compile(r"\b(?P<det>[Mm]y|[Oo]ur)\s+(?:new\s+|current\s+)?" + _ATTR + _REST)
_NEW = re.compile(r"\bnew\s+(?P<attr>" + KNOWN + r")\b[^.!?]{0,40}[.!?;,:]\s*(?:it['’]s|it\s+is|the\s+new\s+one\s+is)"
                  r"\s+(?P<value>.+)", re.I)
_PLACE = r"(?P<value>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2})"
_NOW = r"(?:(?:now|just|finally|recently|officially|also)\s+)*"
_WORK = re.compile(r"\bI(?:['’]m|\s+am|['’]ve|\s+have)?\s+" + _NOW + r"(?:work(?:ing)?(?:\s+as\s+(?:an?\s+)?[\w-]+(?:\s+[\w-]+)?)?"
                   r"\s+(?:at|for)|started\s+(?:a\s+new\s+job\s+|working\s+)?(?:at|with)|joined|"
                   r"took\s+a\s+job\s+(?:at|with))\s+" + _PLACE)
_LIVE = re.compile(r"\bI(?:['’]m|\s+am|['’]ve|\s+have)?\s+" + _NOW + r"(?:all\s+)?(?:live|moved|relocated|settled|"
                   r"living|based)\s+(?:in|to|into)\s+" + _PLACE)
_DIET = re.compile(r"\bI(?:['’]m|\s+am)\s+(?:now\s+)?(?:a\s+)?(?P<value>vegan|vegetarian|pescatarian|flexitarian|"
                   r"keto|paleo|gluten[- ]free|lactose[- ]intolerant)\b"
                   r"|\b(?:switched|changed|moved|went)\s+to\s+an?\s+(?P<value2>[\w-]+(?:\s+[\w-]+)?)\s+diet\b"
                   r"|\bI(?:['’]m|\s+am)\s+(?:now\s+)?on\s+(?:the|a)\s+(?P<value3>[\w-]+)\s+diet\b", re.I)
_NAME = r"(?P<subj>\b[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)"
_THEIR_WORK = re.compile(_NAME + r"\s+(?:now\s+)?(?:works|is\s+working)\s+(?:at|for)\s+" + _PLACE)
_THEIR_HOME = re.compile(_NAME + r"\s+(?:now\s+)?lives\s+in\s+" + _PLACE)
_THEIR_DIET = re.compile(_NAME + r"\s+is\s+(?:now\s+)?(?:a\s+)?(?P<value>vegan|vegetarian|pescatarian|flexitarian)\b")
_COSTS = re.compile(r"^\s*(?:The\s+|Our\s+)?(?P<subj>[\w][\w.&-]*(?:\s+[\w][\w.&-]*){0,2}?)\s+(?:now\s+)?costs?\s+"
                    r"(?:now\s+)?(?P<value>(?:[$€£]|\d).*)")
_NOT_SUBJECT = r"(?!(?:I|He|She|It|They|We|You|This|That|There|Here|What|Who|Which|Where|Everything|Nothing|" \
               r"Something|Everyone|Nobody|Someone)\b)"
_SUBJECT = (r"(?:(?P<det>The|Our|My|the|our|my)\s+)?" + _NOT_SUBJECT
            + r"(?P<subj>[\w][\w.&'’-]*(?:\s+[\w][\w.&-]*){0,5}?)")
# When something happens: `The office closes at 6pm`, `Backups run every night at 1am`.
_SCHEDULE = re.compile(r"^\s*" + _SUBJECT + r"\s+(?P<verb>opens|closes|runs?|goes\s+out|is\s+held|happens|starts|"
                       r"ends|begins|renews|expires|meets|comes|visits|arrives|leaves|departs|is\s+due|are\s+due|go\s+out)\s+"
                       r"(?P<value>(?:(?:at|on|in|every|each|daily|weekly|monthly|within|from|until|before|after|by)\b"
                       r"|\d{1,2}(?:st|nd|rd|th)?\s+[A-Z]|(?:January|February|March|April|May|June|July|August|"
                       r"September|October|November|December)\b).+)")
_PREFERS = re.compile(r"^\s*(?P<subj>I|[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)(?:['’]d|\s+would)?\s+(?:prefers?|rather)\s+"
                      r"(?P<value>.+)")
_ALLERGIC = re.compile(r"^\s*(?P<subj>I|[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)(?:['’]m|\s+am|\s+is)\s+allergic\s+to\s+"
                       r"(?P<value>.+)")
_USE = re.compile(r"^\s*(?P<subj>We|I)\s+(?:now\s+)?use\s+(?P<value>.+?)\s+for\s+(?P<attr>[\w\s-]+?)[.!]?\s*$")
_RELATIVE_HOME = re.compile(r"\b(?P<subj>[Mm]y\s+[a-z]+)\s+(?:now\s+)?lives\s+in\s+" + _PLACE)
_MOVED = re.compile(r"(?P<subj>\b[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)\s+(?:has\s+)?(?:moved|relocated)\s+to\s+" + _PLACE)
_OWNED = re.compile(r"(?:\b[Tt]he\s+)?(?!(?:[Tt]his|[Tt]hat|[Ii]t|[Ww]hich|[Ww]ho|[Ee]verything)\b)"
                    r"(?P<subj>\b[\w][\w.&'’-]*(?:\s+[\w][\w.&-]*)?)\s+(?:is|are|has\s+been|have\s+been)\s+"
                    r"(?:now\s+)?(?:owned|maintained|run|led|managed|served|handled|hosted|provided)\s+by\s+"
                    r"(?P<value>.+)")
# A condition of a thing in a sentence: `Production is frozen until the audit ends.`
CONDITIONS = ("frozen|down|up|offline|online|paused|blocked|suspended|closed|open|locked|unlocked|disabled|enabled|"
              "deprecated|retired|archived|degraded|broken|cancell?ed|canceled|delayed|postponed|deferred|overdue|"
              "expired|unpaid|paid|approved|rejected|on\\s+hold|in\\s+progress|read-only|out\\s+of\\s+stock|sold\\s+out")
_IS_CONDITION = re.compile(r"^\s*" + _SUBJECT.replace("[\\w][\\w.&'’-]*", "[\\w#][\\w.&'’#-]*", 1)
                           + r"\s+(?:is|are)\s+(?:now\s+|still\s+|currently\s+)?(?P<value>(?:" + CONDITIONS + r")\b.*)")
# Where someone is: `Mum is in hospital (Ward 7)`, `Leo is off school this week`, `Mia is in Year 4`.
_IS_AT = re.compile(r"^\s*(?:(?P<det>My|Our)\s+(?P<rel>[a-z]+)|" + _NOT_SUBJECT
                    + r"(?P<subj>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)?))(?:\s+is|\s+has\s+been|['’]s\s+been)\s+"
                    r"(?:now\s+|still\s+|currently\s+)?"
                    r"(?P<value>(?:in|at|on(?!\s+v?\d)|off|away|back|out\s+of)\s+\S.*)")
# Where a thing lives: `The homelab wiki now lives at wiki.lan:8080`.
_LIVES_AT = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:now\s+)?(?:lives|live|is\s+hosted|is\s+kept|are\s+kept|sits|sit)\s+"
                       r"(?:at|in|on|under|inside|behind)\s+"
                       r"(?P<value>\S.+)")
# Where a thing is kept: `Passports are in the top drawer of the desk`, `The spare key is under the
# blue flowerpot`; with whom a service is: `Home insurance is with Castlegate`; what a thing is: `The
# hallway router is a TP-Link Archer`.
_KEPT_IN = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:is|are)\s+(?:now\s+|still\s+|kept\s+)?(?P<value>(?:in|under|inside|"
                      r"behind|on\s+top\s+of|next\s+to|beside)\s+(?:the|a|an|my|our)\s+\S.*)")
_WITH_ORG = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:is|are)\s+(?:now\s+)?with\s+(?P<value>[A-Z][\w'’.&-]*(?:\s+[A-Z][\w'’.&-]*)*)")
_IS_A_MODEL = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:is|are)\s+(?:now\s+)?an?\s+(?P<value>[A-Z][\w'’.&-]*(?:[\s-]+[A-Z0-9][\w'’.&-]*)+)")
# What something was switched to: `Switched the lab DNS resolver to 9.9.9.9`, `I changed my email to ...`.
_SWITCHED = re.compile(r"^\s*(?:(?P<who>I|We)\s+(?:have\s+)?)?(?:[Ss]witched|[Cc]hanged|[Uu]pdated|[Ss]et)\s+"
                       r"(?:(?P<det>the|our|my)\s+)?(?P<subj>[a-zA-Z][\w-]*(?:\s+[\w-]+){0,3}?)\s+(?:over\s+)?to\s+"
                       r"(?P<value>\S.+)")
# A version something runs: `Home Assistant is on 2024.6.1`.
_RUNS_VERSION = re.compile(r"^\s*" + _SUBJECT + r"\s+is\s+(?:now\s+)?(?:(?:on|at|running)\s+(?:version\s+)?|version\s+)"
                           r"(?P<value>v?\d+(?:\.\d+)+\b.*)")
# Where I am: `I'm on holiday from 1 to 14 August`, `I'm booked until 25 March`, `I'm off caffeine`.
_I_AM = re.compile(r"^\s*I(?:['’]m|\s+am)\s+(?:now\s+|still\s+|currently\s+)?(?P<value>(?:off|on|in|at|away|back|"
                   r"out\s+of|booked|working\s+from|based\s+in)\s+(?!(?:it|that|this|them|him|her|my\s+way|to)\b)\S.*)")
# A role someone took over: `Lucia took over QA from Ben`.
_TOOK_OVER = re.compile(r"^\s*(?P<value>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)?)\s+(?:has\s+)?(?:took|taken|takes)\s+over\s+"
                        r"(?:the\s+)?(?P<attr>[\w-]+(?:\s+[\w-]+){0,2}?)(?:\s+from\s+.*|\s+(?:role|duties))?[.!]?\s*$")
# On a plan: `We're on the Bitwarden Families plan`.
_ON_PLAN = re.compile(r"^\s*(?P<who>We|I)(?:['’]re|['’]m|\s+are|\s+am)\s+(?:now\s+|still\s+)?on\s+(?:the\s+|a\s+)?"
                      r"(?P<value>[\w-]+(?:\s+[\w-]+){0,3}?)\s+(?P<attr>plan|tier|contract|subscription|package|tariff)\b")
# A change and the value it led to: `Our rent went up, it's 1600 a month now.`
_WENT = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:has\s+)?(?:went\s+(?:up|down)|moved|changed|increased|decreased|dropped|"
                   r"rose|fell|was\s+(?:raised|lowered|moved|changed|increased|reduced))\s*[,;:–—-]\s*"
                   r"(?:it['’]s|it\s+is|now)\s+(?:now\s+)?(?P<value>.+)")
_STARTERS = frozenset("yesterday today tomorrow also so and but actually now note fyi btw oh well update i the a an "
                      "this that it we they he she my our".split())


def _proper(text: str) -> str | None:
    words = text.split()
    while words and words[0].casefold() in _STARTERS:
        words = words[1:]
    return " ".join(words) or None


def _owner(prefix: str) -> str | None:
    """The subject a possessive `'s` closes: a name, a host, `my X` or `the X`."""
    m = _OWNER_BEFORE.search(prefix.rstrip()) if prefix and not prefix[-1].isspace() else None
    if m is None:
        return None
    if m.group("common"):
        det = m.group("det").casefold()
        return m.group("common") if det == "the" else f"{det} {m.group('common')}"
    if m.group("proper"):
        return _proper(m.group("proper"))
    return m.group("host")


def _subject_of(m: re.Match) -> str:
    """A subject as a sentence named it, `my`/`our` kept, `the` dropped."""
    det = (m.group("det") or "").casefold()
    subject = m.group("subj")
    return f"{det} {subject.casefold()}" if det in ("my", "our") else subject


def _last_name_before(content: str, end: int) -> str | None:
    found = None
    for m in re.finditer(r"(?:[A-Z][\w.-]*\s+){0,2}[A-Z][\w.-]*", content[:end]):
        name = _proper(m.group(0))
        if name is not None:
            found = name
    return found




Read = Iterable[tuple[str | None, str, str | None]]


def _possessive(s: str, content: str) -> Read:
    return ((_owner(s[:m.start()]), m.group("attr"), m.group("value")) for m in _POSSESSIVE.finditer(s))


def _of(s: str, content: str) -> Read:
    return ((_proper(m.group("subj")) if m.group("subj")[:1].isupper() else m.group("subj"), m.group("attr"),
             m.group("value")) for m in _OF.finditer(s))


def _first(s: str, content: str) -> Read:
    return ((m.group("det"), m.group("attr"), m.group("value")) for m in _FIRST.finditer(s))


def _changed(s: str, content: str) -> Read:
    for m in _CHANGED.finditer(s):
        subject = m.group("subj")
        det = subject.split()[0].casefold()
        yield (subject.split(None, 1)[1] if det == "the" else subject.casefold() if det in ("my", "our")
               else _proper(subject)), m.group("attr"), m.group("value")


def _holds(m: re.Match) -> Read:
    if _proper(m.group("value")):
        yield m.group("org") or ("my" if m.group("det") == "my" else ""), m.group("attr"), m.group("value")


def _pronoun(s: str, content: str) -> Read:
    return ((_last_name_before(content, content.find(s) + m.start()), m.group("attr"), m.group("value"))
            for m in _PRONOUN.finditer(s))


def _named(pattern: re.Pattern, attribute: str) -> Callable[[str, str], Read]:
    def read(s: str, content: str) -> Read:
        m = pattern.search(s)
        return [(_proper(m.group("subj")), attribute, m.group("value"))] if m and _proper(m.group("subj")) else []
    return read


def _matched(pattern: re.Pattern, read: Callable[[re.Match], Read], search: bool = False) -> Callable[[str, str], Read]:
    def run(s: str, content: str) -> Read:
        m = pattern.search(s) if search else pattern.match(s)
        return read(m) if m else ()
    return run


def _schedule(m: re.Match) -> Read:
    if _RELATIVE.match(m.group("value")):
        return  # `expires in 4 weeks` was read at a moment, not stated
    verb = " ".join(m.group("verb").split())
    yield _subject_of(m), {"run": "runs", "are due": "is due", "go out": "goes out"}.get(verb, verb), m.group("value")


_RELATIVE = re.compile(r"in\s+\d+\s+(?:days?|weeks?|months?|hours?|minutes?)\b")


def _who(m: re.Match) -> str:
    return "my" if m.group("subj") == "I" else m.group("subj")


# What a switch was for, or why, is not what it was switched to: `... to node-2 for maintenance`.
_PURPOSE = re.compile(r"\s+(?:for|during|while|because|since|until|till|so\s+that|as\s+part\s+of|in\s+order\s+to)\b.*$",
                      re.IGNORECASE | re.DOTALL)


def _switched(m: re.Match) -> Read:
    det = (m.group("det") or {"I": "my", "We": "our"}.get(m.group("who") or "", "")).casefold()
    value = _PURPOSE.sub("", m.group("value"))
    subj = re.split(r"\s+from\s+", m.group("subj"), maxsplit=1)[0]  # `the DNS provider from Cloudflare to deSEC`
    yield "", f"{det} {subj}" if det in ("my", "our") else subj, value


def _words(*names: str) -> frozenset[str]:
    return frozenset(w for name in names for w in name.split())


_DIET_WORDS = _words("vegan vegetarian pescatarian flexitarian keto paleo gluten lactose diet")
# (words the sentence must hold, reader): the forms in the order they are tried.
FORMS: tuple[tuple[frozenset[str], Callable[[str, str], Read]], ...] = (
    (_words("'s"), _possessive),
    (_words("of for"), _of),
    (_words("my our"), _first),
    (_words("moved changed"), _changed),
    (_words("the"), _matched(_THE, lambda m: [("", m.group("attr"), m.group("value"))])),
    (_words("is"), _matched(_HOLDS, _holds)),
    (_words("his her their its"), _pronoun),
    (_words("work working joined job started"), _matched(_WORK, lambda m: [("my", "employer", m.group("value"))],
                                                         True)),
    (_words("live moved relocated settled living based"), _matched(_LIVE, lambda m: [("my", "home", m.group("value"))],
                                                                   True)),
    (_DIET_WORDS, _matched(_DIET, lambda m: [("my", "diet", m.group("value") or m.group("value2")
                                              or m.group("value3"))], True)),
    (_words("moved relocated"), _named(_MOVED, "location")),
    (_words("works working"), _named(_THEIR_WORK, "employer")),
    (_words("lives"), _named(_THEIR_HOME, "home")),
    (_DIET_WORDS, _named(_THEIR_DIET, "diet")),
    (_words("opens closes run runs goes go held happens starts ends begins renews expires meets comes visits "
            "arrives leaves departs due"), _matched(_SCHEDULE, _schedule)),
    (_words("prefer prefers rather"), _matched(_PREFERS, lambda m: [(_who(m), "preference", m.group("value"))])),
    (_words("allergic"), _matched(_ALLERGIC, lambda m: [(_who(m), "allergy", m.group("value"))])),
    (_words("use"), _matched(_USE, lambda m: [("our" if m.group("subj") == "We" else "my", m.group("attr"),
                                                m.group("value"))])),
    (_words("lives"), _matched(_RELATIVE_HOME, lambda m: [(m.group("subj").casefold(), "home", m.group("value"))],
                               True)),
    (_words("cost costs"), _matched(_COSTS, lambda m: [(m.group("subj"), "price", m.group("value"))])),
    (_words("is are"), _matched(_IS_CONDITION, lambda m: [(_subject_of(m), "status", m.group("value"))])),
    (_words("i'm am"), _matched(_I_AM, lambda m: [("my", "status", m.group("value"))])),
    (_words("over"), _matched(_TOOK_OVER, lambda m: [("", m.group("attr"), m.group("value"))])),
    (_words("on"), _matched(_ON_PLAN, lambda m: [("our" if m.group("who") == "We" else "my", m.group("attr"),
                                                   m.group("value"))])),
    (_words("is been"), _matched(_IS_AT, lambda m: [(f"{m.group('det').casefold()} {m.group('rel')}"
                                                     if m.group("det") else m.group("subj"), "status",
                                                     m.group("value"))])),
    (_words("lives live hosted kept sits sit"), _matched(_LIVES_AT, lambda m: [(_subject_of(m), "location",
                                                                                m.group("value"))])),
    (_words("in under inside behind top next beside"), _matched(_KEPT_IN, lambda m: [(_subject_of(m), "location",
                                                                                      m.group("value"))])),
    (_words("with"), _matched(_WITH_ORG, lambda m: [(_subject_of(m), "provider", m.group("value"))])),
    (_words("a an"), _matched(_IS_A_MODEL, lambda m: [(_subject_of(m), "model", m.group("value"))])),
    (_words("switched changed updated set"), _matched(_SWITCHED, _switched)),
    (_words("is"), _matched(_RUNS_VERSION, lambda m: [(_subject_of(m), "version", m.group("value"))])),
    (_words("went moved changed increased decreased dropped rose fell was"),
     _matched(_WENT, lambda m: [("", _subject_of(m), m.group("value"))])),
    (_words("by"), _matched(_OWNED, lambda m: [(_proper(m.group("subj")) if m.group("subj")[:1].isupper()
                                                else m.group("subj"), "owner", m.group("value"))], True)),
)
# Gate word -> the forms it opens, by position in FORMS.
_OPENS: dict[str, list[int]] = {}
for _at, (_gate, _) in enumerate(FORMS):
    for _word in _gate:
        _OPENS.setdefault(_word, []).append(_at)
_TOKEN = re.compile(r"[a-z0-9']+")


def words_of(sentence: str) -> frozenset[str]:
    """A sentence's words, case-folded (`'s` among them for a possessive): what gates test."""
    text = sentence.casefold().replace("’", "'")
    words = set(_TOKEN.findall(text))
    if "'s " in text or text.endswith("'s"):
        words.add("'s")
    return frozenset(words)


def read(sentence: str, content: str, words: frozenset[str]) -> Iterable[Read]:
    """For each form whose gate SENTENCE (one of CONTENT's, holding WORDS) passes, in order, the
    (subject, attribute, raw value) it reads."""
    opened = sorted({at for word in words if word in _OPENS for at in _OPENS[word]})
    for at in opened:
        yield FORMS[at][1](sentence, content)


def new_value(content: str) -> Read:
    """`I got a new phone number. It's 555-0202 now.`: the value after the sentence naming it."""
    return (("my", m.group("attr"), m.group("value")) for m in _NEW.finditer(content))
