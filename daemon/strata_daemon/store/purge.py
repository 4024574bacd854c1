"""The SQL of a purge: every function takes a connection and runs inside the caller's transaction.

What a purge takes and what each text loses is decided in strata_daemon/forgetting/purge.py;
these are its reads (the rows that may hold the purged words, narrowed in SQLite by the
`terms` the caller passes), its deletes, its updates of a redacted text and its audit rows.
Callers pass fact keys already normalised.
"""

from __future__ import annotations

import json

from strata_daemon.store import floors
from strata_daemon.store.dialect import on_postgres
from strata_daemon.store.facts import next_value_id
from strata_daemon.store.vectors import BUMP_EPOCH, TABLE as VECTORS

RECALL_TEXTS = ("query", "context")  # the columns of a recall that hold its words
_TERMS_PER_QUERY = 200  # terms are bound as parameters: one statement each, well under SQLite's limit


def _in(ids) -> str:
    return ", ".join("?" * len(ids))


def _candidates(conn, sql: str, params: tuple, expr: str, terms: list[str]) -> list:
    """Rows of SQL whose EXPR holds one of TERMS (in any case SQLite's lower() folds), each once,
    in the order first found. A narrowing: the caller tests each row."""
    rows: dict = {}
    for start in range(0, len(terms), _TERMS_PER_QUERY):
        part = terms[start:start + _TERMS_PER_QUERY]
        for r in conn.execute(f"{sql} AND ({' OR '.join(f'instr(lower({expr}), lower(?)) > 0' for _ in part)})",
                              (*params, *part)):
            rows[r["id"]] = r
    return list(rows.values())


# -- what a purge gathers ------------------------------------------------------------------------

def merged_with(conn, agent: str, ids: list[int]) -> list[int]:
    """The memories consolidation merged into any of IDS, and those it merged IDS into (one step)."""
    return [r[0] for r in conn.execute(
        f"SELECT id FROM episodes WHERE agent = ? AND superseded_by IN ({_in(ids)}) UNION "
        f"SELECT superseded_by FROM episodes WHERE agent = ? AND id IN ({_in(ids)}) AND superseded_by IS NOT NULL",
        (agent, *ids, agent, *ids))]


def memories(conn, agent: str, ids: list[int]) -> list:
    """Rows (id, content, content_hash, superseded_by) of those of IDS the namespace holds, by id."""
    if not ids:
        return []
    return conn.execute(f"SELECT id, content, content_hash, superseded_by FROM episodes WHERE agent = ? "
                        f"AND id IN ({_in(ids)}) ORDER BY id", (agent, *ids)).fetchall()


def known_keys(conn, agent: str, keys: list[str]) -> set[str]:
    if not keys:
        return set()
    return {r[0] for r in conn.execute(f"SELECT key FROM facts WHERE agent = ? AND key IN ({_in(keys)})",
                                       (agent, *keys))}


_VALUES = ("SELECT v.id, v.fact_id, v.value, v.valid_from, f.key, f.label FROM fact_values v JOIN facts f "
           "ON f.id = v.fact_id")


def values_from(conn, agent: str, refs: list[str]) -> list:
    """Fact values (with their fact's key and label) captured from the memories REFS (ids as text)."""
    if not refs:
        return []
    return conn.execute(f"{_VALUES} WHERE v.agent = ? AND v.source_kind = 'episode' AND v.source_ref IN ({_in(refs)})",
                        (agent, *refs)).fetchall()


def values_of(conn, agent: str, keys: list[str]) -> list:
    """Every value (with its fact's key and label) of the facts KEYS."""
    if not keys:
        return []
    return conn.execute(f"{_VALUES} WHERE f.agent = ? AND f.key IN ({_in(keys)})", (agent, *keys)).fetchall()


def memory_texts(conn, agent: str):
    """(id, content, source, session, context) of every memory of the namespace, by id: a cursor,
    so a reader may stop early."""
    return conn.execute("SELECT id, content, source, session, context FROM episodes WHERE agent = ? ORDER BY id",
                        (agent,))


def fact_texts(conn, agent: str) -> list:
    """(key, label, value, source) of every value of every fact of the namespace (value and
    source None: a fact with none)."""
    return conn.execute("SELECT f.key, f.label, v.value, CASE WHEN v.id IS NULL THEN NULL WHEN v.source_ref IS NULL "
                        "THEN v.source_kind ELSE v.source_kind || ':' || v.source_ref END FROM facts f "
                        "LEFT JOIN fact_values v ON v.fact_id = f.id WHERE f.agent = ? ORDER BY f.key",
                        (agent,)).fetchall()


def topic_texts(conn, agent: str) -> list:
    """(topic, query) of every dossier topic the namespace keeps a row for."""
    return conn.execute("SELECT topic, coalesce(query, '') FROM dossier_topics WHERE agent = ? ORDER BY topic",
                        (agent,)).fetchall()


def entity_texts(conn, agent: str) -> list:
    """(type, value) of every entity of the namespace."""
    return conn.execute("SELECT type, value FROM entities WHERE agent = ? ORDER BY type, value", (agent,)).fetchall()


# -- rows that may hold the words ----------------------------------------------------------------

def dossier_texts(conn, agent: str, terms: list[str]) -> list:
    """Dossier versions (id, topic, version, text) whose text holds one of TERMS."""
    return _candidates(conn, "SELECT id, topic, version, text FROM dossier_versions WHERE agent = ?", (agent,),
                       "text", terms)


def dossier_versions(conn, agent: str, terms: list[str]) -> list:
    """Dossier versions (id, topic, version, text, sources, notes) whose text, sources or notes hold one of TERMS."""
    return _candidates(conn, "SELECT id, topic, version, text, sources, notes FROM dossier_versions WHERE agent = ?",
                       (agent,), "text || sources || notes", terms)


def latest_render(conn, agent: str):
    """The newest capsule render (id, blocks), or None."""
    return conn.execute("SELECT id, blocks FROM capsule_renders WHERE agent = ? ORDER BY id DESC LIMIT 1",
                        (agent,)).fetchone()


def capsule_renders(conn, agent: str, terms: list[str]) -> list:
    return _candidates(conn, "SELECT id, blocks FROM capsule_renders WHERE agent = ?", (agent,), "blocks", terms)


def capsule_overrides(conn, agent: str, terms: list[str]) -> list:
    return _candidates(conn, "SELECT id, line FROM capsule_overrides WHERE agent = ?", (agent,), "line", terms)


def audit_rows(conn, agent: str, terms: list[str], *, skip: tuple[str, ...]) -> list:
    """Audit rows (id, data) of the namespace whose data holds one of TERMS, but for actions SKIP."""
    return _candidates(conn, f"SELECT id, data FROM audit WHERE agent = ? AND action NOT IN ({_in(skip)})",
                       (agent, *skip), "data", terms)


def recall_texts(conn, agent: str, column: str, terms: list[str]) -> list:
    """Recalls (id, COLUMN) whose COLUMN, one of RECALL_TEXTS, holds one of TERMS."""
    if column not in RECALL_TEXTS:
        raise ValueError(f"not a text of a recall: {column!r}")
    return _candidates(conn, f"SELECT id, {column} FROM recalls WHERE agent = ?", (agent,), column, terms)


def phase_results(conn, terms: list[str]) -> list:
    """Phase runs (id, result) whose result holds one of TERMS (phase runs belong to no namespace)."""
    return _candidates(conn, "SELECT id, result FROM phase_runs WHERE result IS NOT NULL", (), "result", terms)


def episode_audit(conn, ids: list[int]) -> set[int]:
    """The audit rows of the memories IDS, but their purges."""
    return {r[0] for r in conn.execute(f"SELECT id FROM audit WHERE item_kind = 'episode' AND item_id IN "
                                       f"({_in(ids)}) AND action <> 'purge'", ids)}


def fact_audit(conn, fact_ids: list[int]) -> list:
    """The audit rows (id, item_id, data) of the facts FACT_IDS, but their redactions."""
    return conn.execute(f"SELECT id, item_id, data FROM audit WHERE item_kind = 'fact' AND item_id IN "
                        f"({_in(fact_ids)}) AND action <> 'redact'", tuple(fact_ids)).fetchall()


def values_left(conn, fact_ids: list[int]) -> set[tuple[int, str]]:
    """(fact id, value) of each value the facts FACT_IDS still hold."""
    return {(r[0], r[1]) for r in conn.execute(
        f"SELECT fact_id, value FROM fact_values WHERE fact_id IN ({_in(fact_ids)}) AND value IS NOT NULL",
        tuple(fact_ids))}


def recalls_finding(conn, ids: list[int]) -> set[int]:
    """The recalls that returned any of the memories IDS."""
    if not ids:
        return set()
    return {r[0] for r in conn.execute(f"SELECT DISTINCT recall_id FROM access_events WHERE episode_id IN "
                                       f"({_in(ids)}) AND recall_id IS NOT NULL", ids)}


def arena_episodes(conn, agent: str) -> list:
    """Every arena episode (id, query, useful, recall_id) of the namespace."""
    return conn.execute("SELECT id, query, useful, recall_id FROM arena_episodes WHERE agent = ?", (agent,)).fetchall()


def latest_version(conn, agent: str, topic: str) -> int | None:
    return conn.execute("SELECT max(version) FROM dossier_versions WHERE agent = ? AND topic = ?",
                        (agent, topic)).fetchone()[0]


# -- a fact's values -----------------------------------------------------------------------------

def drop_conflicts(conn, fact_id: int, value_ids: set[int]) -> None:
    """The conflicts of a fact that name any of VALUE_IDS."""
    conn.execute(f"DELETE FROM fact_conflicts WHERE fact_id = ? AND (old_value_id IN ({_in(value_ids)}) OR "
                 f"new_value_id IN ({_in(value_ids)}) OR next_value_id IN ({_in(value_ids)}))",
                 (fact_id, *value_ids, *value_ids, *value_ids))


def value_rows(conn, value_ids: set[int]) -> list:
    """(value, valid_from) of the values VALUE_IDS."""
    return conn.execute(f"SELECT value, valid_from FROM fact_values WHERE id IN ({_in(value_ids)})",
                        tuple(value_ids)).fetchall()


def drop_values(conn, value_ids: set[int]) -> None:
    """Delete the values VALUE_IDS; their ids are never given again."""
    conn.execute(f"DELETE FROM fact_values WHERE id IN ({_in(value_ids)})", tuple(value_ids))
    floors.raise_floor(conn, floors.FACT_VALUES, max(value_ids))


def confirmations(conn, fact_id: int, value: str):
    """(source, at, rule) of each audited confirmation of VALUE for the fact, oldest first."""
    if on_postgres(conn):  # jsonb's -> reads a value as json_extract does: typed
        return conn.execute(
            "SELECT data::jsonb -> 'source' AS source, data::jsonb -> 'valid_from' AS at, data::jsonb -> 'rule' "
            "AS rule FROM audit WHERE item_kind = 'fact' AND item_id = ? AND action = 'confirmed' AND "
            "data::jsonb ->> 'value' = ? ORDER BY id", (fact_id, value))
    return conn.execute(
        "SELECT json_extract(data, '$.source') AS source, json_extract(data, '$.valid_from') AS at, "
        "json_extract(data, '$.rule') AS rule FROM audit WHERE item_kind = 'fact' AND item_id = ? AND "
        "action = 'confirmed' AND json_extract(data, '$.value') = ? ORDER BY id", (fact_id, value))


def add_value(conn, fact_id: int, agent: str, value: str | None, valid_from: float, *, now: float, source_kind: str,
              source_ref: str | None, rule: str | None, actor: str) -> None:
    """A value of the fact from VALID_FROM on, open-ended, at full confidence (None: a retraction)."""
    conn.execute("INSERT INTO fact_values (id, fact_id, agent, value, valid_from, valid_to, recorded_at, "
                 "source_kind, source_ref, confidence, rule, actor) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, 1.0, ?, ?)",
                 (next_value_id(conn), fact_id, agent, value, valid_from, now, source_kind, source_ref, rule, actor))


def value_times(conn, fact_id: int) -> list:
    """(id, valid_from) of each value of the fact, in valid-time order."""
    return conn.execute("SELECT id, valid_from FROM fact_values WHERE fact_id = ? ORDER BY valid_from, id",
                        (fact_id,)).fetchall()


def set_valid_to(conn, value_id: int, valid_to: float | None) -> None:
    conn.execute("UPDATE fact_values SET valid_to = ? WHERE id = ?", (valid_to, value_id))


def value_at(conn, fact_id: int, at: float):
    """The (value, valid_from) of the fact at AT, or None."""
    return conn.execute("SELECT value, valid_from FROM fact_values WHERE fact_id = ? AND valid_from <= ? "
                        "ORDER BY valid_from DESC, id DESC LIMIT 1", (fact_id, at)).fetchone()


def touch_fact(conn, fact_id: int, confirmed_at: float | None, now: float) -> None:
    conn.execute("UPDATE facts SET confirmed_at = ?, updated_at = ? WHERE id = ?", (confirmed_at, now, fact_id))


# -- writes --------------------------------------------------------------------------------------

def audit(conn, agent: str, item_kind: str, item_id: int | None, action: str, data: dict, *, actor: str,
          now: float) -> int:
    """An audit row; returns its id."""
    return conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?)", (now, agent, item_kind, item_id, action, json.dumps(data),
                                                  actor)).lastrowid


def ensure_namespace(conn, agent: str, now: float) -> None:
    conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))


def start_redacting(conn, purge_id: int) -> None:
    """Open the triggers that keep history unchanged (audit data, fact values) to purge PURGE_ID;
    on PostgreSQL, `rewritten` counts from here."""
    if on_postgres(conn):
        conn.rewritten.clear()
    conn.execute("INSERT INTO redacting (purge) VALUES (?)", (purge_id,))


def stop_redacting(conn) -> None:
    conn.execute("DELETE FROM redacting")


def set_audit_data(conn, rows: list[tuple[int, dict]]) -> None:
    """Each (audit id, data): the row's data replaced."""
    conn.executemany("UPDATE audit SET data = ? WHERE id = ?", [(json.dumps(d), i) for i, d in rows])


def set_dossier_version(conn, version_id: int, text: str, sources: list, notes: dict) -> None:
    conn.execute("UPDATE dossier_versions SET text = ?, sources = ?, notes = ? WHERE id = ?",
                 (text, json.dumps(sources), json.dumps(notes, sort_keys=True), version_id))


def set_render_blocks(conn, render_id: int, blocks: dict) -> None:
    conn.execute("UPDATE capsule_renders SET blocks = ? WHERE id = ?", (json.dumps(blocks), render_id))


def clear_override(conn, override_id: int, line: str, now: float) -> None:
    """The override's line replaced; cleared now unless it already was."""
    conn.execute("UPDATE capsule_overrides SET line = ?, cleared_at = coalesce(cleared_at, ?) WHERE id = ?",
                 (line, now, override_id))


def set_recall_texts(conn, recall_ids, query: str, context: str) -> None:
    conn.executemany("UPDATE recalls SET query = ?, context = ? WHERE id = ?",
                     [(query, context, i) for i in recall_ids])


def drop_arena_episode(conn, episode_id: int) -> None:
    conn.execute("DELETE FROM arena_episodes WHERE id = ?", (episode_id,))


def set_arena_episode(conn, episode_id: int, useful: list[int], query: str) -> None:
    conn.execute("UPDATE arena_episodes SET useful = ?, query = ? WHERE id = ?", (json.dumps(useful), query,
                                                                                  episode_id))


def set_phase_result(conn, run_id: int, result: dict) -> None:
    conn.execute("UPDATE phase_runs SET result = ? WHERE id = ?", (json.dumps(result), run_id))


def drop_pairs(conn, agent: str, ids: list[int]) -> None:
    """Consolidation's record of the pairs of memories it compared, for those naming any of IDS."""
    conn.execute(f"DELETE FROM consolidation_pairs WHERE agent = ? AND (a IN ({_in(ids)}) OR b IN ({_in(ids)}))",
                 (agent, *ids, *ids))


def drop_vectors(conn, ids: list[int]) -> None:
    """The vectors of the memories IDS, when there is an index; its epoch moves on (cached searches go stale)."""
    if conn.execute("SELECT 1 FROM meta WHERE key = 'embedding_model'").fetchone():
        conn.execute(f"DELETE FROM {VECTORS} WHERE rowid IN ({_in(ids)})", ids)
        conn.execute(BUMP_EPOCH)


def fact_ids(conn, agent: str, keys: list[str]) -> dict[str, int]:
    """key -> id of these facts of the namespace."""
    return {r[0]: r[1] for r in conn.execute(f"SELECT key, id FROM facts WHERE agent = ? AND key IN ({_in(keys)})",
                                             (agent, *keys))} if keys else {}


def drop_fact(conn, fact_id: int) -> None:
    """The fact and its whole history (inside a purge: its values may go then); the ids of its
    values are never given again."""
    highest = conn.execute("SELECT max(id) FROM fact_values WHERE fact_id = ?", (fact_id,)).fetchone()[0]
    conn.execute("DELETE FROM fact_conflicts WHERE fact_id = ?", (fact_id,))
    conn.execute("DELETE FROM fact_values WHERE fact_id = ?", (fact_id,))
    conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
    if highest is not None:
        floors.raise_floor(conn, floors.FACT_VALUES, highest)


def drop_topic(conn, agent: str, topic: str) -> int:
    """A dossier topic and every version of it (inside a purge); how many versions went."""
    versions = conn.execute("DELETE FROM dossier_versions WHERE agent = ? AND topic = ?", (agent, topic)).rowcount
    conn.execute("DELETE FROM dossier_topics WHERE agent = ? AND topic = ?", (agent, topic))
    return versions


def drop_entity(conn, agent: str, etype: str, value: str) -> None:
    conn.execute("DELETE FROM entities WHERE agent = ? AND type = ? AND value = ?", (agent, etype, value))


def drop_memories(conn, agent: str, ids: list[int]) -> None:
    """Delete the memories IDS of the namespace; their ids are never given again."""
    # Merged memories point at their survivor; both go, so the pointer is cleared first.
    conn.execute(f"UPDATE episodes SET superseded_by = NULL WHERE superseded_by IN ({_in(ids)})", ids)
    conn.execute(f"DELETE FROM episodes WHERE agent = ? AND id IN ({_in(ids)})", (agent, *ids))
    floors.raise_floor(conn, floors.EPISODES, max(ids))
    conn.execute("UPDATE namespaces SET episode_count = max(0, episode_count - ?) WHERE agent = ?", (len(ids), agent))


def purge_records(conn) -> dict[tuple[int, float], tuple[str, dict]]:
    """(audit id, time) -> (agent, data) of every purge the store records, in every namespace."""
    return {(i, at): (agent, json.loads(data)) for i, at, agent, data in conn.execute(
        "SELECT id, at, agent, data FROM audit WHERE action = 'purge'")}


def purge_audit(conn, agent: str) -> list[tuple[int | None, dict]]:
    """(item id, data) of every purge the audit records for the namespace."""
    return [(item_id, json.loads(raw)) for item_id, raw in conn.execute(
        "SELECT item_id, data FROM audit WHERE agent = ? AND action = 'purge'", (agent,))]
