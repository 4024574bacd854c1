"""The bad-input corpus, through the Python API, the CLI and the MCP server: each case gets a
clear error of the documented kind (or, for odd but harmless input, a normal answer), no face
crashes, and nothing stored before is lost or changed."""

from __future__ import annotations

import asyncio
import json

import pytest

from daemon import Memory
from daemon.errors import StrataError
from mcp_helpers import mcp_client

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

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
IDS = [c[0] for c in CASES]


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


def mcp_args(a: dict) -> dict | None:
    if any(isinstance(v, bytes) or (isinstance(v, float) and v != v) or _lone_surrogate(v) for v in a.values()):
        return None  # the client's JSON carries no raw bytes, NaN or lone surrogate
    return a


@pytest.fixture(scope="module")
def corpus_home(tmp_path_factory):
    from daemon.home import init_home

    home = init_home(tmp_path_factory.mktemp("bad-input") / "home")[0].root

    async def fill():
        async with await Memory.open(home) as mem:
            await mem.observe("Disk on db-01 is 91% full", kind="event")
            await mem.facts.set("canary", "alive")
    asyncio.run(fill())
    return home


def state(home) -> dict:
    async def read():
        async with await Memory.open(home) as mem:
            return {"memories": [(e["id"], e["content"]) for e in await mem.timeline(states=())],
                    "canary": (await mem.facts.history("canary"))["history"]}
    return asyncio.run(read())


@pytest.fixture(scope="module")
def before(corpus_home):
    return state(corpus_home)


@pytest.mark.parametrize("name, op, args, expected", CASES, ids=IDS)
def test_python_api(corpus_home, before, name, op, args, expected):
    async def go():
        async with await Memory.open(corpus_home) as mem:
            try:
                await python_call(mem, op, args)
            except StrataError as e:
                assert e.kind == expected and e.message, (name, e.as_dict())
            else:
                assert expected == "ok", name
    asyncio.run(go())
    assert state(corpus_home) == before


@pytest.mark.parametrize("name, op, args, expected", CASES, ids=IDS)
def test_cli(corpus_home, before, name, op, args, expected):
    from conftest import CLI

    call = cli_call(op, args)
    if call is None:
        pytest.skip("a command line cannot carry this input")
    argv, stdin = call
    proc = CLI(corpus_home)("--json", *argv, input=stdin)
    # argparse refusing a malformed option is the right answer only for invalid input.
    usage = proc.returncode == 2 and "usage:" in proc.err and expected == "invalid_input"
    assert usage or proc.returncode == EXIT[expected], (name, proc.returncode, proc.err[-500:])
    assert "Traceback" not in proc.err
    if proc.returncode not in (0, 2):
        assert proc.err.startswith("strata:") and json.loads(proc.out)["error"] == expected
    assert state(corpus_home) == before


def test_mcp(corpus_home, before):
    async def go():
        async with mcp_client(corpus_home) as t:
            for name, op, args, expected in CASES:
                arguments = mcp_args(args)
                if arguments is None or op == "timeline":  # no timeline tool
                    continue
                r = await t.client.call_tool(op, arguments)
                text = r.content[0].text if r.content else ""
                if expected == "ok":
                    assert not r.is_error, (name, text)
                else:
                    assert r.is_error, name
                    # The tool's schema refusing a value is the right answer only for invalid input.
                    schema = expected == "invalid_input" and "validation error" in text
                    assert f"{expected}:" in text or schema, (name, text)
                    assert "Error executing tool" in text and "Traceback" not in text
            assert not (await t.client.call_tool("status", {})).is_error  # still serving
    asyncio.run(go())
    assert state(corpus_home) == before
