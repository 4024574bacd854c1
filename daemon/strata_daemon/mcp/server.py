"""`strata mcp`: the Memory API as MCP tools and resources over stdio, for one agent namespace.

Every tool calls the same `Memory` methods as the CLI and returns the same JSON shapes. A
strata error becomes a tool error whose text says what went wrong and what to do; the
server keeps serving. The namespace is fixed when the server starts: no tool takes an agent,
and `scope` only reaches the namespaces strata.toml shares (agent.shared), read-only.
"""

from __future__ import annotations

from typing import Annotated, Any, Awaitable, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..errors import StrataError
from ..memory import Memory

T = TypeVar("T")

INSTRUCTIONS = """\
strata is your long-term memory on this machine. Read the capsule (capsule_get) first: it is
what you know about yourself. Store what happens with observe; look things up with recall,
then say whether the recall helped with feedback (it teaches the ranking). Facts hold one
current value per key with history (fact_get, fact_set, fact_cas). Dossiers are maintained
summaries per topic. related and spread follow what was used together. When a person asks
you to forget something, call forget. Nothing leaves this machine."""

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
FORGET = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Scope = Annotated[str | None, Field(
    description="Read another namespace instead of your own; only namespaces this home shares "
                "(agent.shared) are allowed, and only for reading. Leave empty for your own memory.")]
Mode = Annotated[Literal["fast", "balanced", "deep"] | None, Field(
    description="fast: full-text only, best for exact identifiers (hostnames, error codes). balanced "
                "(default): full text + meaning. deep: also follows associations between memories.")]
When = Annotated[str | None, Field(
    description="A time: ISO 8601 ('2026-03-01T10:00:00Z'), unix seconds, or relative ('2h ago', '3d ago').")]
Key = Annotated[str, Field(description="The fact's key, e.g. 'bridge' or 'deploy window'.")]
Topic = Annotated[str, Field(description="The dossier's topic, as dossier_list shows it.")]
Item = Annotated[str, Field(description="A memory id ('42' or 'episode:42'), a fact ('fact:KEY') or an entity "
                                        "('entity:host:web-01').")]


def error_text(e: StrataError) -> str:
    return f"{e.kind}: {e.message}" + (f" (hint: {e.hint})" if e.hint else "")


async def guarded(call: Awaitable[T]) -> T:
    try:
        return await call
    except StrataError as e:
        raise ToolError(error_text(e)) from None



def build(mem: Memory, *, allow_purge: bool = False) -> MCPServer:
    server = MCPServer("strata", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    me = f"agent:{mem.agent}"  # facts the agent sets are its own assertions, not a person's

    async def reader(scope: str | None) -> Memory:
        return await guarded(mem.shared(scope)) if scope else mem

    # -- episodes -----------------------------------------------------------------------------

    @server.tool(annotations=WRITE)
    async def observe(
        content: Annotated[str, Field(description="What happened, in plain words (up to store.max_content_bytes).")],
        kind: Annotated[str | None, Field(description="observation (default), event, decision, lesson, task, "
                                                      "note, message or fact.")] = None,
        importance: Annotated[float | None, Field(ge=0, le=1, description="0-1; default 0.5.")] = None,
        context: Annotated[dict[str, str] | None, Field(description="Situation keys, e.g. {'environment': "
                                                                    "'prod'}; recall favours matching context.")] = None,
        at: When = None,
        source: Annotated[str | None, Field(description="Who or what said it, e.g. 'person:ines' or 'shell'.")] = None,
        session: Annotated[str | None, Field(description="A conversation or run id grouping memories.")] = None,
    ) -> dict[str, Any]:
        """Store one observation in long-term memory. Identical text repeated within a few minutes
        counts as one memory with more occurrences. Capture rules may turn it into facts. Returns
        {id, status: created|repeat|duplicate, occurrences, facts}."""
        return await guarded(mem.observe(content, kind=kind, importance=importance, context=context, at=at,
                                         source=source, session=session))

    @server.tool(annotations=READ)
    async def recall(
        query: Annotated[str, Field(description="What you are looking for, in words.")],
        k: Annotated[int | None, Field(ge=1, le=1000, description="How many memories (default 10).")] = None,
        mode: Mode = None,
        explain: Annotated[bool, Field(description="Add why each memory ranked: every signal, each "
                                                   "retriever's rank and score.")] = False,
        context: Annotated[dict[str, str] | None, Field(description="The current situation, e.g. "
                                                                    "{'environment': 'prod'}.")] = None,
        kinds: Annotated[list[str] | None, Field(description="Only these kinds.")] = None,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Find memories for a query, best first, ranked by relevance, recency, strength,
        importance, past usefulness and context. Current facts the query names come with it; a
        memory that says "yesterday" or "last May" carries the date meant in `times`.
        Keep the returned recall_id and call feedback once you know whether the memories helped."""
        target = await reader(scope)
        return await guarded(target.recall(query, k=k, mode=mode, context=context, kinds=kinds or (),
                                           explain=explain))

    @server.tool(annotations=WRITE)
    async def feedback(
        recall_id: Annotated[int, Field(description="The recall_id a recall returned.")],
        outcome: Annotated[Literal["success", "failure"], Field(description="Did the recalled memories help?")],
        used: Annotated[list[int] | None, Field(description="Ids of the memories you actually used, whether this "
                                                            "recall returned them or not.")] = None,
    ) -> dict[str, Any]:
        """Say whether a recall helped, once per recall. Name the memories you used: a success then
        raises them alone and a failure lowers the ones offered in their place (without `used`,
        every memory the recall returned shares the outcome). It also teaches strata which recall
        strategy serves you best."""
        return await guarded(mem.feedback(recall_id, outcome, used=used))

    @server.tool(annotations=READ)
    async def memory_get(id: Annotated[int, Field(description="A memory id.")], scope: Scope = None) -> dict[str, Any]:
        """Everything about one memory: text, kind, times, context, every score as of now and its history."""
        return await guarded((await reader(scope)).get(id))

    @server.tool(annotations=FORGET)
    async def forget(
        id: Annotated[int | None, Field(description="The memory to forget (or give `matching`).")] = None,
        matching: Annotated[str | None, Field(description="Forget every memory and fact holding this text (any "
                                                          "case), e.g. 'my phone number'.")] = None,
        purge: Annotated[bool, Field(description="Delete the words for good, with what was derived from them. "
                                                 "Only when this server was started with --allow-purge.")] = False,
        confirm: Annotated[bool, Field(description="With `matching`: do it. Without, the tool only lists what "
                                                   "would go.")] = False,
    ) -> dict[str, Any]:
        """Honour a request to forget. By default a memory is archived (no longer recalled; a person
        can restore it) and a matched fact retracted. With `matching`, call once to see what would
        go, then again with confirm=true."""
        if (id is None) == (matching is None):
            raise ToolError("invalid_input: give either id or matching")
        if purge and not allow_purge:
            raise ToolError("not_permitted: this server does not purge (a purge is final); forget without purge "
                            "archives the memory (hint: a person can start `strata mcp --allow-purge`, or run "
                            "`strata forget ID --purge`)")
        if matching is not None:
            return await guarded(mem.forget_matching(matching, purge=purge, apply=confirm))
        return await guarded(mem.forget(id, purge=purge))

    # -- facts --------------------------------------------------------------------------------

    @server.tool(annotations=READ)
    async def fact_get(key: Key, at: When = None, scope: Scope = None) -> dict[str, Any]:
        """A fact's current value (or its value at a past time), with source, confidence and staleness."""
        return await guarded((await reader(scope)).facts.get(key, at=at))

    @server.tool(annotations=WRITE)
    async def fact_set(
        key: Key, value: Annotated[str, Field(description="The new value.")], at: When = None,
        source: Annotated[str | None, Field(description="Where it comes from, e.g. 'person:alice' "
                                                        "(default: agent:NAMESPACE).")] = None,
        confidence: Annotated[float | None, Field(ge=0, le=1)] = None,
    ) -> dict[str, Any]:
        """Set a fact: one current value per key, the old one kept in history. A value set with an
        older time than the current one is recorded in history without replacing it."""
        return await guarded(mem.facts.set(key, value, at=at, source=source or me, confidence=confidence))

    @server.tool(annotations=WRITE)
    async def fact_cas(
        key: Key,
        expected: Annotated[str | None, Field(description="The value you believe it holds (null: none).")],
        new: Annotated[str, Field(description="The value to set if it does.")],
        source: Annotated[str | None, Field(description="Where the new value comes from.")] = None,
    ) -> dict[str, Any]:
        """Compare-and-set: change a fact only if it still holds `expected`. When another value is
        there, nothing changes and the error says which value it holds; read it and decide again."""
        return await guarded(mem.facts.cas(key, expected, new, source=source or me))

    @server.tool(annotations=WRITE)
    async def fact_retract(key: Key, at: When = None) -> dict[str, Any]:
        """A fact stops having a value (from now, or from `at`); its history stays."""
        return await guarded(mem.facts.retract(key, at=at, source=me))

    @server.tool(annotations=READ)
    async def fact_list(
        prefix: Annotated[str | None, Field(
            description="Only keys whose first words are these ('deploy' matches 'deploy window').")] = None,
        stale: Annotated[bool, Field(description="Only facts not confirmed for longer than their TTL.")] = False,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Every current fact, by key: {facts: [...]}."""
        return {"facts": await guarded((await reader(scope)).facts.list(stale=stale, prefix=prefix))}

    @server.tool(annotations=READ)
    async def fact_history(key: Key, scope: Scope = None) -> dict[str, Any]:
        """Every value a fact has had: when it was true, when it was recorded, and its source."""
        return await guarded((await reader(scope)).facts.history(key))

    # -- dossiers and capsule -----------------------------------------------------------------

    @server.tool(annotations=READ)
    async def dossier_list(scope: Scope = None) -> dict[str, Any]:
        """The topics strata keeps a dossier on, with version, refresh time and whether one is due."""
        return await guarded((await reader(scope)).dossiers.list())

    @server.tool(annotations=READ)
    async def dossier_get(topic: Topic, version: Annotated[int | None, Field(ge=1)] = None,
                          scope: Scope = None) -> dict[str, Any]:
        """A dossier: a markdown summary of one topic in which every line cites its source memories."""
        return await guarded((await reader(scope)).dossiers.show(topic, version=version))

    @server.tool(annotations=WRITE)
    async def dossier_refresh(topic: Topic, force: Annotated[bool, Field(
            description="Write a new version even if nothing it draws on changed.")] = False) -> dict[str, Any]:
        """Bring a dossier up to date now (it is skipped when nothing it draws on changed)."""
        return await guarded(mem.dossiers.refresh(topic, force=force))

    @server.tool(annotations=READ)
    async def capsule_get(last_good: Annotated[bool, Field(
            description="The newest render strata kept, for when the file has errors.")] = False,
            scope: Scope = None) -> dict[str, Any]:
        """The capsule: the short document of who you are, what you are doing and what you must
        remember, which a person may also edit. Read it at the start of a session."""
        return await guarded((await reader(scope)).capsule.show(last_good=last_good, render_missing=scope is None))

    # -- spiderweb ----------------------------------------------------------------------------

    @server.tool(annotations=READ)
    async def related(item: Item, limit: Annotated[int, Field(ge=1, le=1000)] = 10,
                      scope: Scope = None) -> dict[str, Any]:
        """Memories associated with an item: those used together with it, with the path that links them."""
        return await guarded((await reader(scope)).web.related(item, limit=limit))

    @server.tool(annotations=READ)
    async def spread(
        items: Annotated[list[Item], Field(min_length=1, description="Where activation starts.")],
        depth: Annotated[int | None, Field(ge=1, le=5, description="Hops (default web.spread_depth).")] = None,
        threshold: Annotated[float | None, Field(gt=0, le=1, description="Weakest activation kept.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 50,
        scope: Scope = None,
    ) -> dict[str, Any]:
        """Spreading activation: memories, facts and entities reached from the items over weighted
        associations, most activated first, each with its path."""
        return await guarded((await reader(scope)).web.spread(items, depth=depth,
                                                              threshold=threshold, limit=limit))

    @server.tool(annotations=READ)
    async def status(scope: Scope = None) -> dict[str, Any]:
        """Counts per layer, embedding backlog, learning phase, database size, and whether the daemon runs."""
        return await guarded((await reader(scope)).status())

    # -- resources ----------------------------------------------------------------------------

    async def read(call: Awaitable[dict]) -> str:
        try:
            return (await call)["text"]
        except StrataError as e:
            raise ResourceError(error_text(e)) from None

    @server.resource("strata://capsule", name="capsule", mime_type="text/markdown",
                     description="The capsule: what the agent knows about itself (read it first).")
    async def capsule_resource() -> str:
        return await read(mem.capsule.show(render_missing=True))

    @server.resource("strata://dossier/{topic}", name="dossier", mime_type="text/markdown",
                     description="The current dossier on a topic; every line cites its sources.")
    async def dossier_resource(topic: str) -> str:
        return await read(mem.dossiers.show(topic))

    return server


async def serve(home: str | None, agent: str | None, *, allow_purge: bool = False) -> None:
    from mcp.server.stdio import stdio_server

    from . import wire

    async with await Memory.open(home, agent=agent, actor="mcp") as mem:
        low = build(mem, allow_purge=allow_purge)._lowlevel_server
        with wire.claimed() as (lines_in, out):
            async with stdio_server(lines_in, out) as (read_stream, write_stream):
                await low.run(read_stream, write_stream, low.create_initialization_options())
