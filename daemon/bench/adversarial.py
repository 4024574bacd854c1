"""The adversarial corpus of `strata bench reliability`: over 400 inputs a careless or hostile
user could hand strata, through every face (the Python API, the CLI, `strata import`, the
capsule file, strata.toml, HTTP and MCP). Every one must be answered (an exit code, an HTTP
status, a JSON-RPC reply) without a traceback, and none may change what the home holds.

The per-operation cases (`CASES`) are also the test suite's bad-input corpus."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable
from urllib.parse import quote

from ..errors import StrataError
from ..memory import Memory
from ..storage import driver

BIG = 2**70
ANSWER_SECONDS = 60.0

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
    ("empty key", "fact_set", {"key": "", "value": "v"}, "invalid_input"),
    ("key of blanks and dashes", "fact_set", {"key": " - _ ", "value": "v"}, "invalid_input"),
    ("control character in key", "fact_set", {"key": "a\x07b", "value": "v"}, "invalid_input"),
    ("empty value", "fact_set", {"key": "k", "value": ""}, "invalid_input"),
    ("NUL in value", "fact_set", {"key": "k", "value": "a\x00b"}, "invalid_input"),
    ("1 MB value", "fact_set", {"key": "k", "value": "v" * (1 << 20)}, "invalid_input"),
    ("unreadable fact time", "fact_set", {"key": "k", "value": "v", "at": "soonish"}, "invalid_input"),
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
        return await mem.facts.set(a["key"], a["value"], at=a.get("at"))
    if op == "fact_get":
        return await mem.facts.get(a["key"], at=a.get("at"))
    if op == "fact_cas":
        return await mem.facts.cas(a["key"], a["expected"], a["new"])
    if op == "feedback":
        return await mem.feedback(a["recall_id"], a["outcome"])
    if op == "memory_get":
        return await mem.get(a["id"])
    if op == "dossier_get":
        return await mem.dossiers.show(a["topic"])
    if op == "timeline":
        return await mem.timeline(limit=a["limit"])
    return await mem.web.related(a["item"])


def _lone_surrogate(v) -> bool:
    return isinstance(v, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in v)


def cli_call(op: str, a: dict) -> tuple[list[str], bytes | None] | None:
    """The command line for a case, with its stdin; None when a command line cannot say it."""
    if op == "observe":
        content = a["content"]
        argv = ["observe", "-"]
        for opt in ("kind", "importance", "at", "source", "session"):
            if opt in a:
                argv += [f"--{opt}={a[opt]}"]
        if any("\x00" in x for x in argv):
            return None  # no NUL reaches a program through argv
        # a lone surrogate goes as the bytes a careless encoder writes for it
        return argv, content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
    if any(isinstance(v, str) and ("\x00" in v or len(v) > 100_000 or _lone_surrogate(v)) for v in a.values()):
        return None  # argv holds no NUL, no lone surrogate, and at most 128 KiB an argument
    if op == "recall":
        argv = ["recall", f"--k={a['k']}"] if "k" in a else ["recall"]
        argv += [f"--mode={a['mode']}"] if "mode" in a else ["--mode=fast"]
        argv += [f"--kind={k}" for k in a.get("kinds", [])]
        return argv + ["--", a["query"]], None
    if op == "fact_set":
        return ["fact", "set"] + ([f"--at={a['at']}"] if "at" in a else []) + ["--", a["key"], a["value"]], None
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


def mcp_args(op: str, a: dict) -> dict | None:
    """A case's MCP tool arguments; None when the face cannot carry it (no timeline tool; the
    client's JSON carries no raw bytes, NaN or lone surrogate)."""
    if op == "timeline" or any(isinstance(v, bytes) or (isinstance(v, float) and v != v) or _lone_surrogate(v)
                               for v in a.values()):
        return None
    return a


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


def http_call(op: str, a: dict) -> tuple[str, str, bytes | None]:
    """(method, path, body) for a case over HTTP."""
    if op == "observe":
        return "POST", "/v1/memories", _json_bytes(a)
    if op == "recall":
        return "POST", "/v1/recall", _json_bytes(a)
    if op == "fact_set":
        body = {k: v for k, v in a.items() if k != "key"}
        return "PUT", f"/v1/facts/{quote(a['key'], safe='')}", _json_bytes(body)
    if op == "fact_get":
        at = f"?at={quote(a['at'])}" if "at" in a else ""
        return "GET", f"/v1/facts/{quote(a['key'], safe='')}{at}", None
    if op == "fact_cas":
        return "POST", f"/v1/facts/{quote(a['key'], safe='')}/cas", _json_bytes({"expected": a["expected"],
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
CLI_FUZZ = [
    ["nonsense"], ["recall"], ["recall", "--k", "abc", "disk"], ["recall", "--k", "1e9", "disk"],
    ["recall", "--mode", "", "disk"], ["recall", "--since", "yesterday-ish", "disk"], ["show"], ["show", "abc"],
    ["show", "99999999999999999999999"], ["show", "--", "-1"], ["show", "1.5"], ["forget", "abc"],
    ["forget", "0"], ["forget", "--", "-7"], ["restore", "0"], ["mark", "1"], ["mark", "0", "--factual"],
    ["fact", "get"], ["fact", "set", "k"], ["fact", "retract", ""], ["fact", "history", "never set"],
    ["fact", "list", "--limit", "-3"], ["fact", "cas", "canary"], ["timeline", "--since", "garbage"],
    ["timeline", "--offset", "-5"], ["timeline", "--limit", "abc"], ["timeline", "--kind", "gossip"],
    ["feedback", "1"], ["feedback", "abc", "success"], ["feedback", "1", "success", "--used", "abc"],
    ["dossier", "add", ""], ["dossier", "add", "a\tb"], ["dossier", "show", "../x"], ["dossier", "remove", "nope"],
    ["dossier", "refresh", "never-added"], ["consolidate", "--rules", "nope"], ["consolidate", "--undo", "0"],
    ["consolidate", "--undo", "abc"], ["phase", "run", "nope"], ["serve", "--socket", ""],
    ["serve", "--port", "70000"], ["serve", "--port", "-1"], ["backup", "--restore", "/etc/passwd"],
    ["backup", "--restore", "/dev/zero"], ["backup", "--restore", "/nonexistent/x.db"],
    ["import", "/nonexistent/file.jsonl"], ["import", "/"], ["import", "/dev/zero"], ["config", "show", "--bogus"],
    ["web", "neighbors", "nope:1"], ["spread", "episode:abc"], ["related", ""], ["arena", "undo", "0"],
    ["arena", "questions", "/dev/zero"], ["--agent", "CAPSULE", "status"], ["--agent", "no spaces", "status"],
    ["--agent", "", "status"], ["--scope", "unshared", "timeline"], ["--home", "/nonexistent/home", "status"],
    ["capsule", "show", "--bogus"], ["mark", "1", "--irrelevant", "--factual", "--bogus"],
]


def import_files() -> list[tuple[str, bytes]]:
    """Files `strata import` must refuse whole (nothing stored)."""
    good = b'{"content": "an imported line that must not be stored, since the file is bad"}\n'
    return [
        ("binary", bytes(range(256)) * 64),
        ("only NUL bytes", b"\x00" * 10_000),
        ("not JSON", b"hello world\n"),
        ("a JSON array line", good + b"[1, 2, 3]\n"),
        ("a JSON string line", good + b'"just text"\n'),
        ("a number line", good + b"42\n"),
        ("null line", good + b"null\n"),
        ("no content", good + b'{"kind": "event"}\n'),
        ("content a number", good + b'{"content": 12}\n'),
        ("content null", good + b'{"content": null}\n'),
        ("content a list", good + b'{"content": ["a"]}\n'),
        ("empty content", good + b'{"content": ""}\n'),
        ("unknown kind", good + b'{"content": "x", "kind": "gossip"}\n'),
        ("importance 7", good + b'{"content": "x", "importance": 7}\n'),
        ("importance as text", good + b'{"content": "x", "importance": "high"}\n'),
        ("unreadable time", good + b'{"content": "x", "at": "soonish"}\n'),
        ("time 1e400", good + b'{"content": "x", "at": 1e400}\n'),
        ("invalid UTF-8", good + b'{"content": "bad \xff byte"}\n'),
        ("lone surrogate escape", good + b'{"content": "bad \\ud800 pair"}\n'),
        ("NUL in content", good + b'{"content": "a\\u0000b"}\n'),
        ("nested 100k deep", good + b"[" * 100_000 + b"]" * 100_000 + b"\n"),
        ("another agent's line", good + b'{"content": "x", "agent": "mallory"}\n'),
        ("text over the limit", good + b'{"content": "' + b"y" * 70_000 + b'"}\n'),
        ("a line over 16 MiB", good + b'{"content": "' + b"z" * (17 << 20) + b'"}\n'),
        ("truncated last line", good + b'{"content": "cut sh'),
        ("context not an object", good + b'{"content": "x", "context": "prod"}\n'),
        ("id of another type", good + b'{"content": "x", "id": "seven"}\n'),
        ("negative id", good + b'{"content": "x", "id": -4}\n'),
        ("state unknown", good + b'{"content": "x", "state": "zombie"}\n'),
        ("BOM then garbage", b"\xef\xbb\xbfnot json\n"),
    ]


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _device(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent / "nowhere" / "gone.md")


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path, 0o600)


def _edit(change: Callable[[str], str]) -> Callable[[Path], None]:
    return lambda path: path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")


def _write(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


CAPSULES: list[tuple[str, Callable[[Path], None]]] = [
    ("a folder", _folder), ("a device", _device), ("a dangling link", _dangling), ("a pipe", _fifo),
    ("empty", _write(b"")), ("binary", _write(bytes(range(256)) * 16)), ("not UTF-8", _write(b"# Capsule\n\xff\n")),
    ("2 MiB", _write(b"- line\n" * 300_000)), ("NUL bytes", _write(b"# Capsule\n\x00\x00\n")),
    ("no sections", _write(b"just a note\n")),
    ("a marker cut", _edit(lambda t: t.replace("<!-- strata:end recent -->", "<!-- strata:ned recent -->"))),
    ("a marker doubled", _edit(lambda t: t.replace("<!-- strata:end recent -->",
                                                   "<!-- strata:end recent -->\n<!-- strata:end recent -->"))),
    ("a section doubled", _edit(lambda t: t + "\n## Identity\n\nagain\n")),
    ("sections reordered", _edit(lambda t: t.replace("## Identity", "## Tmp").replace("## Tools", "## Identity")
                                 .replace("## Tmp", "## Tools"))),
    ("a block outside its section", _edit(lambda t: t + "\n<!-- strata:begin tasks -->\n<!-- strata:end tasks -->\n")),
    ("5,000 lines", _edit(lambda t: t + "\n".join(f"- filler {n}" for n in range(5000)))),
    ("a 1 MB line", _edit(lambda t: t + "\n" + "w" * 1_000_000 + "\n")),
    ("CRLF endings", _edit(lambda t: t.replace("\n", "\r\n"))),
    ("a lone surrogate escape", _write("# Capsule\n\\ud800 \ud7ff\n".encode("utf-8"))),
    ("markers inside a code block", _edit(lambda t: t + "\n```\n<!-- strata:begin facts -->\n```\n")),
]

CONFIGS: list[tuple[str, bytes | Callable[[Path], None]]] = [
    ("malformed", b"[recall\nk = 3\n"), ("wrong type", b"[recall]\nk = 'many'\n"), ("out of range", b"[recall]\nk = 0\n"),
    ("unknown choice", b"[recall]\nmode = 'turbo'\n"), ("unknown setting", b"[recall]\nspeed = 11\n"),
    ("unknown section", b"[nonsense]\nx = 1\n"), ("binary", b"\xff\xfe\x00\x01"), ("NUL bytes", b"a = 1\x00\n"),
    ("nested 5000 deep", b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"), ("2 MiB", b"# pad\n" * 350_000),
    ("a device", _device), ("a folder", _folder), ("a pipe", _fifo), ("NaN", b"[recall]\nk = nan\n"),
    ("infinity", b"[scoring]\ncold_factor = inf\n"), ("huge integer", b"[recall]\nk = 99999999999999999999\n"),
    ("negative interval", b"[daemon]\nembed_interval_seconds = -5\n"), ("empty string mode", b"[recall]\nmode = ''\n"),
    ("a table doubled", b"[recall]\nk = 3\n[recall]\nk = 4\n"), ("a key doubled", b"[recall]\nk = 3\nk = 4\n"),
    ("bad namespace", b"[agent]\nnamespace = 'no spaces'\n"), ("reserved namespace", b"[agent]\nnamespace = 'capsule'\n"),
    ("bad shared list", b"[agent]\nshared = ['a b']\n"), ("shared not a list", b"[agent]\nshared = 'team'\n"),
    ("kinds empty", b"[store]\nkinds = []\n"), ("max content 0", b"[store]\nmax_content_bytes = 0\n"),
    ("a date as a number", b"[recall]\nk = 1979-05-27\n"), ("an array of tables", b"[[recall]]\nk = 3\n"),
    ("port 70000", b"[http]\nport = 70000\n"), ("host as a list", b"[http]\nhost = ['a']\n"),
    ("model path a device", b"[embedding]\nmodel = '/dev/zero'\n"), ("lone surrogate escape", b"a = '\\ud800'\n"),
]

HTTP_RAW: list[tuple[str, bytes]] = [
    ("garbage line", b"GARBAGE\r\n\r\n"), ("HTTP/0.9", b"GET /\r\n\r\n"), ("no Host", b"GET /v1/status HTTP/1.1\r\n\r\n"),
    ("100 KB header", b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"),
    ("body shorter than said", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"content\""),
    ("bad chunked body", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"),
    ("both lengths", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked"
                     b"\r\n\r\n0\r\n\r\n"),
    ("negative length", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
    ("9 MiB body", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                   + str(9 << 20).encode() + b"\r\n\r\n" + b"{" + b" " * ((9 << 20) - 1)),
    ("absolute URI", b"GET http://evil.example/v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("non-ASCII path", "GET /v1/memories/é HTTP/1.1\r\nHost: x\r\n\r\n".encode()),
    ("NUL in path", b"GET /v1/facts/a%00b HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("dot segments", b"GET /v1/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("TRACE", b"TRACE /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"), ("OPTIONS", b"OPTIONS /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("unknown method", b"FROB /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("DELETE a collection", b"DELETE /v1/memories HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    ("header without colon", b"GET /v1/status HTTP/1.1\r\nHost x\r\n\r\n"),
    ("bare LF lines", b"GET /v1/status HTTP/1.1\nHost: x\n\n"),
]
HTTP_BODIES: list[tuple[str, str, str, bytes]] = [
    ("not JSON", "POST", "/v1/memories", b"hello"), ("a JSON array", "POST", "/v1/memories", b"[1, 2]"),
    ("content a number", "POST", "/v1/memories", b'{"content": 5}'), ("extra field", "POST", "/v1/memories",
                                                                      b'{"content": "x", "extra": 1}'),
    ("deep JSON", "POST", "/v1/memories", b"[" * 100_000 + b"]" * 100_000),
    ("empty batch", "POST", "/v1/memories/batch", b'{"items": []}'),
    ("batch with one bad item", "POST", "/v1/memories/batch", b'{"items": [{"content": "ok"}, {"content": ""}]}'),
    ("spread of nothing", "POST", "/v1/spread", b'{"items": []}'), ("bad state", "PATCH", "/v1/memories/1",
                                                                    b'{"state": "zombie"}'),
    ("purge a memory that is not there", "DELETE", "/v1/memories/999999?purge=true", b""),
    ("limit -1", "GET", "/v1/timeline?limit=-1", b""), ("limit abc", "GET", "/v1/timeline?limit=abc", b""),
    ("offset -1", "GET", "/v1/timeline?offset=-1", b""), ("since garbage", "GET", "/v1/timeline?since=garbage", b""),
    ("write with a scope", "POST", "/v1/memories?scope=team", b'{"content": "x"}'),
    ("unshared scope", "GET", "/v1/timeline?scope=team", b""),
    ("consolidate with an unknown rule", "POST", "/v1/consolidate", b'{"rules": ["nope"]}'),
    ("dossier version 0", "GET", "/v1/dossiers/nope?version=0", b""),
    ("cas without expected", "POST", "/v1/facts/canary/cas", b'{"new": "x"}'),
    ("retract with a bad time", "DELETE", "/v1/facts/canary?at=soonish", b""),
]

MCP_RAW: list[tuple[str, bytes]] = [
    ("not JSON", b"this is not json"), ("a JSON number", b"42"), ("a JSON array", b"[]"), ("empty object", b"{}"),
    ("no jsonrpc", b'{"id": 90, "method": "tools/list"}'), ("unknown method", b'{"jsonrpc":"2.0","id":91,"method":"nope"}'),
    ("unknown tool", b'{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{"name":"nope","arguments":{}}}'),
    ("params a string", b'{"jsonrpc":"2.0","id":93,"method":"tools/call","params":"x"}'),
    ("arguments a list", b'{"jsonrpc":"2.0","id":94,"method":"tools/call","params":{"name":"status","arguments":[]}}'),
    ("lone surrogate", b'{"jsonrpc":"2.0","id":95,"method":"tools/call","params":{"name":"observe","arguments":'
                       b'{"content":"bad \\ud800"}}}'),
    ("raw invalid byte", b'{"jsonrpc":"2.0","id":96,"method":"tools/call","params":{"name":"observe","arguments":'
                         b'{"content":"raw \xff"}}}'),
    ("100k deep", b'{"jsonrpc":"2.0","id":97,"params":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ("17 MiB line", b'{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"observe","arguments":'
                    b'{"content":"' + b"x" * (17 << 20) + b'"}}}'),
    ("id an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}'),
    ("unknown resource", b'{"jsonrpc":"2.0","id":99,"method":"resources/read","params":{"uri":"strata://nope"}}'),
    ("dossier resource with a path", b'{"jsonrpc":"2.0","id":100,"method":"resources/read","params":'
                                     b'{"uri":"strata://dossier/..%2F..%2Fetc"}}'),
    ("NaN argument", b'{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"observe","arguments":'
                     b'{"content":"x","importance":NaN}}}'),
    ("huge integer id", b'{"jsonrpc":"2.0","id":1' + b"0" * 400 + b',"method":"tools/list"}'),
    ("BOM first", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":102,"method":"tools/list"}'),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}'),
]


def corpus_size() -> int:
    faces = len(CASES) * 2 + sum(cli_call(op, a) is not None for _, op, a, _ in CASES) \
        + sum(mcp_args(op, a) is not None for _, op, a, _ in CASES)
    return (faces + len(CLI_FUZZ) + len(import_files()) + 3 * len(CAPSULES) + len(CONFIGS) + len(HTTP_RAW)
            + len(HTTP_BODIES) + len(MCP_RAW))


# -- running it ----------------------------------------------------------------------------------

def fingerprint(db_path: Path) -> dict[str, str]:
    """A hash per layer of what the home holds (reads and their logs left out: recalls are
    answered, and answering is not a change)."""
    queries = {
        "memories": "SELECT id, agent, kind, content, event_at, occurrences, importance, factual, irrelevant, state, "
                    "tier, source, session, context FROM episodes ORDER BY id",
        "facts": "SELECT f.agent, f.key, v.value, v.valid_from, v.valid_to FROM fact_values v JOIN facts f "
                 "ON f.id = v.fact_id ORDER BY v.id",
        "spiderweb": "SELECT agent, a, b, level FROM web_edges ORDER BY agent, a, b",
        "dossiers": "SELECT t.agent, t.topic, t.enabled, v.version, v.text FROM dossier_topics t LEFT JOIN "
                    "dossier_versions v ON v.agent = t.agent AND v.topic = t.topic ORDER BY t.agent, t.topic, v.version",
        "imports": "SELECT agent, input_sha256, rows_stored FROM imports ORDER BY agent, input_sha256",
    }
    conn = driver.sqlite_module().connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        out = {}
        for layer, sql in queries.items():
            digest = hashlib.sha256()
            for row in conn.execute(sql):
                digest.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
            out[layer] = digest.hexdigest()
        return out
    finally:
        conn.close()


class Tally:
    def __init__(self):
        self.faces: dict[str, dict] = {}
        self.problems: list[str] = []

    def add(self, face: str, name: str, *, answered: bool, traceback: bool, expected: bool = True) -> None:
        f = self.faces.setdefault(face, {"inputs": 0, "tracebacks": 0, "unanswered": 0, "unexpected": 0})
        f["inputs"] += 1
        f["tracebacks"] += traceback
        f["unanswered"] += not answered
        f["unexpected"] += answered and not traceback and not expected
        for bad, what in ((not answered, "unanswered"), (traceback, "traceback"),
                          (answered and not traceback and not expected, "unexpected answer")):
            if bad:
                self.problems.append(f"{face}: {name}: {what}")


def _env(home: Path) -> dict:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}, "STRATA_HOME": str(home)}


def _cli(home: Path, argv: list[str], stdin: bytes | None = None) -> tuple[int | None, str, str]:
    try:
        proc = subprocess.run([sys.executable, "-m", "daemon", *argv], input=stdin, capture_output=True,
                              env=_env(home), timeout=ANSWER_SECONDS)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


EXIT = {"invalid_input": 4, "not_found": 3, "conflict": 5, "cas_mismatch": 9, "ok": 0}


def _python_face(home: Path, tally: Tally, progress) -> None:
    async def go():
        async with await Memory.open(home, actor="adversary") as mem:
            for name, op, args, expected in CASES:
                try:
                    await python_call(mem, op, args)
                    kind = "ok"
                except StrataError as e:
                    kind = e.kind
                except Exception as e:  # noqa: BLE001 - what this face must never raise
                    tally.add("python", name, answered=True, traceback=True)
                    tally.problems.append(f"python: {name}: {type(e).__name__}: {e}"[:300])
                    continue
                tally.add("python", name, answered=True, traceback=False, expected=kind == expected)
                progress(1)
    asyncio.run(go())


def _cli_face(home: Path, tally: Tally, progress) -> None:
    for name, op, args, expected in CASES:
        call = cli_call(op, args)
        if call is None:
            continue
        code, _, err = _cli(home, ["--json", *call[0]], call[1])
        usage = code == 2 and expected == "invalid_input"
        tally.add("cli", name, answered=code is not None, traceback="Traceback" in err,
                  expected=usage or code == EXIT[expected])
        progress(1)
    for argv in CLI_FUZZ:
        code, _, err = _cli(home, argv)
        tally.add("cli", " ".join(argv)[:60], answered=code is not None, traceback="Traceback" in err,
                  expected=code not in (0, 1))
        progress(1)


def _import_face(home: Path, work: Path, tally: Tally, progress) -> None:
    for name, data in import_files():
        path = work / "import.jsonl"
        path.write_bytes(data)
        code, _, err = _cli(home, ["import", str(path)])
        tally.add("import", name, answered=code is not None, traceback="Traceback" in err, expected=code == 4)
        progress(1)
    path.unlink(missing_ok=True)


def _put_back(path: Path, saved: bytes) -> None:
    if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.write_bytes(saved)
    os.chmod(path, 0o600)


def _capsule_face(home: Path, tally: Tally, progress) -> None:
    path = home / "capsule" / "CAPSULE.md"
    saved = path.read_bytes()
    for name, damage in CAPSULES:
        damage(path)
        for argv in (["capsule", "check"], ["capsule", "render"], ["status"]):
            code, _, err = _cli(home, argv)
            tally.add("capsule", f"{name}: {' '.join(argv)}", answered=code is not None,
                      traceback="Traceback" in err, expected=code in (0, 4))
            progress(1)
        _put_back(path, saved)


def _config_face(home: Path, tally: Tally, progress) -> None:
    path = home / "strata.toml"
    saved = path.read_bytes()
    for name, damage in CONFIGS:
        if callable(damage):
            damage(path)
        else:
            path.write_bytes(damage)
        code, _, err = _cli(home, ["status"])
        tally.add("strata.toml", name, answered=code is not None, traceback="Traceback" in err,
                  expected=code in (0, 7))
        progress(1)
        _put_back(path, saved)


def _http_exchange(sock_path: Path, raw: bytes) -> bytes | None:
    """What the server sent back (b"" when it closed without a word), or None when it neither
    answered nor closed within ANSWER_SECONDS."""
    data = b""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(ANSWER_SECONDS)
        s.connect(str(sock_path))
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it answered early (a body too large) and closed: the answer may be waiting
        try:
            while chunk := s.recv(65536):
                data += chunk
                s.settimeout(1.0)  # an answer has begun; a kept-alive connection stays open after it
        except ConnectionResetError:
            pass
        except socket.timeout:
            return data or None
    return data


def _http_face(home: Path, tally: Tally, progress) -> None:
    sock_path = home / "state" / "strata.sock"
    server = subprocess.Popen([sys.executable, "-m", "daemon", "serve"], env=_env(home), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not sock_path.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"strata serve did not start: {server.communicate(timeout=10)[1][-500:]!r}")
            time.sleep(0.05)
        time.sleep(0.3)
        requests = []
        for name, op, args, expected in CASES:
            method, path, body = http_call(op, args)
            requests.append((name, method, path, body, expected))
        for name, method, path, body in HTTP_BODIES:
            requests.append((name, method, path, body or None, "refused"))
        for name, method, path, body, expected in requests:
            head = f"{method} {path} HTTP/1.1\r\nHost: strata\r\nConnection: close\r\n"
            if body is not None:
                head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            answer = _http_exchange(sock_path, head.encode("utf-8", "surrogatepass") + b"\r\n" + (body or b""))
            status = answer.split(b" ", 2)[1] if answer and answer.startswith(b"HTTP/1.1 ") else b""
            ok_status = status.startswith(b"2")
            good = ok_status if expected == "ok" else (not ok_status and status != b"500")
            tally.add("http", name, answered=bool(status), traceback=status == b"500", expected=good)
            progress(1)
        for name, raw in HTTP_RAW:
            answer = _http_exchange(sock_path, raw)
            # A malformed request may be answered with a status or with the connection closed.
            tally.add("http", f"raw: {name}", answered=answer is not None, traceback=b" 500 " in (answer or b"")[:20])
            progress(1)
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=60)
    logged = err.decode("utf-8", "replace").count("Traceback")
    if logged:
        tally.faces["http"]["tracebacks"] += logged
        tally.problems.append(f"http: the server logged {logged} traceback(s)")


def _mcp_face(home: Path, tally: Tally, progress) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "daemon", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(home), start_new_session=True)
    err_lines: list[bytes] = []

    def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()

    def answer(ident=None) -> dict | None:
        deadline = time.monotonic() + ANSWER_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                return None
            line = proc.stdout.readline()
            if not line:
                return None
            message = json.loads(line)
            if ident is None or message.get("id") == ident:
                return message
        return None

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
             .encode())
        if answer(0) is None:
            raise RuntimeError("strata mcp did not answer initialize")
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        ident = 1000
        for name, op, args, expected in CASES:
            arguments = mcp_args(op, args)
            if arguments is None:
                continue
            ident += 1
            send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                             "params": {"name": op, "arguments": arguments}}).encode())
            got = answer(ident)
            text = json.dumps(got or {})
            failed = got is not None and ("error" in got or got.get("result", {}).get("isError"))
            tally.add("mcp", name, answered=got is not None, traceback="Traceback" in text,
                      expected=(not failed) if expected == "ok" else bool(failed))
            progress(1)
        for name, line in MCP_RAW:
            send(line)
            got = answer()
            tally.add("mcp", f"raw: {name}", answered=got is not None, traceback="Traceback" in json.dumps(got or {}))
            progress(1)
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        err_lines = err.splitlines()
    logged = sum(b"Traceback" in line for line in err_lines)
    if logged:
        tally.faces["mcp"]["tracebacks"] += logged
        tally.problems.append(f"mcp: the server logged {logged} traceback(s)")


def adversarial(home: Path, work: Path, progress: Callable[[int], None] | None = None) -> dict:
    """Run the corpus on `home` (made and filled by the caller's init); `work` holds files."""
    progress = progress or (lambda _n: None)

    async def fill():
        async with await Memory.open(home) as mem:
            await mem.observe("Disk on db-01 is 91% full", kind="event")
            await mem.facts.set("canary", "alive")
    asyncio.run(fill())
    (home / "strata.toml").write_text("[http]\nrequest_timeout_seconds = 2.0\n", encoding="utf-8")
    db = home / "state" / "memory.db"
    before = fingerprint(db)
    tally = Tally()
    started = time.perf_counter()
    for face in (_python_face, _cli_face, _mcp_face, _http_face, _capsule_face, _config_face):
        face(home, tally, progress)
    _import_face(home, work, tally, progress)
    after = fingerprint(db)
    changed = [layer for layer in before if before[layer] != after[layer]]
    total = {k: sum(f[k] for f in tally.faces.values()) for k in ("inputs", "tracebacks", "unanswered", "unexpected")}
    return {**total, "data_changed": changed, "by_face": tally.faces, "problems": tally.problems[:40],
            "seconds": round(time.perf_counter() - started, 1)}
