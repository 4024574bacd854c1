"""Attribute statements in plain sentences: "Dana Whitfield's email address is dana@x.example"
becomes the fact `dana whitfield.email` = `dana@x.example`. Pure: no I/O, no model.

Forms covered (the README lists them with examples):
- possessive: `<Name>'s <attribute> is [now] <value>` (also `has changed to`, `changed to`,
  `became`); the subject is a proper name, a host (`web-3`), `my <thing>` or `the <thing>`;
- pronoun after a named subject: `Dana moved: her email address is now <value>`;
- `the <attribute> of <subject> is <value>`;
- first person: `my <attribute> is <value>`, `I got a new <attribute>. It's <value> now.`,
  `I work at <Company>` (employer), `I live in / moved to <Place>` (home), `I'm vegan` (diet);
- `<Name> moved to <Place>` (location); `<subject> is now owned by <owner>`.
The attribute is canonical (`email address`, `e-mail` -> `email`; `phone number`,
`mobile` -> `phone`), so two wordings of one attribute are one key. First-person statements
use the key `my <attribute>` when the memory has no source or a person's generic source
(user, person, ...); in a transcript with named speakers, the speaker is the subject.
"""

from __future__ import annotations

import re

# Attributes a pronoun or an "of" sentence may name; possessive and first-person forms take
# any attribute of up to three words.
KNOWN = ("email address|e-mail address|email|e-mail|mail address|phone number|mobile number|cell number|"
         "telephone number|phone|mobile|cell|number|home address|postal address|street address|address|city|"
         "location|owner|maintainer|manager|boss|lead|employer|company|job|title|role|team|version|price|cost|"
         "fee|rate|salary|budget|status|name|surname|birthday|diet|website|url|domain|handle|username|timezone|"
         "time zone|deadline|due date|plan|tier|ip address|ip|port|host|contact|doctor|dentist|partner")
CANONICAL = {
    "email address": "email", "e-mail": "email", "e-mail address": "email", "mail address": "email",
    "phone number": "phone", "mobile number": "phone", "cell number": "phone", "telephone number": "phone",
    "mobile": "phone", "cell": "phone", "number": "phone", "telephone": "phone", "cell phone": "phone",
    "home address": "address", "postal address": "address", "street address": "address",
    "ip address": "ip", "time zone": "timezone", "due date": "deadline",
}
# Words in a question that ask for an attribute without naming it: "How can I call Dana?"
# asks for `phone`, "Who owns the bridge?" for `owner`.
CUES = {
    "phone": ("call", "phone", "number", "ring"),
    "email": ("email", "e-mail", "mail", "write"),
    "owner": ("own", "owns", "owner", "owned", "responsible"),
    "location": ("live", "lives", "where", "city", "located"),
    "home": ("live", "lives", "where", "city"),
    "address": ("address", "live", "lives"),
    "price": ("cost", "costs", "price", "much", "pay"),
    "employer": ("work", "works", "employer", "job"),
    "diet": ("eat", "eats", "eating", "diet", "food"),
    "status": ("status", "healthy", "up", "down", "state", "running"),
    "version": ("version", "release"),
}
_CUED = {}
for _attr, _words in CUES.items():
    for _w in _words:
        _CUED.setdefault(_w, set()).add(_attr)
GENERIC_SOURCES = frozenset({"user", "person", "me", "self", "owner", "human", "cli", "api", "mcp", "http"})
MAX_VALUE_WORDS = 8
MAX_VALUE_CHARS = 80

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
_THE = re.compile(r"^\s*[Tt]he\s+(?P<attr>(?:[A-Za-z][\w-]*\s+){0,3}?[A-Za-z][\w-]*)" + _REST)
_HOLDS = re.compile(r"^\s*(?P<value>(?:[A-Z][\w.-]*\s+){0,2}[A-Z][\w.-]*)\s+is\s+(?:now\s+)?(?P<det>the|our|my)\s+"
                    r"(?:new\s+)?(?P<attr>(?:[a-zA-Z][\w-]*\s+){0,2}?[a-zA-Z][\w-]*)"
                    r"(?:\s+at\s+(?P<org>(?:[A-Z][\w.&-]*\s+){0,2}[A-Z][\w.&-]*))?"
                    r"(?:\s+(?:this|for|until|since|from|now)\b.*)?[.!]?\s*$")
_OF = re.compile(r"\b[Tt]he\s+(?:new\s+|current\s+)?(?P<attr>" + KNOWN + r")\s+(?:of|for)\s+(?:the\s+|our\s+|my\s+)?"
                 r"(?P<subj>[\w][\w.&-]*(?:\s+[\w][\w.&-]*){0,2}?)" + _REST)
_FIRST = re.compile(r"\b(?P<det>[Mm]y|[Oo]ur)\s+(?:new\s+|current\s+)?" + _ATTR + _REST)
_NEW = re.compile(r"\bnew\s+(?P<attr>" + KNOWN + r")\b[^.!?]{0,40}[.!?;,:]\s*(?:it['’]s|it\s+is|the\s+new\s+one\s+is)"
                  r"\s+(?P<value>.+)", re.I)
_PLACE = r"(?P<value>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2})"
_WORK = re.compile(r"\bI(?:['’]m|\s+am)?\s+(?:now\s+)?(?:work(?:ing)?\s+(?:at|for)|"
                   r"started\s+(?:a\s+new\s+job|working)\s+(?:at|for)|joined|took\s+a\s+job\s+(?:at|with))\s+"
                   + _PLACE)
_LIVE = re.compile(r"\bI\s+(?:now\s+)?(?:live|moved|relocated)\s+(?:in|to)\s+" + _PLACE)
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
_SUBJECT = r"(?:(?P<det>The|Our|My|the|our|my)\s+)?(?P<subj>[\w][\w.&'’-]*(?:\s+[\w][\w.&-]*){0,3}?)"
# When something happens: `The office closes at 6pm`, `Backups run every night at 1am`.
_SCHEDULE = re.compile(r"^\s*" + _SUBJECT + r"\s+(?P<verb>opens|closes|runs?|goes\s+out|is\s+held|happens|starts|"
                       r"ends|begins|renews|expires|meets|comes|visits|arrives|leaves|departs|is\s+due|are\s+due)\s+"
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
                    r"(?P<subj>\b[\w][\w.&-]*(?:\s+[\w][\w.&-]*)?)\s+is\s+(?:now\s+)?"
                    r"(?:owned|maintained|run|led|managed)\s+by\s+(?P<value>.+)")
# A condition of a thing in a sentence: `Production is frozen until the audit ends.`
CONDITIONS = ("frozen|down|up|offline|online|paused|blocked|suspended|closed|open|locked|unlocked|disabled|enabled|"
              "deprecated|retired|archived|degraded|broken|cancell?ed|canceled|delayed|postponed|deferred|overdue|"
              "expired|unpaid|paid|approved|rejected|on\\s+hold|in\\s+progress|read-only|out\\s+of\\s+stock|sold\\s+out")
_NOT_SUBJECT = r"(?!(?:I|He|She|It|They|We|You|This|That|There|Here|What|Who|Which|Where|Everything|Nothing|" \
               r"Something|Everyone|Nobody|Someone)\b)"
_IS_CONDITION = re.compile(r"^\s*" + _SUBJECT.replace("(?P<subj>", _NOT_SUBJECT + "(?P<subj>")
                           + r"\s+(?:is|are)\s+(?:now\s+|still\s+|currently\s+)?(?P<value>(?:" + CONDITIONS + r")\b.*)")
# Where someone is: `Mum is in hospital (Ward 7)`, `Leo is off school this week`, `Mia is in Year 4`.
_IS_AT = re.compile(r"^\s*(?:(?P<det>My|Our)\s+(?P<rel>[a-z]+)|" + _NOT_SUBJECT
                    + r"(?P<subj>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)?))\s+is\s+(?:now\s+|still\s+|currently\s+)?"
                    r"(?P<value>(?:in|at|off|away|back|out\s+of)\s+\S.*)")
# Where a thing lives: `The homelab wiki now lives at wiki.lan:8080`.
_LIVES_AT = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:now\s+)?(?:lives|is\s+hosted|is\s+kept)\s+(?:at|in|on)\s+"
                       r"(?P<value>\S.+)")
# What something was switched to: `Switched the lab DNS resolver to 9.9.9.9`, `I changed my email to ...`.
_SWITCHED = re.compile(r"^\s*(?:(?P<who>I|We)\s+(?:have\s+)?)?(?:[Ss]witched|[Cc]hanged|[Uu]pdated|[Ss]et)\s+"
                       r"(?:(?P<det>the|our|my)\s+)?(?P<subj>[a-zA-Z][\w-]*(?:\s+[\w-]+){0,3}?)\s+(?:over\s+)?to\s+"
                       r"(?P<value>\S.+)")
# A version something runs: `Home Assistant is on 2024.6.1`.
_RUNS_VERSION = re.compile(r"^\s*" + _SUBJECT + r"\s+is\s+(?:now\s+)?(?:on|at|running)\s+(?:version\s+)?"
                           r"(?P<value>v?\d+(?:\.\d+)+\b.*)")
# Words that open a sentence without being part of it: `Actually the meeting room is now Lovelace`.
_OPENER = re.compile(r"(?i)^\s*(?:actually|fyi|btw|update|heads\s+up|also|so|ok|okay|note|psa)\b[,:]?\s+")
# A change and the value it led to: `Our rent went up, it's 1600 a month now.`
_WENT = re.compile(r"^\s*" + _SUBJECT + r"\s+(?:has\s+)?(?:went\s+(?:up|down)|moved|changed|increased|decreased|dropped|"
                   r"rose|fell|was\s+(?:raised|lowered|moved|changed|increased|reduced))\s*[,;:–—-]\s*"
                   r"(?:it['’]s|it\s+is|now)\s+(?:now\s+)?(?P<value>.+)")
_CUE = re.compile(r"['’]s\s|(?:^|[.!?]\s+)[Tt]he\s|\bis\s+(?:now\s+)?(?:the|our)\s|"
                  r"\b(?:my|our|his|her|their|its|new|of|moved|relocated|work|working|joined|job|live|"
                  r"vegan|vegetarian|pescatarian|flexitarian|keto|paleo|diet|owned|maintained|managed|works|lives|"
                  r"costs?|opens|closes|runs?|goes|held|happens|starts|ends|meets|due|prefers?|rather|allergic|use|begins|"
                  r"renews|expires|went|rose|fell|increased|decreased|dropped|raised|lowered|changed|switched|comes|visits|"
                  r"arrives|leaves|departs|hosted|set)\b|\bis\s+(?:now\s+|still\s+|currently\s+)?(?:in|at|off|away|back|out|"
                  r"on|running)\s|"
                  r"\b(?:is|are)\s+(?:now\s+|still\s+|currently\s+)?(?:" + CONDITIONS + r")\b",
                  re.I)
# A full stop after a title or an initial does not end a sentence ("Dr. Alvarez").
_TITLES = ("Dr", "Mr", "Ms", "St", "Mrs", "Prof", "Jr", "Sr", "[A-Z]")
_NOT_AFTER = "".join(rf"(?<!\b{t})" for t in _TITLES)  # before a full stop
_NOT_PAST = "".join(rf"(?<!\b{t}\.)" for t in _TITLES)  # just past one
_SENTENCES = re.compile(_NOT_PAST + r"(?<=[.!?])\s+(?=[A-Z\"'“])|\n")
_CLAUSE_END = re.compile(r",\s*(?:and|but|so|which|because|since|though|although|while)\b|;|\s+(?:but|because|which|"
                         r"so\s+that|while)\s|\s+-\s|\s+—\s|" + _NOT_AFTER
                         + r"\.\s|[.!?]$|\s+and\s+(?:I|we|he|she|they|it)\b")
_STARTERS = frozenset("yesterday today tomorrow also so and but actually now note fyi btw oh well update i the a an "
                      "this that it we they he she my our".split())
_NOT_A_VALUE = re.compile(r"(?i)^(?:not|no longer|a bit|so|very|really|too|also|just|about|going|coming|getting|"
                          r"that|this|what|how|why|where|when|who|he|she|it|they|we|you|i|there|here|"
                          r"[a-z]+ing|[a-z]+ed\s+by)\b(?!/)")
_PRONOUNS = frozenset("his her their its".split())


def asked_attributes(words) -> set[str]:
    """The attributes a question's (case-folded) words ask for, by CUES."""
    return {a for w in words for a in _CUED.get(w, ())}


def canonical(attribute: str) -> str:
    a = " ".join(attribute.casefold().split())
    for lead in ("new ", "current "):
        if a.startswith(lead):
            a = a[len(lead):]
    return CANONICAL.get(a, a)


_ASKED_KEY = (re.compile(r"(?P<subj>.+?)['’]s\s+(?P<attr>[^'’]+)"),
              re.compile(r"(?i)the\s+(?P<attr>.+?)\s+of\s+(?:the\s+)?(?P<subj>.+)"))


def key_of(phrase: str) -> str | None:
    """The key a statement about PHRASE is captured under, when PHRASE is worded as one
    (`Dana Whitfield's email address` -> `Dana Whitfield.email`, `my phone number` -> `my phone`,
    `the price of the pro plan` -> `pro plan.price`); else None."""
    text = " ".join(phrase.split())
    for pattern in _ASKED_KEY:
        m = pattern.fullmatch(text)
        if m:
            subject = m.group("subj")
            for lead in ("the ", "The "):
                subject = subject.removeprefix(lead)
            return f"{subject}.{canonical(m.group('attr'))}"
    first = re.fullmatch(r"(?i)(my|our)\s+(.+)", text)
    if first:
        return f"{first.group(1).casefold()} {canonical(first.group(2))}"
    return None


def _value(raw: str) -> str | None:
    text = raw.strip()
    m = _CLAUSE_END.search(text)
    if m:
        text = text[:m.start()]
    text = text.strip().strip("\"'“”‘’").rstrip(".!?,;:").strip()
    if text.casefold().endswith(" now"):
        text = text[:-4].rstrip()
    if text.casefold().startswith("now "):
        text = text[4:]
    if not text or _NOT_A_VALUE.match(text) or len(text) > MAX_VALUE_CHARS or len(text.split()) > MAX_VALUE_WORDS:
        return None
    return text


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


def _first_person(source: str | None) -> str | None:
    """Whose `my` it is: None for the person the home belongs to, else the speaker's name."""
    if source is None or source.strip().casefold() in GENERIC_SOURCES:
        return None
    return source.strip()


def _last_name_before(content: str, end: int) -> str | None:
    found = None
    for m in re.finditer(r"(?:[A-Z][\w.-]*\s+){0,2}[A-Z][\w.-]*", content[:end]):
        name = _proper(m.group(0))
        if name is not None:
            found = name
    return found


def statements(content: str, source: str | None = None) -> list[tuple[str, str]]:
    """(key label, value) for each attribute statement in CONTENT, in order; one per key (the
    last wins). A label is `subject.attribute`, or `my attribute` in the first person."""
    if not _CUE.search(_OPENER.sub("", content, count=1)):
        return []
    speaker = _first_person(source)
    found: dict[str, tuple[str, str]] = {}

    def add(subject: str | None, attribute: str, raw: str | None) -> None:
        value = None if raw is None else _value(raw)
        attr = canonical(attribute)
        if subject is None or not attr or value is None or attr in _PRONOUNS:
            return
        subject = " ".join(subject.split())
        if not subject:
            label = attr
        elif subject.casefold() in ("my", "our"):
            label = f"{subject.casefold()} {attr}" if speaker is None else f"{speaker}.{attr}"
        elif subject.casefold().startswith(("my ", "our ")):
            if speaker is not None:
                return  # whose dog? a transcript's speakers each have their own
            label = f"{subject.casefold()}.{attr}"
        else:
            label = f"{subject}.{attr}"
        found.pop(label.casefold(), None)
        found[label.casefold()] = (label, value)

    for sentence in _SENTENCES.split(content):
        sentence = _OPENER.sub("", sentence, count=1)
        if not sentence or not _CUE.search(sentence):
            continue
        for m in _POSSESSIVE.finditer(sentence):
            add(_owner(sentence[:m.start()]), m.group("attr"), m.group("value"))
        for m in _OF.finditer(sentence):
            add(_proper(m.group("subj")) if m.group("subj")[:1].isupper() else m.group("subj"), m.group("attr"),
                m.group("value"))
        for m in _FIRST.finditer(sentence):
            add(m.group("det"), m.group("attr"), m.group("value"))
        for m in _CHANGED.finditer(sentence):
            subject = m.group("subj")
            det = subject.split()[0].casefold()
            add(subject.split(None, 1)[1] if det == "the" else subject.casefold() if det in ("my", "our")
                else _proper(subject), m.group("attr"), m.group("value"))
        if m := _THE.match(sentence):
            add("", m.group("attr"), m.group("value"))
        if m := _HOLDS.match(sentence):
            if _proper(m.group("value")):
                det = m.group("det")
                add(m.group("org") or ("my" if det == "my" else ""), m.group("attr"), m.group("value"))
        for m in _PRONOUN.finditer(sentence):
            add(_last_name_before(content, content.find(sentence) + m.start()), m.group("attr"), m.group("value"))
        if m := _WORK.search(sentence):
            add("my", "employer", m.group("value"))
        if m := _LIVE.search(sentence):
            add("my", "home", m.group("value"))
        if m := _DIET.search(sentence):
            add("my", "diet", m.group("value") or m.group("value2") or m.group("value3"))
        if m := _MOVED.search(sentence):
            add(_proper(m.group("subj")), "location", m.group("value"))
        for pattern, attr in ((_THEIR_WORK, "employer"), (_THEIR_HOME, "home"), (_THEIR_DIET, "diet")):
            if (m := pattern.search(sentence)) and _proper(m.group("subj")):
                add(_proper(m.group("subj")), attr, m.group("value"))
        if m := _SCHEDULE.match(sentence):
            verb = " ".join(m.group("verb").split())
            add(_subject_of(m), {"run": "runs", "are due": "is due"}.get(verb, verb), m.group("value"))
        for pattern, attr in ((_PREFERS, "preference"), (_ALLERGIC, "allergy")):
            if m := pattern.match(sentence):
                add("my" if m.group("subj") == "I" else m.group("subj"), attr, m.group("value"))
        if m := _USE.match(sentence):
            add("our" if m.group("subj") == "We" else "my", m.group("attr"), m.group("value"))
        if m := _RELATIVE_HOME.search(sentence):
            add(m.group("subj").casefold(), "home", m.group("value"))
        if m := _COSTS.match(sentence):
            add(m.group("subj"), "price", m.group("value"))
        if m := _IS_CONDITION.match(sentence):
            add(_subject_of(m), "status", m.group("value"))
        if m := _IS_AT.match(sentence):
            add(f"{m.group('det').casefold()} {m.group('rel')}" if m.group("det") else m.group("subj"), "status",
                m.group("value"))
        if m := _LIVES_AT.match(sentence):
            add(_subject_of(m), "location", m.group("value"))
        if m := _SWITCHED.match(sentence):
            det = (m.group("det") or {"I": "my", "We": "our"}.get(m.group("who") or "", "")).casefold()
            add("", f"{det} {m.group('subj')}" if det in ("my", "our") else m.group("subj"), m.group("value"))
        if m := _RUNS_VERSION.match(sentence):
            add(_subject_of(m), "version", m.group("value"))
        if m := _WENT.match(sentence):
            add("", _subject_of(m), m.group("value"))
        if m := _OWNED.search(sentence):
            add(_proper(m.group("subj")) if m.group("subj")[:1].isupper() else m.group("subj"), "owner",
                m.group("value"))
    for m in _NEW.finditer(content):
        add("my", m.group("attr"), m.group("value"))
    return list(found.values())
