"""`strata mcp`: the Memory API as MCP tools and resources over stdio, for one agent namespace.

Every tool calls the same `Memory` methods as the CLI and returns the same JSON shapes. A
strata error becomes a tool error whose text says what went wrong and what to do; the
server keeps serving. The namespace is fixed when the server starts: no tool takes an agent,
and `scope` only reaches the namespaces strata.toml shares (agent.shared), read-only.
"""

from __future__ import annotations

from typing import Annotated, Any, Awaitable, Callable, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations
from pydantic import Field

from strata_daemon import __version__
from strata_daemon.app.memory import Memory
from strata_daemon.base import timeutil
from strata_daemon.base.timeutil import iso
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.faces.mcp.errors import INVALID_PARAMS, error_text, guarded, protocol_error
from strata_daemon.faces.mcp.lean import LeanServer

INSTRUCTIONS = """\
strata is your long-term memory on this machine; nothing leaves it. Read the capsule
(capsule_get) first: what you know about yourself. Store what happens with observe; look
things up with recall, then tell feedback whether it helped (that teaches the ranking). Facts
hold one current value per key, with history. Dossiers are kept summaries per topic. related
follows what was used together. When a person asks you to forget, call forget.
Kinds of memory: observation (default), event, decision, lesson, task, note, message, fact.
Recall modes: fast (words only: identifiers, error codes), balanced (default: words and
meaning), deep (also what was used together, and a model that reads the question with each
of the best hits: slower, better for questions whose answer shares no word with them).
`scope` reads another namespace this home shares (agent.shared), read-only; leave it out
for your own memory. Times (`at`, `since`, `until`) are ISO 8601, unix seconds or relative
('2h ago', '3d ago'). Every tool returns JSON; an error says what to do."""

READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(destructive_hint=False)
FORGET = ToolAnnotations(destructive_hint=True)

Scope = Annotated[str | None, Field(description="Shared namespace to read.")]
Mode = Annotated[Literal["fast", "balanced", "deep"] | None, Field(description="How to search.")]
Key = Annotated[str, Field(description="Fact key, e.g. 'bridge'.")]
Limit = Annotated[int, Field(ge=1, le=1000, description="Most results.")]
Context = Annotated[dict[str, str] | None, Field(description="Situation keys, as observed.")]


def lean_memory(m: dict) -> dict:
    """A memory as an agent reads it: what it says, when (ISO), what kind."""
    return {"id": m["id"], "text": m["content"], "at": iso(m["event_at"]), "kind": m["kind"],
            **({"session": m["session"]} if m.get("session") else {})}


def for_agents(r: dict) -> dict:
    """A recall as an agent needs it: per hit id, text, ISO time, kind, score and why (with the
    dates its relative times meant); the ranking's inner workings stay behind explain."""
    hits = [{**lean_memory(h), "score": h["score"], "why": h["why"], **({"times": h["times"]} if h.get("times") else {})}
            for h in r["hits"]]
    return {"recall_id": r["recall_id"], "hits": hits, **({"facts": r["facts"]} if r["facts"] else {}),
            **({"warnings": r["warnings"]} if r["warnings"] else {})}


def _time(value: str | None) -> float | None:
    try:
        return None if value is None else timeutil.parse_time(value)
    except StrataError as e:
        raise ToolError(error_text(e)) from None


Reader = Callable[[str | None], Awaitable[Memory]]  # `scope` -> the namespace a tool reads


def build(mem: Memory, *, allow_purge: bool = False) -> MCPServer:
    server = LeanServer("strata", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    async def reader(scope: str | None) -> Memory:
        return await guarded(mem.shared(scope)) if scope else mem

    # Registered in this order, which is the order of the tool list an agent reads.
    _memory_tools(server, mem, reader)
    _browse_and_forget_tools(server, mem, reader, allow_purge=allow_purge)
    _fact_tools(server, mem, reader)
    _document_tools(server, mem)
    _web_tools(server, mem)
    _resources(server, mem)
    _prompts(server, mem)
    return server


def _memory_tools(server: MCPServer, mem: Memory, reader: Reader) -> None:
    """observe, recall, feedback: the loop an agent runs (store, find, say whether it helped)."""

    @server.tool(annotations=WRITE)
    async def observe(
        content: Annotated[str, Field(description="What happened.")],
        kind: Annotated[str | None, Field(description="Kind of memory.")] = None,
        importance: Annotated[float | None, Field(ge=0, le=1, description="0-1, default 0.5.")] = None,
        context: Context = None,
        at: Annotated[str | None, Field(description="When it happened (default now).")] = None,
        source: Annotated[str | None, Field(description="Who said it.")] = None,
        session: Annotated[str | None, Field(description="Conversation or run id.")] = None,
    ) -> dict[str, Any]:
        """Store a memory; returns its id and facts captured from it."""
        return await guarded(mem.observe(content, kind=kind, importance=importance, context=context, at=at,
                                         source=source, session=session))

    @server.tool(annotations=READ)
    async def recall(
        query: Annotated[str, Field(description="What to look for.")],
        k: Annotated[int | None, Field(ge=1, le=1000, description="Most memories (default 10).")] = None,
        mode: Mode = None,
        explain: Annotated[bool, Field(description="Add every ranking signal.")] = False,
        context: Context = None,
        kinds: Annotated[list[str] | None, Field(description="Only these kinds.")] = None,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Memories for a query, best first, with why, and facts it names. Then call feedback."""
        target = await reader(scope)
        r = await guarded(target.recall(query, k=k, mode=mode, context=context, kinds=kinds or (), explain=explain))
        return r if explain else for_agents(r)

    @server.tool(annotations=WRITE)
    async def feedback(
        recall_id: Annotated[int, Field(description="From recall.")],
        outcome: Annotated[Literal["success", "failure"], Field(description="Did it help?")],
        used: Annotated[list[int] | None, Field(description="Memory ids you used.")] = None,
    ) -> dict[str, Any]:
        """Say whether a recall helped, naming what you used."""
        return await guarded(mem.feedback(recall_id, outcome, used=used))


def _browse_and_forget_tools(server: MCPServer, mem: Memory, reader: Reader, *, allow_purge: bool) -> None:
    """timeline, memory_get, forget: the memories in time order, one in full, and forgetting one."""

    @server.tool(annotations=READ)
    async def timeline(
        since: Annotated[str | None, Field(description="From this time.")] = None,
        until: Annotated[str | None, Field(description="Up to this time.")] = None,
        kinds: Annotated[list[str] | None, Field(description="Only these kinds.")] = None,
        limit: Limit = 20,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Memories in time order, newest first."""
        rows = await guarded((await reader(scope)).timeline(
            since=_time(since), until=_time(until), kinds=tuple(kinds or ()),
            limit=limit))
        return {"memories": [lean_memory(r) for r in rows]}

    @server.tool(annotations=READ)
    async def memory_get(id: Annotated[int, Field(description="Memory id.")], scope: Scope = None) -> dict[str, Any]:
        """One memory in full, with scores and history."""
        return await guarded((await reader(scope)).get(id))

    @server.tool(annotations=FORGET)
    async def forget(
        id: Annotated[int | None, Field(description="Memory id (or give matching).")] = None,
        matching: Annotated[str | None, Field(description="Every memory and fact holding this text.")] = None,
        purge: Annotated[bool, Field(description="Delete for good (if the server allows).")] = False,
        confirm: Annotated[bool, Field(description="With matching: do it (else only list).")] = False,
    ) -> dict[str, Any]:
        """Forget on request: archive (restorable) or purge."""
        if (id is None) == (matching is None):
            raise ToolError("invalid_input: give either id or matching")
        if purge and not allow_purge:
            raise ToolError("not_permitted: this server does not purge (a purge is final); forget without purge "
                            "archives the memory (hint: a person can start `strata mcp --allow-purge`, or run "
                            "`strata forget ID --purge`)")
        if matching is not None:
            return await guarded(mem.forget_matching(matching, purge=purge, apply=confirm))
        return await guarded(mem.forget(id, purge=purge))


def _fact_tools(server: MCPServer, mem: Memory, reader: Reader) -> None:
    """fact_get, fact_set: a fact's value now, then or over time, and setting one."""
    me = f"agent:{mem.agent}"  # facts the agent sets are its own assertions, not a person's

    @server.tool(annotations=READ)
    async def fact_get(
        key: Annotated[str | None, Field(description="Fact key (none: list).")] = None,
        at: Annotated[str | None, Field(description="Value at this past time.")] = None,
        history: Annotated[bool, Field(description="Every value it had.")] = False,
        prefix: Annotated[str | None, Field(description="List keys starting so.")] = None,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """A fact's value (now, then, or history), or all facts."""
        target = await reader(scope)
        if key is None:
            return {"facts": await guarded(target.list_facts(prefix=prefix))}
        return await guarded(target.fact_history(key) if history else target.get_fact(key, at=at))

    @server.tool(annotations=WRITE)
    async def fact_set(
        key: Key,
        value: Annotated[str | None, Field(description="New value (leave out with retract).")] = None,
        retract: Annotated[bool, Field(description="Clear the value instead.")] = False,
        expected: Annotated[str | None, Field(description="Only if it holds this ('': none).")] = None,
        at: Annotated[str | None, Field(description="Since when (default now).")] = None,
        source: Annotated[str | None, Field(description="Where it comes from (default you).")] = None,
    ) -> dict[str, Any]:
        """Set or retract a fact; the old value stays in history."""
        if retract == (value is not None):
            raise ToolError("invalid_input: give either value or retract=true")
        if expected is not None:
            if retract or at is not None:
                raise ToolError("invalid_input: expected (compare-and-set) takes only key, value and source")
            return await guarded(mem.cas_fact(key, expected or None, value, source=source or me))
        if retract:
            return await guarded(mem.retract_fact(key, at=at, source=source or me))
        return await guarded(mem.set_fact(key, value, at=at, source=source or me))


def _document_tools(server: MCPServer, mem: Memory) -> None:
    """dossier, capsule_get."""

    @server.tool(annotations=WRITE)
    async def dossier(
        topic: Annotated[str | None, Field(description="Topic (none: list).")] = None,
        version: Annotated[int | None, Field(ge=1, description="An older version.")] = None,
        refresh: Annotated[bool, Field(description="Bring it up to date first.")] = False,
    ) -> dict[str, Any]:
        """A topic's summary citing its memories, or all topics."""
        if topic is None:
            return await guarded(mem.list_dossiers())
        if refresh:
            if version is not None:
                raise ToolError("invalid_input: refresh writes a new version; leave out version")
            await guarded(mem.refresh_dossier(topic))
        return await guarded(mem.show_dossier(topic, version=version))

    @server.tool(annotations=READ)
    async def capsule_get(
        last_good: Annotated[bool, Field(description="Last good render (file has errors).")] = False,
    ) -> dict[str, Any]:
        """Who you are and what you must remember. Read it first."""
        return await guarded(mem.show_capsule(last_good=last_good, render_missing=True))


def _web_tools(server: MCPServer, mem: Memory) -> None:
    """related (the spiderweb), status."""

    @server.tool(annotations=READ)
    async def related(
        item: Annotated[str, Field(description="Memory id ('42'), 'fact:KEY' or 'entity:host:web-01'.")],
        depth: Annotated[int | None, Field(ge=1, le=5, description="Hops to spread.")] = None,
        limit: Limit = 10,
    ) -> dict[str, Any]:
        """What was used with an item; with depth, all it reaches."""
        if depth is None:
            return await guarded(mem.related(item, limit=limit))
        return await guarded(mem.spread([item], depth=depth, limit=limit))

    @server.tool(annotations=READ)
    async def status() -> dict[str, Any]:
        """Counts, backlog, phase, size, daemon."""
        return await guarded(mem.status())


def _resources(server: MCPServer, mem: Memory) -> None:
    """The capsule and the dossiers as resources: their markdown text."""

    async def read(call: Awaitable[dict]) -> str:
        try:
            return (await call)["text"]
        except StrataError as e:
            raise protocol_error(e) from None

    @server.resource("strata://capsule", name="capsule", mime_type="text/markdown",
                     description="The capsule: what the agent knows about itself (read it first).")
    async def capsule_resource() -> str:
        return await read(mem.show_capsule(render_missing=True))

    @server.resource("strata://dossier/{topic}", name="dossier", mime_type="text/markdown",
                     description="The current dossier on a topic; every line cites its sources.")
    async def dossier_resource(topic: str) -> str:
        return await read(mem.show_dossier(topic))

    @server.resource("strata://context/{text}", name="context", mime_type="text/markdown",
                     description="What the agent should know for a text (percent-encoded): its capsule condensed, "
                                 "the facts the text names, the best memories, within context.budget tokens.")
    async def context_resource(text: str) -> str:  # the SDK has decoded the text
        return await read(_as_text(mem.context(text)))


async def _as_text(call: Awaitable[dict]) -> dict:
    block = await call
    return {"text": block["block"] + _feedback_line(block)}


def _feedback_line(block: dict) -> str:
    """The recall behind a block, which feedback names (a block for a shared namespace has none)."""
    return f"\n(recall {block['recall_id']}: name it in feedback)\n" if block["recall_id"] else ""


def _prompts(server: MCPServer, mem: Memory) -> None:
    """The context block as a prompt, for clients that offer prompts to the person or the agent."""

    @server.prompt(name="context", description="What the agent should know before it acts on a text: its capsule "
                                               "condensed, the facts the text names and the best memories, each "
                                               "with its id, within a token budget.")
    async def context_prompt(text: str, budget: str = "") -> str:
        try:
            number = int(budget) if budget.strip() else None
        except ValueError:
            raise MCPError(INVALID_PARAMS, f"invalid_input: budget must be a whole number, not {budget!r}") from None
        try:
            block = await mem.context(text, budget=number)
        except StrataError as e:
            raise protocol_error(e) if isinstance(e, InvalidInput) else MCPError(-32603, error_text(e)) from None
        return block["block"] + _feedback_line(block)


async def serve(home: str | None, agent: str | None, *, allow_purge: bool = False) -> None:
    from mcp.server.stdio import stdio_server

    from strata_daemon.faces.mcp import wire

    async with await Memory.open(home, agent=agent, actor="mcp") as mem:
        low = build(mem, allow_purge=allow_purge)._lowlevel_server
        with wire.claimed() as (lines_in, out):
            async with stdio_server(lines_in, out) as (read_stream, write_stream):
                await low.run(read_stream, write_stream, low.create_initialization_options())
