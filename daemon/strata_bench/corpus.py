"""Deterministic synthetic agent-operations history for ingest and recall benchmarks.

Everything is drawn from one ``random.Random`` so a (n, seed, start, span_days)
tuple always yields the same stream, whatever PYTHONHASHSEED or the clock say.
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

_T = TypeVar("_T")

KINDS = ("observation", "event", "decision", "lesson", "task", "note")

SERVICES = ("bridge", "mail relay", "web proxy", "dns resolver", "calendar sync", "git mirror",
            "metrics exporter", "media server", "vpn tunnel", "task queue", "search index", "photo sync")
UNITS = tuple(s.replace(" ", "-") + ".service" for s in SERVICES)
HOSTS = ("gw-01", "gw-02", "nas-01", "nas-02", "web-01", "web-03", "db-01", "pi-attic", "vm-build", "edge-07")
PEOPLE = (("Amara Okafor", "amara@okafor.studio"), ("Tomás Ilves", "tomas.ilves@fjordmail.net"),
          ("Mei Lindqvist", "mei@lindqvist.se"), ("Rahul Desai", "rahul.desai@brightledger.in"),
          ("Ingrid Salo", "ingrid@salo-design.fi"), ("Kwame Mensah", "kwame@mensah.dev"),
          ("Lucía Ferreira", "lucia.ferreira@correo.pt"), ("Oskar Brandt", "o.brandt@brandt-werk.de"),
          ("Yuki Tanabe", "yuki@tanabe.jp"), ("Hana Novak", "hana.novak@postbox.cz"),
          ("Dev Kapoor", "dev@kapoor.co"), ("Sofia Marin", "sofia@marin-coop.org"))
ERRORS = ("ERR_CONN_RESET", "ETIMEDOUT", "ECONNREFUSED", "HTTP 502", "HTTP 503", "TLS handshake timeout",
          "ENOSPC", "EPIPE", "SERVFAIL", "exit status 137")
PROJECTS = ("ledger-sync", "homepage", "photo-archive", "invoice-bot", "garden-sensors", "newsletter", "strata")
JOBS = ("backup job", "log rotation", "cert renewal", "mail archive export", "index rebuild", "offsite sync")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
TOPICS = ("the invoice for {month}", "the revenue directive", "the quarterly report", "the contract renewal",
          "the server migration", "access to the shared drive", "the newsletter draft", "the meeting on {weekday}",
          "the domain renewal", "a refund for order {order}", "the hosting bill", "the {proj} roadmap")
DECISIONS = ("move nightly backups to {clock}", "pause {proj} deploys until the {svc} is stable",
             "answer {first} by email instead of chat", "raise the disk alert on {host} to {pct}%",
             "cap retries for the {svc} at {att}", "postpone the follow-up on {topic} to next week",
             "keep {proj} pinned at {ver}", "move the {svc} from {host} to {host2}",
             "batch outgoing email into two windows a day", "turn off the {job} on {host} during the day")
WHYS = ("the {svc} kept timing out in the old window", "two runs overlapped with the {job}", "{first} asked for it",
        "it cost about {min} min of downtime a week", "the logs showed {err} on {host} every time",
        "{host} is already at {pct}% disk", "the last upgrade broke {proj}", "it keeps the inbox from piling up")
LESSONS = ("restarting the {svc} without draining the queue loses messages",
           "check free space on {host} before starting the {job}",
           "{err} from the {svc} usually means the VPN dropped, not the service",
           "{first} answers faster before 10:00, so send requests early",
           "run `nginx -t` before reloading the web proxy",
           "a green health check does not mean the {svc} is doing work",
           "pin {proj} versions before deploying on a Friday",
           "the {job} on {host} takes twice as long after a month without pruning",
           "write the decision down before acting, or the next cycle repeats the debate",
           "retrying {err} more than {att} times only delays the alert")
TASKS = (("rotate the TLS cert on {host}", "rotated the TLS cert on {host}"),
         ("upgrade {proj} to {ver}", "upgraded {proj} to {ver}"),
         ("answer {first} about {topic}", "answered {first} about {topic}"),
         ("prune old snapshots on {host}", "pruned {n} old snapshots on {host}"),
         ("write the monthly report for {month}", "wrote the monthly report for {month}"),
         ("find out why the {svc} restarts on {host}", "found why the {svc} restarts on {host}: {err}"),
         ("renew the domain for {proj}", "renewed the domain for {proj}"),
         ("test a restore from {host}", "restored a test backup from {host} in {min} min"),
         ("send the invoice for {month} to {first}", "sent the invoice for {month} to {first}"))
SHELL = (("nginx -t", "syntax is ok"), ("df -h /srv", "{pct}% used"),
         ("systemctl restart {unit}", "active (running) after {att} s"),
         ("journalctl -u {unit} -p err --since today", "{n} error lines"),
         ("git -C /srv/{proj} pull --rebase", "{att} new commits"), ("docker ps -f status=exited", "{att} stopped"),
         ("openssl x509 -enddate -noout -in /etc/ssl/{host}.pem", "notAfter={date}"),
         ("ping -c 3 {host}", "{ms} ms avg, 0% loss"), ("du -sh /var/log", "{n}M"))
NOTE_SENTS = ("Spent most of this cycle on {topic}.", "The {svc} on {host} looked healthy, latency around {ms} ms.",
              "{first} has not replied yet, so I will wait until {weekday}.",
              "I am not sure the {job} is sized right for {host}.", "Disk on {host} is creeping up again, now {pct}%.",
              "Next step is to {dec}.", "I should double check {proj} {ver} before calling it done.",
              "The earlier {err} turned out to be transient.", "Nothing else needed attention.",
              "The inbox has {att} unanswered threads.", "Going to watch the {svc} for another {min} minutes.",
              "A small dashboard for {host} would save me a lot of grepping.",
              "I rewrote the summary for {first} twice because the first draft was too long.",
              "Costs this month look on track.", "Reminder to myself: {les}.")
QUERIES = ("{svc} status", "is the {svc} up?", "{Svc}: DOWN", "{err} on {host}", "{first}'s email",
           "email from {person}", "{email}", "when did the {job} last fail?", "what did I decide about {topic}?",
           "why did I {dec}?", "lessons about the {svc}", "open TODOs for {host}", "T-{tid}", "{cmd}", "disk > {pct}%",
           "disk usage on {host} > 90%", '"{svc}" OR {err}', '"deploy" OR rollback', "{proj} {ver}",
           "rollback {proj} -staging", "{svc} latency over {ms} ms", "what happened on {host} on {date}?",
           "who asked about {topic}?", "did {first} reply about {topic}?", "backup (nas-01 OR nas-02)",
           "{err} AND {host}", "last time the {svc} was restarted", "'{job}' failures", "{err}*",
           "load on {host}", "what did I learn about {proj}?", "cycle {loop}")


# random.choice/randint cost several Python-level calls each; a bare random() keeps 100k items near 1 s.
def _ch(r: random.Random, seq: tuple[_T, ...]) -> _T:
    return seq[int(r.random() * len(seq))]


def _ri(r: random.Random, a: int, b: int) -> int:
    return a + int(r.random() * (b - a + 1))


# Fields resolved on first use: unused ones cost nothing, and related ones (name/email) stay consistent.
_FILL: dict[str, Callable[[random.Random, "_Slots"], object]] = {
    "host": lambda r, s: _ch(r, HOSTS), "host2": lambda r, s: _ch(r, HOSTS),
    "err": lambda r, s: _ch(r, ERRORS), "proj": lambda r, s: _ch(r, PROJECTS),
    "job": lambda r, s: _ch(r, JOBS), "unit": lambda r, s: _ch(r, UNITS),
    "month": lambda r, s: _ch(r, MONTHS), "weekday": lambda r, s: _ch(r, WEEKDAYS),
    "pct": lambda r, s: _ri(r, 55, 99), "ms": lambda r, s: _ri(r, 6, 480),
    "min": lambda r, s: _ri(r, 2, 95), "att": lambda r, s: _ri(r, 2, 9),
    "n": lambda r, s: _ri(r, 3, 4800), "order": lambda r, s: _ri(r, 1000, 9999),
    "tid": lambda r, s: _ri(r, 100, 900), "loop": lambda r, s: _ri(r, 1000, 9000),
    "load": lambda r, s: f"{r.random() * 9 + 0.1:.2f}",
    "ver": lambda r, s: f"{_ri(r, 0, 4)}.{_ri(r, 0, 19)}.{_ri(r, 0, 9)}",
    "clock": lambda r, s: f"{_ri(r, 0, 23):02d}:{_ch(r, ('00', '15', '30', '45'))}",
    "date": lambda r, s: f"2026-{_ri(r, 1, 12):02d}-{_ri(r, 1, 28):02d}",
    "topic": lambda r, s: _ch(r, TOPICS).format_map(s), "dec": lambda r, s: _ch(r, DECISIONS).format_map(s),
    "why": lambda r, s: _ch(r, WHYS).format_map(s), "les": lambda r, s: _ch(r, LESSONS).format_map(s),
    "cmd": lambda r, s: _ch(r, SHELL)[0].format_map(s),
    # Multiplying by an odd constant mod 2**32 is a bijection, so ids look random yet never collide.
    "rid": lambda r, s: f"{(s['seq'] * 0x9E3779B1) & 0xFFFFFFFF:08x}",
    "hm": lambda r, s: f"{int(s['_t']) % 86400 // 3600:02d}:{int(s['_t']) % 3600 // 60:02d}",
}


class _Slots(dict):
    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng

    def __missing__(self, key: str) -> object:
        if key in ("person", "first", "email"):
            name, email = _ch(self.rng, PEOPLE)
            self.update(person=name, first=name.split()[0], email=email)
        elif key in ("svc", "Svc"):
            svc = _ch(self.rng, SERVICES)
            self.update(svc=svc, Svc=svc.capitalize())
        else:
            self[key] = _FILL[key](self.rng, self)
        return self[key]


# Every template carries {seq}, {rid} or {loop}: seq/rid are unique per item, and loop is unique per
# burst (same-burst clashes are re-rolled), so apart from deliberate repeats contents never collide.
# (name, weight, kind, sources, importance low, importance high, templates)
_FAMILIES = (
    ("status", 15, "observation", ("monitor",), 0.1, 0.3, ()),
    ("metric", 13, "observation", ("monitor", "shell"), 0.1, 0.45,
     ("disk usage on {host} at {pct}% (check {seq})", "load average on {host} is {load} (check {seq})",
      "{host} memory: {n} MiB free (check {seq})", "{svc} queue depth {n} on {host} (check {seq})",
      "certificate for {host} expires in {att} weeks (check {seq})",
      "{host} up {n} h with {att} failed units (check {seq})")),
    ("shell", 8, "observation", ("shell",), 0.05, 0.35,
     tuple(f"ran `{c}` on {{host}} at {{hm}} (cycle {{loop}}, #{{seq}}): {o}" for c, o in SHELL)),
    ("job", 8, "event", ("loop", "monitor"), 0.2, 0.6,
     ("{job} on {host} finished in {min} min (run {seq})", "{job} on {host} FAILED after {min} min: {err} (run {seq})",
      "{job} skipped on {host}: previous run still active (run {seq})",
      "{job} on {host} done, {n} MiB moved in {min} min (run {seq})")),
    ("error", 9, "event", ("shell", "monitor", "loop"), 0.45, 0.8,
     ("{err} talking to the {svc} from {host} (attempt {att}, req {rid})",
      "{Svc} returned {err} to {proj} on {host}; giving up after {att} tries (req {rid})",
      "{err} while the {job} was running on {host} at {hm} (req {rid})")),
    ("email_in", 6, "event", ("email",), 0.3, 0.7,
     ("Email from {person} <{email}>: asks about {topic} (msg {rid})",
      "Email from {person} <{email}>: says {topic} is settled, no action needed (msg {rid})",
      "Email from {email}: reminder about {topic}, due {date} (msg {rid})",
      "New mail {rid} from {first}: wants a call about {topic} on {weekday} at {clock}")),
    ("email_out", 4, "event", ("email", "loop"), 0.2, 0.5,
     ("Replied to {first} about {topic} (cycle {loop})",
      "Sent {person} the {proj} status summary, {n} words (cycle {loop})",
      "Drafted a reply to {first} on {topic}; holding it until {clock} (cycle {loop})")),
    ("chat", 4, "event", ("person",), 0.3, 0.65,
     ("{first} on chat at {hm}: can you look at why the {svc} is slow? (cycle {loop})",
      "{first} on chat: please {dec} (cycle {loop})", "{first} confirmed {topic} is fine, thanks (cycle {loop})")),
    ("deploy", 4, "event", ("shell",), 0.3, 0.7,
     ("Deployed {proj} {ver} to {host}; {n} tests passed (build {seq})",
      "Rolled back {proj} on {host} to {ver} after {err} (build {seq})",
      "Build {seq} of {proj} failed: {err} in step {att}")),
    ("task", 12, "task", ("loop", "person"), 0.35, 0.8, ()),
    ("decision", 7, "decision", ("loop",), 0.55, 0.9,
     ("Decided to {dec} because {why} (cycle {loop})",
      "Decision in cycle {loop}: {dec}; reason: {why}. Revisit {date}.",
      "Chose not to {dec} for now: {why} (cycle {loop})")),
    ("lesson", 5, "lesson", ("loop",), 0.65, 0.97,
     ("Lesson: {les} (cycle {loop})", "Lesson learned in cycle {loop}: {les}.",
      "Note to self from cycle {loop}: {les}. Learned it the hard way on {host2}.")),
    ("note", 7, "note", ("loop", "person"), 0.1, 0.5, ()),
)
_PICK = tuple(f for f in _FAMILIES for _ in range(f[1]))  # flat weighted table: one pick per item
_TASK_TYPE = {"status": "monitoring", "metric": "monitoring", "shell": "maintenance", "job": "maintenance",
              "error": "incident", "email_in": "comms", "email_out": "comms", "chat": "comms", "deploy": "release",
              "task": "planning", "decision": "planning", "lesson": "review", "note": "review"}
_BURSTS = (1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12, 16)
_SESSION_PREFIX = ("loop", "loop", "loop", "chat", "maint", "triage")
_ENVS = ("prod", "prod", "home-lab", "staging", "dev")
_GOALS = ("keep services up", "clear the inbox", "close the month's books", "ship {proj} {ver}",
          "cut hosting costs", "harden backups", "tidy the task list")
_DUP_RATE = 0.005


def _note(rng: random.Random, s: _Slots, about: list[str] | None = None) -> str:
    text = ("Cycle {loop} notes: " + " ".join(rng.sample(NOTE_SENTS, _ri(rng, 2, 6)))).format_map(s)
    if rng.random() < 0.04:  # a pasted log excerpt gives the length distribution a long tail
        lines = []
        for j in range(1, _ri(rng, 8, 16)):
            host, unit = _ch(rng, HOSTS), _ch(rng, UNITS)
            lines.append(f"{s['hm']} {host} {unit}: {_ch(rng, ERRORS)} (retry {j})")
            if about is not None:
                about += [host, SERVICES[UNITS.index(unit)]]
        text += "\nLog excerpt:\n" + "\n".join(lines)
    return text


@dataclass(frozen=True)
class Label:
    """What the generator knows about one observation, for judging what strata makes of it:
    its template family; the services, people, projects, jobs and hosts it filled in (a
    closing line is about what its task was about); and, for a task line, ("open", id) or
    ("close", id). Only the `status` family states a state (`Bridge: DOWN`); the other lines
    are events, measurements, notes, tasks."""
    family: str
    subjects: frozenset[str]
    task: tuple[str, int] | None = None

    @property
    def state(self) -> bool:
        return self.family == "status"


def _literal_subjects() -> tuple[str, ...]:
    """Services, jobs and projects a template names in its own words (`reloading the web
    proxy`), not through a slot."""
    texts = [*LESSONS, *DECISIONS, *WHYS, *NOTE_SENTS, *TOPICS, *(t for f in _FAMILIES for t in f[6]),
             *(t for pair in TASKS for t in pair), *(t for pair in SHELL for t in pair)]
    return tuple(name for name in (*SERVICES, *JOBS, *PROJECTS)
                 if any(name in re.sub(r"\{[^}]*\}", " ", t) for t in texts))


_LITERAL = _literal_subjects()


def _subjects(s: _Slots, extra: list[str], content: str) -> frozenset[str]:
    # `in` on the dict itself: a slot the template never used is not filled now.
    found = [s[k] for k in ("svc", "person", "proj", "job", "host", "host2") if k in s]
    if "unit" in s:
        found.append(SERVICES[UNITS.index(s["unit"])])
    found += (name for name in _LITERAL if name in content)
    return frozenset(found + extra)


def observations(n: int, *, seed: int = 0, start: float = 1_767_225_600.0,
                 span_days: float = 180.0) -> Iterator[dict]:
    """Yield n observation dicts in event-time order, deterministic for (n, seed, start, span_days)."""
    for o, _ in _generate(n, seed, start, span_days, False):
        yield o


def labelled(n: int, *, seed: int = 0, start: float = 1_767_225_600.0,
             span_days: float = 180.0) -> Iterator[tuple[dict, Label]]:
    """The same stream as ``observations``, each with its Label."""
    return _generate(n, seed, start, span_days, True)


def _status(rng: random.Random, s: _Slots, down: list[bool], extra: list[str],
            lo: float, hi: float) -> tuple[str, float, float]:
    """A service check and its importance range (a DOWN line's range stays for the item's retries)."""
    k = int(rng.random() * len(SERVICES))
    was = down[k]
    down[k] = was != (rng.random() < 0.3)  # services flip state now and then, mostly hold it
    svc = SERVICES[k].capitalize()
    extra.append(SERVICES[k])
    if not down[k]:
        return svc + ": UP (latency {ms} ms, check {seq})".format_map(s), lo, hi
    if was:
        return svc + " still DOWN after {min} min (check {seq})".format_map(s), 0.4, 0.7
    return svc + ": DOWN ({err} from {host}, check {seq})".format_map(s), 0.5, 0.85


def _task(rng: random.Random, s: _Slots, loop: int, tid: int,
          open_tasks: list[tuple[int, str]]) -> tuple[str, tuple[str, int], int]:
    """A task line, closing an open task or opening a new one: (content, task, last task id)."""
    if open_tasks and (len(open_tasks) >= 40 or rng.random() < 0.45):
        done_id, past = open_tasks.pop(int(rng.random() * len(open_tasks)))
        content = (f"Done T-{done_id}: {past}" if rng.random() < 0.6
                   else f"Closed T-{done_id}: {past} (cycle {loop})")
        return content, ("close", done_id), tid
    tid += 1
    imp, past = _ch(rng, TASKS)
    imp, past = imp.format_map(s), past.format_map(s)
    open_tasks.append((tid, past))
    form = int(rng.random() * 3)
    content = (f"TODO T-{tid}: {imp} before " + "{date}" if form == 0 else
               f"TODO T-{tid} ({{person}} asked): {imp}" if form == 1 else
               f"New task T-{tid}: {imp}; estimate " + "{min} min").format_map(s)
    return content, ("open", tid), tid


def _context(rng: random.Random, s: _Slots, name: str, env: str, goal: str) -> dict[str, str]:
    """The item's context fields, each there or not by one draw of 8 random bits."""
    bits = rng.getrandbits(8)
    ctx: dict[str, str] = {}
    if bits & 7:
        ctx["environment"] = env
    if bits & 24:
        ctx["task_type"] = _TASK_TYPE[name]
    if bits & 96 == 96:
        ctx["goal"] = goal
    if "host" in s and bits & 128:
        ctx["host"] = s["host"]
    return ctx


def _label(name: str, s: _Slots, extra: list[str], content: str, task: tuple[str, int] | None,
           task_subjects: dict[int, frozenset[str]]) -> Label:
    """The item's Label; a closing task line takes the subjects its task was opened with."""
    if task is not None and task[0] == "close":
        about = task_subjects.pop(task[1], frozenset())
    else:
        about = _subjects(s, extra, content)
        if task is not None:
            task_subjects[task[1]] = about
    return Label(name, about, task)


def _generate(n: int, seed: int, start: float, span_days: float, labels: bool) -> Iterator[tuple[dict, Label | None]]:
    if n <= 0:
        return
    rng = random.Random(seed)
    slot = span_days * 86400.0 / n
    # Burst starts sit at start + slot*(i + jitter<0.9) and in-burst gaps stay below slot, so item i
    # never passes start + slot*(i + 0.9): times stay in range without knowing the stream's future.
    gap_hi = min(120.0, 0.8 * slot)
    gap_lo = min(2.0, 0.5 * gap_hi)
    s = _Slots(rng)
    down = [False] * len(SERVICES)
    open_tasks: list[tuple[int, str]] = []
    task_subjects: dict[int, frozenset[str]] = {}
    recent: deque[tuple[float, str, str, float, str, dict, Label | None]] = deque(maxlen=64)
    burst_seen: set[str] = set()
    seq0, loop, tid, sess_no = _ri(rng, 10_000, 90_000), _ri(rng, 1000, 5000), _ri(rng, 100, 400), _ri(rng, 1, 400)
    t, burst_left, sess_left, debt = start, 0, 0, 0
    session = env = goal = ""
    for i in range(n):
        if burst_left <= 0:
            burst_left, loop = _ch(rng, _BURSTS), loop + 1
            burst_seen.clear()
            t = max(t, start + slot * (i + 0.9 * rng.random()))
        else:
            t += gap_lo + (gap_hi - gap_lo) * rng.random()
        burst_left -= 1
        if sess_left <= 0:
            sess_left, sess_no = _ri(rng, 20, 200), sess_no + 1
            session = f"{_ch(rng, _SESSION_PREFIX)}-{sess_no:04d}"
            env, goal = _ch(rng, _ENVS), _ch(rng, _GOALS).format_map(_Slots(rng))
        sess_left -= 1
        event_at = round(t, 3)
        if debt < 3 and rng.random() < _DUP_RATE:
            debt += 1
        if debt:  # owed repeats wait for an original 1-5 minutes back, keeping the share near _DUP_RATE
            orig = next((r for r in recent if 61.0 <= event_at - r[0] <= 299.0), None)
            if orig is not None:
                debt -= 1
                recent.remove(orig)  # one repeat per original, so every repeat is near its first copy
                yield {"content": orig[1], "kind": orig[2], "importance": orig[3], "event_at": event_at,
                       "source": orig[4], "session": session, "context": dict(orig[5])}, orig[6]
                continue
        fam = _ch(rng, _PICK)
        name, kind, lo, hi = fam[0], fam[2], fam[4], fam[5]
        extra: list[str] = []
        task: tuple[str, int] | None = None
        for _ in range(4):
            s.clear()
            extra.clear()
            s["loop"], s["seq"], s["_t"] = loop, seq0 + i, t
            if name == "status":
                content, lo, hi = _status(rng, s, down, extra, lo, hi)
            elif name == "task":
                content, task, tid = _task(rng, s, loop, tid, open_tasks)
            elif name == "note":
                content = _note(rng, s, extra if labels else None)
            else:
                content = _ch(rng, fam[6]).format_map(s)
            if content not in burst_seen:
                break
        burst_seen.add(content)

        ctx = _context(rng, s, name, env, goal)
        importance = round(lo + (hi - lo) * rng.random(), 2)
        source = _ch(rng, fam[3])
        label = _label(name, s, extra, content, task, task_subjects) if labels else None
        recent.append((event_at, content, kind, importance, source, ctx, label))
        yield {"content": content, "kind": kind, "importance": importance, "event_at": event_at,
               "source": source, "session": session, "context": dict(ctx)}, label


def queries(count: int, *, seed: int = 0) -> list[str]:
    """Recall queries an agent would ask of the ``observations`` history, deterministic per seed."""
    rng = random.Random(f"strata-queries:{seed}")  # str seeds hash via sha512, not hash(), so they are stable
    out: list[str] = []
    for _ in range(max(count, 0)):
        s = _Slots(rng)
        out.append(_ch(rng, QUERIES).format_map(s))
    return out
