"""A purge: what it gathers and the order of its steps. Every function takes a connection and
runs inside the caller's transaction (Database.run for `plan`, Database.transact for `purge`),
calling the SQL of strata_daemon/store/purge.py.

`plan` reads what a purge would take (the dry run, the inspector's confirmation); `purge`
takes it: the memories and the memories merged into them, the fact values captured from them
(a fact keeps what its other sources say, else it is retracted), the words in the audit trail,
dossier versions, capsule renders and overrides, recall queries, arena episodes and phase
results, the spiderweb nodes and the entities only they mentioned, vectors and the full-text
index. The audit keeps that it happened (who, when, the hashes), never the words.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.facts.keys import normalise_key
from strata_daemon.forgetting import derived
from strata_daemon.forgetting.redaction import Purged
from strata_daemon.store import erase, graph as web_store, purge as store

PURGE_RULE = "purge"  # the rule a retraction left by a purge is recorded under
MAX_IDS = 10_000


def _with_merged(conn, agent: str, ids: list[int]) -> list[int]:
    """IDS and, repeatedly, the memories consolidation merged with them (into them, or they
    into): near-duplicates that hold the same words."""
    out, frontier = list(dict.fromkeys(ids)), list(dict.fromkeys(ids))
    while frontier:
        found = [i for i in store.merged_with(conn, agent, frontier) if i not in out]
        out += found
        frontier = found
    return out


def _memories(conn, agent: str, ids: list[int]) -> list:
    rows = store.memories(conn, agent, ids)
    missing = sorted(set(ids) - {r["id"] for r in rows})
    if missing:
        raise NotFound(f"no memory {missing[0]} in namespace {agent!r}", hint="`strata timeline` lists what this namespace holds")
    return rows


def _values(conn, agent: str, ids: list[int], keys: list[str]) -> list:
    """Fact values captured from these memories, and every value of these facts."""
    out = store.values_from(conn, agent, [str(i) for i in ids]) + store.values_of(conn, agent, keys)
    return list({r["id"]: r for r in out}.values())


def _facts_named(conn, agent: str, labels: list[str]) -> list[str]:
    keys = [normalise_key(label) for label in labels]
    known = store.known_keys(conn, agent, keys)
    missing = [k for k in keys if k not in known]
    if missing:
        raise NotFound(f"no fact {missing[0]!r} in this namespace", hint="`strata fact list` shows the keys")
    return keys


def _purged(memories, values, texts: list[str]) -> Purged:
    p = Purged()
    for m in memories:
        p.add_memory(m["id"], m["content"])
    for v in values:
        p.add_value(v["id"], v["label"], v["value"])
        p.add_value(v["id"], v["key"], v["value"])
    for t in texts:
        p.add_text(t)
    return p


@dataclass
class Asked:
    """What a purge is asked to take: memories by id, facts by label or key (their values; with
    `whole`, the facts themselves, for a key or label that holds the words), dossier topics and
    entities that hold the words, and the texts themselves."""
    ids: list[int] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    whole: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    entities: list[tuple[str, str]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, *, ids=(), keys=(), whole=(), topics=(), entities=(), texts=()) -> Asked:
        return cls(list(ids), list(keys), list(whole), list(topics), [tuple(e) for e in entities], list(texts))

    def as_dict(self) -> dict:
        return {"ids": self.ids, "keys": self.keys, "whole": self.whole, "topics": self.topics,
                "entities": [list(e) for e in self.entities], "texts": self.texts}


def _gather(conn, agent: str, asked: Asked):
    """(memories with what was merged into them, fact values, fact keys, whole fact keys, what to
    look for)."""
    if len(asked.ids) > MAX_IDS:
        raise InvalidInput(f"a purge takes at most {MAX_IDS} memories at once")
    memories = _memories(conn, agent, _with_merged(conn, agent, list(asked.ids)))
    whole = _facts_named(conn, agent, list(asked.whole))
    fact_keys = [k for k in _facts_named(conn, agent, list(asked.keys)) if k not in whole]
    values = _values(conn, agent, [m["id"] for m in memories], fact_keys + whole)
    purged = _purged(memories, values, list(asked.texts))
    for key in whole:
        purged.add_text(key)
    for topic in asked.topics:
        purged.add_topic(topic)
    return memories, values, fact_keys, whole, purged


def plan(conn, agent: str, asked: Asked) -> dict:
    """What a purge of these memories, facts, topics, entities and named texts takes with it."""
    memories, values, _, whole, purged = _gather(conn, agent, asked)
    dossier = derived.touching(store.dossier_texts(conn, agent, purged.search_terms()), "text", purged)
    render = store.latest_render(conn, agent)
    capsule_lines = [] if render is None else [
        line for lines in json.loads(render["blocks"]).values() for line in lines if purged.touches(line)]
    facts: dict[str, dict] = {}
    for v in values:
        f = facts.setdefault(v["key"], {"key": v["key"], "label": v["label"], "values": []})
        if v["value"] is not None:  # a retraction holds no words
            f["values"].append(v["value"])
    return {
        "memories": [{"id": m["id"], "text": m["content"], "merged_into": m["superseded_by"]} for m in memories],
        "facts": [{**f, "removed_whole": f["key"] in whole} for f in facts.values()],
        "topics": sorted(asked.topics),
        "entities": [f"entity:{t}:{v}" for t, v in asked.entities],
        "dossier_lines": [{"topic": d["topic"], "version": d["version"], "line": line}
                          for d in dossier if d["topic"] not in asked.topics
                          for line in d["text"].split("\n") if line.strip() and purged.touches(line)],
        "capsule_lines": capsule_lines,
    }


def _revive(conn, agent: str, fact_id: int, gone: list, sources: set[str], *, actor: str, now: float) -> int:
    """Values kept on a surviving memory's word: a confirmation records no value of its own, so
    when the memory that set a value goes, a memory that said the same later still supports it.
    Returns how many were kept."""
    kept = 0
    for value, valid_from in gone:
        if value is None:
            continue
        for c in store.confirmations(conn, fact_id, value):
            if c["source"] in sources or c["at"] is None or c["at"] < valid_from:
                continue
            kind, _, ref = c["source"].partition(":")
            store.add_value(conn, fact_id, agent, value, c["at"], now=now, source_kind=kind, source_ref=ref or None,
                            rule=c["rule"], actor=actor)
            kept += 1
            break
    return kept


def _drop_values(conn, agent: str, fact_id: int, dropped: set[int], sources: set[str], *, actor: str,
                 now: float, purge_id: int) -> dict:
    """Delete DROPPED values of a fact and close the gaps: each value that is left runs until
    the next; a value a surviving memory confirmed is kept on that memory's word; a fact left
    with nothing is retracted."""
    store.drop_conflicts(conn, fact_id, dropped)
    gone = store.value_rows(conn, dropped)
    store.drop_values(conn, dropped)
    kept = _revive(conn, agent, fact_id, gone, sources, actor=actor, now=now)
    rows = store.value_times(conn, fact_id)
    for this, nxt in zip(rows, [*rows[1:], None]):
        store.set_valid_to(conn, this["id"], None if nxt is None else nxt["valid_from"])
    retracted = not rows
    if retracted:
        store.add_value(conn, fact_id, agent, None, min(r["valid_from"] for r in gone), now=now, source_kind="rule",
                        source_ref=PURGE_RULE, rule=PURGE_RULE, actor=actor)
    current = store.value_at(conn, fact_id, now)
    store.touch_fact(conn, fact_id, None if current is None or current["value"] is None else current["valid_from"], now)
    store.audit(conn, agent, "fact", fact_id, "redact", {"purge": purge_id, "values_removed": len(gone),
                                                         "kept_on_other_sources": kept, "retracted": retracted},
                actor=actor, now=now)
    return {"retracted": retracted, "values_removed": len(gone)}


def _hashes(texts) -> list[str]:
    return [hashlib.sha256(t.encode()).hexdigest() for t in texts]


def _record(conn, agent: str, memories, fact_keys: list[str], whole: list[str], asked: Asked, *, actor: str,
            now: float) -> int:
    """The purge's own audit row, first: what it redacts points at it. Hashes, never words: a
    restore of an older backup finds by them what to purge again."""
    ids = [m["id"] for m in memories]
    one = len(ids) == 1 and not fact_keys and not whole and not asked.topics and not asked.entities
    return store.audit(conn, agent, "episode" if one else "purge", ids[0] if one else None, "purge", {
        "memories": [{"id": m["id"], "hash": m["content_hash"]} for m in memories],
        "facts": _hashes(fact_keys), "whole": _hashes(whole), "texts": _hashes(asked.texts),
        "topics": _hashes(asked.topics), "entities": _hashes(f"{t}:{v}" for t, v in asked.entities),
        "hash": memories[0]["content_hash"] if len(memories) == 1 else None}, actor=actor, now=now)


def _take_whole(conn, agent: str, whole: list[str], asked: Asked, purge_id: int, *, actor: str,
                now: float) -> tuple[list[str], int, list[str]]:
    """The facts, topics and entities named whole: gone with every row that holds them. Returns
    (the entity nodes gone with them, dossier versions removed, topics removed)."""
    nodes: list[str] = []
    for key, fact_id in store.fact_ids(conn, agent, whole).items():
        store.drop_fact(conn, fact_id)
        nodes += web_store.forget_node(conn, agent, f"fact:{key}")
        store.audit(conn, agent, "fact", fact_id, "redact", {"purge": purge_id, "removed": True}, actor=actor, now=now)
    for etype, value in asked.entities:
        store.drop_entity(conn, agent, etype, value)
        nodes += [f"entity:{etype}:{value}", *web_store.forget_node(conn, agent, f"entity:{etype}:{value}")]
    versions, topics = 0, []
    for topic in asked.topics:
        versions += store.drop_topic(conn, agent, topic)
        topics.append(topic)
    return nodes, versions, topics


def purge(conn, agent: str, asked: Asked, *, actor: str, now: float) -> dict:
    """Take these memories (and what was merged into them), these facts' values (or the facts
    whole), these topics and entities, and the named texts out of every layer. Final: nothing
    here can be undone."""
    memories, values, fact_keys, whole, purged = _gather(conn, agent, asked)
    all_ids = [m["id"] for m in memories]
    store.ensure_namespace(conn, agent, now)
    purge_id = _record(conn, agent, memories, fact_keys, whole, asked, actor=actor, now=now)
    store.start_redacting(conn, purge_id)
    try:
        sources = {f"episode:{i}" for i in all_ids}
        by_fact: dict[int, set[int]] = {}
        for v in values:
            if v["key"] not in whole:
                by_fact.setdefault(v["fact_id"], set()).add(v["id"])
        facts = {fid: _drop_values(conn, agent, fid, dropped, sources, actor=actor, now=now, purge_id=purge_id)
                 for fid, dropped in by_fact.items()}
        facts.update({v["fact_id"]: {"removed": True} for v in values if v["key"] in whole})
        entities, versions, topics_gone = _take_whole(conn, agent, whole, asked, purge_id, actor=actor, now=now)
        for i in all_ids:
            entities += web_store.forget_node(conn, agent, f"episode:{i}")
        # The entities only these memories mentioned go with them, and so do their words.
        for ent in entities:
            purged.add_text(ent.split(":", 2)[2], whole=False)
            purged.add_text(ent)
        audit = derived.redact_audit(conn, agent, purged, set(by_fact), sources, purge_id,
                                     {v["fact_id"] for v in values if v["key"] in whole})
        dossier_lines, topics = derived.redact_dossiers(conn, agent, purged)
        capsule_lines = derived.redact_capsule(conn, agent, purged, now)
        logs = derived.redact_logs(conn, agent, purged, all_ids)
        if all_ids:
            store.drop_pairs(conn, agent, all_ids)
            store.drop_vectors(conn, all_ids)
            store.drop_memories(conn, agent, all_ids)
    finally:
        store.stop_redacting(conn)
    return {"purge": purge_id, "memories": all_ids, "facts": [
        {"key": v["key"], **facts[v["fact_id"]]} for v in {v["fact_id"]: v for v in values}.values()],
            "entities": len(entities), "topics_removed": topics_gone, "dossier_versions_removed": versions,
            "audit_redacted": audit, "dossier_lines_redacted": dossier_lines,
            "capsule_lines_redacted": capsule_lines, **logs, "_topics": sorted(set(topics) - set(topics_gone)),
            "_purged": purged,
            "_hashes": {m["content_hash"] for m in memories}, "_rewritten": erase.rewritten(conn)}
