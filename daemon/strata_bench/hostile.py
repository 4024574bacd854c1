"""More of the bad-input corpus for `strata bench reliability`: operations bad_input.py does not
reach (the context block, the spiderweb, links, a fact's history and retraction, conflicts,
archiving and restoring, dossier topics) and more of those it does, each as the Python API, a
command line, MCP tool arguments and an HTTP request carry it (None: the face cannot say it).
What a careless or hostile caller hands over: FTS5 and SQL syntax, text that shows nothing
(zero-width and direction marks), numbers that are no count (NaN, 2^70, a fraction), paths
as names, ids that are not there. The test suite's own corpus stays bad_input.py's; these run
in the benchmark, and a seeded share of them in tests/test_reliability.py."""

from __future__ import annotations

import random
from urllib.parse import quote, urlencode

from strata_bench import bad_input
from strata_bench.bad_input import BIG, _argv_cannot_hold, _json_bytes, _quoted
from strata_daemon.app.memory import Memory
from strata_daemon.base import timeutil

NAN, INF = float("nan"), float("inf")
Q = "NEAR(disk full, 5)"

# (name, operation, arguments, expected kind), as bad_input.CASES.
MORE_CASES = [
    *((f"FTS {name}", "recall", {"query": q, "mode": "fast"}, "ok") for name, q in (
        ("NEAR with a distance", Q), ("NEAR/ shorthand", "disk NEAR/3 full"), ("column set", "{content source}: disk"),
        ("star inside a word", "di*k"), ("minus first", "-disk"), ("doubled quotes", '""disk""'),
        ("plus signs", "+disk +full"), ("open parentheses", "((disk"), ("caret in a phrase", '"^disk full"'),
        ("a distance of 2^40", "disk NEAR/1099511627776 full"), ("column of rowid", "rowid:1"),
        ("every operator at once", 'NEAR("disk* OR -full ^x" AND NOT (y'))),
    *((f"query of {name}", "recall", {"query": q, "mode": "fast"}, "ok") for name, q in (
        ("an SQL union", "' UNION SELECT content FROM episodes --"), ("LIKE wildcards", "%_%"),
        ("a right-to-left override", "\u202edisk"), ("zero-width joiners", "d\u200bi\u200cs\u200dk"),
        ("combining marks only", "\u0301\u0301\u0301"), ("a byte-order mark", "\ufeffdisk"),
        ("the last code point", "\U0010ffff"), ("terminal escapes", "\x1b[2Jdisk\x07"),
        ("control characters", "\x01\x02\x03"), ("CR, LF and tabs", "disk\r\n\tfull"),
        ("Arabic and Hebrew", "القرص מלא"), ("an emoji sequence", "👩\u200d💻 disk"), ("an option's look", "--k=5"),
        ("4,000 words", "disk " * 4000))),
    ("kind in capitals", "recall", {"query": "disk", "kinds": ["EVENT"], "mode": "fast"}, "ok"),
    ("a context key of 300 letters", "recall", {"query": "disk", "context": {"k" * 300: "v"}}, "invalid_input"),
    ("a 100 KB context value", "recall", {"query": "disk", "context": {"k": "v" * 100_000}}, "invalid_input"),
    ("k a fraction", "recall", {"query": "disk", "k": 2.5}, "invalid_input"),
    ("mode in capitals", "recall", {"query": "disk", "mode": "FAST"}, "invalid_input"),
    ("a kind with a line break", "recall", {"query": "disk", "kinds": ["event\n"]}, "invalid_input"),
    *((f"observe {name}", "observe", a, "invalid_input") for name, a in (
        ("only zero-width spaces", {"content": "\u200b\u200b\u200b"}),
        ("only direction marks", {"content": "\u202e\u200f"}),
        ("a soft hyphen alone", {"content": "\u00ad"}), ("blanks of every script", {"content": "\u3000\u2003\u00a0\t"}),
        ("64 KiB and 4 bytes of emoji", {"content": "😀" * 16385}),
        ("a context of 10,000 keys", {"content": "x", "context": {f"k{i}": "v" for i in range(10_000)}}),
        ("a 100 KB context value", {"content": "x", "context": {"k": "v" * 100_000}}),
        ("a context key of 300 letters", {"content": "x", "context": {"k" * 300: "v"}}),
        ("importance infinity", {"content": "x", "importance": INF}), ("year 0", {"content": "x", "at": "0000-01-01"}),
        ("30 February", {"content": "x", "at": "2026-02-30"}),
        ("a leap second", {"content": "x", "at": "2026-12-31T23:59:60Z"}),
        ("a time to come", {"content": "x", "at": "in 3 days"}),
        ("a kind with a line break", {"content": "x", "kind": "event\n"}),
        ("a kind of 1,000 letters", {"content": "x", "kind": "k" * 1000}),
        ("a session of 300 letters", {"content": "x", "session": "s" * 300}),
        ("a NUL in the source", {"content": "x", "source": "a\x00"}))),
    ("block budget 31", "context", {"text": "disk", "budget": 31}, "invalid_input"),
    ("block budget 100,001", "context", {"text": "disk", "budget": 100_001}, "invalid_input"),
    ("block budget NaN", "context", {"text": "disk", "budget": NAN}, "invalid_input"),
    ("block budget a fraction", "context", {"text": "disk", "budget": 64.5}, "invalid_input"),
    ("block of only blanks", "context", {"text": " \t\n "}, "invalid_input"),
    ("block with a NUL", "context", {"text": "disk\x00"}, "invalid_input"),
    ("block of 1 MB", "context", {"text": "disk " * 200_000}, "invalid_input"),
    ("block of an unknown mode", "context", {"text": "disk", "mode": "turbo"}, "invalid_input"),
    ("block of a byte 0xff", "context", {"text": "disk \udcff"}, "invalid_input"),
    ("block of FTS syntax", "context", {"text": 'NEAR( "disk* OR -full ^'}, "ok"),
    ("block of direction marks", "context", {"text": "\u202edisk\u200b"}, "ok"),
    ("spread depth 0", "spread", {"items": ["episode:1"], "depth": 0}, "invalid_input"),
    ("spread depth 6", "spread", {"items": ["episode:1"], "depth": 6}, "invalid_input"),
    ("spread threshold NaN", "spread", {"items": ["episode:1"], "threshold": NAN}, "invalid_input"),
    ("spread threshold 0", "spread", {"items": ["episode:1"], "threshold": 0.0}, "invalid_input"),
    ("spread from a memory not there", "spread", {"items": ["episode:999999"]}, "not_found"),
    ("spread from a fact never set", "spread", {"items": ["fact:never set"]}, "not_found"),
    ("spread from a planet", "spread", {"items": ["planet:mars"]}, "invalid_input"),
    ("spread from nothing", "spread", {"items": []}, "invalid_input"),
    ("neighbours of nothing", "neighbours", {"item": ""}, "invalid_input"),
    ("neighbours of episode 0", "neighbours", {"item": "episode:0"}, "invalid_input"),
    ("neighbours of an entity of no value", "neighbours", {"item": "entity:host:"}, "invalid_input"),
    ("neighbours limit 0", "neighbours", {"item": "episode:1", "limit": 0}, "invalid_input"),
    ("neighbours threshold 2", "neighbours", {"item": "episode:1", "threshold": 2.0}, "invalid_input"),
    ("a memory linked to itself", "link", {"src": "episode:1", "dst": "episode:1"}, "invalid_input"),
    ("a link of an unknown type", "link", {"src": "episode:1", "dst": "fact:canary", "kind": "hates"}, "invalid_input"),
    ("a link to a memory past 2^63", "link", {"src": "episode:1", "dst": f"episode:{BIG}"}, "invalid_input"),
    ("a link to a memory not there", "link", {"src": "episode:1", "dst": "episode:999999"}, "not_found"),
    ("a link to a fact never set", "link", {"src": "episode:1", "dst": "fact:never set"}, "not_found"),
    ("unlinking what was never linked", "link", {"src": "episode:1", "dst": "fact:canary", "remove": True}, "ok"),
    ("entities limit 0", "entities", {"limit": 0}, "invalid_input"),
    ("entities of a type nobody knows", "entities", {"kind": "planet"}, "invalid_input"),
    ("history of an empty key", "fact_history", {"key": ""}, "invalid_input"),
    ("history of a key never set", "fact_history", {"key": "never set"}, "not_found"),
    ("history of a 5,000-letter key", "fact_history", {"key": "k" * 5000}, "invalid_input"),
    ("retract a key never set", "fact_retract", {"key": "never set"}, "not_found"),
    ("retract at an unreadable time", "fact_retract", {"key": "canary", "at": "soonish"}, "invalid_input"),
    ("retract at NaN", "fact_retract", {"key": "canary", "at": "nan"}, "invalid_input"),
    ("facts under a prefix of symbols", "fact_list", {"prefix": "%"}, "invalid_input"),
    ("facts under a prefix of 0xff", "fact_list", {"prefix": "\udcff"}, "invalid_input"),
    ("conflicts limit 0", "conflicts", {"limit": 0}, "invalid_input"),
    ("conflicts since garbage", "conflicts", {"since": "garbage"}, "invalid_input"),
    ("acknowledge conflict 0", "conflicts", {"ack": 0}, "not_found"),
    ("acknowledge conflict 2^70", "conflicts", {"ack": BIG}, "invalid_input"),
    ("a fact of confidence NaN", "fact_set", {"key": "k", "value": "v", "confidence": NAN}, "invalid_input"),
    ("a fact of importance infinity", "fact_set", {"key": "k", "value": "v", "importance": INF}, "invalid_input"),
    ("a fact from a martian", "fact_set", {"key": "k", "value": "v", "source": "martian:x"}, "invalid_input"),
    ("a fact value of 5,000 bytes", "fact_set", {"key": "k", "value": "v" * 5000}, "invalid_input"),
    ("a fact key of zero-width spaces", "fact_set", {"key": "\u200b\u200b", "value": "v"}, "invalid_input"),
    ("a fact time-to-live forever", "fact_set", {"key": "k", "value": "v", "ttl": "forever"}, "invalid_input"),
    ("a fact at year 0", "fact_get", {"key": "canary", "at": "0000-01-01"}, "invalid_input"),
    ("a fact key in capitals", "fact_get", {"key": "CANARY"}, "ok"),
    ("a fact key in blanks", "fact_get", {"key": "  canary  "}, "ok"),
    ("a fact key behind a direction mark", "fact_get", {"key": "\u202ecanary"}, "not_found"),
    ("forget memory 0", "forget_id", {"id": 0}, "not_found"),
    ("forget a memory past 2^63", "forget_id", {"id": BIG}, "not_found"),
    ("forget with a reason of 0xff", "forget_id", {"id": 1, "reason": "why \udcff"}, "invalid_input"),
    ("forget with a reason of 100 KB", "forget_id", {"id": 1, "reason": "r" * 99_000}, "invalid_input"),
    ("restore a memory past 2^63", "restore", {"id": BIG}, "not_found"),
    ("mark a memory not there", "mark", {"id": 999_999}, "not_found"),
    ("a topic of two dots", "dossier_add", {"topic": ".."}, "invalid_input"),
    ("a topic with a slash", "dossier_add", {"topic": "a/b"}, "invalid_input"),
    ("a topic of 65 letters", "dossier_add", {"topic": "x" * 65}, "invalid_input"),
    ("a topic of an empty query", "dossier_add", {"topic": "ok topic", "query": ""}, "invalid_input"),
    ("a topic behind a direction mark", "dossier_add", {"topic": "\u202eevil"}, "invalid_input"),
    ("the history of a path", "dossier_history", {"topic": "../x"}, "invalid_input"),
    ("forget topics matching two letters", "dossier_forget", {"matching": "ab"}, "invalid_input"),
    ("forget a topic never kept", "dossier_forget", {"topic": "never"}, "not_found"),
    ("refresh a topic never kept", "dossier_refresh", {"topic": "never"}, "not_found"),
    ("dossier version 0", "dossier_get", {"topic": "never", "version": 0}, "not_found"),
    ("a topic with a zero-width space", "dossier_get", {"topic": "a\u200bb"}, "invalid_input"),
    ("timeline since NaN", "timeline", {"since": "nan"}, "invalid_input"),
    ("timeline until 1e400", "timeline", {"until": "1e400"}, "invalid_input"),
    ("timeline offset -1", "timeline", {"offset": -1}, "invalid_input"),
    ("timeline of a kind nobody knows", "timeline", {"kinds": ["gossip"]}, "invalid_input"),
    ("timeline of a state nobody knows", "timeline", {"states": ["zombie"]}, "invalid_input"),
    ("feedback on used memory 0", "feedback", {"recall_id": 1, "outcome": "success", "used": [0]}, "not_found"),
    ("feedback in capitals", "feedback", {"recall_id": 1, "outcome": "SUCCESS"}, "invalid_input"),
    ("feedback on recall 0", "feedback", {"recall_id": 0, "outcome": "failure"}, "not_found"),
    ("related of a fact never set", "related", {"item": "fact:never set"}, "not_found"),
    ("related of an entity of no value", "related", {"item": "entity:host:"}, "invalid_input"),
    ("related of a negative id", "related", {"item": "-1"}, "invalid_input"),
    ("forget matching zero-width spaces", "forget_matching", {"text": "\u200b\u200b\u200b"}, "ok"),
    ("forget matching LIKE wildcards", "forget_matching", {"text": "%_%"}, "ok"),
]


# The operations bad_input.py carries whole to every face; hostile.py carries the others (and
# those bad_input.py carries only part of: a fact's confidence, a timeline's since, ...).
OWN = ("observe", "recall", "fact_get", "forget_matching", "related", "fact_cas", "memory_get")


def _opts(a: dict, *names: str) -> list[str]:
    return [f"--{n.replace('_', '-')}={a[n]}" for n in names if n in a]


async def python_call(mem: Memory, op: str, a: dict):
    """The case through the Python API (bad_input's for the operations it covers whole)."""
    when = {k: timeutil.parse_time(a[k]) for k in ("since", "until") if k in a}  # as every face parses them
    calls = {
        "context": lambda: mem.context(a["text"], budget=a.get("budget"), mode=a.get("mode")),
        "spread": lambda: mem.spread(a["items"], depth=a.get("depth"), threshold=a.get("threshold")),
        "neighbours": lambda: mem.neighbours(a["item"], limit=a.get("limit", 50), threshold=a.get("threshold")),
        "link": lambda: mem.link(a["src"], a["dst"], a.get("kind", "related"), remove=a.get("remove", False)),
        "entities": lambda: mem.entities(kind=a.get("kind"), limit=a.get("limit", 100)),
        "fact_history": lambda: mem.fact_history(a["key"]),
        "fact_retract": lambda: mem.retract_fact(a["key"], at=a.get("at")),
        "fact_list": lambda: mem.list_facts(prefix=a["prefix"]),
        "conflicts": lambda: mem.acknowledge_conflict(a["ack"]) if "ack" in a else
        mem.fact_conflicts(since=a.get("since"), limit=a.get("limit", 50)),
        "fact_set": lambda: mem.set_fact(a["key"], a["value"], **{k: a[k] for k in ("at", "source", "confidence",
                                                                                 "importance", "ttl") if k in a}),
        "forget_id": lambda: mem.forget(a["id"], reason=a.get("reason")),
        "restore": lambda: mem.restore(a["id"]),
        "mark": lambda: mem.mark(a["id"], factual=True),
        "dossier_add": lambda: mem.add_topic(a["topic"], query=a.get("query")),
        "dossier_history": lambda: mem.dossier_history(a["topic"]),
        "dossier_forget": lambda: mem.forget_topic(a.get("topic"), matching=a.get("matching")),
        "dossier_refresh": lambda: mem.refresh_dossier(a["topic"]),
        "dossier_get": lambda: mem.show_dossier(a["topic"], version=a.get("version")),
        "timeline": lambda: mem.timeline(**when, **{k: tuple(a[k]) for k in ("kinds", "states") if k in a},
                                         **{k: a[k] for k in ("limit", "offset") if k in a}),
        "feedback": lambda: mem.feedback(a["recall_id"], a["outcome"], used=a.get("used")),
    }
    return await (calls[op]() if op in calls else bad_input.python_call(mem, op, a))


def cli_call(op: str, a: dict) -> tuple[list[str], bytes | None] | None:
    """The case as a command line (and its stdin); None when a command line cannot say it."""
    if op in OWN:  # bad_input's, whole
        return bad_input.cli_call(op, a)
    if any(map(_argv_cannot_hold, a.values())):
        return None
    argv = {
        "context": lambda: ["context", *_opts(a, "budget", "mode"), "--", a["text"]],
        "spread": lambda: ["web", "spread", *_opts(a, "depth", "threshold"), "--", *a["items"]],
        "neighbours": lambda: ["web", "neighbors", *_opts(a, "limit", "threshold"), "--", a["item"]],
        "link": lambda: ["link", f"--type={a.get('kind', 'related')}", *(["--remove"] if a.get("remove") else []),
                         "--", a["src"], a["dst"]],
        "entities": lambda: ["web", "entities", *_opts(a, "limit"), *([f"--type={a['kind']}"] if "kind" in a else [])],
        "fact_history": lambda: ["fact", "history", "--", a["key"]],
        "fact_retract": lambda: ["fact", "retract", *_opts(a, "at"), "--", a["key"]],
        "fact_list": lambda: ["fact", "list", *_opts(a, "prefix")],
        "conflicts": lambda: ["fact", "conflicts", *_opts(a, "limit", "since", "ack")],
        "fact_set": lambda: ["fact", "set", *_opts(a, "at", "source", "confidence", "importance", "ttl"), "--",
                             a["key"], a["value"]],
        "forget_id": lambda: ["forget", *_opts(a, "reason"), "--", str(a["id"])],
        "restore": lambda: ["restore", "--", str(a["id"])],
        "mark": lambda: ["mark", "--factual", "--", str(a["id"])],
        "dossier_add": lambda: ["dossier", "add", *_opts(a, "query"), "--", a["topic"]],
        "dossier_history": lambda: ["dossier", "history", "--", a["topic"]],
        "dossier_forget": lambda: ["dossier", "remove", *_opts(a, "matching"), *(["--", a["topic"]] if "topic" in a
                                                                                 else [])],
        "dossier_refresh": lambda: ["dossier", "refresh", "--", a["topic"]],
        "dossier_get": lambda: ["dossier", "show", *_opts(a, "version"), "--", a["topic"]],
        "timeline": lambda: None if "states" in a else
        ["timeline", *_opts(a, "since", "until", "offset", "limit"), *(f"--kind={k}" for k in a.get("kinds", ()))],
        "feedback": lambda: ["feedback", *(f"--used={u}" for u in a.get("used", ())), "--", str(a["recall_id"]),
                             a["outcome"]],
    }[op]()
    return None if argv is None else (argv, None)


def mcp_args(op: str, a: dict) -> tuple[str, dict] | None:
    """The case as an MCP tool and its arguments; None when no tool takes it."""
    if op in (*OWN, "feedback"):
        return bad_input.mcp_args(op, a)
    if bad_input.mcp_args(op, a) is None:  # NaN, raw bytes or a lone surrogate: the client's JSON cannot
        return None
    one = len(a.get("items", ())) == 1 and "threshold" not in a
    return {
        "spread": lambda: ("related", {"item": a["items"][0], "depth": a.get("depth", 2)}) if one else None,
        "fact_history": lambda: ("fact_get", {"key": a["key"], "history": True}),
        "fact_retract": lambda: ("fact_set", {**a, "retract": True}),
        "fact_list": lambda: ("fact_get", {"prefix": a["prefix"]}),
        "fact_set": lambda: None if {"confidence", "importance", "ttl"} & set(a) else ("fact_set", a),
        "forget_id": lambda: None if "reason" in a else ("forget", {"id": a["id"]}),
        "dossier_refresh": lambda: ("dossier", {"topic": a["topic"], "refresh": True}),
        "dossier_get": lambda: ("dossier", a),
        "timeline": lambda: None if {"offset", "states"} & set(a) else ("timeline", a),
    }.get(op, lambda: None)()


def http_call(op: str, a: dict) -> tuple[str, str, bytes | None] | None:
    """The case as (method, path, body); None when no route takes it."""
    if op in OWN:
        return bad_input.http_call(op, a)
    key = _quoted(a.get("key", ""))
    return {
        "context": lambda: ("POST", "/v1/context", _json_bytes(a)),
        "spread": lambda: ("POST", "/v1/spread", _json_bytes(a)),
        "neighbours": lambda: None if "threshold" in a else
        ("GET", f"/v1/nodes/{_quoted(a['item'])}/coactivations?{urlencode({'limit': a.get('limit', 50)})}", None),
        "fact_history": lambda: ("GET", f"/v1/facts/{key}/history", None),
        "fact_retract": lambda: ("DELETE", f"/v1/facts/{key}" + (f"?at={quote(a['at'])}" if "at" in a else ""), None),
        "fact_list": lambda: ("GET", f"/v1/facts?prefix={_quoted(a['prefix'])}", None),
        "conflicts": lambda: ("GET", f"/v1/facts/conflicts?limit={a['limit']}", None) if set(a) == {"limit"} else None,
        "fact_set": lambda: None if "ttl" in a else
        ("PUT", f"/v1/facts/{key}", _json_bytes({k: v for k, v in a.items() if k != "key"})),
        "forget_id": lambda: ("DELETE", f"/v1/memories/{a['id']}", None) if "reason" not in a else
        ("PATCH", f"/v1/memories/{a['id']}", _json_bytes({"state": "archived", "reason": a["reason"]})),
        "restore": lambda: ("PATCH", f"/v1/memories/{a['id']}", _json_bytes({"state": "active"})),
        "mark": lambda: ("PATCH", f"/v1/memories/{a['id']}", _json_bytes({"factual": True})),
        "dossier_forget": lambda: ("POST", "/v1/dossiers/forget", _json_bytes(a)),
        "dossier_refresh": lambda: ("POST", f"/v1/dossiers/{_quoted(a['topic'])}/refresh", b"{}"),
        "dossier_get": lambda: ("GET", f"/v1/dossiers/{_quoted(a['topic'])}" + (f"?version={a['version']}" if
                                                                                 "version" in a else ""), None),
        "feedback": lambda: ("POST", f"/v1/recalls/{a['recall_id']}/feedback",
                             _json_bytes({k: v for k, v in a.items() if k != "recall_id"})),
        "timeline": lambda: ("GET", "/v1/timeline?" + urlencode(
            [*((k, a[k]) for k in ("since", "until", "offset", "limit") if k in a),
             *(("kind", k) for k in a.get("kinds", ())), *(("state", s) for s in a.get("states", ()))]), None),
    }.get(op, lambda: None)()


def pick(items: list, share: float, seed: int, name: str) -> list:
    """A fixed, seeded SHARE of ITEMS (at least one), in their order: what the test suite runs."""
    if share >= 1 or not items:
        return list(items)
    keep = random.Random(f"{seed}:{name}").sample(range(len(items)), max(1, round(len(items) * share)))
    return [items[i] for i in sorted(keep)]


def corpus(share: float = 1.0, seed: int = 0) -> dict[str, list]:
    """The whole adversarial corpus by part: bad_input's and damage.py's inputs all, and a fixed,
    seeded SHARE of this module's, hostile_lines' and hostile_wire's (all of them at 1)."""
    from strata_bench import damage, hostile_lines as lines, hostile_wire as wire

    def more(name: str, items: list) -> list:
        return pick(items, share, seed, name)
    return {
        "cases": [*bad_input.CASES, *more("cases", MORE_CASES)],
        "cli": [*damage.CLI_FUZZ, *more("cli", lines.CLI_MORE)],
        "cli_streams": more("cli_streams", lines.CLI_STREAMS), "imports": [*damage.import_files(),
                                                                           *more("imports", lines.import_more())],
        "capsules": [*damage.CAPSULES, *more("capsules", lines.CAPSULES_MORE)],
        "configs": [*damage.CONFIGS, *more("configs", lines.CONFIGS_MORE)],
        "http_raw": [*damage.HTTP_RAW, *more("http_raw", wire.HTTP_RAW_MORE)],
        "http_bodies": [*damage.HTTP_BODIES, *more("http_bodies", wire.HTTP_BODIES_MORE)],
        "mcp_raw": damage.MCP_RAW, "mcp_lines": more("mcp_lines", wire.MCP_MORE),
        "hooks": [*damage.HOOK_CASES, *more("hooks", lines.HOOK_MORE)], "hook_streams": more("hook_streams",
                                                                                           lines.HOOK_STREAMS),
    }
