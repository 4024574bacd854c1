"""Whether a memory updates a fact it does not state in the words capture reads. Pure: no I/O.

People rarely repeat a fact's words when it changes: after `My mobile is 555-0181` comes `Got
a new SIM, reach me on 555-0192 instead`; after `Rafael works at Brightwell Analytics`,
`Rafael left Brightwell and is a data engineer at Korvo Labs now`. Knowing the fact, a newer
text updates it when it

- speaks of the fact's subject (its name, its identifier, a person's first name; for a fact
  of the first person, `I`, `we` or `me` as the one acting, not `my sister`);
- names the fact's attribute (a noun or a verb of the vocabulary, or a value shaped like it),
  and not the same attribute of another kind (`home phone` is not `work phone`);
- does not restate the fact's value, unless it ends it (`left Brightwell`, `no longer
  vegetarian`, `replaced the TP-Link`);
- says it changed (`now`, `new`, `moved`, `switched`, `instead`, ...) or gives another value of
  a shaped attribute; and is not a question, a plan or a wish (`I'm moving to Denver next week`
  changes nothing yet).

The new value is read when the text gives one: a value of the attribute's shape, or the words
after `to`, `now` or `new <attribute>`. When none can be read, the fact stops being current.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from strata_daemon.facts.subjects import KINDS
from strata_daemon.facts.judge import STATUS_WORDS
from strata_daemon.facts.vocabulary import (DEFAULT, NEUTRAL, NOUNS, TYPED, VALUE_WORDS, VERBS, Vocabulary, shape_of,
                                             shaped_values)

# Words that say a statement replaces what was true before.
# Words and phrases that say a statement replaces what was true before.
_CHANGE_WORDS = """now new newly change changed changing move moved switched switching swapped instead no_longer anymore
any_more from_now_on going_forward as_of relocated renamed replaced replacing took_over taken_over handed hands handing
passed reassigned rotated transferred migrated escalated de-escalated deescalated downgraded upgraded update updated
bumped raised lowered increased reduced cut pushed postponed rescheduled brought_forward delayed extended left quit
joined started became become these_days nowadays latest currently correction actually turns_out not_any_longer reset
rolled_out deployed promoted sold bought canceled cancelled dropped retired settled finally officially got_a gets
repointed point_at points_at rerouted re-routed traded stepped_down stepped_back stepped_aside appointed registered
remortgaged revised renewed reinstalled rebuilt failover cut_over took takes hired fired assigned elected named picked
chose signed""".split()
CHANGE = re.compile(r"(?i)\b(?:" + "|".join(re.escape(w).replace("_", r"\s+") for w in
                                            sorted(_CHANGE_WORDS, key=len, reverse=True)) + r")\b")
_CHANGE_FIRST = frozenset(re.split(r"[_-]", w)[0] for w in _CHANGE_WORDS)
_LETTERS = re.compile(r"[a-z]+")


def says_change(text: str) -> bool:
    """Whether TEXT words a change (CHANGE), its words looked up before the pattern runs."""
    return not _CHANGE_FIRST.isdisjoint(_LETTERS.findall(text.casefold())) and CHANGE.search(text) is not None


# A plan, a wish, a question or a condition: nothing has changed yet.
_NOT_YET = re.compile(
    r"(?i)\b(?:will|won['’]t|going\s+to|gonna|plan(?:s|ning|ned)?\s+to|(?:starting|from)\s+next|next\s+(?:week|month|"
    r"year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|soon|might|may\s+(?:be|have)|"
    r"would|could|should|thinking\s+(?:about|of)|considering|hoping|hope\s+to|want\s+to|wants\s+to|if|unless|"
    r"offer(?:ed)?|proposal|proposed|maybe|perhaps)\b")
# Words that end a value named right after them: `left Brightwell`, `no longer vegetarian`.
_ENDS = re.compile(
    r"(?i)\b(?:left|quit|dropped|cancell?ed|gave\s+up|giving\s+up|stopped|no\s+longer|not\s+\w+\s+anymore|"
    r"replaced|replacing|switched\s+(?:away\s+)?from|moved\s+(?:out\s+of|away\s+from|from|on\s+from)|sold|closed|"
    r"split\s+(?:up\s+)?(?:with|from)|broke\s+up\s+with|ditched|retired|deprecated|instead\s+of|rather\s+than|"
    r"traded(?:\s+in)?|swapped|off|out\s+of|done\s+with|finished\s+with|from)\s+"
    r"(?:the\s+|my\s+|our\s+|old\s+|his\s+|her\s+|their\s+|its\s+)*$")
# The first person acting: `I moved`, `we switched`, `reach me`, `my phone`; `my sister` is someone else.
_FIRST_ACTING = re.compile(r"(?i)\b(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll|im|ive|we|we['’]re|we['’]ve|me|us)\b")
_FIRST_OF = re.compile(r"(?i)\b(?:my|our)\s+(?:new\s+|current\s+|old\s+|usual\s+|main\s+)?(?P<noun>[\w-]+)")
# A diary line with no subject: `Went vegan in January`, `Sold the Civic, got an Outback`.
_IMPLIED_I = re.compile(r"(?i)^\W*(?:just\s+|finally\s+|also\s+)?(?:went|got|sold|bought|left|quit|took|made|switched|"
                        r"moved|started|joined|changed|registered|signed|cancell?ed|dropped|traded|booked|upgraded|"
                        r"downgraded|renewed|gave|picked|found|became|began|set|cut|stopped|started)\b")
_THIRD_OF = re.compile(r"\b[A-Z][\w-]*['’]s\b")
_WORD = re.compile(r"[\w][\w'’.@+/:-]*[\w]|[\w]")
_CLAUSE_END = re.compile(r"(?i)\s*(?:,(?=\s)|[;()]|\.(?:\s|$)|!|\?|\s+(?:and|but|because|since|after|as|so|which|while|"
                         r"from\s+now|going\s+forward|instead|now|anymore|for\s+(?:the|a|now)|until|starting|"
                         r"effective|this|last|today|yesterday|on\s+(?:monday|tuesday|wednesday|thursday|friday|"
                         r"saturday|sunday)))\b")
_LEAD = re.compile(r"(?i)^(?:the|a|an|our|my|his|her|their|its|new|now|over)\s+")
MAX_VALUE_WORDS = 6
_TYPED = TYPED
_PLACE = re.compile(r"\b(?:in|at|to|into|near)\s+(?P<v>(?:[A-Z][\w'’.&-]*|\d[\w/-]*)(?:[\s,]+(?:[A-Z][\w'’.&-]*|"
                    r"\d[\w/-]*|de|la|del|da|of|upon|on|am|im))*)")
_ORG = re.compile(r"\b(?:at|with|for|joined|to)\s+(?P<v>[A-Z][\w'’.&-]*(?:\s+(?:[A-Z][\w'’.&-]*|&|of|and))*)")
_PERSON = re.compile(r"\b(?:to|by|with|is|now)\s+(?P<v>(?:[Tt]eam\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2})")


@dataclass(frozen=True)
class Known:
    """A current fact as the matcher reads it."""
    key: str
    subject: str  # as first written; `my` for the first person; `` for a key of its own
    attribute: str  # canonical; `` for a thing's own state
    value: str


@dataclass(frozen=True)
class Update:
    """The fact's new value (None: it is no longer current), and why the text updates it."""
    value: str | None
    why: str


def parse_key(key: str, label: str) -> Known:
    """A key split back into subject and attribute, as canonical.label() joined them."""
    text = label.strip()
    low = text.casefold()
    if low.startswith(("my ", "our ")) and "." not in text:
        return Known(key, "my", text.split(" ", 1)[1].casefold(), "")
    if "." in text:
        subject, _, attribute = text.rpartition(".")
        if subject and attribute and not any(c.isdigit() for c in attribute) and " " not in attribute.strip() or \
                attribute.casefold().strip() in DEFAULT.nouns.values():
            return Known(key, subject.strip(), attribute.strip().casefold(), "")
    return Known(key, text, "", "")


def first_person(text: str) -> bool:
    """Whether TEXT speaks in the first person: `I`, `we`, `me`, `my`, or a diary line (`Went vegan`)."""
    return bool(_FIRST_ACTING.search(text) or _IMPLIED_I.match(text) or re.search(r"(?i)\b(?:my|our)\b", text))


def stems(text: str) -> set[str]:
    """TEXT's words as mentions() compares them: case-folded, a plural's `s` dropped."""
    return {_stem(w) for w in _words(text)}


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text.replace("’", "'"))]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def mentions(subject: str, text: str) -> bool:
    """Whether TEXT speaks of SUBJECT (see the module's rules)."""
    if subject.casefold() == "my":
        if _FIRST_ACTING.search(text) or _IMPLIED_I.match(text):
            return True
        return any(m.group("noun").casefold() not in _RELATIVES for m in _FIRST_OF.finditer(text))
    words = {_stem(w) for w in _words(text)}
    subject_words = [w for w in _words(subject) if w not in ("the", "our", "my", "a", "an")]
    if not subject_words:
        return False
    ids = [w for w in subject_words if re.search(r"\d|[-_.#]", w)]
    if ids:
        return all(_stem(w) in words or w in text.casefold() for w in ids)
    core = [w for w in subject_words if w not in KINDS] or subject_words
    if all(_stem(w) in words for w in core):
        return True
    first = subject.split()[0]
    return first[:1].isupper() and len(first) > 2 and _stem(first.casefold()) in words and len(core) > 1


# `my sister`, `our cleaner`: people of one's own, whose attributes are theirs.
_RELATIVES = frozenset("""
sister brother mum mom dad father mother son daughter wife husband partner boyfriend girlfriend kid kids child children
parents parent aunt uncle cousin niece nephew grandma grandpa grandmother grandfather friend boss manager colleague
neighbour neighbor landlord cleaner dog cat team flatmate roommate
""".split())
_NOUNS_OF = {attr: (attr, *words) for attr, words in NOUNS.items()}
_VERBS_OF: dict[str, list[str]] = {}
for _verb, _attr in VERBS.items():
    _VERBS_OF.setdefault(_attr, []).append(_verb)


def _named_attribute(attribute: str, text: str, vocab: Vocabulary) -> bool | None:
    """True when TEXT names ATTRIBUTE, False when it names another kind of it (`home phone` for
    `work phone`), None when it names neither."""
    low = " " + " ".join(_words(text)) + " "
    *qualifiers, head = attribute.split() or [""]
    nouns = [n for n in _NOUNS_OF.get(head, (head,)) if n]
    found = None
    for noun in sorted(nouns, key=len, reverse=True):
        for m in re.finditer(rf"(?:(\S+)\s+)?{re.escape(noun)}s?\b", low):
            before = (m.group(1) or "").strip("'")
            if vocab.nouns.get(f"{before} {noun}", head) != head:
                continue  # `email address` names an email, not an address
            said = {before} - NEUTRAL - {"", "the", "a", "my", "our", "his", "her", "their", "its", "of", "s"}
            if set(qualifiers) & _QUALIFYING and not set(qualifiers) & _QUALIFYING <= (said | set(low.split())):
                return False  # `home phone` for `work phone`; `new space` for `parking space` names it
            if not qualifiers and said and before in _QUALIFYING:
                return False
            found = True
    if found:
        return True
    if any(re.search(rf"\b{re.escape(v)}\b", low) for v in _VERBS_OF.get(head, ())) and not _names_another(
            attribute, text, vocab, verbs=False):
        return True  # `moved to Cork` names a location; `moved: their email is now ...` an email
    if head in _TYPED and any(a == head for a, _ in shaped_values(text)):
        return True
    if head in VALUE_WORDS and VALUE_WORDS[head] & set(low.split()):
        return True  # `Went vegan in January` names a diet
    if head in _PEOPLE_ATTRIBUTES and _HANDED.search(text):
        return True  # `Hugo handed incident command to Marisol`
    return None


# Words that say the thing itself was changed for another, whatever the attribute is called.
_SWITCHED = re.compile(r"(?i)\b(?:switched|swapped|replaced|changed|moved|renamed|transferred|handed\s+over|"
                       r"took\s+over|no\s+longer|any\s*more|instead|from\s+now\s+on)\b")


def _names_another(attribute: str, text: str, vocab: Vocabulary, *, verbs: bool = True, subject: str = "") -> bool:
    """Whether TEXT names an attribute of the vocabulary other than ATTRIBUTE (by a noun of three
    letters or more, a value of its form, or with VERBS a verb: `Amara moved to Cork` names a
    location): then it speaks of that one."""
    head = attribute.split()[-1]
    words = set(_words(text)) - set(_words(subject))  # `car insurance` names no car
    if any(a != head for a, _ in shaped_values(text) if a in _TYPED):
        return True
    if verbs and any(a != head for w, a in VERBS.items() if w in words):
        return True
    return any(len(n) > 2 and " " not in n and n in words and a != head for n, a in vocab.nouns.items())


def _own_role(attribute: str, text: str) -> bool:
    """Whether TEXT names the first person's ATTRIBUTE without saying whose (`the new landlord is
    Mirela`, `our GP`), naming nobody else's (`Dana's landlord`)."""
    head = attribute.split()[-1]
    nouns = "|".join(re.escape(n) for n in _NOUNS_OF.get(head, (head,)))
    return bool(re.search(rf"(?i)\b(?:the|our|new)\s+(?:new\s+)?(?:{nouns})\b", text)) and not _THIRD_OF.search(text)


def _same_form(old: str, text: str) -> bool:
    """Whether TEXT gives a value of the form the old value has (`7 pounds a week` for `5 pounds a
    week`): an attribute no word names is named by its value's form."""
    form = shape_of(old)
    return form is not None and any(a == form for a, _ in shaped_values(text))


# Words that make another attribute of the same name: `work phone`, `home address`, `staging host`.
_QUALIFYING = frozenset("""
work home office personal private business billing support sales press emergency backup secondary staging prod
production dev test mobile landline fax postal mailing shipping delivery billing invoice spare guest admin
""".split())


def _restates(value: str, text: str) -> tuple[bool, bool]:
    """(whether TEXT holds VALUE, whether it ends it: `left Brightwell`, `no longer vegetarian`,
    `Imogen handed the project over`)."""
    if not value:
        return False, False
    low = text.casefold()
    if shaped_values(value):  # an email, a number, a version: the same value or another one
        bare = re.sub(r"[\s().-]", "", value.casefold())
        at = re.sub(r"[\s().-]", "", low).find(bare)
        return at >= 0, False
    tokens = [t for t in _words(value) if len(t) > 2 and t not in _FILLER] or _words(value)
    hits = sorted(m.start() for t in tokens for m in re.finditer(rf"\b{re.escape(t)}\b", low))
    if not hits:
        return False, False
    ends = any(_ENDS.search(low[:at]) or _LEAVES.match(low[at:]) for at in hits)
    present = low.find(value.casefold()) >= 0 or len({t for t in tokens if re.search(rf"\b{re.escape(t)}\b", low)}) * 2 \
        >= len(tokens)
    return present or ends, ends


# Words of a value that say nothing of which value it is.
_FILLER = frozenset("the and for with a an of at in on to from".split())
# The old value leaving: `Imogen handed Project Heron over`, `Zofia stepped down`, `Fiona left`.
_LEAVES = re.compile(r"(?i)[\w'’-]+(?:\s+[A-Z]?[\w'’-]+)?\s+(?:has\s+|is\s+|was\s+)?(?:handed|hands|handing|stepped|steps|"
                     r"left|leaves|quit|quits|swapped|moved\s+on|retired|went\s+off|is\s+off|is\s+out|passed|"
                     r"resigned|gave\s+up|closed|shut|split|broke|stopped|no\s+longer|was\s+replaced|got\s+replaced|"
                     r"is\s+sick|is\s+away|is\s+on\s+leave|moved\s+away|went\s+away)\b")


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
_STRONG = 3


def _patterns(nouns: str) -> tuple[str, ...]:
    return (
        rf"(?i)\bnew\s+(?:[\w-]+\s+)?(?:{nouns})\s*(?:is|:|,|-|–|—|=)?\s*(?P<v>[^;!?]+)",
        rf"(?P<v>\b(?:[A-Z0-9][\w.'’&-]*|[a-z][\w]*[-.\d][\w.-]*)(?:\s+[A-Z0-9][\w.'’&-]*){{0,3}})\s+(?:is|are)\s+"
        rf"(?:now\s+)?(?:our|my|the|his|her|their)?\s*(?:new\s+)?(?:{nouns})\b",
        rf"(?i)\b(?:{nouns})\s*(?::|=|\bis\b|\bare\b|was\s+changed\s+to|has\s+changed\s+to|changed\s+to)\s*(?:now\s+)?"
        rf"(?P<v>[^;!?]+)",
        r"(?i)\b(?:moved|switched|changed|escalated|downgraded|bumped|pushed(?:\s+back)?|rescheduled|postponed|"
        r"renamed|transferred|reassigned|rotated|handed(?:\s+\w+)?\s+over|handed|passed|migrated|relocated|set|"
        r"upgraded|updated|raised|lowered|increased|reduced|cut|repointed|re-?routed|points?|pointed|went|gone|"
        r"cut\s+over|failed\s+over|swapped|dropped|scaled|turned|extended|shortened|capped|limited|brought|"
        r"shifted|flipped|ramped|rolled|revised(?:\s+(?:up|down))?)\b(?:\s+\S+){0,4}?\s+(?:to|into|onto|at)\s+"
        r"(?P<v>[^;!?]+)",
        r"(?i)\breplac(?:ed|ing)\s+.+?\s+with\s+(?P<v>[^;!?]+)|\bswapped\s+.+?\s+for\s+(?P<v2>[^;!?]+)",
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
    words = _words(re.split(r"(?i)\s+(?:on|of|for|at|in)\s+", subject, maxsplit=1)[0])
    return [w for w in words if w not in KINDS][-1:] or words[-1:]


def _fits(k: Known, value: str | None, old: str) -> bool:
    return bool(value) and value.casefold() not in old and old not in value.casefold() and (
        k.subject == "my" or not mentions(k.subject, value))


def _new_value(k: Known, text: str, vocab: Vocabulary) -> tuple[str | None, bool]:
    """The value TEXT gives the fact's attribute, when one can be read, and whether the text says
    outright that it is the attribute's (its shape, `new <attribute>: X`, `<attribute> is X`)."""
    head = k.attribute.split()[-1] if k.attribute else ""
    old = k.value.casefold()
    own = _head_noun(k.subject) if not head else []
    shaped = [v for a, v in shaped_values(text) if a == head and v.casefold() not in old]
    if shaped:
        return shaped[-1], True
    if head in _TYPED:
        return None, False  # a typed attribute whose value has no such form here is not read by words
    nouns = "|".join(re.escape(n) for n in sorted(_NOUNS_OF.get(head, (head,) if head else tuple(own)), key=len,
                                                       reverse=True) if n) or r"(?!x)x"
    form = {"location": _PLACE, "employer": _ORG, "provider": _ORG, "school": _ORG}.get(head) or (
        _PERSON if head in _PEOPLE_ATTRIBUTES else None)
    patterns = _patterns(nouns)
    for strength, pattern in enumerate((*patterns[:_STRONG], form, *patterns[_STRONG:])):
        if pattern is None:
            continue
        for m in re.finditer(pattern, text):
            value = _clip(m.group("v") or m.groupdict().get("v2") or "")
            if _fits(k, value, old):
                return value, strength < _STRONG
    return None, False


_PEOPLE_ATTRIBUTES = frozenset("owner contact on-call partner doctor dentist".split())
# Changes of who holds something: they name an owner, a contact or an on-call.
_HANDED = re.compile(r"(?i)\b(?:hand(?:ed|s|ing)|pass(?:ed|es|ing)|took\s+over|tak(?:es|ing)\s+over|taken\s+over|"
                     r"reassigned|assigned|rotated|stepped\s+(?:down|back|in|up)|covering|covers|in\s+charge|"
                     r"runs|running|leads|leading|owns|has\s+the\s+pager|is\s+on\s+call)\b")
_VOCATIVE = re.compile(r"^\W*(?:(?i:hey|hi|hello|yeah|yes|yep|thanks|thank\s+you|wow|oh|haha|lol|ok|okay|sure|aw+|"
                       r"hmm)\W+)*[A-Z][\w'’-]+\s*[,!]\s*")
# A log record of one moment (`... after ETIMEDOUT (build 776)`, `(run 77644)`, `(cycle 4048)`).
_LOGGED = re.compile(r"(?i)\((?:build|run|check|cycle|job|msg|ticket|pid)\s+[\w-]+[,)]")
# A record of a message or a note says who wrote or what was noted, not what is true now.
_RECORD = re.compile(r"(?i)^\W*(?:(?:e-?mail|mail|message|msg|call|text|sms|dm|letter|voicemail|invite|reply)\s+"
                     r"(?:from|to|by)\b|new\s+mail\b|(?:[\w-]+\s+){0,3}?(?:lesson|notes?|idea|tip|reminder|todo|til|"
                     r"observation|thought|question|q|diary|journal|log)s?\s*:|(?:sent|replied|forwarded|wrote|"
                     r"emailed|called|drafted)\b)")


def _new_state(subject: str, old: str, text: str) -> str | None:
    """For a thing whose value is a state (`open`, `DEGRADED`), another state TEXT gives it close
    after naming it: `Garage door: closed at 22:10`, `web-3 drained and marked OFFLINE`."""
    words = _words(old)
    if not words or words[0] not in STATUS_WORDS:
        return None
    said = _words(text)
    last = max((i for i, w in enumerate(said) if w in set(_words(subject))), default=None)
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


def update_of(k: Known, text: str, *, vocab: Vocabulary = DEFAULT) -> Update | None:
    """How TEXT updates the known fact K, or None when it does not (see the module's rules)."""
    sentence = text.strip()
    if not sentence or sentence.rstrip().endswith("?") or not k.attribute and not k.value:
        return None
    sentence = _VOCATIVE.sub("", sentence)  # `Hey Joanna, ...` speaks to Joanna, not of her
    if _NOT_YET.search(sentence) or _RECORD.match(sentence) or _LOGGED.search(sentence) or not (
            mentions(k.subject, sentence) or (k.subject == "my" and _own_role(k.attribute, sentence))):
        return None
    if not k.attribute and (state := _new_state(k.subject, k.value, sentence)) is not None:
        return Update(state, "states a new state")
    holds, ends = _restates(k.value, sentence)
    if holds and not ends:
        return None
    if k.attribute:
        named = _named_attribute(k.attribute, sentence, vocab)
        if named is None and (_same_form(k.value, sentence) or (
                _SWITCHED.search(sentence) and not _names_another(k.attribute, sentence, vocab, subject=k.subject))):
            named = True  # `Switched carriers; I'm on Kestrel Mobile now` of `my phone provider`
        if named is False or (named is None and not ends):
            return None
    value, strong = _new_value(k, sentence, vocab)
    if not ends and not strong and not says_change(sentence):
        return None
    if value is None and not ends and (not k.attribute or not says_change(sentence)):
        return None  # a key of its own (`gateway timeout`) changes when a new value can be read
    return Update(value, "ends the value" if ends and value is None else "states a new value" if value
                  else "says it changed")
