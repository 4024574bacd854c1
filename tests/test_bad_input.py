"""The bad-input corpus (strata_bench/bad_input.py), through the Python API, the CLI
and the MCP server: each case gets a clear error of the documented kind (or, for odd but
harmless input, a normal answer), no face crashes, and nothing stored before is lost or changed."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcp_helpers import mcp_client
from strata_bench.bad_input import CASES, EXIT, cli_call, mcp_args, python_call
from strata_daemon import Memory
from strata_daemon.errors import StrataError

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

IDS = [c[0] for c in CASES]


@pytest.fixture(scope="module")
def corpus_home(tmp_path_factory):
    from strata_daemon.config.home import init_home

    home = init_home(tmp_path_factory.mktemp("bad-input") / "home")[0].root

    async def fill():
        async with await Memory.open(home) as mem:
            await mem.observe("Disk on db-01 is 91% full", kind="event")
            await mem.set_fact("canary", "alive")
    asyncio.run(fill())
    return home


def state(home) -> dict:
    async def read():
        async with await Memory.open(home) as mem:
            return {"memories": [(e["id"], e["content"]) for e in await mem.timeline(states=())],
                    "canary": (await mem.fact_history("canary"))["history"]}
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
                call = mcp_args(op, args)
                if call is None:
                    continue
                r = await t.client.call_tool(*call)
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


NAN = float("nan")
# Each was a ValueError, OverflowError or TypeError from int(), or (below) stored.
API_REFUSED = {
    "recall k NaN": lambda m: m.recall("disk", k=NAN),
    "context budget NaN": lambda m: m.context("disk", budget=NAN),
    "context k NaN": lambda m: m.context("disk", k=NAN),
    "entities limit infinity": lambda m: m.entities(limit=float("inf")),
    "neighbours limit a word": lambda m: m.neighbours("episode:1", limit="many"),
    "spread limit NaN": lambda m: m.spread(["episode:1"], limit=NAN),
    "related limit NaN": lambda m: m.related("episode:1", limit=NAN),
    "conflicts limit NaN": lambda m: m.fact_conflicts(limit=NAN),
    "conflict id NaN": lambda m: m.acknowledge_conflict(NAN),
    "override id NaN": lambda m: m.clear_capsule_override(NAN),
    "ids of words": lambda m: m.get_many(["a"]),
    # Stored as a memory, or with one.
    "only zero-width spaces": lambda m: m.observe("\u200b\u200b"),
    "only direction marks": lambda m: m.observe("\u202e\u200f \u2060"),
    "a 100 KB context": lambda m: m.observe("x", context={"k": "v" * 100_000}),
    # These archived the memory, the reason kept in the audit trail; an unknown state listed nothing.
    "a forget's reason of a lone surrogate": lambda m: m.forget(1, reason="\udcff"),
    "a forget's reason of 100 KB": lambda m: m.forget(1, reason="r" * 100_000),
    "a timeline of an unknown state": lambda m: m.timeline(states=("zombie",)),
}


@pytest.mark.parametrize("call", API_REFUSED.values(), ids=API_REFUSED.keys())
def test_the_python_api_says_a_bad_number_invisible_text_or_a_huge_context_is_invalid(corpus_home, before, call):
    async def go():
        async with await Memory.open(corpus_home) as mem:
            with pytest.raises(StrataError) as caught:
                await call(mem)
            assert caught.value.kind == "invalid_input", caught.value.as_dict()
    asyncio.run(go())
    assert state(corpus_home) == before
