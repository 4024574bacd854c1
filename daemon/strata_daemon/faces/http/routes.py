"""The HTTP API's operations as data: path, method, parameters, body schema, the shape of the
answer (from responses.py), and the `Memory` call each one makes. The app dispatches from this
table and the OpenAPI document is built from it, so the two cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from strata_daemon.app.memory import Memory
from strata_daemon.app.public import STATES
from strata_daemon.base import timeutil
from strata_daemon.config.settings import KINDS, MODES
from strata_daemon.errors import InvalidInput
from strata_daemon.faces.http.shapes import about, array, ref


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
    answer: dict  # JSON schema of the response body (responses.py), its description saying what it is
    description: str = ""
    query: tuple[Param, ...] = ()
    body: dict | None = None  # JSON schema of the request body
    status: int = 200
    writes: bool = False  # writing operations take no `scope`
    errors: tuple[int, ...] = ()  # besides those every operation may answer (openapi.py): 404, 409


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

OBSERVATION = obj(("content",), content=about(TEXT, "what happened, in words"), kind=KIND,
                  importance=about(UNIT, "how much it matters, 0 to 1 (default store.default_importance)"),
                  context=about(CONTEXT, "KEY: VALUE pairs of the situation it was observed in; recall favours "
                                         "memories from a like context"),
                  at=about(WHEN, "when it happened (default now): ISO 8601, unix seconds, or relative ('2h ago')"),
                  source=about(STR, "who or what said it"),
                  session=about(STR, "the conversation or task it belongs to"),
                  factual=about({"type": "boolean"}, "pin it as factual: it does not fade"))


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
    rows = await c.memory.list_facts(stale=c.query.get("stale", False), prefix=c.query.get("prefix"))
    start, limit = c.query["offset"], c.query["limit"]
    return page(rows[start:start + limit], c, len(rows) > start + limit)


async def _batch_get(c: Call) -> dict:
    found = await c.memory.get_many(c.body["ids"])
    return {"items": [found[i] for i in c.body["ids"] if i in found],
            "missing": [i for i in c.body["ids"] if i not in found]}


async def _lifecycle(c: Call) -> dict:
    m, eid, b = c.memory, c.path["id"], c.body
    if not {"state", "factual", "irrelevant"} & set(b):  # a reason alone changes nothing
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
                                 explain=b.get("explain", False), hop=b.get("hop"))


async def _context(c: Call) -> dict:
    b = c.body
    return await c.memory.context(b["text"], budget=b.get("budget"), mode=b.get("mode"))


async def _consolidate(c: Call) -> dict:
    return await c.memory.consolidate(dry_run=c.body.get("dry_run", False), rules=c.body.get("rules"))


SCOPE = Param("scope", {"type": "string"}, "read this shared namespace (agent.shared) instead of the server's")

OPS: tuple[Op, ...] = (
    # memories
    Op("POST", "/v1/memories", "createMemory", "Store an observation", tag="memories",
       description="Stores one thing the agent saw, did or was told. The same text again within the attention "
                   "window counts as a repeat of the earlier memory, and a text already stored is a duplicate: "
                   "nothing is stored twice. Facts the capture rules find in it are set, and listed.",
       body=OBSERVATION, status=201, writes=True, answer=ref("StoredMemory"),
       run=lambda c: c.memory.observe(**c.body)),
    Op("POST", "/v1/memories/batch", "createMemories", "Store many observations at once", tag="memories",
       description="Up to 10,000 observations in one request, each as POST /v1/memories takes one. All are "
                   "checked before the first is stored: one bad observation stores none.",
       body=obj(("items",), items={"type": "array", "minItems": 1, "maxItems": 10000, "items": OBSERVATION}),
       status=201, writes=True, answer=ref("StoredBatch"),
       run=lambda c: c.memory.observe_many(c.body["items"])),
    Op("POST", "/v1/memories/get", "batchGetMemories", "Read several memories by id", tag="memories",
       description="The memories as stored, in the order asked; ids this namespace does not hold are listed "
                   "under `missing` rather than failing the call.",
       body=obj(("ids",), ids={"type": "array", "minItems": 1, "maxItems": 1000, "items": INT_ID}),
       answer=ref("MemoryBatch"), run=_batch_get),
    Op("GET", "/v1/memories/{id}", "getMemory", "Read one memory", tag="memories",
       description="A memory with all strata keeps about it: its stored fields, every score as of now, the uses "
                   "not yet counted, its audit trail, and what it supersedes.",
       errors=(404,), answer=ref("MemoryDetail"), run=lambda c: c.memory.get(c.path["id"])),
    Op("PATCH", "/v1/memories/{id}", "updateMemoryLifecycle", "Archive, restore or flag a memory", tag="memories",
       description="`state` archives the memory (recall no longer returns it) or restores it; `factual` pins it "
                   "so that it does not fade; `irrelevant` marks it as noise. Send at least one.",
       writes=True, errors=(404,), answer=ref("LifecycleChange"),
       body=obj(state=about({"type": "string", "enum": ["active", "archived"]}, "archived: out of recall; active: "
                                                                               "restored"),
                reason=about(STR, "why, for the audit trail"), factual=about({"type": "boolean"}, "pinned or not"),
                irrelevant=about({"type": "boolean"}, "marked as noise or not")),
       run=_lifecycle),
    Op("DELETE", "/v1/memories/{id}", "forgetMemory", "Archive a memory, or purge it", tag="memories",
       description="Archives the memory, which restoring undoes. With purge=true its text leaves every layer for "
                   "good: the database and its log, the facts it set, dossiers and the capsule; the backups that "
                   "still hold it are listed.",
       writes=True, errors=(404,), query=(Param("purge", {"type": "boolean", "default": False}, "delete the text"),),
       answer={"oneOf": [ref("StateChange"), ref("PurgedMemory")],
               "description": "The memory archived, or (purge) what the purge removed."},
       run=lambda c: c.memory.forget(c.path["id"], purge=c.query.get("purge", False))),
    Op("POST", "/v1/forget", "forgetMatching", "Forget everything that holds a text", tag="memories",
       description="Lists what holds the text (in any case, with any accents): memories by their text, source, "
                   "session or context, facts, dossier topics and entities, and the dossier and capsule lines "
                   "that quote them. With confirm, the memories are archived and the "
                   "facts retracted (both can be undone); with purge and confirm, all of it is purged for good.",
       writes=True, answer=ref("TextForgetting"),
       body=obj(("matching",),
                matching=about(TEXT, "the text, in any case and with any accents (at least 3 characters)"),
                purge=about({"type": "boolean"}, "purge for good rather than archive"),
                confirm=about({"type": "boolean"}, "do it; without, only list")),
       run=lambda c: c.memory.forget_matching(c.body["matching"], purge=c.body.get("purge", False),
                                              apply=c.body.get("confirm", False))),
    Op("GET", "/v1/timeline", "timeline", "List memories in time order", tag="memories",
       description="Newest first unless order=oldest, the active ones unless `state` names others, a page at a "
                   "time (`offset`, `limit`).",
       query=(Param("since", {"type": "string"}, "from this time"), Param("until", {"type": "string"}, "to this time"),
              Param("kind", {"type": "array", "items": KIND}, "only these kinds"),
              Param("state", {"type": "array", "items": {"type": "string", "enum": list(STATES)}},
                    "only these states (default active)"),
              Param("order", {"type": "string", "enum": ["newest", "oldest"]}, "newest first (default)"),
              LIMIT, OFFSET),
       answer=ref("MemoryPage"), run=_timeline),
    # recall
    Op("POST", "/v1/recall", "recall", "Find the memories for a query", tag="recall",
       description="Memories ranked by the composite score (relevance, recency, strength, priority, feedback, "
                   "context), with the current facts the query names. The recall is logged: its `recall_id` "
                   "takes feedback. With `explain`, each hit says why it ranked where it did.",
       body=obj(("query",), query=about(TEXT, "what to look for, in words"),
                k=about({"type": "integer", "minimum": 1, "maximum": 1000}, "how many hits (default recall.k)"),
                mode=about({"type": "string", "enum": list(MODES)},
                           "fast: words only; balanced: words and meaning; deep: also the spiderweb and a "
                           "cross-encoder that reads the question with the best hits (default: the arena's "
                           "choice, or recall.mode)"),
                explain=about({"type": "boolean"}, "say why each hit ranked where it did, and each step's work"),
                context=about(CONTEXT, "the situation now, as KEY: VALUE pairs: memories from a like one rank "
                                       "higher"),
                kinds=about({"type": "array", "items": KIND}, "only these kinds"),
                include_archived=about({"type": "boolean"}, "archived memories too"),
                hop=about({"type": "boolean"}, "let the second hop bring in memories the question's words do not "
                                               "find (default: every mode but fast)")),
       answer=ref("RecallResult"), run=_recall),
    Op("POST", "/v1/context", "context", "A context block for a turn", tag="recall",
       description="One block to paste into a prompt, within a token budget: the capsule condensed (who the agent "
                   "is, its rules, its pending work), the current facts the text names, then the best memories "
                   "for it, each line with its id and day. Logged as a recall: `recall_id` takes the turn's "
                   "feedback.",
       body=obj(("text",), text=about(TEXT, "what the agent is about to do, or was asked"),
                budget=about({"type": "integer", "minimum": 32, "maximum": 100000},
                             "tokens (default context.budget)"),
                mode=about({"type": "string", "enum": list(MODES)}, "as for a recall")),
       answer=ref("ContextResult"), run=_context),
    Op("POST", "/v1/recalls/{id}/feedback", "feedback", "Say whether a recall helped", tag="recall",
       description="`used` names the memories the agent used: a success goes to them, a failure to the hits "
                   "offered in their place, and the recall becomes an evaluation episode for the arena. Without "
                   "`used`, every memory the recall returned shares the outcome. A recall takes feedback once.",
       writes=True, errors=(404, 409), answer=ref("FeedbackResult"),
       body=obj(("outcome",), outcome=about({"type": "string", "enum": ["success", "failure"]}, "whether it helped"),
                used=about({"type": "array", "items": INT_ID, "maxItems": 1000},
                           "the memories the agent used, found by the recall or not")),
       run=lambda c: c.memory.feedback(c.path["id"], c.body["outcome"], used=c.body.get("used"))),
    Op("GET", "/v1/arena", "arenaStatus", "Show the retrieval arena", tag="recall",
       description="The recall strategy in force and why, each strategy's trials and mean reward, and the "
                   "evaluation episodes the arena learns from.",
       answer=ref("Arena"), run=lambda c: c.memory.arena_status()),
    # spiderweb
    Op("GET", "/v1/memories/{id}/related", "relatedMemories", "Find the memories related to one", tag="spiderweb",
       description="The memories a spread of activation from this one reaches in the spiderweb, most activated "
                   "first.",
       errors=(404,), answer=ref("SpreadResult"),
       query=(Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10}, "most to return"),),
       run=lambda c: c.memory.related(f"episode:{c.path['id']}", limit=c.query.get("limit", 10))),
    Op("GET", "/v1/nodes/{node}/coactivations", "coactivations", "Show a node's edges and links", tag="spiderweb",
       description="The weighted edges a node (episode:ID, fact:KEY or entity:TYPE:VALUE) gained by being used "
                   "together with others, heaviest first, and its typed links.",
       errors=(404,), answer=ref("Neighbourhood"),
       query=(Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
                    "most edges to return"),),
       run=lambda c: c.memory.neighbours(c.path["node"], limit=c.query.get("limit", 50))),
    Op("POST", "/v1/spread", "spread", "Spread activation from nodes", tag="spiderweb",
       description="Activation flows from the items over weighted edges, weakening at each step; the nodes it "
                   "reaches come back most activated first, each with the path that reached it.",
       errors=(404,), answer=ref("SpreadResult"),
       body=obj(("items",), items=about({"type": "array", "minItems": 1, "maxItems": 100, "items": TEXT},
                                        "where to start: episode:ID (or a bare memory id), fact:KEY, "
                                        "entity:TYPE:VALUE"),
                depth=about({"type": "integer", "minimum": 1, "maximum": 5},
                            "steps to go (default graph.spread_depth)"),
                threshold=about({"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                                "the least activation worth following (default graph.spread_threshold)"),
                limit=about({"type": "integer", "minimum": 1, "maximum": 1000}, "most nodes to return (default 50)")),
       run=lambda c: c.memory.spread(c.body["items"], depth=c.body.get("depth"),
                                         threshold=c.body.get("threshold"), limit=c.body.get("limit", 50))),
    # facts
    Op("GET", "/v1/facts", "listFacts", "List the current facts", tag="facts",
       description="The facts with a value now, by key, a page at a time; `prefix` keeps the keys that start "
                   "with those words, `stale` those past their time to live.",
       query=(Param("prefix", {"type": "string"}, "keys whose first words are these"),
              Param("stale", {"type": "boolean"}, "only facts past their TTL"), LIMIT, OFFSET),
       answer=ref("FactPage"), run=_facts),
    Op("GET", "/v1/facts/conflicts", "factConflicts", "List the conflicts between fact values", tag="facts",
       description="Conflicts, newest first: a key given different values by different sources within "
                   "facts.conflict_window_seconds, or a value that arrived late, older than a different one already "
                   "known. Other changes are history. flagged=true keeps those nobody has acknowledged yet.",
       query=(Param("flagged", {"type": "boolean"}, "only those nobody has acknowledged yet"), LIMIT),
       answer={**array(ref("FactConflict")), "description": "The conflicts, newest first."},
       run=lambda c: c.memory.fact_conflicts(flagged=c.query.get("flagged", False), limit=c.query["limit"])),
    Op("GET", "/v1/facts/{key}", "getFact", "Read a fact", tag="facts",
       description="A fact's value now, or as it was at a time (`at`).", query=(AT,), errors=(404,),
       answer=ref("Fact"), run=lambda c: c.memory.get_fact(c.path["key"], at=c.query.get("at"))),
    Op("PUT", "/v1/facts/{key}", "setFact", "Set a fact", tag="facts",
       description="The fact holds the value from now (or from `at`). Its old value stays in its history; the "
                   "value it already holds only confirms it.",
       writes=True, answer=ref("FactChange"),
       body=obj(("value",), value=about(TEXT, "the value"),
                at=about(WHEN, "true from when (default now): ISO 8601, unix seconds, or relative ('2h ago')"),
                source=about(STR, "who says so: KIND:REF, e.g. person:ines (default person:http)"),
                confidence=about(UNIT, "0 to 1 (default 1)"),
                importance=about(UNIT, "0 to 1 (a new fact's default: 0.5; otherwise it keeps its own)")),
       run=lambda c: c.memory.set_fact(c.path["key"], **c.body)),
    Op("POST", "/v1/facts/{key}/cas", "casFact", "Change a fact only if it holds a given value", tag="facts",
       description="Compare-and-set: the fact becomes `new` only if it holds `expected` now (null: only if it has "
                   "no value). The check and the change are one step, so of two callers racing one wins, and the "
                   "other gets 409 with the value the fact holds.",
       writes=True, errors=(409,), answer=ref("FactChange"),
       body=obj(("expected", "new"), expected=about({"type": ["string", "null"]}, "the value it must hold now "
                                                                                    "(null: none)"),
                new=about(TEXT, "the value to set"), source=about(STR, "who says so (default person:http)")),
       run=lambda c: c.memory.cas_fact(c.path["key"], c.body["expected"], c.body["new"], source=c.body.get("source"))),
    Op("DELETE", "/v1/facts/{key}", "retractFact", "Retract a fact", tag="facts",
       description="The fact has no value from now (or from `at`) on; its history stays.",
       writes=True, errors=(404,), query=(AT,), answer=ref("FactChange"),
       run=lambda c: c.memory.retract_fact(c.path["key"], at=c.query.get("at"))),
    Op("POST", "/v1/facts/{key}/forget", "forgetFact", "Forget a fact's values for good", tag="facts",
       description="Lists every value the fact has had and where each appears (its history, the audit, dossiers, "
                   "the capsule); with confirm, purges them all. The fact is left retracted.",
       writes=True, errors=(404,), body=obj(confirm=about({"type": "boolean"}, "purge them; without, only list")),
       answer=ref("FactForgetting"),
       run=lambda c: c.memory.forget_fact(c.path["key"], apply=c.body.get("confirm", False))),
    Op("POST", "/v1/facts/forget", "forgetFactsMatching", "Forget the facts that hold a text", tag="facts",
       description="Lists every fact whose key, label, value or source holds the text (any case, any accents) and "
                   "where each appears; with confirm, purges them: a fact whose key or label holds it goes whole, "
                   "the others are left retracted.",
       writes=True, errors=(404,), answer=ref("FactForgetting"),
       body=obj(("matching",), matching=about(TEXT, "the text (at least 3 characters)"),
                confirm=about({"type": "boolean"}, "purge them; without, only list")),
       run=lambda c: c.memory.forget_fact(matching=c.body["matching"], apply=c.body.get("confirm", False))),
    Op("GET", "/v1/facts/{key}/history", "factHistory", "Read a fact's history", tag="facts",
       description="Every value the fact has had, oldest first, and when each held.",
       errors=(404,), answer=ref("FactHistory"), run=lambda c: c.memory.fact_history(c.path["key"])),
    # dossiers, capsule
    Op("GET", "/v1/dossiers", "listDossiers", "List the dossier topics", tag="dossiers",
       description="The topics kept (by a person, the configuration or the capsule) and those proposed, each with "
                   "its version, its refresh times and whether it is due.",
       answer=ref("DossierList"), run=lambda c: c.memory.list_dossiers()),
    Op("GET", "/v1/dossiers/{topic}", "getDossier", "Read a dossier", tag="dossiers",
       description="A dossier's markdown, every line citing its sources: the current version, or an older one.",
       errors=(404,), answer=ref("Dossier"),
       query=(Param("version", {"type": "integer", "minimum": 1}, "an older version"),),
       run=lambda c: c.memory.show_dossier(c.path["topic"], version=c.query.get("version"))),
    Op("POST", "/v1/dossiers/forget", "forgetDossier", "Remove a dossier topic for good", tag="dossiers",
       description="Lists the topic (or every topic whose name or query holds `matching`) with every version of "
                   "it; with confirm, purges them, and the capsule's lines naming them.",
       writes=True, errors=(404,), answer=ref("TopicForgetting"),
       body=obj(topic=about(TEXT, "the topic"), matching=about(TEXT, "or the words its name or query holds"),
                confirm=about({"type": "boolean"}, "purge; without, only list")),
       run=lambda c: c.memory.forget_topic(c.body.get("topic"), matching=c.body.get("matching"),
                                           apply=c.body.get("confirm", False))),
    Op("POST", "/v1/dossiers/{topic}/refresh", "refreshDossier", "Refresh a dossier now", tag="dossiers",
       description="Writes a new version when what the dossier is written from has changed (with force, in any "
                   "case).",
       writes=True, errors=(404,), body=obj(force=about({"type": "boolean"}, "write a version even if nothing "
                                                                            "changed")),
       answer=ref("DossierRefresh"),
       run=lambda c: c.memory.refresh_dossier(c.path["topic"], force=c.body.get("force", False))),
    Op("GET", "/v1/capsule", "getCapsule", "Read the capsule", tag="capsule",
       description="The capsule file the agent reads first after a reset, with its validation problems. "
                   "last_good=true gives strata's newest kept render instead, for when the file has errors.",
       query=(Param("last_good", {"type": "boolean"}, "the newest render strata kept"),),
       answer=ref("CapsuleText"), run=lambda c: c.memory.show_capsule(last_good=c.query.get("last_good", False))),
    # maintenance
    Op("POST", "/v1/consolidate", "consolidate", "Consolidate the memories now", tag="lifecycle",
       description="One consolidation pass: near-duplicates merged, replay, potentiation, stale decay, "
                   "interference, archiving to the cold tier, associations. dry_run shows what it would change.",
       writes=True, answer=ref("ConsolidationRun"),
       body=obj(dry_run=about({"type": "boolean"}, "only show what it would change"),
                rules=about({"type": "array", "items": STR, "minItems": 1},
                            "only these rules (default consolidation.rules)")),
       run=_consolidate),
    Op("GET", "/v1/status", "status", "Show the namespace's status", tag="lifecycle",
       description="Counts per layer, backlogs, the learning phase, the recall strategy, the capsule and the "
                   "daemon.",
       answer=ref("StatusReport"), run=lambda c: c.memory.status()),
)

PATH_TYPES = {"id": INT_ID, "key": TEXT, "topic": TEXT, "node": TEXT}


def scoped(op: Op) -> tuple[Param, ...]:
    return op.query if op.writes else (*op.query, SCOPE)

