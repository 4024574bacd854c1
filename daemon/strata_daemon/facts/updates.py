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

from strata_daemon.facts.newvalue import PEOPLE_ATTRIBUTES, new_state, new_value
from strata_daemon.facts.speaking import (
    THIRD_OF,
    Known,
    Update,
    mentions,
    words_of,
)
from strata_daemon.facts.vocabulary import (
    DEFAULT,
    NEUTRAL,
    NOUNS_OF,
    TYPED,
    VALUE_WORDS,
    VERBS,
    Vocabulary,
    shape_of,
    shaped_values,
)

# Words and phrases that say a statement replaces what was true before.
_CHANGE_WORDS = """now new newly change changed changing move moved switched switching swapped instead no_longer anymore
any_more from_now_on going_forward as_of relocated renamed replaced replacing took_over taken_over handed hands handing
passed reassigned rotated transferred migrated escalated de-escalated deescalated downgraded upgraded update updated
bumped raised lowered increased reduced cut pushed postponed rescheduled brought_forward delayed extended left quit
joined started became become these_days nowadays latest currently correction actually turns_out not_any_longer reset
rolled_out deployed promoted sold bought canceled cancelled dropped retired settled finally officially got_a gets
repointed point_at points_at rerouted re-routed traded stepped_down stepped_back stepped_aside appointed registered
remortgaged revised renewed reinstalled rebuilt failover cut_over took takes hired fired assigned elected named picked
chose signed scaled won_the_election won_the_vote went_up went_down gone_up gone_down failed_over rolled""".split()
# Not inside a hyphenated word: `all-hands` hands nothing over.
CHANGE = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(re.escape(w).replace("_", r"\s+") for w in
                                                   sorted(_CHANGE_WORDS, key=len, reverse=True)) + r")(?![\w-])")
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
    r"traded(?:\s+in)?|swapped|off|out\s+of|done\s+with|finished\s+with|from|"
    # `Jenkins no longer runs on ci-1`, `Grafana doesn't run on mon-2 anymore`
    r"(?:no\s+longer|not|\w+n['’]t)(?:\s+[a-z]+){0,2}?\s+(?:on|at|in|with|for|from|to))\s+"
    r"(?:the\s+|my\s+|our\s+|old\s+|his\s+|her\s+|their\s+|its\s+)*$")


_VERBS_OF: dict[str, list[str]] = {}
for _verb, _attr in VERBS.items():
    _VERBS_OF.setdefault(_attr, []).append(_verb)


_MEANS = frozenset("by via over through per".split())


def named_attribute(attribute: str, text: str, vocab: Vocabulary) -> bool | None:
    """True when TEXT names ATTRIBUTE, False when it names another kind of it (`home phone` for
    `work phone`), None when it names neither."""
    low = " " + " ".join(words_of(text)) + " "
    *qualifiers, head = attribute.split() or [""]
    nouns = [n for n in NOUNS_OF.get(head, (head,)) if n]
    found = None
    for noun in sorted(nouns, key=len, reverse=True):
        for m in re.finditer(rf"(?:(\S+)\s+)?{re.escape(noun)}s?\b", low):
            before = (m.group(1) or "").strip("'")
            if vocab.nouns.get(f"{before} {noun}", head) != head or before in _MEANS:
                continue  # `email address` names an email, not an address; `answer by email` a way
            said = {before} - NEUTRAL - {"", "the", "a", "my", "our", "his", "her", "their", "its", "of", "s"}
            if set(qualifiers) & _QUALIFYING and not set(qualifiers) & _QUALIFYING <= (said | set(low.split())):
                return False  # `home phone` for `work phone`; `new space` for `parking space` names it
            if not qualifiers and said and before in _QUALIFYING:
                return False
            found = True
    if found:
        return True
    if any(re.search(rf"\b{re.escape(v)}\b", low) for v in _VERBS_OF.get(head, ())) and not names_another(
            attribute, text, vocab, verbs=False):
        return True  # `moved to Cork` names a location; `moved: their email is now ...` an email
    if head in TYPED and any(a == head for a, _ in shaped_values(text)):
        return True
    if head in VALUE_WORDS and VALUE_WORDS[head] & set(low.split()):
        return True  # `Went vegan in January` names a diet
    if head in PEOPLE_ATTRIBUTES and _HANDED.search(text):
        return True  # `Hugo handed incident command to Marisol`
    return None


# Words that say the thing itself was changed for another, whatever the attribute is called.
_SWITCHED = re.compile(r"(?i)\b(?:switched|swapped|replaced|changed|moved|renamed|transferred|handed\s+over|"
                       r"took\s+over|no\s+longer|any\s*more|instead|from\s+now\s+on)\b")


def names_another(attribute: str, text: str, vocab: Vocabulary, *, verbs: bool = True, subject: str = "") -> bool:
    """Whether TEXT names an attribute of the vocabulary other than ATTRIBUTE (by a noun of three
    letters or more, a value of its form, or with VERBS a verb: `Amara moved to Cork` names a
    location): then it speaks of that one."""
    head = attribute.split()[-1]
    words = set(words_of(text)) - set(words_of(subject))  # `car insurance` names no car
    if any(a != head for a, _ in shaped_values(text) if a in TYPED):
        return True
    if verbs and any(a != head for w, a in VERBS.items() if w in words):
        return True
    return any(len(n) > 2 and " " not in n and n in words and a != head for n, a in vocab.nouns.items())


def _own_role(attribute: str, text: str) -> bool:
    """Whether TEXT names the first person's ATTRIBUTE without saying whose (`the new landlord is
    Mirela`, `our GP`), naming nobody else's (`Dana's landlord`)."""
    head = attribute.split()[-1]
    nouns = "|".join(re.escape(n) for n in NOUNS_OF.get(head, (head,)))
    return bool(re.search(rf"(?i)\b(?:the|our|new)\s+(?:new\s+)?(?:{nouns})\b", text)) and not THIRD_OF.search(text)


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


def restates(value: str, text: str) -> tuple[bool, bool]:
    """(whether TEXT holds VALUE, whether it ends it: `left Brightwell`, `no longer vegetarian`,
    `Imogen handed the project over`)."""
    if not value:
        return False, False
    low = text.casefold()
    if shaped_values(value):  # an email, a number, a version: the same value or another one
        bare = re.sub(r"[\s().-]", "", value.casefold())
        at = re.sub(r"[\s().-]", "", low).find(bare)
        return at >= 0, False
    tokens = [t for t in words_of(value) if len(t) > 2 and t not in _FILLER] or words_of(value)
    hits = sorted(m.start() for t in tokens for m in re.finditer(rf"\b{re.escape(t)}\b", low))
    if not hits:
        return False, False
    ends = any(_ENDS.search(low[:at]) or _LEAVES.match(low[at:]) for at in hits)
    present = low.find(value.casefold()) >= 0 or len({t for t in tokens if re.search(rf"\b{re.escape(t)}\b", low)}) * 2 \
        >= len(tokens)
    return present or ends, ends


def _another_value(k: Known, value: str | None) -> bool:
    """Whether VALUE, read from a text that holds words of the old value, is another one: `Standup
    moved to Heron while Lark is repainted`, `the bins go out Thursday night` after `on Tuesday night`."""
    if value is None:
        return False
    old = {t for t in words_of(k.value) if len(t) > 2 and t not in _FILLER}
    return bool({t for t in words_of(value) if len(t) > 2 and t not in _FILLER} - old)


# Words of a value that say nothing of which value it is.
_FILLER = frozenset("the and for with a an of at in on to from".split())
# The old value leaving: `Imogen handed Project Heron over`, `Zofia stepped down`, `Fiona left`.
_LEAVES = re.compile(r"(?i)[\w'’-]+(?:\s+[A-Z]?[\w'’-]+)?\s+(?:has\s+|is\s+|was\s+)?(?:handed|hands|handing|stepped|steps|"
                     r"left|leaves|quit|quits|swapped|moved\s+on|retired|went\s+off|is\s+off|is\s+out|passed|"
                     r"resigned|gave\s+up|closed|shut|split|broke|stopped|no\s+longer|was\s+replaced|got\s+replaced|"
                     r"is\s+sick|is\s+away|is\s+on\s+leave|moved\s+away|went\s+away)\b")


# Changes of who holds something: they name an owner, a contact or an on-call.
_HANDED = re.compile(r"(?i)\b(?:hand(?:ed|s|ing)|pass(?:ed|es|ing)|took\s+over|tak(?:es|ing)\s+over|taken\s+over|"
                     r"reassigned|assigned|rotated|stepped\s+(?:down|back|in|up)|covering|covers|in\s+charge|"
                     r"runs|running|leads|leading|owns|has\s+the\s+pager|is\s+on\s+call)\b")
_VOCATIVE = re.compile(r"^\W*(?:(?i:hey|hi|hello|yeah|yes|yep|thanks|thank\s+you|wow|oh|haha|lol|ok|okay|sure|aw+|"
                       r"hmm)\W+)*[A-Z][\w'’-]+\s*[,!]\s*")
# A log record of one moment (`... after ETIMEDOUT (build 776)`, `(run 77644)`, `(cycle 4048)`).
_LOGGED = re.compile(r"(?i)\((?:build|run|check|cycle|job|msg|ticket|pid)\s+[\w-]+[,)]")
# A record of a message or a note says who wrote or what was noted, not what is true now; a
# to-do (`TODO T-344 (Sofia asked): upgrade ledger-sync to 4.7.7`, `New task T-315: ...`) says what
# is still to happen; a lesson (`Lesson learned in cycle 4356: ...`) what usually holds.
_RECORD = re.compile(r"(?i)^\W*(?:to-?do\b|(?:new\s+)?task\b|(?:e-?mail|mail|message|msg|call|text|sms|dm|letter|"
                     r"voicemail|invite|reply)\s+(?:from|to|by)\b|new\s+mail\b|(?:[\w-]+\s+){0,3}?(?:lesson|notes?|"
                     r"idea|tip|reminder|todo|til|observation|thought|question|q|diary|journal|log)s?\s*:|"
                     r"(?:lesson|note)s?\b[^:.]{0,40}:|(?:sent|replied|forwarded|wrote|emailed|called|drafted)\b)")


def may_update(text: str) -> str | None:
    """TEXT as an update would be read (without a vocative: `Hey Joanna, ...` speaks to Joanna, not
    of her), or None when it can update nothing: a question, a plan or a wish, a record of a
    message or a note, a log line."""
    sentence = text.strip()
    if not sentence or sentence.endswith("?"):
        return None
    sentence = _VOCATIVE.sub("", sentence)
    if _NOT_YET.search(sentence) or _RECORD.match(sentence) or _LOGGED.search(sentence):
        return None
    return sentence


def update_of(k: Known, text: str, *, vocab: Vocabulary = DEFAULT) -> Update | None:
    """How TEXT updates the known fact K, or None when it does not (see the module's rules)."""
    weak = False
    if not k.attribute and not k.value or (sentence := may_update(text)) is None or not (
            mentions(k.subject, sentence) or (k.subject == "my" and _own_role(k.attribute, sentence))):
        return None
    if not k.attribute and (state := new_state(k.subject, k.value, sentence)) is not None:
        return Update(state, "states a new state")
    holds, ends = restates(k.value, sentence)
    read = new_value(k, sentence, vocab) if holds and not ends else None  # read once, used below too
    if read is not None and not _another_value(k, read[0]):
        return None
    loose = False
    if k.attribute:
        named = named_attribute(k.attribute, sentence, vocab)
        if named is None and (_same_form(k.value, sentence) or (
                _SWITCHED.search(sentence) and not names_another(k.attribute, sentence, vocab, subject=k.subject))):
            named = weak = True  # `Switched carriers; I'm on Kestrel Mobile now` of `my phone provider`
        elif named is None and not ends and k.attribute.split()[-1] not in TYPED and says_change(sentence) and \
                not names_another(k.attribute, sentence, vocab, subject=k.subject):
            named = weak = loose = True  # `Sam now gets 7 pounds a week` of `sam.pocket money`
        if named is False or (named is None and not ends):
            return None
    value, strong = read or new_value(k, sentence, vocab)
    if not ends and not strong and not says_change(sentence) or loose and value is None:
        return None  # a change said of the subject, no value of it read (`renewed the domain for X`)
    if value is None and not ends and (not k.attribute or not says_change(sentence)):
        return None  # a key of its own (`gateway timeout`) changes when a new value can be read
    return Update(value, "ends the value" if ends and value is None else "states a new value" if value
                  else "says it changed", weak, loose)
