"""The HTTP API's operations as data: path, method, parameters, body schema, and the `Memory`
call each one makes. The app dispatches from this table and the OpenAPI document is built
from it, so the two cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from .. import timeutil
from ..episodes.model import STATES
from ..errors import InvalidInput
from ..memory import Memory
from ..settings import KINDS, MODES


@dataclass(frozen=True)
class Param:
    name: str
    schema: dict
    description: str
    required: bool = False


@dataclass
class Call:
    """One request, checked: path and query parameters converted, the body validated."""
    path: dict[str, Any]
    query: dict[str, Any]
    body: dict[str, Any]
    memory: Memory  # the namespace it reads: the server's own, or a shared one named by `scope`


@dataclass(frozen=True)
class Op:
    method: str
    path: str
    op_id: str
    summary: str
    run: Callable[[Call], Awaitable[Any]]
    tag: str
    query: tuple[Param, ...] = ()
    body: dict | None = None  # JSON schema of the request body
    status: int = 200
    writes: bool = False  # writing operations take no `scope`
    list_of: str | None = None  # the response is {"items": [...], "next_offset"} of these


def obj(required: tuple[str, ...] = (), **props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


STR = {"type": "string"}
TEXT = {"type": "string", "minLength": 1}
WHEN = {"type": ["string", "number"], "description": "ISO 8601, unix seconds, or relative ('2h ago')"}
UNIT = {"type": "number", "minimum": 0, "maximum": 1}
CONTEXT = {"type": "object", "additionalProperties": {"type": "string"}}
INT_ID = {"type": "integer", "minimum": 1, "maximum": 2**62}

LIMIT = Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50}, "page size")
OFFSET = Param("offset", {"type": "integer", "minimum": 0, "maximum": 10**9, "default": 0},
               "items to skip (the previous page's next_offset)")
AT = Param("at", {"type": "string"}, "as of this time (ISO 8601, unix seconds, or '2h ago')")

# Kinds are not an enum: store.kinds may add to the defaults, and the memory layer checks them.
KIND = {"type": "string", "minLength": 1, "description": f"one of store.kinds (default: {', '.join(KINDS)})"}

OBSERVATION = obj(("content",), content=TEXT, kind=KIND, importance=UNIT,
                  context=CONTEXT, at=WHEN, source=STR, session=STR, factual={"type": "boolean"})


def page(items: list, call: Call, more: bool) -> dict:
    offset = call.query["offset"]
    return {"items": items, "offset": offset, "next_offset": offset + len(items) if more else None}


async def _timeline(c: Call) -> dict:
    q = c.query
    parse = timeutil.parse_time
    rows = await c.memory.timeline(since=parse(q["since"]) if q.get("since") else None,
                                   until=parse(q["until"]) if q.get("until") else None,
                                   kinds=tuple(q.get("kind") or ()), states=tuple(q.get("state") or ("active",)),
                                   limit=q["limit"] + 1, offset=q["offset"], newest_first=q.get("order") != "oldest")
    return page(rows[:q["limit"]], c, len(rows) > q["limit"])


async def _facts(c: Call) -> dict:
    rows = await c.memory.facts.list(stale=c.query.get("stale", False), prefix=c.query.get("prefix"))
    start, limit = c.query["offset"], c.query["limit"]
    return page(rows[start:start + limit], c, len(rows) > start + limit)


async def _batch_get(c: Call) -> dict:
    found = await c.memory.get_many(c.body["ids"])
    return {"items": [found[i] for i in c.body["ids"] if i in found],
            "missing": [i for i in c.body["ids"] if i not in found]}


async def _lifecycle(c: Call) -> dict:
    m, eid, b = c.memory, c.path["id"], c.body
    if not b:
        raise InvalidInput("nothing to change", hint="send state, factual or irrelevant")
    out: dict = {"id": eid}
    if "state" in b:
        out.update(await (m.restore(eid) if b["state"] == "active" else m.forget(eid, reason=b.get("reason"))))
    if "factual" in b or "irrelevant" in b:
        out["changed"] = (await m.mark(eid, factual=b.get("factual"), irrelevant=b.get("irrelevant")))["changed"]
    return out


async def _recall(c: Call) -> dict:
    b = c.body
    return await c.memory.recall(b["query"], k=b.get("k"), mode=b.get("mode"), context=b.get("context"),
                                 kinds=b.get("kinds", ()), include_archived=b.get("include_archived", False),
                                 explain=b.get("explain", False))


async def _consolidate(c: Call) -> dict:
    return await c.memory.consolidation.run(dry_run=c.body.get("dry_run", False), rules=c.body.get("rules"))


SCOPE = Param("scope", {"type": "string"}, "read this shared namespace (agent.shared) instead of the server's")

OPS: tuple[Op, ...] = (
    # memories
    Op("POST", "/v1/memories", "createMemory", "Store an observation", tag="memories",
       body=OBSERVATION, status=201, writes=True,
       run=lambda c: c.memory.observe(**c.body)),
    Op("POST", "/v1/memories/batch", "createMemories", "Store up to 10,000 observations in one request",
       tag="memories", body=obj(("items",), items={"type": "array", "minItems": 1, "maxItems": 10000,
                                                  "items": OBSERVATION}), status=201, writes=True,
       run=lambda c: c.memory.observe_many(c.body["items"])),
    Op("POST", "/v1/memories/get", "batchGetMemories", "Several memories by id (missing ids are listed)",
       tag="memories", body=obj(("ids",), ids={"type": "array", "minItems": 1, "maxItems": 1000, "items": INT_ID}),
       run=_batch_get),
    Op("GET", "/v1/memories/{id}", "getMemory", "One memory with full metadata, every score as of now, history",
       tag="memories", run=lambda c: c.memory.get(c.path["id"])),
    Op("PATCH", "/v1/memories/{id}", "updateMemoryLifecycle",
       "Archive or restore a memory, pin it as factual, or mark it irrelevant", tag="memories", writes=True,
       body=obj(state={"type": "string", "enum": ["active", "archived"]}, reason=STR,
                factual={"type": "boolean"}, irrelevant={"type": "boolean"}),
       run=_lifecycle),
    Op("DELETE", "/v1/memories/{id}", "forgetMemory", "Archive a memory; with purge=true delete its text for good",
       tag="memories", writes=True, query=(Param("purge", {"type": "boolean", "default": False}, "delete the text"),),
       run=lambda c: c.memory.forget(c.path["id"], purge=c.query.get("purge", False))),
    Op("POST", "/v1/forget", "forgetMatching",
       "Every memory and fact holding a text: listed, or with confirm archived (purge: purged for good)",
       tag="memories", writes=True,
       body=obj(("matching",), matching=TEXT, purge={"type": "boolean"}, confirm={"type": "boolean"}),
       run=lambda c: c.memory.forget_matching(c.body["matching"], purge=c.body.get("purge", False),
                                              apply=c.body.get("confirm", False))),
    Op("GET", "/v1/timeline", "timeline", "Memories in time order, newest first (paged)", tag="memories",
       query=(Param("since", {"type": "string"}, "from this time"), Param("until", {"type": "string"}, "to this time"),
              Param("kind", {"type": "array", "items": KIND}, "only these kinds"),
              Param("state", {"type": "array", "items": {"type": "string", "enum": list(STATES)}},
                    "only these states (default active)"),
              Param("order", {"type": "string", "enum": ["newest", "oldest"]}, "newest first (default)"),
              LIMIT, OFFSET),
       run=_timeline, list_of="memory"),
    # recall
    Op("POST", "/v1/recall", "recall", "Memories for a query, ranked by the composite score",
       tag="recall", body=obj(("query",), query=TEXT, k={"type": "integer", "minimum": 1, "maximum": 1000},
                              mode={"type": "string", "enum": list(MODES)}, explain={"type": "boolean"},
                              context=CONTEXT, kinds={"type": "array", "items": KIND},
                              include_archived={"type": "boolean"}),
       run=_recall),
    Op("POST", "/v1/recalls/{id}/feedback", "feedback", "Whether a recall helped. used names the memories the agent "
       "used: a success goes to them, a failure to the hits offered in their place, and the recall becomes an arena "
       "evaluation episode; without used, every memory the recall returned shares the outcome",
       tag="recall", writes=True, body=obj(("outcome",), outcome={"type": "string", "enum": ["success", "failure"]},
                                           used={"type": "array", "items": INT_ID, "maxItems": 1000}),
       run=lambda c: c.memory.feedback(c.path["id"], c.body["outcome"], used=c.body.get("used"))),
    Op("GET", "/v1/arena", "arenaStatus", "The retrieval arena: the strategy in force and why, each arm's pulls and "
       "mean reward, the evaluation episodes", tag="recall", run=lambda c: c.memory.arena.status()),
    # spiderweb
    Op("GET", "/v1/memories/{id}/related", "relatedMemories", "Memories associated with this one in the spiderweb",
       tag="spiderweb", query=(Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
                                     "most to return"),),
       run=lambda c: c.memory.web.related(f"episode:{c.path['id']}", limit=c.query.get("limit", 10))),
    Op("GET", "/v1/nodes/{node}/coactivations", "coactivations",
       "Co-activation edges of a node (episode:ID, fact:KEY, entity:TYPE:VALUE) with weights, and its typed links",
       tag="spiderweb", query=(Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
                                     "most edges to return"),),
       run=lambda c: c.memory.web.neighbours(c.path["node"], limit=c.query.get("limit", 50))),
    Op("POST", "/v1/spread", "spread", "Spreading activation from items over weighted edges, with paths",
       tag="spiderweb", body=obj(("items",), items={"type": "array", "minItems": 1, "maxItems": 100, "items": TEXT},
                                 depth={"type": "integer", "minimum": 1, "maximum": 5},
                                 threshold={"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                                 limit={"type": "integer", "minimum": 1, "maximum": 1000}),
       run=lambda c: c.memory.web.spread(c.body["items"], depth=c.body.get("depth"),
                                         threshold=c.body.get("threshold"), limit=c.body.get("limit", 50))),
    # facts
    Op("GET", "/v1/facts", "listFacts", "Current facts, by key (paged)", tag="facts",
       query=(Param("prefix", {"type": "string"}, "keys whose first words are these"),
              Param("stale", {"type": "boolean"}, "only facts past their TTL"), LIMIT, OFFSET),
       run=_facts, list_of="fact"),
    Op("GET", "/v1/facts/conflicts", "factConflicts", "Conflicts: different values of a key from different "
       "sources close together, or a value that arrived late", tag="facts",
       query=(Param("flagged", {"type": "boolean"}, "only those nobody has acknowledged yet"), LIMIT),
       run=lambda c: c.memory.facts.conflicts(flagged=c.query.get("flagged", False), limit=c.query["limit"])),
    Op("GET", "/v1/facts/{key}", "getFact", "A fact's value now, or as of a time", tag="facts", query=(AT,),
       run=lambda c: c.memory.facts.get(c.path["key"], at=c.query.get("at"))),
    Op("PUT", "/v1/facts/{key}", "setFact", "Set a fact; the old value stays in history", tag="facts", writes=True,
       body=obj(("value",), value=TEXT, at=WHEN, source=STR, confidence=UNIT, importance=UNIT),
       run=lambda c: c.memory.facts.set(c.path["key"], **c.body)),
    Op("POST", "/v1/facts/{key}/cas", "casFact", "Compare-and-set: change only if it holds `expected`",
       tag="facts", writes=True, body=obj(("expected", "new"), expected={"type": ["string", "null"]}, new=TEXT,
                                          source=STR),
       run=lambda c: c.memory.facts.cas(c.path["key"], c.body["expected"], c.body["new"], source=c.body.get("source"))),
    Op("DELETE", "/v1/facts/{key}", "retractFact", "The fact has no value from now (or `at`) on", tag="facts",
       writes=True, query=(AT,), run=lambda c: c.memory.facts.retract(c.path["key"], at=c.query.get("at"))),
    Op("POST", "/v1/facts/{key}/forget", "forgetFact",
       "Every value of the fact out of its history, the audit, dossiers and the capsule (with confirm); "
       "the fact is left retracted", tag="facts", writes=True, body=obj(confirm={"type": "boolean"}),
       run=lambda c: c.memory.forget_fact(c.path["key"], apply=c.body.get("confirm", False))),
    Op("GET", "/v1/facts/{key}/history", "factHistory", "Every value the fact has had", tag="facts",
       run=lambda c: c.memory.facts.history(c.path["key"])),
    # dossiers, capsule
    Op("GET", "/v1/dossiers", "listDossiers", "Kept topics with version and refresh times", tag="dossiers",
       run=lambda c: c.memory.dossiers.list()),
    Op("GET", "/v1/dossiers/{topic}", "getDossier", "A dossier (markdown, every line cited)", tag="dossiers",
       query=(Param("version", {"type": "integer", "minimum": 1}, "an older version"),),
       run=lambda c: c.memory.dossiers.show(c.path["topic"], version=c.query.get("version"))),
    Op("POST", "/v1/dossiers/{topic}/refresh", "refreshDossier", "Bring a dossier up to date now", tag="dossiers",
       writes=True, body=obj(force={"type": "boolean"}),
       run=lambda c: c.memory.dossiers.refresh(c.path["topic"], force=c.body.get("force", False))),
    Op("GET", "/v1/capsule", "getCapsule", "The capsule, with its validation problems", tag="capsule",
       query=(Param("last_good", {"type": "boolean"}, "the newest render strata kept"),),
       run=lambda c: c.memory.capsule.show(last_good=c.query.get("last_good", False))),
    # maintenance
    Op("POST", "/v1/consolidate", "consolidate", "Consolidate now; dry_run shows the plan",
       tag="lifecycle", writes=True, body=obj(dry_run={"type": "boolean"},
                                              rules={"type": "array", "items": STR, "minItems": 1}),
       run=_consolidate),
    Op("GET", "/v1/status", "status", "Counts per layer, backlogs, learning phase, daemon", tag="lifecycle",
       run=lambda c: c.memory.status()),
)

PATH_TYPES = {"id": INT_ID, "key": TEXT, "topic": TEXT, "node": TEXT}


def scoped(op: Op) -> tuple[Param, ...]:
    return op.query if op.writes else (*op.query, SCOPE)

