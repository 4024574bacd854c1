"""The parts the HTTP API's response schemas (responses.py) are built from (pure data): the
helpers that write a JSON schema, the scalar types, and the sets of fields several bodies share
(a memory's, a purge's, a recall strategy's)."""

from __future__ import annotations

from strata_daemon.app.public import ACTIVE, PASSIVE, QUALITIES, STATES, TIERS


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def about(schema: dict, text: str) -> dict:
    return {**schema, "description": text}


def nullable(schema: dict) -> dict:
    """The schema, or null."""
    kind = schema.get("type")
    if kind is None:
        return {"anyOf": [schema, {"type": "null"}]}
    out = {**schema, "type": [*(kind if isinstance(kind, list) else [kind]), "null"]}
    if "enum" in schema:
        out["enum"] = [*schema["enum"], None]
    return out


def fields(always: dict, sometimes: dict | None = None, *, text: str = "") -> dict:
    """An object with the fields in `always` every time, those in `sometimes` when they apply,
    and no others."""
    out = {"type": "object", "properties": {**always, **(sometimes or {})}, "required": list(always),
           "additionalProperties": False}
    return about(out, text) if text else out


def array(items: dict) -> dict:
    return {"type": "array", "items": items}


def map_of(values: dict, keys: tuple[str, ...] | None = None) -> dict:
    """An object whose keys are names (rules, states, arms: `keys` when they are known) and whose
    values are all `values`."""
    out = {"type": "object", "additionalProperties": values}
    return out if keys is None else {**out, "propertyNames": {"enum": list(keys)}}


INT = {"type": "integer"}
COUNT = {"type": "integer", "minimum": 0}
ID = {"type": "integer", "minimum": 1}
POSITIVE = ID  # a count or number that starts at 1
NUM = {"type": "number"}
STR = {"type": "string"}
BOOL = {"type": "boolean"}
TIME = {"type": "number", "description": "unix seconds"}
ISO = {"type": "string", "format": "date-time", "description": "the same time in ISO 8601 (UTC)"}
MS = {"type": "number", "description": "milliseconds"}
OPEN = {"type": "object", "description": "free-form: its keys vary"}
WARNINGS = about(array(STR), "what the call could not do as asked, in words (empty when all went well)")
IDS = array(ID)
STATE = {"type": "string", "enum": list(STATES)}
PHASE = about({"type": "string", "enum": [PASSIVE, ACTIVE]},
              "the learning phase: passive until there is enough use for the thresholds to be trusted")
NODE = about(STR, "a node of the spiderweb: episode:ID, fact:KEY or entity:TYPE:VALUE")
NODE_STATE = about({"type": "string", "enum": [*STATES, "current", "retracted", "entity"]},
                   "a memory's state, `current` or `retracted` for a fact, `entity` for an entity")
SOURCE = about(STR, "who or what said it: KIND:REF, e.g. person:ines, agent:NAME, episode:12")


def timed(names: tuple[str, ...], nullable_ones: tuple[str, ...] = ()) -> dict:
    """Each time as unix seconds and as its ISO twin (`NAME_iso`)."""
    out = {}
    for name in names:
        can_be_null = name in nullable_ones
        out[name] = nullable(TIME) if can_be_null else TIME
        out[f"{name}_iso"] = nullable(ISO) if can_be_null else ISO
    return out


def page_of(item: str, text: str) -> dict:
    return fields({"items": array(ref(item)), "offset": COUNT,
                   "next_offset": about(nullable(COUNT), "the offset of the next page; null on the last")}, text=text)


# -- fields several bodies share --------------------------------------------------------------

_MEMORY_TIMES = ("event_at", "recorded_at", "last_seen_at", "last_access_at", "updated_at", "potentiated_at",
                 "stale_at", "replayed_at", "tier_at")
_MEMORY_NEVER_NULL = ("event_at", "recorded_at", "last_seen_at", "updated_at")
MEMORY_FIELDS = {
    "id": ID, "agent": about(STR, "the namespace"), "kind": STR, "content": STR,
    "content_hash": about(STR, "what repeats and duplicates are recognised by"),
    "occurrences": about(POSITIVE, "how often the same text was observed within the attention window"),
    "source": nullable(STR), "session": nullable(STR), "importance": about(NUM, "0 to 1"),
    "factual": about(BOOL, "pinned as factual: it does not fade"), "irrelevant": BOOL,
    "context": about(OPEN, "the context it was observed in, as given (nested up to 4 levels)"),
    "access_count": COUNT, "success_count": COUNT, "failure_count": COUNT, "state": STATE,
    "superseded_by": about(nullable(ID), "the memory a merge folded this one into"),
    "confidence": about(NUM, "0 to 1; lowered by stale decay"), "quality": {"type": "string", "enum": list(QUALITIES)},
    "strength_factor": about(NUM, "lowered when newer memories contradict it"),
    "tier": about({"type": "string", "enum": list(TIERS)}, "cold memories rank lower in recall"),
    **timed(_MEMORY_TIMES, tuple(t for t in _MEMORY_TIMES if t not in _MEMORY_NEVER_NULL)),
}

TIMES = about(array(ref("StatedTime")), "the times the text states, resolved (only when it states one)")

PURGE_FIELDS = {
    "purge": about(ID, "the audit entry that records the purge"), "memories": about(IDS, "the memories purged"),
    "facts": array(fields({"key": STR}, {"retracted": about(BOOL, "no value was left"), "values_removed": COUNT,
                                         "removed": about(BOOL, "the fact itself went, key and all")})),
    "entities": about(COUNT, "spiderweb entities that went: named, or only these memories mentioned them"),
    "topics_removed": about(array(STR), "dossier topics that went, every version with them"),
    "dossier_versions_removed": COUNT,
    "audit_redacted": COUNT, "dossier_lines_redacted": COUNT, "capsule_lines_redacted": COUNT,
    "recalls": about(COUNT, "logged recalls whose query was redacted"), "arena_episodes": COUNT,
    "phase_runs": COUNT, "wal_cleared": about(BOOL, "false while another process still reads the old pages"),
    "heap_cleared": about(BOOL, "false when the role may not rewrite a table holding the old rows (PostgreSQL)"),
    "store": {"type": "string", "enum": ["sqlite", "postgres"], "description": "the store that was purged"},
    "dossiers_rewritten": array(STR),
    "backups_holding": about(array(STR), "database copies that still hold the text (remove them to be rid of it)"),
    "elapsed_ms": fields({"removed": MS, "regenerated": MS}),
}

STRATEGY = {"arm": about(STR, "the strategy used"),
            "chosen_by": {"type": "string", "enum": ["mode", "config", "arena", "home arena"]}}
