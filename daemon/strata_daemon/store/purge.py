"""A purge in SQL: every function takes a connection and runs inside the caller's transaction.

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

from strata_daemon.store.vectors import BUMP_EPOCH
from strata_daemon.store.vectors import TABLE as VECTORS
from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.facts.keys import normalise_key
from strata_daemon.store.facts import next_value_id
from strata_daemon.store import floors
from strata_daemon.store import graph as web_store
from strata_daemon.forgetting.redaction import REDACTED, Purged, redact_line, redact_lines

PURGE_RULE = "purge"  # the rule a retraction left by a purge is recorded under
MAX_IDS = 10_000
# Audit actions whose data holds ids, counts, hashes and kinds, never words: a purge's scan of
# the trail (one row a memory stored, and more) skips them. Consolidation's reasons quote fact
# values ("changed from 'room B-12' to ..."), so its entries are read.
_WORDLESS = ("create", "repeat", "flags", "purge", "feedback", "decay", "redact")


def _in(ids) -> str:
    return ", ".join("?" * len(ids))


def _with_merged(conn, agent: str, ids: list[int]) -> list[int]:
    """IDS and, repeatedly, the memories consolidation merged into them: near-duplicates that
    hold the same words."""
    out, frontier = list(dict.fromkeys(ids)), list(dict.fromkeys(ids))
    while frontier:
        found = [r[0] for r in conn.execute(f"SELECT id FROM episodes WHERE agent = ? AND superseded_by IN "
                                            f"({_in(frontier)})", (agent, *frontier)) if r[0] not in out]
        out += found
        frontier = found
    return out


def _memories(conn, agent: str, ids: list[int]) -> list:
    rows = conn.execute(f"SELECT id, content, content_hash, superseded_by FROM episodes WHERE agent = ? "
                        f"AND id IN ({_in(ids)}) ORDER BY id", (agent, *ids)).fetchall() if ids else []
    missing = sorted(set(ids) - {r["id"] for r in rows})
    if missing:
        raise NotFound(f"no memory {missing[0]} in namespace {agent!r}")
    return rows


def _values(conn, agent: str, ids: list[int], keys: list[str]) -> list:
    """Fact values captured from these memories, and every value of these facts."""
    refs = [str(i) for i in ids]
    out = []
    if refs:
        out += conn.execute(
            "SELECT v.id, v.fact_id, v.value, v.valid_from, f.key, f.label FROM fact_values v JOIN facts f ON "
            f"f.id = v.fact_id WHERE v.agent = ? AND v.source_kind = 'episode' AND v.source_ref IN ({_in(refs)})",
            (agent, *refs)).fetchall()
    if keys:
        out += conn.execute(
            "SELECT v.id, v.fact_id, v.value, v.valid_from, f.key, f.label FROM fact_values v JOIN facts f ON "
            f"f.id = v.fact_id WHERE f.agent = ? AND f.key IN ({_in(keys)})", (agent, *keys)).fetchall()
    return list({r["id"]: r for r in out}.values())


def _facts_named(conn, agent: str, labels: list[str]) -> list[str]:
    keys = [normalise_key(label) for label in labels]
    known = {r[0] for r in conn.execute(f"SELECT key FROM facts WHERE agent = ? AND key IN ({_in(keys)})",
                                        (agent, *keys))} if keys else set()
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


def _candidates(conn, sql: str, params: tuple, expr: str, purged: Purged) -> list:
    """Rows of SQL whose EXPR may hold what is purged: its needles (as stored in JSON too), its
    cites, the values of its facts. Narrowed in SQLite; the caller tests each line."""
    terms = purged.json_needles() + purged.raw_needles() + [f"e{i}" for i in purged.episodes] + \
        [f"f{i}" for i in purged.values] + sorted({json.dumps(v)[1:-1] for _, v in purged.fact_lines if v})
    rows: dict = {}
    for start in range(0, len(terms), 200):
        part = terms[start:start + 200]
        for r in conn.execute(f"{sql} AND ({' OR '.join(f'instr(lower({expr}), lower(?))' for _ in part)})",
                              (*params, *part)):
            rows[r["id"]] = r
    return list(rows.values())


def _touching(conn, sql: str, params: tuple, column: str, purged: Purged) -> list:
    """Rows of SQL (which selects `id` and COLUMN) whose COLUMN the purge touches."""
    return [r for r in _candidates(conn, sql, params, column, purged)
            if r[column] is not None and purged.touches_json(r[column])]


def _gather(conn, agent: str, ids: list[int], keys: list[str], texts: list[str]):
    """(memories with what was merged into them, fact values, fact keys, what to look for)."""
    if len(ids) > MAX_IDS:
        raise InvalidInput(f"a purge takes at most {MAX_IDS} memories at once")
    memories = _memories(conn, agent, _with_merged(conn, agent, list(ids)))
    fact_keys = _facts_named(conn, agent, list(keys))
    values = _values(conn, agent, [m["id"] for m in memories], fact_keys)
    return memories, values, fact_keys, _purged(memories, values, list(texts))


def plan(conn, agent: str, *, ids: list[int] = (), keys: list[str] = (), texts: list[str] = ()) -> dict:
    """What a purge of these memories, facts (by key) and named texts takes with it."""
    memories, values, _, purged = _gather(conn, agent, ids, keys, texts)
    dossier = _touching(conn, "SELECT id, topic, version, text FROM dossier_versions WHERE agent = ?", (agent,),
                        "text", purged)
    render = conn.execute("SELECT id, blocks FROM capsule_renders WHERE agent = ? ORDER BY id DESC LIMIT 1",
                          (agent,)).fetchone()
    capsule_lines = [] if render is None else [
        line for lines in json.loads(render["blocks"]).values() for line in lines if purged.touches(line)]
    facts: dict[str, dict] = {}
    for v in values:
        f = facts.setdefault(v["key"], {"key": v["key"], "label": v["label"], "values": []})
        if v["value"] is not None:  # a retraction holds no words
            f["values"].append(v["value"])
    return {
        "memories": [{"id": m["id"], "text": m["content"], "merged_into": m["superseded_by"]} for m in memories],
        "facts": list(facts.values()),
        "dossier_lines": [{"topic": d["topic"], "version": d["version"], "line": line}
                          for d in dossier for line in d["text"].split("\n") if line.strip() and purged.touches(line)],
        "capsule_lines": capsule_lines,
    }


def _drop_values(conn, agent: str, fact_id: int, dropped: set[int], sources: set[str], *, actor: str,
                 now: float, purge_id: int) -> dict:
    """Delete DROPPED values of a fact and close the gaps: each value that is left runs until
    the next; a value a surviving memory confirmed is kept on that memory's word; a fact left
    with nothing is retracted."""
    conn.execute(f"DELETE FROM fact_conflicts WHERE fact_id = ? AND (old_value_id IN ({_in(dropped)}) OR "
                 f"new_value_id IN ({_in(dropped)}) OR next_value_id IN ({_in(dropped)}))",
                 (fact_id, *dropped, *dropped, *dropped))
    gone = conn.execute(f"SELECT value, valid_from FROM fact_values WHERE id IN ({_in(dropped)})",
                        tuple(dropped)).fetchall()
    conn.execute(f"DELETE FROM fact_values WHERE id IN ({_in(dropped)})", tuple(dropped))
    floors.raise_floor(conn, floors.FACT_VALUES, max(dropped))
    kept = 0
    # A confirmation records no value of its own: when the memory that set a value goes, a
    # memory that said the same later still supports it.
    for value, valid_from in gone:
        if value is None:
            continue
        for c in conn.execute(
                "SELECT json_extract(data, '$.source') AS source, json_extract(data, '$.valid_from') AS at, "
                "json_extract(data, '$.rule') AS rule FROM audit WHERE item_kind = 'fact' AND item_id = ? AND "
                "action = 'confirmed' AND json_extract(data, '$.value') = ? ORDER BY id", (fact_id, value)):
            if c["source"] in sources or c["at"] is None or c["at"] < valid_from:
                continue
            kind, _, ref = c["source"].partition(":")
            conn.execute("INSERT INTO fact_values (id, fact_id, agent, value, valid_from, valid_to, recorded_at, "
                         "source_kind, source_ref, confidence, rule, actor) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, 1.0, ?, "
                         "?)", (next_value_id(conn), fact_id, agent, value, c["at"], now, kind, ref or None, c["rule"],
                                actor))
            kept += 1
            break
    rows = conn.execute("SELECT id, valid_from FROM fact_values WHERE fact_id = ? ORDER BY valid_from, id",
                        (fact_id,)).fetchall()
    for this, nxt in zip(rows, [*rows[1:], None]):
        conn.execute("UPDATE fact_values SET valid_to = ? WHERE id = ?", (None if nxt is None else nxt["valid_from"],
                                                                         this["id"]))
    retracted = not rows
    if retracted:
        conn.execute("INSERT INTO fact_values (id, fact_id, agent, value, valid_from, valid_to, recorded_at, "
                     "source_kind, source_ref, confidence, rule, actor) VALUES (?, ?, ?, NULL, ?, NULL, ?, 'rule', ?, 1.0, "
                     "?, ?)", (next_value_id(conn), fact_id, agent, min(r["valid_from"] for r in gone), now, PURGE_RULE,
                               PURGE_RULE, actor))
    current = conn.execute("SELECT value, valid_from FROM fact_values WHERE fact_id = ? AND valid_from <= ? "
                           "ORDER BY valid_from DESC, id DESC LIMIT 1", (fact_id, now)).fetchone()
    conn.execute("UPDATE facts SET confirmed_at = ?, updated_at = ? WHERE id = ?",
                 (None if current is None or current["value"] is None else current["valid_from"], now, fact_id))
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES (?, ?, 'fact', ?, "
                 "'redact', ?, ?)", (now, agent, fact_id, json.dumps({"purge": purge_id, "values_removed": len(gone),
                                                                       "kept_on_other_sources": kept,
                                                                       "retracted": retracted}), actor))
    return {"retracted": retracted, "values_removed": len(gone)}


def _redact_audit(conn, agent: str, purged: Purged, fact_ids: set[int], sources: set[str], purge_id: int) -> int:
    """Audit rows that hold purged words keep their when, who and what; their data becomes a
    pointer to the purge. A fact's rows are matched by source and value as well as by text."""
    hit = {r["id"] for r in _touching(conn, f"SELECT id, data FROM audit WHERE agent = ? AND action NOT IN "
                                            f"({_in(_WORDLESS)})",
                                      (agent, *_WORDLESS), "data", purged)}
    # A purged memory's own entries (its creation's source, a reason given when it was archived)
    # speak of it whatever their words: they keep only that they happened.
    if purged.episodes:
        ids = sorted(purged.episodes)
        hit |= {r[0] for r in conn.execute(f"SELECT id FROM audit WHERE item_kind = 'episode' AND item_id IN "
                                           f"({_in(ids)}) AND action <> 'purge'", ids)}
    if fact_ids:
        left = {(r[0], r[1]) for r in conn.execute(
            f"SELECT fact_id, value FROM fact_values WHERE fact_id IN ({_in(fact_ids)}) AND value IS NOT NULL",
            tuple(fact_ids))}
        gone = {v for _, v in purged.fact_lines}
        for r in conn.execute(f"SELECT id, item_id, data FROM audit WHERE item_kind = 'fact' AND item_id IN "
                              f"({_in(fact_ids)}) AND action <> 'redact'", tuple(fact_ids)):
            d = json.loads(r["data"])
            words = [w for w in (d.get("value"), d.get("previous")) if w is not None
                     and (r["item_id"], w) not in left]
            if d.get("source") in sources or any(w.strip().casefold() in gone for w in words):
                hit.add(r["id"])
    conn.executemany("UPDATE audit SET data = ? WHERE id = ?",
                     [(json.dumps({"redacted_by_purge": purge_id}), i) for i in sorted(hit)])
    return len(hit)


def _redact_dossiers(conn, agent: str, purged: Purged) -> tuple[int, set[str]]:
    """Dossier versions: lines that cite or quote what is purged, sources that name it, and the
    prompt or raw output a model version kept. Returns (lines redacted, topics whose current
    version changed)."""
    n, topics = 0, set()
    for r in _candidates(conn, "SELECT id, topic, version, text, sources, notes FROM dossier_versions WHERE agent = ?",
                         (agent,), "text || sources || notes", purged):
        text, lines = redact_lines(r["text"], purged)
        were = json.loads(r["sources"])
        sources = [s for s in were if not purged.cites(str(s.get("id", "")))]
        notes = json.loads(r["notes"])
        quoted = [k for k in ("prompt", "raw") if k in notes and
                  purged.touches_json(json.dumps(notes[k], ensure_ascii=False))]
        notes.update({k: REDACTED for k in quoted})
        if lines or len(sources) != len(were) or quoted:
            conn.execute("UPDATE dossier_versions SET text = ?, sources = ?, notes = ? WHERE id = ?",
                         (text, json.dumps(sources), json.dumps(notes, sort_keys=True), r["id"]))
            n += lines
            current = conn.execute("SELECT max(version) FROM dossier_versions WHERE agent = ? AND topic = ?",
                                   (agent, r["topic"])).fetchone()[0]
            if r["version"] == current:
                topics.add(r["topic"])
    return n, topics


def _redact_capsule(conn, agent: str, purged: Purged, now: float) -> int:
    n = 0
    for r in _candidates(conn, "SELECT id, blocks FROM capsule_renders WHERE agent = ?", (agent,), "blocks", purged):
        blocks = json.loads(r["blocks"])
        changed = {name: [redact_line(line) if purged.touches(line) else line for line in lines]
                   for name, lines in blocks.items()}
        if changed != blocks:
            n += sum(a != b for name in blocks for a, b in zip(blocks[name], changed[name]))
            conn.execute("UPDATE capsule_renders SET blocks = ? WHERE id = ?", (json.dumps(changed), r["id"]))
    for r in _candidates(conn, "SELECT id, line FROM capsule_overrides WHERE agent = ?", (agent,), "line", purged):
        if purged.touches(r["line"]):
            conn.execute("UPDATE capsule_overrides SET line = ?, cleared_at = coalesce(cleared_at, ?) WHERE id = ?",
                         (REDACTED, now, r["id"]))
            n += 1
    return n


def _redact_logs(conn, agent: str, purged: Purged, ids: list[int]) -> dict:
    """Recall queries and contexts, arena episodes, phase results that quote or list what goes."""
    # A query that found a purged memory was most likely about it: its words go too.
    found = {r[0] for r in conn.execute(f"SELECT DISTINCT recall_id FROM access_events WHERE episode_id IN "
                                        f"({_in(ids)}) AND recall_id IS NOT NULL", ids)} if ids else set()
    for column in ("query", "context"):
        found |= {r["id"] for r in _touching(conn, f"SELECT id, {column} FROM recalls WHERE agent = ?", (agent,),
                                             column, purged)}
    conn.executemany("UPDATE recalls SET query = ?, context = '{}' WHERE id = ?", [(REDACTED, i) for i in found])
    arena = 0
    for r in conn.execute("SELECT id, query, useful, recall_id FROM arena_episodes WHERE agent = ?",
                          (agent,)).fetchall():
        useful = json.loads(r["useful"])
        kept = [i for i in useful if i not in set(ids)]
        # Its question was answered by what goes: about it, as a recall that found it (and one
        # whose recall the history no longer holds has only this to tell).
        quoted = kept != useful or r["recall_id"] in found or purged.touches(r["query"])
        if not kept:
            conn.execute("DELETE FROM arena_episodes WHERE id = ?", (r["id"],))
            arena += 1
        elif kept != useful or quoted:
            conn.execute("UPDATE arena_episodes SET useful = ?, query = ? WHERE id = ?",
                         (json.dumps(kept), REDACTED if quoted else r["query"], r["id"]))
            arena += 1
    phases = 0
    for r in _touching(conn, "SELECT id, result FROM phase_runs WHERE result IS NOT NULL", (), "result", purged):
        conn.execute("UPDATE phase_runs SET result = ? WHERE id = ?", (json.dumps({"redacted": True}), r["id"]))
        phases += 1
    return {"recalls": len(found), "arena_episodes": arena, "phase_runs": phases}


def purge(conn, agent: str, *, ids: list[int] = (), keys: list[str] = (), texts: list[str] = (), actor: str,
          now: float) -> dict:
    """Take these memories (and what was merged into them), these facts' values, and the named
    texts out of every layer. Final: nothing here can be undone."""
    memories, values, fact_keys, purged = _gather(conn, agent, ids, keys, texts)
    all_ids = [m["id"] for m in memories]
    conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))
    # The purge's own row first: what it redacts points at it. Hashes, never words.
    purge_id = conn.execute(
        "INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES (?, ?, ?, ?, 'purge', ?, ?)",
        (now, agent, "episode" if len(all_ids) == 1 and not keys else "purge", all_ids[0] if len(all_ids) == 1
         and not keys else None,
         json.dumps({"memories": [{"id": m["id"], "hash": m["content_hash"]} for m in memories],
                     "facts": [hashlib.sha256(k.encode()).hexdigest() for k in fact_keys],
                     "texts": [hashlib.sha256(t.encode()).hexdigest() for t in texts],
                     "hash": memories[0]["content_hash"] if len(memories) == 1 else None}), actor)).lastrowid
    conn.execute("INSERT INTO redacting (purge) VALUES (?)", (purge_id,))
    try:
        sources = {f"episode:{i}" for i in all_ids}
        by_fact: dict[int, set[int]] = {}
        for v in values:
            by_fact.setdefault(v["fact_id"], set()).add(v["id"])
        facts = {fid: _drop_values(conn, agent, fid, dropped, sources, actor=actor, now=now, purge_id=purge_id)
                 for fid, dropped in by_fact.items()}
        entities: list[str] = []
        for i in all_ids:
            entities += web_store.forget_node(conn, agent, f"episode:{i}")
        for ent in entities:
            purged.add_text(ent.split(":", 2)[2], whole=False)
            purged.add_text(ent)
        audit = _redact_audit(conn, agent, purged, set(by_fact), sources, purge_id)
        dossier_lines, topics = _redact_dossiers(conn, agent, purged)
        capsule_lines = _redact_capsule(conn, agent, purged, now)
        logs = _redact_logs(conn, agent, purged, all_ids)
        if all_ids:
            conn.execute(f"DELETE FROM consolidation_pairs WHERE agent = ? AND (a IN ({_in(all_ids)}) OR b IN "
                         f"({_in(all_ids)}))", (agent, *all_ids, *all_ids))
            if conn.execute("SELECT 1 FROM meta WHERE key = 'embedding_model'").fetchone():
                conn.execute(f"DELETE FROM {VECTORS} WHERE rowid IN ({_in(all_ids)})", all_ids)
                conn.execute(BUMP_EPOCH)
            # Merged memories point at their survivor; both go, so the pointer is cleared first.
            conn.execute(f"UPDATE episodes SET superseded_by = NULL WHERE superseded_by IN ({_in(all_ids)})", all_ids)
            conn.execute(f"DELETE FROM episodes WHERE agent = ? AND id IN ({_in(all_ids)})", (agent, *all_ids))
            floors.raise_floor(conn, floors.EPISODES, max(all_ids))
            conn.execute("UPDATE namespaces SET episode_count = max(0, episode_count - ?) WHERE agent = ?",
                         (len(all_ids), agent))
    finally:
        conn.execute("DELETE FROM redacting")
    return {"purge": purge_id, "memories": all_ids, "facts": [
        {"key": v["key"], **facts[v["fact_id"]]} for v in {v["fact_id"]: v for v in values}.values()],
            "entities": len(entities), "audit_redacted": audit, "dossier_lines_redacted": dossier_lines,
            "capsule_lines_redacted": capsule_lines, **logs, "_topics": sorted(topics), "_purged": purged,
            "_hashes": {m["content_hash"] for m in memories}}


def purge_audit(conn, agent: str) -> list[tuple[int | None, dict]]:
    """(item id, data) of every purge the audit records for the namespace."""
    return [(item_id, json.loads(raw)) for item_id, raw in conn.execute(
        "SELECT item_id, data FROM audit WHERE agent = ? AND action = 'purge'", (agent,))]
