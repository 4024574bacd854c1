"""`strata mcp` driven by the SDK's own client over stdio: every tool, the resources, and errors
that come back as tool errors while the server keeps serving."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters

from conftest import REPO
from mcp_helpers import mcp_client
from strata_daemon import Memory

pytestmark = pytest.mark.slow

READ_ONLY = {"recall", "timeline", "memory_get", "fact_get", "capsule_get", "related", "status"}
WRITING = {"observe", "feedback", "fact_set", "dossier", "forget"}
TOOL_TOKENS = 1500  # what the tool list may cost an agent's context, on every turn


def test_the_tools_are_described_for_an_llm_and_cost_little_context(home, small_llm):
    from llama_cpp import Llama

    async def go():
        async with mcp_client(home) as t:
            return (await t.client.list_tools()).tools
    tools = asyncio.run(go())
    listed = {tool.name: tool for tool in tools}
    assert set(listed) == READ_ONLY | WRITING
    for name, tool in listed.items():
        assert tool.description and bool(tool.annotations.read_only_hint) is (name in READ_ONLY), name  # unset: false
        assert tool.annotations.destructive_hint is (None if name in READ_ONLY else name == "forget"), name
        for param, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{name}.{param} has no description"
            assert "title" not in schema and "anyOf" not in schema, f"{name}.{param}"  # tokens that say nothing
    assert "scope" in listed["recall"].input_schema["properties"]
    assert not any("agent" in tool.input_schema.get("properties", {}) for tool in listed.values())
    # The list as tools/list sends it, counted by a real LLM tokenizer (SmolLM2's BPE).
    wire = json.dumps([tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools],
                      separators=(",", ":"))
    tokens = len(Llama(str(small_llm), vocab_only=True, verbose=False).tokenize(wire.encode(), add_bos=False))
    assert tokens <= TOOL_TOKENS, f"the tool list costs {tokens} tokens"


def test_every_tool_over_stdio(home):
    async def prepare():
        async with await Memory.open(home) as mem:
            await mem.add_topic("bridge", query="bridge gw-02")
            await mem.render_capsule()
    asyncio.run(prepare())

    async def go():
        async with mcp_client(home) as t:
            first_text = "Bridge is DOWN on gw-02 after the firmware update"
            first = await t.call("observe", content=first_text,
                                 kind="event", importance=0.8, context={"environment": "prod"})
            second = await t.call("observe", content="Rolled gw-02 back to firmware 4.1; bridge came back up",
                                  kind="decision", source="person:ines", at="1h ago")
            assert first["status"] == second["status"] == "created"

            found = await t.call("recall", query="bridge gw-02", k=5, mode="fast", explain=True)
            assert {h["id"] for h in found["hits"]} == {first["id"], second["id"]}
            assert "signals" in found["hits"][0]["explain"] and found["recall_id"] and found["mode_used"] == "fast"
            plain = await t.call("recall", query="firmware rollback")
            # for an agent: what each memory says, when, what kind, its score and why; nothing of the ranking's workings
            top = plain["hits"][0]
            assert set(plain) == {"recall_id", "hits"} and set(top) == {"id", "text", "at", "kind", "score", "why"}
            assert top["text"] == first_text and top["at"].endswith("Z") and top["why"].startswith("found by words")
            lately = await t.call("timeline", since="2h ago", limit=1)
            assert lately["memories"] == [{"id": first["id"], "text": first_text, "at": lately["memories"][0]["at"],
                                           "kind": "event"}]
            assert [m["id"] for m in (await t.call("timeline"))["memories"]] == [first["id"], second["id"]]
            given = await t.call("feedback", recall_id=found["recall_id"], outcome="success", used=[second["id"]])
            assert given["episodes"] == [second["id"]]  # a success goes to what was used
            assert given["used"] == [second["id"]] and given["arena_episode"] is not None

            shown = await t.call("memory_get", id=second["id"])
            assert shown["source"] == "person:ines" and shown["kind"] == "decision" and "scores" in shown

            assert (await t.call("fact_set", key="bridge", value="DOWN"))["status"] == "created"
            assert (await t.call("fact_set", key="bridge", value="UP", expected="DOWN"))["value"] == "UP"
            assert (await t.call("fact_get", key="bridge"))["value"] == "UP"
            assert [f["key"] for f in (await t.call("fact_get", prefix="bridge"))["facts"]] == ["bridge"]
            assert [h["value"] for h in (await t.call("fact_get", key="bridge", history=True))["history"]] == \
                ["DOWN", "UP"]
            assert (await t.call("fact_set", key="bridge", retract=True))["status"] == "retracted"
            assert (await t.call("fact_set", key="owner", value="ines", expected=""))["value"] == "ines"  # '': none yet

            dossier = await t.call("dossier", topic="bridge", refresh=True)
            assert "gw-02" in dossier["text"] and dossier["version"] == 1
            assert "bridge" in [x["topic"] for x in (await t.call("dossier"))["topics"]]

            capsule = await t.call("capsule_get")
            assert capsule["ok"] and capsule["text"].startswith("#")

            # used together: the spiderweb links them
            async with await Memory.open(home) as mem:
                await mem.activate([f"episode:{first['id']}", f"episode:{second['id']}"])
                await mem.commit_working_set()
            related = await t.call("related", item=str(first["id"]))
            assert [r["node"] for r in related["reached"]] == [f"episode:{second['id']}"]
            spread = await t.call("related", item=f"episode:{first['id']}", depth=2)
            assert {f"episode:{second['id']}", "entity:host:gw-02"} <= {r["node"] for r in spread["reached"]}

            status = await t.call("status")
            assert status["episodes"] == 2 and status["agent"] == "default"

            resource = await t.client.read_resource("strata://capsule")
            assert resource.contents[0].text == capsule["text"]
            resource = await t.client.read_resource("strata://dossier/bridge")
            assert resource.contents[0].text == dossier["text"]
            # The context block, as a resource template and as a prompt, without a tool call.
            templates = {r.name: r.uri_template for r in (await t.client.list_resource_templates()).resource_templates}
            assert templates["context"] == "strata://context/{text}"
            resource = await t.client.read_resource("strata://context/is%20the%20bridge%20on%20gw-02%20up%3F")
            assert "## Memories" in resource.contents[0].text and "#" in resource.contents[0].text
            prompts = {p.name: p for p in (await t.client.list_prompts()).prompts}
            assert {a.name for a in prompts["context"].arguments} == {"text", "budget"}
            prompt = await t.client.get_prompt("context", {"text": "is the bridge on gw-02 up?", "budget": "64"})
            said = prompt.messages[0].content.text
            assert said.startswith("## ") and "(recall " in said
    asyncio.run(go())

    async def check():
        async with await Memory.open(home) as mem:
            assert (await mem.status())["episodes"] == 2
            assert (await mem.fact_history("bridge"))["history"][0]["source"] == "agent:default"
    asyncio.run(check())


def test_errors_come_back_as_tool_errors_and_the_server_keeps_serving(home):
    async def go():
        async with mcp_client(home) as t:
            kept = await t.call("observe", content="Disk on db-01 is 91% full")
            assert (await t.error("memory_get", id=999)).endswith(
                "not_found: no memory 999 in namespace 'default' "
                "(hint: `strata timeline` lists what this namespace holds)")
            assert "invalid_input: the query is empty" in await t.error("recall", query="   ")
            assert "invalid_input: k must be at least 1, not 0" in await t.error("recall", query="disk", k=0)
            assert "invalid_input: outcome must be one of 'success' or 'failure', not 'maybe'" in await t.error(
                "feedback", recall_id=1, outcome="maybe")
            assert "invalid_input" in await t.error("observe", content="x" * 70_000)
            assert "invalid_input" in await t.error("observe", content="nul \x00 inside")
            assert "invalid_input: unknown kind" in await t.error("recall", query="disk", kinds=["gossip"])
            rid = (await t.call("recall", query="disk db-01", mode="fast"))["recall_id"]
            await t.call("feedback", recall_id=rid, outcome="failure")
            assert "conflict" in await t.error("feedback", recall_id=rid, outcome="success")
            await t.call("fact_set", key="leader", value="node-1")
            text = await t.error("fact_set", key="leader", expected="node-9", value="node-2")
            assert text.startswith("Error executing tool fact_set: cas_mismatch: 'leader' holds 'node-1'")
            assert "not_found" in await t.error("dossier", topic="nothing")
            assert "invalid_input" in await t.error("fact_set", key="leader")  # neither value nor retract
            assert "not_found" in await t.error("related", item="episode:999")
            assert "invalid_input" in await t.error("related", item="no-such-kind:1", depth=2)
            assert "not_permitted" in await t.error("recall", query="disk", scope="other")
            assert "Unknown tool: forget_everything (hint: tools/list names them" in await t.error("forget_everything")
            # An argument a tool does not take is refused, not dropped: a write with scope stays unwritten.
            assert "invalid_input: recall takes no argument 'kk'" in await t.error("recall", query="disk", kk=3)
            said = await t.error("observe", content="Runbook for the team", scope="team")
            assert "observe takes no argument 'scope'; a write goes to the server's own namespace" in said
            assert (await t.call("status"))["episodes"] == 1
            with pytest.raises(MCPError, match="not_found"):
                await t.client.read_resource("strata://dossier/nothing")
            with pytest.raises(MCPError, match="no resource 'strata://nosuch' .hint: resources/list"):
                await t.client.read_resource("strata://nosuch")
            # SQL and FTS syntax are text, not code
            hits = (await t.call("recall", query="disk\" OR 1=1; DROP TABLE episodes; --", mode="fast"))["hits"]
            assert [h["id"] for h in hits] == [kept["id"]]
            assert (await t.call("status"))["episodes"] == 1
    asyncio.run(go())


def test_invalid_input_is_invalid_params_in_strata_s_words_on_every_mcp_surface(home):
    """A wrong argument is the caller's to fix: never an internal error, pydantic's text or a
    prompt that fails with no reason."""
    async def go():
        async with mcp_client(home) as t:
            await t.call("observe", content="Bridge: DOWN on gw-02")
            assert await t.error("recall", query="x", k=0) == ("Error executing tool recall: invalid_input: k must be "
                                                               "at least 1, not 0 (hint: tools/list gives each tool's "
                                                               "parameters)")
            assert (await t.error("recall")).startswith("Error executing tool recall: invalid_input: query must be given")
            said = await t.error("recall", query="x", mode="psychic")
            assert "pydantic" not in said and "mode must be one of 'fast', 'balanced' or 'deep'" in said
            for uri, kind in (("strata://dossier/nothing", "not_found"), ("strata://dossier/", "invalid_input"),
                              ("strata://dossier/%ff%fe", "invalid_input"), ("strata://dossier/a%2Fb", "invalid_input"),
                              ("strata://context/", "invalid_input")):
                with pytest.raises(MCPError) as caught:
                    await t.client.read_resource(uri)
                assert caught.value.error.code == -32602 and caught.value.error.message.startswith(kind), uri
            for args, said in (({"text": ""}, "the query is empty"), ({"text": "x", "budget": "0"}, "between 32"),
                               ({"text": "x", "budget": "100001"}, "between 32"),
                               ({"text": "x", "budget": "abc"}, "a whole number"),
                               ({"text": "x", "tone": "terse"}, "takes no argument 'tone'")):  # was code 0
                with pytest.raises(MCPError) as caught:
                    await t.client.get_prompt("context", args)
                assert caught.value.error.code == -32602 and said in caught.value.error.message, args
            assert (await t.call("status"))["episodes"] == 1  # still serving
    asyncio.run(go())


def test_a_bad_configuration_stops_the_server_with_the_documented_exit_code(tmp_path):
    (tmp_path / "strata.toml").write_text("[recall]\nk = 'many'\n")
    proc = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(tmp_path), "mcp"], input="",
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 7, proc.stderr
    assert proc.stderr.startswith("strata:") and "recall.k" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""  # stdout belongs to the protocol


@pytest.mark.sqlite_only
def test_the_readme_client_configuration_starts_a_working_server(home):
    """The README's mcpServers entry, pasted with its paths filled in, is what a client would launch,
    and what the agent stores is the home's own memory: what `strata` commands on that home see."""
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    heading = next(i for i, line in enumerate(readme) if line.startswith("#") and "MCP" in line)
    start = readme.index("```json", heading) + 1
    block = "\n".join(readme[start:readme.index("```", start)])
    entry = json.loads(block)["mcpServers"]["strata"]
    command = entry["command"].replace("/path/to/strata/.venv/bin/strata", str(Path(sys.executable).parent / "strata"))
    args = [str(home) if a == "/path/to/home" else a for a in entry["args"]]

    async def go():
        async with Client(StdioServerParameters(command=command, args=args), cache=None) as client:
            observed = await client.call_tool("observe", {"content": "configured from the README"})
            assert not observed.is_error
    asyncio.run(go())
    async def read():
        async with await Memory.open(home) as mem:
            return [e["content"] for e in await mem.timeline()]

    assert asyncio.run(read()) == ["configured from the README"]


BAD_LINES = [  # (line, the id answered, the JSON-RPC error code)
    (b"this is not json", None, -32700),
    (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"observe","arguments":'
     b'{"content":"bad \\ud800 text"}}}', 2, -32602),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"observe","arguments":{"content":'
     + b"[" * 100_000 + b"]" * 100_000 + b"}}}", None, -32700),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"observe","arguments":'
     b'{"content":"raw \xff byte"}}}', 4, -32700),
    (b'{"id": 5, "hello": "not json-rpc"}', 5, -32600),
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"observe","arguments":{"content":"'
     + b"x" * (17 * 2**20) + b'"}}}', 6, -32700),
    # More digits than Python converts: the SDK's parser raised, and the server died.
    (b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"observe","arguments":{"content":"x",'
     b'"importance":1' + b"0" * 5000 + b'}}}', 8, -32700),
    (b'{"jsonrpc":"2.0","id":1' + b"0" * 5000 + b',"method":"tools/list"}', None, -32700),
]



@pytest.mark.parametrize("line, said", [
    (b'{"id": 5, "hello": "not json-rpc"}', 'it needs "jsonrpc": "2.0"'),
    (b"[1, 2]", "a message is one JSON object"),
    (b'{"jsonrpc": "2.0", "id": 2}', 'it has no "method"'),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": 3}', '"params": input should be an object')])
def test_a_line_that_is_no_json_rpc_message_is_told_what_it_lacks_in_words(line, said):
    from strata_daemon.faces.mcp.wire import problem

    _, code, message = problem(line)
    assert code == -32600 and message.startswith("not a JSON-RPC 2.0 message: ")
    assert said in message and "validation error" not in message and "union[" not in message, message

def test_every_line_is_answered_and_nothing_malformed_is_stored(home):
    """Also a request before `initialize`, told what to send first."""
    import select

    proc = subprocess.Popen([sys.executable, "-m", "strata_daemon", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, "STRATA_HOME": str(home)}, cwd=REPO)

    def ask(line: bytes) -> dict:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, f"no answer to {line[:60]!r}"
        return json.loads(proc.stdout.readline())

    try:
        early = ask(b'{"jsonrpc":"2.0","id":0,"method":"tools/list"}')
        assert early["id"] == 0 and early["error"]["code"] == -32600
        assert "send `initialize`" in early["error"]["message"]
        ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for line, ident, code in BAD_LINES:
            answer = ask(line)
            assert answer["id"] == ident and answer["error"]["code"] == code, answer
        status = ask(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"status","arguments":{}}}')
        assert status["id"] == 7 and status["result"]["structuredContent"]["episodes"] == 0  # nothing was stored
    finally:
        proc.kill()
        proc.wait(timeout=30)
