"""Whether a captured `key: value` line states a state or reports an event. Pure: no I/O.

A fact is a state: a value a later line may replace (`Bridge: DOWN`, `leader: node-2`,
`consulting tier: 1500 per month`). Operations logs are full of lines of the same shape that
report something done or seen once (`relay-2: restarted nginx`, `nas-1: cpu temp 54C`); stored
as facts they would fill the capsule and lead unrelated recalls. An event line stays an
ordinary memory. The judgement reads the line alone, so it is the same at capture time and
when an old home re-judges what it captured (`strata fact rejudge`).
"""

from __future__ import annotations

import re

# Participles and words that name a condition, not an act: `Backup job: failed`.
STATUS_WORDS = frozenset("""
up down ok okay on off online offline active inactive idle busy green amber yellow red healthy unhealthy
failed failing stopped paused degraded disabled enabled connected disconnected blocked completed complete
finished scheduled approved expired suspended locked unlocked mounted unmounted started installed deployed
closed open opened signed confirmed cancelled canceled delayed archived deprecated retired booked planned
resolved fixed broken limited unlimited required reserved assigned unassigned shipped released merged
pending rejected accepted verified unverified encrypted throttled overloaded isolated quarantined
restricted allowed denied paid unpaid sold running stable unstable draining syncing synced ready waiting
unknown missing full empty low high normal critical warning passing passed late due overdue live
maintenance readonly read-only yes no true false none n/a good bad fine done todo out deferred postponed
overdue expiring valid invalid
""".split())
# What may follow a status word in a state: `failed at 03:00`, `down since Monday`, `paid in full`.
QUALIFIERS = frozenset("""
at since on until till after before for due because by in with from during as of per twice again today
yesterday overnight tonight now still permanently temporarily successfully partially fully
""".split())
IRREGULAR_PAST = frozenset("""
ran sent took got made did went saw found began wrote built bought brought caught chose drove fell fed felt
fought forgot gave grew held hit hung kept knew led left lent lost met paid quit rang rode rose said sold
shot shut sat slept spoke spent split stood stole stuck swept taught told thought threw understood woke won
wore withdrew came rebuilt rewrote reran undid redid upgraded put cut read
""".split())
# Keys that introduce a message or a log record rather than name a property.
MESSAGE_KEYS = frozenset("""
error err warn warning info debug trace fatal critical notice alert log event news meeting call lunch dinner
breakfast chat message diary journal today yesterday tomorrow observation thought comment assistant user
system kernel cron sshd systemd nginx httpd postfix dovecot certbot fail2ban kubelet dockerd containerd
""".split())
# A key that opens with one of these is a record, not a property (`Journal 12 March: ...`).
RECORD_LEADS = frozenset("diary journal note notes".split())
# A key naming where a message came from (`Amara on chat: please look at ...`).
CHANNELS = frozenset("chat slack irc sms telegram whatsapp matrix discord".split())
_REQUEST = re.compile(r"(?i)^(?:please|pls|plz|can\s+you|could\s+you|would\s+you|will\s+you)\b")
_PERSONAL = frozenset("i i'm i've i'd i'll we we're we've you you're my our me us".split())
_WORD = re.compile(r"[\w'’%.-]+")
_HOST = re.compile(r"^[a-z][a-z0-9.]*[-_.]?\d+[a-z0-9]*$|^[a-z0-9-]+(\.[a-z0-9-]+){2,}$")
_NUMBER = re.compile(r"^[-+~]?\d[\d.,:/%]*\w{0,4}$")
_CLAUSE = re.compile(r"(?i)\b(is|are|was|were|has|have|had|will|would|should|could)\b")
_SENTENCE_BREAK = re.compile(r"\w{4,}[.!?]\s+[A-Z]")  # not after "Mrs." or "Dr."
# An id in a key (`New mail fedfd73e from mei`): a key that names one message never changes value.
_ID = re.compile(r"\d{5,}|[0-9a-f]{8,}|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}")
# A key that starts with a hyphenated name (`pi-attic memory`): a host or a device, not a property.
_NAME = re.compile(r"[a-z][a-z0-9]*-[a-z0-9-]+\s")
MAX_STATE_WORDS = 12


def _is_verb(word: str) -> bool:
    return word in IRREGULAR_PAST or (len(word) > 4 and (word.endswith("ed") or word.endswith("ing")))


def judge(key: str, value: str, label: str | None = None) -> str | None:
    """None when KEY: VALUE reads as a state, else why it is an event (a short phrase).
    KEY is normalised (facts/keys.py); LABEL, the key as written, tells `pi-attic memory` (a
    host's name) from `disk usage`."""
    v = value.strip()
    words = [w.strip(".,;:!()'\"’").casefold() for w in _WORD.findall(v)]
    words = [w for w in words if w]
    if not words:
        return None
    key_words = key.replace(".", " ").split()
    if key in MESSAGE_KEYS or (key_words and key_words[0] in RECORD_LEADS):
        return "the key introduces a message"
    if len(key_words) == 1 and _is_verb(key_words[0]):
        return "the key is an act (`Fixed: ...`)"
    if len(key_words) > 1 and _is_verb(key_words[-1]) and (key_words[-1] not in STATUS_WORDS or len(key_words) > 2):
        return "the key is a sentence (it ends in a verb)"
    if any(_ID.fullmatch(w) for w in key_words):
        return "the key names a one-off (it holds an id)"
    if v.endswith("?"):
        return "a question"
    if key_words and key_words[-1] in CHANNELS and len(key_words) > 1:
        return "a message (the key names who wrote and where)"
    if _REQUEST.match(v):
        return "a request"
    if len(words) == 1:
        return None
    first = words[0]
    if len(words) > MAX_STATE_WORDS:
        return "prose (more than %d words)" % MAX_STATE_WORDS
    if _SENTENCE_BREAK.search(v):
        return "prose (more than one sentence)"
    if len(words) >= 4 and _PERSONAL.intersection(words):
        return "a personal remark"
    if _is_verb(first) or first in STATUS_WORDS:
        # `failed at 03:00`, `retried, ok` and `down since Monday` qualify a condition;
        # `restarted nginx` names what was acted on.
        second = words[1]
        if v[len(words[0]):].lstrip()[:1] in "(-–—,;[":
            return None
        if first in STATUS_WORDS and (second in QUALIFIERS or _NUMBER.match(second)):
            return None
        if _is_verb(first):
            return "an act (the value starts with a verb and names what it acted on)"
        return None
    if _HOST.match(key.replace(" ", "-")) and not _NUMBER.match(first):
        return "host chatter (a host's key with a message for a value)"
    host = key_words[0] + "-" + key_words[1] if len(key_words) > 1 and key_words[1][:1].isdigit() else key_words[0]
    named = label is not None and len(key_words) > 1 and bool(_NAME.match(label.strip()))
    if (_HOST.match(host) or named) and _NUMBER.match(first):
        return "a reading (a host's measure with a number for a value)"
    # `failover completed in 11s`, `client tomasz disconnected`: something that happened to a
    # thing (in the first clause: `8am to 8pm, closed Sundays` lists conditions).
    clause = _WORD.findall(v.split(",", 1)[0].casefold())[1:]
    if len(words) >= 3 and any(w in IRREGULAR_PAST or (_is_verb(w) and (w.endswith("ed") or w not in STATUS_WORDS))
                               for w in clause):
        return "a sentence, not a value (it has a verb)"
    if len(words) >= 5 and _CLAUSE.search(v):
        return "a sentence, not a value"
    return None
