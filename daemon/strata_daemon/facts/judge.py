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
finished scheduled approved expired suspended locked unlocked mounted unmounted installed deployed
closed open opened signed confirmed cancelled canceled delayed archived deprecated retired booked planned
resolved fixed broken limited unlimited required reserved assigned unassigned shipped released merged
pending rejected accepted verified unverified encrypted throttled overloaded isolated quarantined
restricted allowed denied paid unpaid sold running stable unstable draining syncing synced ready waiting
unknown missing full empty low high normal critical warning passing passed late due overdue live
maintenance readonly read-only yes no true false none n/a good bad fine done todo out deferred postponed
overdue expiring valid invalid stuck muted snoozed silenced charging docked away asleep armed standby sick ill
vacant occupied available unavailable frozen back
""".split())
# What may follow a status word in a state: `failed at 03:00`, `down since Monday`, `paid in full`.
QUALIFIERS = frozenset("""
at since on until till after before for due because by in to with from during as of per twice again today
yesterday overnight tonight now still permanently temporarily successfully partially fully out off up down back
away over
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
traceback panic exception stacktrace stderr stdout oops segfault assertion
""".split())
# Participles and -ing words that qualify a quantity in a key (`Budget remaining: 12,400 EUR`).
KEY_QUALIFIERS = frozenset("""
remaining pending outstanding upcoming existing incoming outgoing running missing used needed required allowed
expected estimated planned booked reserved assigned left owed preferred assumed agreed approved confirmed registered
licensed allocated contracted quoted targeted signed
""".split())
# Conditions worded as a phrase: `Milestone 3: in progress`, `Order 118: on hold`.
STATUS_PHRASES = re.compile(r"(?i)^(?:in\s+(?:progress|review|stock|transit|use|service|production|draft|testing|"
                            r"maintenance|hospital|quarantine)|in\s+[\w-]+\s+mode|"
                            r"on\s+(?:hold|track|leave|call|order|sale|schedule)|off\s+track|at\s+risk|"
                            r"under\s+(?:review|maintenance|construction|investigation)|out\s+of\s+(?:stock|office|"
                            r"service|order|date)|behind\s+schedule|ahead\s+of\s+schedule|not\s+started|up\s+to\s+date)\b")
# Participles of an act done to a thing at a moment: `Front door: opened at 07:52`, not a condition.
ACTS = frozenset("""
opened closed locked unlocked armed disarmed triggered switched turned started stopped restarted rebooted pressed
rang detected activated deactivated finished completed
""".split())
# What follows an -ing word that names an ongoing condition, not an act on something.
_ONGOING = frozenset("off on out in at to late slow low behind fine well again smoothly normally ok until since".split())
# Words that say when a value holds, not what was measured (`expires 2024-07-19`).
_DUE = frozenset("expires expiring renews ends starts begins due until valid from".split())
# Status words that take `to` and a verb as a state: `ready to lift`, `scheduled to run`.
_TO_STATES = frozenset("ready scheduled due set able allowed required expected planned".split())
# Things known by a number, whose state a later line replaces (`Order #10477: refunded in full`).
ENTITIES = frozenset("order invoice ticket bug issue case incident pr claim policy account".split())
# Keys ending in one of these introduce a message (`Customer call: ...`, `Retro notes: ...`) unless
# the value is a contact (`Support email: help@example.com`).
MESSAGE_TAILS = frozenset("call calls email mail notes message messages sms voicemail chat".split())
_CONTACT = re.compile(r"@|https?://|^\+?[\d][\d ()-]{6,}$")
# Last words of a key naming a device that reports readings (`Rain gauge: 11 mm overnight`).
DEVICES = frozenset("sensor sensors meter gauge plug probe camera speedtest ping thermometer scale".split())
# Nouns before a number that say where or which, not what was measured (`Office: room 12`).
POSITIONS = frozenset("""
room floor tier level gate platform seat row step phase stage week day chapter page size zone ward version v plan
sprint release bay desk building unit block lane track
""".split())
# Words before a number that make it a limit, a term or a time (`net 30`, `under 130/80`).
LEADS = frozenset("under over from until since at by net daily nightly weekly every each about around max min up down "
                  "approx above below".split())
SCHEDULES = frozenset("daily nightly weekly monthly yearly hourly every each per".split())
UNITS = frozenset("""
s ms sec secs seconds min mins minutes h hrs hours day days weeks b kb mb gb tb kib mib gib tib mbps gbps kbps rpm bpm rps
qps w kw kwh v a c f mm cm m km kg g l ml percent degrees eur usd gbp bar psi hpa mbar ppm lux db dbm
""".split())
_CLOCK = re.compile(r"^\d\d?:\d\d")
_MOMENT = re.compile(r"\s(?:at|around)\s+\d\d?:\d\d\b")
_DAYS = frozenset("mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday weekdays weekends "
                  "mondays tuesdays wednesdays thursdays fridays saturdays sundays tomorrow tonight today".split())
_UNIT_NUMBER = re.compile(r"^[-+~]?\d[\d.,]*(?:%|°?[a-z]{1,4})$")
_READ_WHEN = re.compile(r"(?i)\b(?:overnight|yesterday|today|tonight|this\s+(?:morning|afternoon|evening)|last\s+"
                        r"(?:night|hour)|in\s+the\s+last|at\s+\d\d?:\d\d)\b")
# A value that talks rather than names: contractions, verbs of wanting and needing.
_CHATTY = re.compile(r"(?i)\w(?:n['’]t|['’]ll|['’]re|['’]ve|['’]d)\b|\b(?:needs|wants|asks|says|thinks|seems|looks\s+like|"
                     r"reads\s+like|owe|owes)\b")
IMPERATIVES = frozenset("do check call send buy take bring ask remember try book email text pick get fix".split())
_ALERT = re.compile(r"(?i)\b(?:alerts?|warning|error|chirp|aborted)\b")
_ASIDE = re.compile(r"\s*\([^)]*\)")
# Keys that say when a reading was taken (`Mum's BP this morning`); `today` and `tonight` name the present.
_TAKEN = re.compile(r"(?i)\b(?:this\s+(?:morning|afternoon|evening)|last\s+night|yesterday)\b")
# Last words of a key naming a value someone set, not a reading (`Incubator 2 CO2 setpoint: 5%`).
SETTINGS = frozenset("setpoint target limit quota threshold budget price rate fee cost size capacity max min goal version "
                    "release status port".split())
_ERROR_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Exception)\b|\bexit\s+(?:code\s+)?\d+")
# A chat remark, not a value: `Bob: lol yes`, `Mia: thanks, will do`.
INTERJECTIONS = frozenset("""
lol haha hah hehe thanks thx ty sure yeah yep yup nope hmm hm wow omg oops ugh argh yay cool nice awesome ok okay
great hey hi hello morning congrats sorry
""".split())
# Words after a count that say how long or how often, not what was acted on: `down 3 days`.
_DURATIONS = frozenset("""
s sec secs second seconds m min mins minute minutes h hr hrs hour hours d day days week weeks month months year years
ms times x
""".split())
# A meal is had once: `Lunch order: two salads and a soup` is what was ordered that day.
MEALS = frozenset("breakfast brunch lunch dinner supper snack snacks meal takeaway takeout".split())
# A key that opens with one of these is a record, not a property (`Journal 12 March: ...`).
RECORD_LEADS = frozenset("diary journal note notes lesson lessons idea ideas tip tips reminder todo".split())
# A key naming where a message came from (`Amara on chat: please look at ...`).
CHANNELS = frozenset("chat slack irc sms telegram whatsapp matrix discord".split())
_REQUEST = re.compile(r"(?i)^(?:please|pls|plz|can\s+you|could\s+you|would\s+you|will\s+you|don['’]t|do\s+not|"
                      r"remember\s+to|make\s+sure)\b")
_PERSONAL = frozenset("i i'm i've i'd i'll we we're we've you you're my our me us".split())
_WORD = re.compile(r"\d{1,2}:\d\d(?::\d\d)?|[-+~]?\d{1,3}(?:,\d{3})+(?:\.\d+)?[\w%]*|[\w'’%.-]+")
_HOST = re.compile(r"^[a-z][a-z0-9.]*[-_.]?\d+[a-z0-9]*$|^[a-z0-9-]+(\.[a-z0-9-]+){2,}$")
_NUMBER = re.compile(r"^[-+~]?\d[\d.,:/%]*\w{0,4}$")
_CLAUSE = re.compile(r"(?i)\b(is|are|was|were|has|have|had|will|would|should|could)\b")
_SENTENCE_BREAK = re.compile(r"\w{4,}[.!?]\s+[A-Z]")  # not after "Mrs." or "Dr."
# An id in a key (`New mail fedfd73e from mei`): a key that names one message never changes value.
_ID = re.compile(r"\d{5,}|[0-9a-f]{8,}|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}")
# A key that starts with a hyphenated name (`pi-attic memory`): a host or a device, not a property.
_NAME = re.compile(r"[a-z][a-z0-9]*-[a-z0-9-]+\s")
# `failed to copy`, not `deferred to Q4` or `postponed to next week`.
_INFINITIVE = re.compile(r"(?!(?:next|the|end|early|late|mid|tomorrow|today|monday|tuesday|wednesday|thursday|friday|"
                         r"saturday|sunday)\b)[a-z]+$")
_FINISHED = frozenset("done finished complete completed".split())
# Changes that leave a value: `Renovation completion date: moved to 19 July`.
_CHANGED = frozenset("moved rescheduled postponed pushed changed set increased reduced raised lowered extended "
                     "updated".split())
# What follows a verb that opens a key when the key is a sentence (`Weighed myself this morning:`).
_OBJECTS = frozenset("myself yourself himself herself ourselves themselves the a an my our his her their it them "
                     "him us me this that up out off".split())
# `stuck under the sofa` says where a condition holds; `merged branch ...` what an act was done to.
_WHERE = frozenset("under behind inside outside near between above below into onto beside among with against".split())
MAX_STATE_WORDS = 12


def _measured(value: str, words: list[str]) -> bool:
    """Whether a value reads `<what was measured> <number with a unit> [tail]`: `temp -17C`,
    `sd card 87% full`, `p99 latency 840 ms`; not `net 30`, `postgres 16.2`, `nightly at 02:00`,
    `sertraline 50 mg daily` or `EU 31`."""
    tokens = value.split()
    at = next((i for i, w in enumerate(words) if _NUMBER.match(w)), None)
    if at is None or not 1 <= at <= 3 or len(tokens) <= at or words[0] in POSITIONS | LEADS:
        return False
    if _CLOCK.match(words[at]) or any(t.endswith(",") for t in tokens[:at]):
        return False
    if not all(t[:1].islower() or t[:1] == "/" or (t.isupper() and _READ_WHEN.search(value)) for t in tokens[:at]):
        return False
    tail = words[at + 1:]
    unit = (bool(_UNIT_NUMBER.match(words[at])) or (bool(tail) and tail[0] in UNITS)
            or (bool(tail) and all(_NUMBER.match(w) for w in tail)))
    return unit and len(tail) <= 3 and not SCHEDULES.intersection(tail)


def _is_verb(word: str) -> bool:
    return word not in _DAYS and (word in IRREGULAR_PAST or (len(word) > 4 and word.endswith(("ed", "ing"))))


def _hostlike(word: str) -> bool:
    """`nas-1`, `web01`, `db-primary.lan`; not `p95` or `q2`."""
    return bool(_HOST.match(word)) and (bool(re.search(r"[-_.]", word)) or len(re.match(r"[a-z]*", word).group()) >= 2)


def _key_says(key: str, key_words: list[str], v: str) -> str | None:
    """Why the key alone makes the line an event: a message or record label, an act, a
    sentence, who it is from, a one-off."""
    if key in MESSAGE_KEYS or key_words[0] in RECORD_LEADS:
        return "the key introduces a message"
    if key_words[0] in MEALS or " ".join(key_words[:2]) in ("here are", "here is", "here's"):
        return "a one-off (`Lunch order: ...`, `Here are three ideas: ...`)"
    if len(key_words) == 1 and _is_verb(key_words[0]) and not key_words[0].endswith("ing"):
        return "the key is an act (`Fixed: ...`)"
    last = key_words[-1]
    if (len(key_words) > 1 and _is_verb(last) and not last.endswith("ing") and last not in KEY_QUALIFIERS
            and (last not in STATUS_WORDS or len(key_words) > 2) and not _NUMBER.match(v.split()[0])):
        return "the key is a sentence (it ends in a verb)"
    lead = key_words[0]
    if (len(key_words) > 1 and (lead in IRREGULAR_PAST or (lead.endswith("ed") and _is_verb(lead)))
            and lead not in KEY_QUALIFIERS and key_words[1] in _OBJECTS):
        return "the key is a sentence (it starts with a verb)"
    if len(key_words) > 1 and "from" in key_words[1:]:
        return "a message (the key names who it is from)"
    if last in MESSAGE_TAILS and lead != "on" and not _CONTACT.search(v):
        return "a message (the key names a call, a mail or notes)"
    if lead == "new" and len(key_words) >= 3 and last.isdigit():
        return "a new one announced (`New task T-266: ...`)"
    if any(_ID.fullmatch(w) for w in key_words) and not (lead in ENTITIES or "#" in key):
        return "the key names a one-off (it holds an id)"
    if last in CHANNELS and len(key_words) > 1:
        return "a message (the key names who wrote and where)"
    if _TAKEN.search(key.replace(".", " ")):
        return "a reading (the key says when it was taken)"
    return None


def _of_a_host(key_words: list[str], label: str | None) -> tuple[bool, bool]:
    """(whether the key names a host or a device, whether its label is one hyphenated name)."""
    hosts = [a + "-" + b for a, b in zip(key_words[:1], key_words[1:2]) if b[:1].isdigit()] + key_words[:1]
    if key_words[0] in DEVICES and len(key_words) > 1:
        hosts.append(key_words[1] + ("-" + key_words[2] if len(key_words) > 2 and key_words[2][:1].isdigit() else ""))
    one_name = label is not None and "-" in label.strip() and " " not in label.strip()
    named = label is not None and len(key_words) > 1 and bool(_NAME.match(label.strip()))  # `pi-attic memory`
    return any(_hostlike(h) for h in hosts) or one_name or named, one_name


def _act(v: str, words: list[str]) -> str | None:
    """For a value that opens with a verb or a status word: why it reports an act, or None for
    a condition (`failed at 03:00`, `retried, ok`, `down since Monday` qualify a condition;
    `restarted nginx` names what was acted on)."""
    first, second = words[0], words[1]
    if v[len(words[0]):].lstrip()[:1] in "(-–—,;[":
        return None
    if first.endswith("ing") and first not in STATUS_WORDS and second in _ONGOING:
        return None  # `hardening off on the balcony`, `running late`: an ongoing condition
    if _is_verb(first) and second in ("until", "till", "since"):
        return None  # `covered until 31 Dec`
    if (first in STATUS_WORDS and first not in _TO_STATES and second == "to" and len(words) > 2
            and _INFINITIVE.match(v.split()[2])):
        return "an act (it failed or refused to do something)"
    if _is_verb(first) and second == "by":
        return "an act (it names who did it)"
    if first in ACTS and second == "at":
        return "an act (done to a thing at a moment)"
    if (first in STATUS_WORDS or first in _CHANGED) and second in QUALIFIERS:
        return None  # `failed at 03:00`, `moved to 19 July`
    if first in STATUS_WORDS and _NUMBER.match(second):
        # `down 3 days` says for how long; `blocked 34 connections` what was acted on.
        if len(words) == 2 or words[2] in _DURATIONS or not any(
                w.endswith("s") and w.isalpha() and w not in _DURATIONS for w in words[2:4]):
            return None
        return "an act (a count of what it acted on)"
    if _is_verb(first) and (first not in STATUS_WORDS or second not in _WHERE):
        return "an act (the value starts with a verb and names what it acted on)"
    return None


def _past(word: str) -> bool:
    return word in IRREGULAR_PAST or (word.endswith("ed") and _is_verb(word))


def judge(key: str, value: str, label: str | None = None, *, stamped: bool = False) -> str | None:
    """None when KEY: VALUE reads as a state, else why it is an event (a short phrase).
    KEY is normalised (facts/keys.py); LABEL, the key as written, tells `pi-attic memory` (a
    host's name) from `disk usage`; STAMPED, that a timestamp opened the line."""
    key = key.replace("-", " ")  # the rules read `db-01 disk usage` word by word, `db 01` its host
    v = value.strip()
    words = [w for w in (w.strip(".,;:!()'\"’").casefold() for w in _WORD.findall(v)) if w]
    if not words:
        return None
    key_words = [w for w in (w.strip("()\"'") for w in key.replace(".", " ").split()) if w] or [key]
    if (why := _key_says(key, key_words, v)) is not None:
        return why
    if v.endswith("?"):
        return "a question"
    if _REQUEST.match(v):
        return "a request"
    first = words[0]
    if stamped and (first in ACTS or first in _FINISHED or first not in STATUS_WORDS):
        return "a log record (a timestamped line says what happened: `[03:00] backup: started`)"
    host, one_name = _of_a_host(key_words, label)
    if (host or key_words[-1] in DEVICES) and _NUMBER.match(first) and key_words[-1] not in SETTINGS:
        return "a reading (a host's or device's measure with a number for a value)"
    if len(words) == 1 or STATUS_PHRASES.match(v):
        return None
    if first in INTERJECTIONS and first not in STATUS_WORDS:
        return "a remark (it opens with an interjection)"
    if len(words) > MAX_STATE_WORDS:
        return "prose (more than %d words)" % MAX_STATE_WORDS
    if _SENTENCE_BREAK.search(v):
        return "prose (more than one sentence)"
    if len(words) >= 4 and _PERSONAL.intersection(words):
        return "a personal remark"
    said = _ASIDE.sub("", v)
    if first not in STATUS_WORDS and _CHATTY.search(said.partition(" ")[2]):
        return "a remark (it talks: `we'll need`, `wants to`, `the steel needs`)"
    if first in IMPERATIVES and len(words) >= 3:
        return "an instruction (`do the exercise ...`)"
    if (alert := _ALERT.search(said)) and (first not in STATUS_WORDS or alert.end() == len(said.rstrip(" .!"))):
        return "an alert (`toner low warning`, `fault F22`)"
    if one_name and _MOMENT.search(v):
        return "something a device reported at a moment (`Mochi out at 23:41`)"
    if first == "new" and len(words) >= 3 and words[1] != "one":
        return "a notification (something new: `new login from ...`)"
    if _ERROR_NAME.search(v):
        return "an error report"
    if _is_verb(first) or first in STATUS_WORDS:
        return _act(v, words)
    done = next((i for i, w in enumerate(words) if w in _FINISHED), 0)
    if done and not STATUS_WORDS.intersection(words[:done]) and not words[done - 1].endswith("%"):
        return "a report (a job that finished: `vacuum done`, `cycle complete at 21:14`)"
    moment = _MOMENT.search(v)
    if (moment and v[:1].islower() and first not in SCHEDULES and first not in _DAYS
            and not STATUS_WORDS.intersection(_WORD.findall(v[:moment.start()].casefold()))):
        return "something that happened at a moment (`door-open alarm at 19:20`)"
    if _measured(v, words):
        return "a reading (the value names its measure: `temp -17C`)"
    if _UNIT_NUMBER.match(first) or (_NUMBER.match(first) and (key_words[-1] in DEVICES or words[1] in UNITS)):
        if key_words[-1] in DEVICES or _READ_WHEN.search(v):
            return "a reading (a device's measure, or one taken at a moment)"
        verb = next((i for i, w in enumerate(words[1:3], 1) if _past(w)), None)
        if verb is not None and not first.endswith("%") and words[verb + 1:verb + 2] not in ([q] for q in QUALIFIERS):
            return "a report (a count of what happened: `1,204 passed`)"
    if _HOST.match(key.replace(" ", "-")) and not _NUMBER.match(first) and first not in _DUE:
        return "host chatter (a host's key with a message for a value)"
    # `failover completed in 11s`, `client tomasz disconnected`: something that happened to a
    # thing (in the first clause: `8am to 8pm, closed Sundays` lists conditions). A word in
    # -ing is a noun as often as a verb (`billing`, `staging`): only a past form counts.
    first_clause, _, rest = v.partition(", ")
    clause = _WORD.findall(first_clause.casefold())[1:]
    if len(words) >= 3 and any(_past(w) and (clause[i + 1:i + 2] or [""])[0] not in ("until", "till", "since")
                               for i, w in enumerate(clause)):
        return "a sentence, not a value (it has a verb)"
    if any(_past(w) and w not in STATUS_WORDS and w != "left" for w in _WORD.findall(rest.casefold())):
        return "a report (a later clause says what was done)"
    if len(words) >= 5 and _CLAUSE.search(v):
        return "a sentence, not a value"
    return None
