"""The bad-input corpus: per operation, inputs a careless or hostile caller could pass, each
with the error kind it must get ("ok" for odd but harmless input), and the same input as each
face carries it (the Python API, a command line, MCP tool arguments, an HTTP request). The
test suite runs it through every face; `strata bench reliability` makes it part of its
adversarial corpus."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from strata_daemon.app.memory import Memory

EXIT = {"invalid_input": 4, "not_found": 3, "conflict": 5, "cas_mismatch": 9, "ok": 0}
BIG = 2**70

# (name, operation, arguments, expected kind); "ok" means answered normally, nothing refused.
# A face that cannot carry the input (invalid UTF-8 in JSON, a float NaN on a command line) skips it.
CASES = [
    ("empty text", "observe", {"content": ""}, "invalid_input"),
    ("only blanks", "observe", {"content": "  \n\t "}, "invalid_input"),
    ("10 MB text", "observe", {"content": "x" * (10 << 20)}, "invalid_input"),
    ("one byte over the limit", "observe", {"content": "é" * 32768 + "x"}, "invalid_input"),
    ("NUL in text", "observe", {"content": "before\x00after"}, "invalid_input"),
    ("invalid UTF-8 bytes", "observe", {"content": b"\xff\xfe\xfa broken"}, "invalid_input"),
    ("lone surrogate", "observe", {"content": "half \ud800 a pair"}, "invalid_input"),
    ("unknown kind", "observe", {"content": "x", "kind": "gossip"}, "invalid_input"),
    ("empty kind", "observe", {"content": "x", "kind": ""}, "invalid_input"),
    ("importance above 1", "observe", {"content": "x", "importance": 2.0}, "invalid_input"),
    ("importance below 0", "observe", {"content": "x", "importance": -0.1}, "invalid_input"),
    ("importance NaN", "observe", {"content": "x", "importance": float("nan")}, "invalid_input"),
    ("unreadable time", "observe", {"content": "x", "at": "yesterday-ish"}, "invalid_input"),
    ("time past year 9999", "observe", {"content": "x", "at": "1e400"}, "invalid_input"),
    ("minus infinity time", "observe", {"content": "x", "at": "-inf"}, "invalid_input"),
    ("source too long", "observe", {"content": "x", "source": "s" * 5000}, "invalid_input"),
    ("NUL in session", "observe", {"content": "x", "session": "a\x00b"}, "invalid_input"),
    # Bytes that are not UTF-8 reach Python as lone surrogates: \udcff is the byte 0xff of a
    # command line, \ud800 what a careless JSON encoder writes.
    ("byte 0xff in source", "observe", {"content": "x", "source": "src-\udcff"}, "invalid_input"),
    ("lone surrogate in session", "observe", {"content": "x", "session": "\ud800"}, "invalid_input"),
    ("byte 0xff in session", "observe", {"content": "x", "session": "\udcff"}, "invalid_input"),
    ("byte 0xff in a context value", "observe", {"content": "x", "context": {"code": "\udcff"}}, "invalid_input"),
    ("byte 0xff in a context key", "observe", {"content": "x", "context": {"\udcff": "v"}}, "invalid_input"),
    ("importance with a digit separator", "observe", {"content": "x", "importance": "0_5"}, "invalid_input"),
    ("empty query", "recall", {"query": ""}, "invalid_input"),
    ("blank query", "recall", {"query": " \t "}, "invalid_input"),
    ("NUL in query", "recall", {"query": "disk\x00full"}, "invalid_input"),
    ("1 MB query", "recall", {"query": "disk " * 200_000}, "invalid_input"),
    ("lone surrogate in query", "recall", {"query": "disk \udc80"}, "invalid_input"),
    ("unbalanced quote", "recall", {"query": '"disk full'}, "ok"),
    ("FTS NEAR(", "recall", {"query": "NEAR( disk"}, "ok"),
    ("FTS star", "recall", {"query": "*"}, "ok"),
    ("FTS operators only", "recall", {"query": "AND OR NOT"}, "ok"),
    ("FTS column filter", "recall", {"query": "episodes_fts:disk"}, "ok"),
    ("FTS caret", "recall", {"query": "^disk"}, "ok"),
    ("SQL injection", "recall", {"query": "disk'; DROP TABLE episodes; --"}, "ok"),
    ("punctuation only", "recall", {"query": "!!!???..."}, "ok"),
    ("emoji only", "recall", {"query": "🔥🔥🔥"}, "ok"),
    ("k zero", "recall", {"query": "disk", "k": 0}, "invalid_input"),
    ("k negative", "recall", {"query": "disk", "k": -5}, "invalid_input"),
    ("k a billion", "recall", {"query": "disk", "k": 10**9}, "invalid_input"),
    ("unknown mode", "recall", {"query": "disk", "mode": "turbo"}, "invalid_input"),
    ("unknown kind filter", "recall", {"query": "disk", "kinds": ["nope"]}, "invalid_input"),
    ("byte 0xff in recall context", "recall", {"query": "disk", "context": {"k": "\udcff"}}, "invalid_input"),
    ("empty key", "fact_set", {"key": "", "value": "v"}, "invalid_input"),
    ("key of blanks and dashes", "fact_set", {"key": " - _ ", "value": "v"}, "invalid_input"),
    ("control character in key", "fact_set", {"key": "a\x07b", "value": "v"}, "invalid_input"),
    ("empty value", "fact_set", {"key": "k", "value": ""}, "invalid_input"),
    ("NUL in value", "fact_set", {"key": "k", "value": "a\x00b"}, "invalid_input"),
    ("1 MB value", "fact_set", {"key": "k", "value": "v" * (1 << 20)}, "invalid_input"),
    ("unreadable fact time", "fact_set", {"key": "k", "value": "v", "at": "soonish"}, "invalid_input"),
    ("byte 0xff in a fact source", "fact_set", {"key": "k", "value": "v", "source": "person:\udcff"}, "invalid_input"),
    ("byte 0xff in a fact key", "fact_set", {"key": "k\udcff", "value": "v"}, "invalid_input"),
    ("forget matching 0xff bytes", "forget_matching", {"text": "sec\udcffret"}, "invalid_input"),
    ("forget matching a lone surrogate", "forget_matching", {"text": "sec\ud800ret"}, "invalid_input"),
    ("forget matching two letters", "forget_matching", {"text": "db"}, "invalid_input"),
    ("forget matching, a dry run", "forget_matching", {"text": "db-01"}, "ok"),
    ("missing fact", "fact_get", {"key": "never set"}, "not_found"),
    ("fact as of year 99999", "fact_get", {"key": "canary", "at": "99999-01-01"}, "invalid_input"),
    ("compare-and-set mismatch", "fact_cas", {"key": "canary", "expected": "wrong", "new": "x"}, "cas_mismatch"),
    ("unknown recall", "feedback", {"recall_id": 999_999, "outcome": "success"}, "not_found"),
    ("recall id past 2^63", "feedback", {"recall_id": BIG, "outcome": "success"}, "not_found"),
    ("unknown outcome", "feedback", {"recall_id": 1, "outcome": "maybe"}, "invalid_input"),
    ("memory id 0", "memory_get", {"id": 0}, "not_found"),
    ("negative memory id", "memory_get", {"id": -1}, "not_found"),
    ("memory id past 2^63", "memory_get", {"id": BIG}, "not_found"),
    ("item of another kind", "related", {"item": "planet:mars"}, "invalid_input"),
    ("unicode digits as id", "related", {"item": "²³"}, "invalid_input"),
    ("item past 2^63", "related", {"item": f"episode:{BIG}"}, "invalid_input"),
    ("path as a topic", "dossier_get", {"topic": "../../../etc/passwd"}, "invalid_input"),
    ("absolute path as a topic", "dossier_get", {"topic": "/etc/passwd"}, "invalid_input"),
    ("line break in a topic", "dossier_get", {"topic": "a\nb"}, "invalid_input"),
    ("timeline limit -1", "timeline", {"limit": -1}, "invalid_input"),
    ("timeline limit 0", "timeline", {"limit": 0}, "invalid_input"),
]


async def python_call(mem: Memory, op: str, a: dict):
    if op == "observe":
        return await mem.observe(**a)
    if op == "recall":
        return await mem.recall(**a)
    if op == "fact_set":
        return await mem.set_fact(a["key"], a["value"], at=a.get("at"), source=a.get("source"))
    if op == "forget_matching":
        return await mem.forget_matching(a["text"])
    if op == "fact_get":
        return await mem.get_fact(a["key"], at=a.get("at"))
    if op == "fact_cas":
        return await mem.cas_fact(a["key"], a["expected"], a["new"])
    if op == "feedback":
        return await mem.feedback(a["recall_id"], a["outcome"])
    if op == "memory_get":
        return await mem.get(a["id"])
    if op == "dossier_get":
        return await mem.show_dossier(a["topic"])
    if op == "timeline":
        return await mem.timeline(limit=a["limit"])
    return await mem.related(a["item"])


def _lone_surrogate(v) -> bool:
    return isinstance(v, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in v)


def _argv_cannot_hold(v) -> bool:
    """A NUL, more than 128 KiB, or a lone surrogate that stands for no byte (only \udc80-\udcff
    do: they are how Python reads the bytes of an argument that are not UTF-8)."""
    if isinstance(v, dict):
        return any(_argv_cannot_hold(x) for x in (*v.keys(), *v.values()))
    if not isinstance(v, str):
        return False
    try:
        os.fsencode(v)
    except UnicodeEncodeError:
        return True
    return "\x00" in v or len(v) > 100_000


def _pairs(context: dict) -> list[str]:
    return [f"--context={k}={v}" for k, v in context.items()]


def cli_call(op: str, a: dict) -> tuple[list[str], bytes | None] | None:
    """The command line for a case, with its stdin; None when a command line cannot say it."""
    if op == "observe":
        content = a["content"]
        argv = ["observe", "-"]
        for opt in ("kind", "importance", "at", "source", "session"):
            if opt in a:
                argv += [f"--{opt}={a[opt]}"]
        argv += _pairs(a.get("context", {}))
        if any(_argv_cannot_hold(x) for x in argv):
            return None
        # a lone surrogate goes as the bytes a careless encoder writes for it
        return argv, content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
    if any(_argv_cannot_hold(v) for v in a.values()):
        return None
    if op == "recall":
        argv = ["recall", f"--k={a['k']}"] if "k" in a else ["recall"]
        argv += [f"--mode={a['mode']}"] if "mode" in a else ["--mode=fast"]
        argv += [f"--kind={k}" for k in a.get("kinds", [])] + _pairs(a.get("context", {}))
        return argv + ["--", a["query"]], None
    if op == "fact_set":
        opts = [f"--{o}={a[o]}" for o in ("at", "source") if o in a]
        return ["fact", "set", *opts, "--", a["key"], a["value"]], None
    if op == "forget_matching":
        return ["forget", f"--matching={a['text']}"], None
    if op == "fact_get":
        return ["fact", "get", a["key"]] + ([f"--at={a['at']}"] if "at" in a else []), None
    if op == "fact_cas":
        return ["fact", "cas", a["key"], a["expected"], a["new"]], None
    if op == "feedback":
        return ["feedback", str(a["recall_id"]), a["outcome"]], None
    if op == "memory_get":
        return ["show", "--", str(a["id"])], None
    if op == "dossier_get":
        return ["dossier", "show", "--", a["topic"]], None
    if op == "timeline":
        return ["timeline", f"--limit={a['limit']}"], None
    return ["related", a["item"]], None


def mcp_args(op: str, a: dict) -> tuple[str, dict] | None:
    """A case's MCP tool and arguments; None when the face cannot carry it (the client's JSON
    carries no raw bytes, NaN or lone surrogate)."""
    if any(isinstance(v, bytes) or (isinstance(v, float) and v != v) or _lone_surrogate(v)
           or (isinstance(v, dict) and any(map(_lone_surrogate, (*v.keys(), *v.values())))) for v in a.values()):
        return None
    if op == "forget_matching":
        return "forget", {"matching": a["text"]}
    if op == "fact_cas":
        return "fact_set", {"key": a["key"], "expected": a["expected"], "value": a["new"]}
    if op == "dossier_get":
        return "dossier", a
    return op, a


def _json_bytes(value) -> bytes:
    # Raw bytes and lone surrogates go as a careless client writes them; NaN as Python writes it.
    def enc(v):
        if isinstance(v, bytes):
            return "\x00BYTES" + v.hex()
        return v
    text = json.dumps({k: enc(v) for k, v in value.items()}, ensure_ascii=False)
    out = text.encode("utf-8", "surrogatepass")
    for v in value.values():
        if isinstance(v, bytes):
            out = out.replace(("\\u0000BYTES" + v.hex()).encode(), v)
    return out


def _quoted(text: str) -> str:
    """TEXT as a path segment; a lone surrogate as the bytes it stands for (or CESU-8, as a
    careless encoder writes it)."""
    try:
        return quote(text.encode("utf-8", "surrogateescape"), safe="")
    except UnicodeEncodeError:
        return quote(text.encode("utf-8", "surrogatepass"), safe="")


def http_call(op: str, a: dict) -> tuple[str, str, bytes | None]:
    """(method, path, body) for a case over HTTP."""
    if op == "observe":
        return "POST", "/v1/memories", _json_bytes(a)
    if op == "recall":
        return "POST", "/v1/recall", _json_bytes(a)
    if op == "fact_set":
        body = {k: v for k, v in a.items() if k != "key"}
        return "PUT", f"/v1/facts/{_quoted(a['key'])}", _json_bytes(body)
    if op == "fact_get":
        at = f"?at={quote(a['at'])}" if "at" in a else ""
        return "GET", f"/v1/facts/{_quoted(a['key'])}{at}", None
    if op == "forget_matching":
        return "POST", "/v1/forget", _json_bytes({"matching": a["text"]})
    if op == "fact_cas":
        return "POST", f"/v1/facts/{_quoted(a['key'])}/cas", _json_bytes({"expected": a["expected"],
                                                                                  "new": a["new"]})
    if op == "feedback":
        return "POST", f"/v1/recalls/{a['recall_id']}/feedback", _json_bytes({"outcome": a["outcome"]})
    if op == "memory_get":
        return "GET", f"/v1/memories/{a['id']}", None
    if op == "dossier_get":
        return "GET", f"/v1/dossiers/{quote(a['topic'], safe='')}", None
    if op == "timeline":
        return "GET", f"/v1/timeline?limit={a['limit']}", None
    return "GET", f"/v1/memories/{quote(a['item'], safe='')}/related", None


# Command lines that must be refused (or only read): unknown commands and options, values of
# the wrong type or range, paths that are not what they should be.
