"""The JSON schemas of what the HTTP API answers (pure data): one named shape per response body
(SCHEMAS), among them those several bodies refer to (a memory, a recall hit, a fact, an error).
They are built from the parts in shapes.py.

They are written from what the `Memory` methods return. An object lists the fields it always
has as required and the others as optional; a field that can be null says so; and an object
refuses fields it does not list, except where the body is open by nature (a memory's context,
a dossier's notes), so a handler whose output changes without this file fails the tests that
check the real server's answers against it (tests/test_http_openapi.py)."""

from __future__ import annotations

from strata_daemon.app.public import CONSOLIDATION_RULES as RULES, LINK_TYPES, STATES, TIERS
from strata_daemon.config.settings import MODES
from strata_daemon.faces.http.shapes import (
    BOOL, COUNT, ID, IDS, INT, MEMORY_FIELDS, MS, NODE, NODE_STATE, NUM, OPEN, PHASE, POSITIVE, PURGE_FIELDS,
    SOURCE, STATE, STR, STRATEGY, TIME, TIMES, WARNINGS, about, array, fields, map_of, nullable, page_of, ref,
    timed,
)

# -- errors ------------------------------------------------------------------------------------

ERROR = fields(
    {"error": about(STR, "the kind: invalid_input, unauthorized, not_permitted, not_found, conflict, "
                         "cas_mismatch, timeout, too_large, storage, embedding_unavailable, llm_unavailable, "
                         "config, internal"),
     "message": about(STR, "what went wrong")},
    {"hint": about(STR, "what to do about it"),
     "current": about(nullable(STR), "cas_mismatch only: the value the fact holds now (null: none)")},
    text="Every error has this body.")

# -- memories ----------------------------------------------------------------------------------

STATED_TIME = fields({"phrase": about(STR, "the words in the memory, e.g. `yesterday`"),
                      "date": about(STR, "the date they mean: 2023-05-07, 2023-05, 2023 or a range FROM..TO")},
                     text="A time a memory states, resolved against when it was said.")

MEMORY = fields(MEMORY_FIELDS, text="A memory as stored.")
MEMORY_DETAIL = fields(
    {**MEMORY_FIELDS,
     "scores": fields({"recency": NUM, "strength": NUM, "priority": NUM, "wilson": NUM, "trust": NUM, "tier": NUM,
                       "penalty": NUM, "eligible": about(BOOL, "whether a recall may return it"),
                       "reason": about(nullable(STR), "the thresholds it misses, and what that does"),
                       "phase": PHASE},
                      text="every score as of now (relevance and context depend on a query, so they are left out)"),
     "pending_access_events": about(COUNT, "uses not yet folded into its counts"),
     "history": about(array(fields({"at": TIME, "action": STR, "data": about(STR, "a JSON object, as text"),
                                    "actor": STR})), "its audit trail, oldest first"),
     "supersession": fields({"supersedes": IDS, "superseded_by": IDS},
                            text="the memories it supersedes and those that supersede it, newest first")},
    {"times": TIMES},
    text="A memory as stored, with its scores now and its history.")

CAPTURED_FACT = fields(
    {"key": nullable(STR), "rule": about(nullable(STR), "the capture rule that found it"),
     "status": about({"type": "string", "enum": ["created", "changed", "confirmed", "unchanged", "recorded",
                                                 "skipped"]}, "what the capture did (skipped: why is in reason)"),
     "episode_id": ID},
    {"value": STR, "previous": nullable(STR), "value_id": ID, "conflict": nullable(ref("FactConflictFlag")),
     "current": BOOL, "valid_from": TIME, "recorded_at": TIME, "replaces": nullable(ref("FactSide")),
     "replaced_by": nullable(ref("FactSide")), "reason": STR},
    text="A fact a capture rule set from an observation.")
STORED_MEMORY = fields(
    {"id": ID, "status": about({"type": "string", "enum": ["created", "repeat", "duplicate"]},
                               "created: a new memory; repeat: the same text within the attention window, "
                               "counted on the earlier memory; duplicate: already stored"),
     "occurrences": POSITIVE, "facts": about(array(ref("CapturedFact")), "the facts captured from it")},
    {"warnings": about(array(STR), "a time in the future, say")}, text="What storing an observation did.")
STORED_BATCH = fields({"created": COUNT, "repeat": COUNT, "duplicate": COUNT,
                       "ids": about(IDS, "each observation's memory, in the order sent"),
                       "facts_captured": COUNT}, text="What storing a batch of observations did.")
MEMORY_BATCH = fields({"items": array(ref("Memory")), "missing": about(IDS, "the ids this namespace does not hold")},
                      text="The memories asked for.")
_MERGED = {"merged_archived": about(IDS, "the memories merged with it, archived with it"),
           "merged_restored": about(IDS, "the memories merged with it, back as they were")}
STATE_CHANGE = fields({"id": ID, "state": STATE, "previous_state": STATE}, _MERGED,
                      text="A memory archived or restored.")
LIFECYCLE_CHANGE = fields(
    {"id": ID}, {"state": STATE, "previous_state": STATE, **_MERGED,
                 "changed": fields({}, {"factual": BOOL, "irrelevant": BOOL},
                                   text="the flags that changed, with their new values")},
    text="What changed on a memory: its state when one was sent, its flags when they were.")

# -- forgetting --------------------------------------------------------------------------------

PURGE = fields(PURGE_FIELDS, text="What a purge removed, from every layer, for good.")
PURGED_MEMORY = fields({"id": ID, "purged": {"type": "boolean", "const": True}, **PURGE_FIELDS},
                       text="A memory purged for good.")
_PLAN = {
    "memories": array(fields({"id": ID, "text": STR, "merged_into": nullable(ID)})),
    "facts": array(fields({"key": STR, "label": STR, "values": array(STR),
                           "removed_whole": about(BOOL, "the fact itself goes, key and all")})),
    "topics": about(array(STR), "dossier topics that go, every version with them"),
    "entities": about(array(STR), "spiderweb entities that go"),
    "dossier_lines": array(fields({"topic": STR, "version": POSITIVE, "line": STR})),
    "capsule_lines": array(STR),
}
TEXT_FORGETTING = fields(
    {"text": about(STR, "the text matched, its spaces folded"),
     "spellings": about(array(STR), "each spelling of the text found (any case, any accents: \"Müller\" for MULLER)"),
     "purge": BOOL,
     "applied": about(BOOL, "false: only listed"), **_PLAN},
    {"result": about({"anyOf": [fields({"archived": IDS, "retracted": array(STR)}), ref("Purge")]},
                     "with confirm: the memories archived and facts retracted, or (purge) the purge")},
    text="Everything that holds a text, and what forgetting it did.")
FACT_FORGETTING = fields({"applied": about(BOOL, "false: only listed"), **_PLAN},
                         {"key": STR, "matching": about(STR, "the words asked for"), "result": ref("Purge")},
                         text="A fact's values (or the facts holding a text), where they appear, and what purging "
                              "them did.")
TOPIC_FORGETTING = fields({"applied": about(BOOL, "false: only listed"), **_PLAN},
                          {"topic": STR, "matching": about(STR, "the words asked for"), "result": ref("Purge")},
                          text="A dossier topic (or the topics holding a text), and what purging it did.")

# -- recall ------------------------------------------------------------------------------------

_SIGNALS = ("relevance", "recency", "strength", "priority", "wilson", "context", "trust", "tier", "penalty")
RECALL_HIT = fields(
    {"rank": POSITIVE, "id": ID, "score": about(NUM, "the composite score"), "kind": STR, "content": STR,
     "event_at": TIME, "source": nullable(STR), "session": nullable(STR), "factual": BOOL,
     "context": about(OPEN, "the context it was observed in"),
     "tier": {"type": "string", "enum": list(TIERS)}, "state": STATE,
     "match": about(NUM, "how well it matches the query as measured (0..1): the larger of its cosine and the "
                         "share of the query's words it holds, not relative to the best hit"),
     "why": about(STR, "why it was recalled, in a line")},
    {"times": TIMES,
     "led": about(BOOL, "it states a fact the question names, so it leads the hits whatever its score"),
     "moved_above": about(IDS, "older memories alike it, for a question about now: it ranks just above them"),
     "explain": fields(
         {"signals": fields({s: NUM for s in _SIGNALS}, text="each signal of the composite, and its factors"),
          "match": fields({"cosine": nullable(NUM), "words": NUM}, text="the parts of `match`"),
          "retrievers": about(map_of(OPEN), "what found it and what each step added (fts, vector, fused, ...)"),
          "features": fields({"access_count": COUNT, "successes": COUNT, "failures": COUNT, "importance": NUM})},
         {"penalised": about(STR, "the thresholds it missed, and by how much it was lowered"),
          "superseded_by": about(IDS, "newer memories that supersede it, ranked above it"),
          "newer_alike": about(IDS, "newer memories alike it, moved above it")},
         text="why it ranked where it did (with explain)")},
    text="A memory a recall found.")
RECALL_STAGE = about({"type": "object", "required": ["stage", "candidates", "change", "ms"],
                      "properties": {"stage": STR, "candidates": COUNT, "change": INT, "ms": MS},
                      "additionalProperties": True},
                     "One step of a recall: the candidates after it, the change it made, its time, and what "
                     "else it reports (varies by step).")
RECALL_RESULT = fields(
    {"recall_id": about(nullable(ID), "what feedback names; null for a shared namespace (not logged)"),
     "agent": STR, "query": STR, "mode": {"type": "string", "enum": list(MODES)},
     "mode_used": about({"type": "string", "enum": list(MODES)},
                        "the mode that ran: balanced falls back to fast without the embedding model"),
     "k": POSITIVE, "phase": PHASE,
     "candidates": COUNT, "cold_matched": about(COUNT, "candidates in the cold tier"), "cold_factor": NUM,
     "fts_plan": fields({"strategy": {"type": "string", "enum": ["exact", "bounded", "none"]}},
                        {"scorer": {"type": "string", "enum": ["bm25", "idf-sum"]}, "reason": STR,
                         "common_terms": array(STR)}, text="how the full-text search ran"),
     "filtered": about(COUNT, "left out by the thresholds (scoring.thresholds = filter)"),
     "warnings": WARNINGS, "facts": about(array(ref("Fact")), "current facts whose key the query names"),
     "hits": array(ref("RecallHit")),
     "strategy": fields(STRATEGY, {"choice": about(ID, "the arena's choice in force")}),
     "weights": fields({w: NUM for w in _SIGNALS[:6]}, text="the composite weights used"),
     "working_set": about(nullable(fields({"activated": array(NODE), "evicted": array(NODE)})),
                          "the hits put in the working set; null when none were"),
     "elapsed_ms": MS},
    {"stages": about(array(ref("RecallStage")), "each step's work (with explain)")},
    text="The memories a query found, best first, and how the recall ran.")
CONTEXT_RESULT = fields(
    {"block": about(STR, "markdown to paste into a prompt: the capsule condensed, the facts the text names, the "
                         "memories (`#ID text` under the day said, newest first)"),
     "tokens": about(COUNT, "the block's tokens, never more than the budget"), "budget": POSITIVE,
     "tokenizer": about(STR, "the ruler: minilm-wordpiece, or words (each counted twice) without the packaged "
                             "model"),
     "recall_id": about(nullable(ID), "what the turn's feedback names; null when not logged"),
     "agent": STR, "mode_used": {"type": "string", "enum": list(MODES)}, "at": TIME,
     "parts": fields({"capsule": array(fields({"heading": STR, "lines": array(STR)})),
                      "facts": array(fields({"key": STR, "value": STR})),
                      "memories": array(fields({"id": ID, "rank": POSITIVE, "event_at": NUM, "cut": BOOL}))},
                     text="what the block holds"),
     "left_out": about(array({"type": "object"}), "what did not fit or repeated what the block says, and why"),
     "warnings": WARNINGS},
    text="A context block for one turn, within a token budget.")
FEEDBACK_RESULT = fields(
    {"recall_id": ID, "outcome": {"type": "string", "enum": ["success", "failure"]},
     "episodes": about(IDS, "the memories the outcome went to"), "used": nullable(IDS),
     "arena_episode": about(nullable(ID), "the arena evaluation episode it made, or null")},
    text="Where a recall's feedback went.")
_ARENA_CHOICE = fields({"id": ID, "kind": {"type": "string", "enum": ["adopt", "keep", "clear"]},
                        "arm": nullable(STR), "reason": STR, "run_id": nullable(ID), "actor": STR, "at": TIME})
ARENA = fields(
    {"agent": STR, "enabled": BOOL,
     "strategy": fields({**STRATEGY, "mode": {"type": "string", "enum": list(MODES)}, "preset": nullable(STR),
                         "reason": STR}, {"choice": ID, "warning": STR},
                        text="what a recall without a mode uses now, and why"),
     "default": about(STR, "the configured strategy (recall.mode)"),
     "arms": array(fields({"arm": STR, "mode": {"type": "string", "enum": list(MODES)}, "preset": nullable(STR),
                           "pulls": COUNT, "mean_reward": NUM,
                           "ucb": about(nullable(NUM), "null until the arm was tried")})),
     "retired_arms": about(array(STR), "arms with statistics that arena.arms no longer lists"),
     "episodes": fields({"total": COUNT, "used": COUNT, "shared": COUNT, "questions": COUNT},
                        text="the evaluation episodes, by where they came from"),
     "min_episodes": COUNT,
     "last_run": nullable(fields({"id": ID, "at": TIME, "episodes": COUNT,
                                  # A pair, not prefixItems: schemathesis rejects that keyword in answers.
                                  "pulls": about(array({"type": "array", "items": {"type": ["string", "number"]},
                                                        "minItems": 2, "maxItems": 2}),
                                                 "[arm, reward] in the order pulled"),
                                  "leader": nullable(STR),
                                  "confirm": about(nullable(map_of(NUM)), "each arm's mean reward on the "
                                                                          "confirmation episodes"),
                                  "decision": {"type": "string", "enum": ["adopt", "keep", "too_few"]},
                                  "reason": STR, "seconds": NUM})),
     "own_choice": nullable(_ARENA_CHOICE), "home_choice": nullable(_ARENA_CHOICE)},
    text="The retrieval arena of the namespace.")

# -- spiderweb ---------------------------------------------------------------------------------

REACHED_NODE = fields(
    {"node": NODE, "activation": NUM, "depth": POSITIVE, "path": about(array(NODE), "from a seed to this node"),
     "weight": about(NUM, "of the last edge on the path"),
     "via": about(STR, "what that edge is: `edge` (learned together) or a link type"), "state": NODE_STATE},
    text="A node a spread reached.")
SPREAD_RESULT = fields(
    {"seeds": array(NODE), "depth": POSITIVE, "threshold": NUM, "fan_out": BOOL,
     "reached": about(array(ref("ReachedNode")), "most activated first"), "warnings": WARNINGS},
    {"left_out": fields({"below_threshold": COUNT, "strongest": nullable(NUM)},
                        text="related: the item's edges and links too weak for the threshold, which the spread did "
                             "not follow, and the strength of the strongest")},
    text="What a spread of activation reached.")
RATED = {"strength": about(NUM, "weight / graph.edge_cap: what a spread passes on"),
         "followed": about(BOOL, "whether a spread (related) at the threshold follows it")}
NEIGHBOURHOOD = fields(
    {"node": NODE, "state": NODE_STATE, "threshold": NUM,
     "neighbours": about(array(fields({"node": NODE, "weight": NUM, "activations": COUNT, "created_at": TIME,
                                       "last_activated_at": TIME, **RATED})), "learned edges, heaviest first"),
     "links": about(array(fields({"src": NODE, "dst": NODE,
                                  "type": {"type": "string", "enum": ["mentions", *LINK_TYPES]},
                                  "created_at": TIME, "actor": STR, **RATED})), "typed links, newest first")},
    text="A node's edges and links.")

# -- facts -------------------------------------------------------------------------------------

_FACT_ALWAYS = {
    "key": about(STR, "the normalised key"), "label": about(STR, "the key as first written"), "fact_id": ID,
    "importance": NUM, "ttl_seconds": about(nullable(NUM), "after this it is stale"),
    **timed(("confirmed_at",), ("confirmed_at",)), "stale": BOOL,
}
_FACT_VALUE = {
    "value_id": ID, **timed(("valid_from",)), "valid_to": about(nullable(TIME), "null while it holds"),
    "recorded_at": TIME, "source": SOURCE, "rule": about(nullable(STR), "the capture rule, if one set it"),
    "confidence": NUM, "age_seconds": NUM,
}
FACT = fields({**_FACT_ALWAYS, "value": STR, **_FACT_VALUE}, text="A fact and its value at the time asked.")
FACT_VALUE = fields(
    {"value_id": ID, "value": about(nullable(STR), "null: retracted"), **timed(("valid_from",)),
     **timed(("valid_to",), ("valid_to",)), **timed(("recorded_at",)), "source": SOURCE, "rule": nullable(STR),
     "confidence": NUM, "actor": STR, "current": about(BOOL, "the value now")},
    text="One value a fact had, and when it held.")
FACT_HISTORY = fields({**_FACT_ALWAYS, "value": about(nullable(STR), "null: none now"),
                       "history": about(array(ref("FactValue")), "oldest first")}, _FACT_VALUE,
                      text="A fact now (the value fields only when it has a value now) and every value it had.")
FACT_SIDE = fields({"value": nullable(STR), "source": SOURCE}, text="A value next to another, and its source.")
REASON = about(nullable({"type": "string", "enum": ["disagree", "late", "ended"]}),
               "disagree: another source gave a different value within facts.conflict_window_seconds; late: a "
               "different, newer value was already known; ended: a newer memory says it changed, with no value "
               "strata could read; null: an ordinary change")
FACT_CONFLICT_FLAG = fields({"id": ID, "flagged": about(BOOL, "a conflict (reason is not null): for a person to "
                                                                "look at"),
                             "reason": REASON, "late": about(BOOL, "a newer value was already known")},
                            text="The change of value this write recorded.")
FACT_CHANGE = fields(
    {"status": about({"type": "string", "enum": ["created", "changed", "confirmed", "unchanged", "recorded",
                                                 "retracted"]},
                     "confirmed: it already held that value; recorded: an older time, history only"),
     "key": STR, "label": STR, "value": about(nullable(STR), "null: retracted"), "previous": nullable(STR),
     "value_id": ID, "conflict": nullable(ref("FactConflictFlag")),
     "current": about(BOOL, "whether this is the value now"), **timed(("valid_from",)), "recorded_at": TIME,
     "source": SOURCE},
    {"replaces": about(nullable(ref("FactSide")), "the value it follows"),
     "replaced_by": about(nullable(ref("FactSide")), "the value that follows it (a write in the past)")},
    text="What a write to a fact did.")
_CONFLICT_SIDE = fields({"value": nullable(STR), **timed(("valid_from",)), "source": SOURCE})
FACT_CONFLICT = fields(
    {"id": ID, "key": STR, "reason": REASON, "late": BOOL, **timed(("at",)),
     "acknowledged_at": nullable(TIME), "old": nullable(_CONFLICT_SIDE), "new": _CONFLICT_SIDE,
     "next": nullable(fields({"value": nullable(STR), **timed(("valid_from",))}))},
    text="A conflict between values of a fact: sources disagreeing, a late older value, or one a memory ended.")

# -- dossiers, capsule -------------------------------------------------------------------------

DOSSIER_LIST = fields(
    {"topics": array(fields(
        {"topic": STR, "query": about(STR, "what recall looks for"), "facts": about(array(STR), "fact-key prefixes"),
         "origin": {"type": "string", "enum": ["config", "capsule", "person", "discovered"]}, "enabled": BOOL,
         "version": nullable(POSITIVE), **timed(("refreshed_at",), ("refreshed_at",)), "checked_at": nullable(TIME),
         "due": about(BOOL, "the next scheduled refresh takes it")},
        {"proposed_because": about(OPEN, "why it was discovered")})),
     "warnings": WARNINGS, "refresh_interval_hours": NUM, "min_interval_hours": NUM},
    text="The topics a namespace keeps dossiers on, and their schedule.")
DOSSIER = fields(
    {"topic": STR, "version": POSITIVE, "text": about(STR, "markdown; every line cites its sources"),
     "sources": array(fields({"id": about(STR, "as cited: e12 a memory, f7 a fact value")},
                             {"salience": NUM, "line": about(STR, "a fact value's: the dossier line citing it")})),
     "generator": STR, "input_hash": STR, "notes": about(OPEN, "how it was written (off_topic, fallback, llm, ...)"),
     **timed(("created_at",)), "actor": STR},
    text="One version of a dossier.")
DOSSIER_REFRESH = fields(
    {"topic": STR, "status": about({"type": "string", "enum": ["refreshed", "unchanged"]},
                                   "unchanged: its input was the same, no new version"),
     "version": POSITIVE, "generator": STR, "input_hash": STR, "warnings": WARNINGS, "elapsed_ms": MS},
    {"intended_generator": STR, "lines": COUNT, "sources": COUNT, "notes": OPEN},
    text="What refreshing a dossier did (the last four fields only when it wrote a version).")
CAPSULE_TEXT = fields(
    {"path": STR, "text": STR, "ok": about(BOOL, "false when a problem is an error"),
     "problems": array(fields({"line": about(COUNT, "0: the whole file"),
                               "level": {"type": "string", "enum": ["error", "warning"]}, "code": STR,
                               "message": STR}))},
    {"example": about({"type": "boolean", "const": True}, "no capsule yet: this is the shipped example")},
    text="The capsule's text and its problems.")

# -- maintenance -------------------------------------------------------------------------------

CONSOLIDATION_RUN = fields(
    {"run": about(nullable(ID), "what `strata consolidate --undo` takes; null for a dry run"), "dry_run": BOOL,
     "counts": about(map_of(COUNT, RULES), "changes by rule"),
     "memories": about(COUNT, "the memories considered"),
     "actions": array(fields(
         {"rule": {"type": "string", "enum": list(RULES)}, "episode": ID,
          "set": about(OPEN, "the fields it changes, with their new values"), "reason": STR},
         {"before": about(OPEN, "those fields before"), "into": about(ID, "merge: the memory kept"),
          "absorbed": about(IDS, "merge: the memories folded into this one"),
          "by": about(ID, "interference: the newer memory"), "with": about(ID, "associate: the other memory")})),
     "seconds": NUM},
    text="A consolidation pass: what it changed, or (dry run) would.")
_PHASE_RUN = fields({**timed(("started_at",)), "ended_at": nullable(TIME),
                     "status": {"type": "string", "enum": ["running", "ok", "failed", "interrupted"]},
                     "result": about(nullable(OPEN), "what the run reported"), "error": nullable(STR)})
_LISTENER = fields({"address": STR, "up": BOOL, "error": nullable(STR), "hint": nullable(STR)})
STATUS_REPORT = fields(
    {"agent": STR, "home": STR, "database": STR, "database_bytes": COUNT,
     "episodes": COUNT, "by_state": map_of(COUNT, STATES),
     "by_tier": fields({t: COUNT for t in TIERS}, text="the memories recall reaches, by tier"),
     "recalls": COUNT, "feedback": COUNT, "pending_access_events": COUNT,
     "embedding_backlog": about(COUNT, "memories not embedded yet"),
     "embedding_model": nullable(fields({"name": STR, "dimension": POSITIVE, "text": STR})),
     "facts": about(COUNT, "facts with a value now"), "web_edges": COUNT,
     "dossiers": about(COUNT, "topics with a written dossier"), "phase": PHASE,
     "recall_strategy": fields(STRATEGY, {"warning": STR}, text="what a recall without a mode uses"),
     "strength": about(nullable(fields({**timed(("taken_at",)), "episodes": COUNT, "mean": nullable(NUM),
                                        "p10": nullable(NUM), "p50": nullable(NUM), "p90": nullable(NUM),
                                        "weak": COUNT, "potentiated": COUNT, "edges": COUNT})),
                       "the newest nightly strength snapshot, or null"),
     "capsule": fields({"path": STR, "ok": BOOL, "lines": COUNT, "errors": COUNT}),
     "daemon": fields(
         {"running": about(nullable(INT), "the daemon's pid, or null when none runs"), "loop_count": COUNT,
          "heartbeat_age_seconds": nullable(NUM),
          "listeners": about(nullable(fields({"unix": nullable(_LISTENER), "tcp": nullable(_LISTENER)})),
                             "the API listeners as the running daemon recorded them, or null"),
          "phases": array(fields({"phase": STR, "every_seconds": NUM, "after": nullable(STR), "at_start": BOOL,
                                  "last": nullable(_PHASE_RUN), **timed(("next_at",), ("next_at",))})),
          "recent_errors": array(fields({"phase": STR, **timed(("started_at",)), "error": nullable(STR)}))})},
    text="The namespace in numbers, and the daemon.")


SCHEMAS = {
    "Error": ERROR, "Memory": MEMORY, "MemoryDetail": MEMORY_DETAIL, "StatedTime": STATED_TIME,
    "StoredMemory": STORED_MEMORY, "CapturedFact": CAPTURED_FACT, "StoredBatch": STORED_BATCH,
    "MemoryBatch": MEMORY_BATCH, "MemoryPage": page_of("Memory", "A page of memories."),
    "StateChange": STATE_CHANGE, "LifecycleChange": LIFECYCLE_CHANGE, "Purge": PURGE, "PurgedMemory": PURGED_MEMORY,
    "TextForgetting": TEXT_FORGETTING, "FactForgetting": FACT_FORGETTING,
    "TopicForgetting": TOPIC_FORGETTING,
    "RecallResult": RECALL_RESULT, "RecallHit": RECALL_HIT, "RecallStage": RECALL_STAGE,
    "FeedbackResult": FEEDBACK_RESULT, "Arena": ARENA, "ContextResult": CONTEXT_RESULT,
    "SpreadResult": SPREAD_RESULT, "ReachedNode": REACHED_NODE, "Neighbourhood": NEIGHBOURHOOD,
    "Fact": FACT, "FactPage": page_of("Fact", "A page of facts."), "FactHistory": FACT_HISTORY,
    "FactValue": FACT_VALUE, "FactChange": FACT_CHANGE, "FactSide": FACT_SIDE, "FactConflictFlag": FACT_CONFLICT_FLAG,
    "FactConflict": FACT_CONFLICT,
    "DossierList": DOSSIER_LIST, "Dossier": DOSSIER, "DossierRefresh": DOSSIER_REFRESH, "CapsuleText": CAPSULE_TEXT,
    "ConsolidationRun": CONSOLIDATION_RUN, "StatusReport": STATUS_REPORT,
}
