"""Reads that keep one key per subject and attribute, and find what a memory updates: the keys
under an attribute, the current facts of a key prefix, the newer memories that speak of a
subject. Every function takes a connection on the database thread."""

from __future__ import annotations

from strata_daemon.store import facts as store
from strata_daemon.store.fts_query import all_of, any_of, phrase, terms
from strata_daemon.store.fulltext import matching

MAX_KEYS = 2000  # keys read to find a subject's: a namespace with more names fewer of them
MAX_NEWER = 100


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def keys_under(conn, agent: str, attribute: str) -> list[tuple[str, str]]:
    """(key, label) of the namespace's keys under ATTRIBUTE (`subject.attribute`), or with no
    attribute (a thing's own: no `.` and not the first person's), most recently changed first."""
    if attribute:
        where, params = "key LIKE ? ESCAPE '\\'", ["%." + _like(attribute)]
    else:
        where, params = "key NOT LIKE ? ESCAPE '\\' AND key NOT LIKE 'my %'", ["%.%"]
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT key, label FROM facts WHERE agent = ? AND {where} ORDER BY updated_at DESC LIMIT ?",
        (agent, *params, MAX_KEYS))]


def attributes_of(conn, agent: str, subject: str) -> list[str]:
    """The namespace's keys that are SUBJECT's attributes (`subject.attribute`), by key."""
    return [r[0] for r in conn.execute(
        "SELECT key FROM facts WHERE agent = ? AND key >= ? AND key < ? ORDER BY key LIMIT ?",
        (agent, subject + ".", subject + ".\U0010ffff", MAX_KEYS))]


def keys_of_longer_names(conn, agent: str, subject: str) -> list[str]:
    """The namespace's attribute keys whose subject is SUBJECT with more words after it (`dana
    whitfield.email` for `dana`), by key."""
    return [r[0] for r in conn.execute(
        "SELECT key FROM facts WHERE agent = ? AND key >= ? AND key < ? AND key LIKE ? ORDER BY key LIMIT ?",
        (agent, subject + " ", subject + " \U0010ffff", "%.%", MAX_KEYS))]


def newer_speaking_of(conn, agent: str, words: list[str], after: float, *, every: bool) -> list[dict]:
    """Memories of the namespace said after AFTER that hold every one of WORDS (`every`) or any,
    by the full-text index; (id, content, event_at), the MAX_NEWER said soonest after, in order."""
    phrases = [phrase(p) for w in words for p in terms(w)]
    if not phrases:
        return []
    cond = matching(conn, agent, (all_of if every else any_of)(phrases))
    if cond is None:
        return []
    sql, param = cond
    rows = conn.execute(
        f"SELECT e.id, e.content, e.event_at FROM episodes e WHERE e.agent = ? AND e.event_at > ? AND "
        f"e.state IN ('active', 'superseded') AND {sql} ORDER BY e.event_at LIMIT ?",
        (agent, after, param, MAX_NEWER)).fetchall()
    return [{"id": r[0], "content": r[1], "event_at": r[2]} for r in rows]


def newest_event_at(conn, agent: str, *, below: int) -> float | None:
    """The latest event time of the namespace's memories stored before id BELOW."""
    return conn.execute("SELECT max(event_at) FROM episodes WHERE agent = ? AND id < ?", (agent, below)).fetchone()[0]


def episode_texts(conn, agent: str, ids: list[int]) -> dict[int, tuple[str, float]]:
    """id -> (content, event time) of those of IDS the namespace holds."""
    if not ids:
        return {}
    return {r[0]: (r[1], r[2]) for r in conn.execute(
        f"SELECT id, content, event_at FROM episodes WHERE agent = ? AND id IN ({', '.join('?' * len(ids))})",
        (agent, *ids))}


def current_from(conn, agent: str, episode: int, now: float) -> list[dict]:
    """The current facts whose value memory EPISODE gave."""
    rows = conn.execute(
        f"SELECT {store._FACT_COLUMNS}, {store._VALUE_COLUMNS} FROM facts f JOIN fact_values v ON v.id = "
        f"({store._AT}) WHERE f.agent = ? AND v.value IS NOT NULL AND v.source_kind = 'episode' AND v.source_ref = ?",
        (now, agent, str(episode))).fetchall()
    return [store.shaped(r, r, now) for r in rows]


def changed_by(conn, agent: str, episode: int, now: float) -> list[dict]:
    """Keys whose current assertion memory EPISODE made as an update (a value or an ending), each
    with the value before it: {key, label, before_value, before_source, before_from}."""
    out = []
    for r in conn.execute(
            f"SELECT f.id AS fact_id, f.key, f.label, v.valid_from, v.id AS value_id FROM facts f JOIN fact_values v "
            f"ON v.id = ({store._AT}) WHERE f.agent = ? AND v.source_kind = 'episode' AND v.source_ref = ? AND v.rule = ?",
            (now, agent, str(episode), store.UPDATE)):
        before = conn.execute(
            "SELECT value, source_kind, source_ref, valid_from FROM fact_values WHERE fact_id = ? AND id <> ? AND "
            "valid_from <= ? ORDER BY valid_from DESC, id DESC LIMIT 1",
            (r["fact_id"], r["value_id"], r["valid_from"])).fetchone()
        if before is not None and before[0] is not None:
            out.append({"key": r["key"], "label": r["label"], "before_value": before[0],
                        "before_source": f"{before[1]}:{before[2]}" if before[2] else before[1],
                        "before_from": before[3]})
    return out


OWED = "fact_keys_owed"  # meta: facts captured before canonical keys wait to be moved (migration 30)


def keys_owed(conn) -> bool:
    return conn.execute("SELECT 1 FROM meta WHERE key = ?", (OWED,)).fetchone() is not None


def keys_paid(conn) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (OWED,))


def agents_with_facts(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT agent FROM facts ORDER BY agent")]


def captured_current(conn, agent: str, rules: tuple[str, ...], now: float) -> list[dict]:
    """The current facts whose value a memory gave by one of RULES, each with that memory's
    content, kind and source (`episode`: {id, content, kind, source})."""
    rows = conn.execute(
        f"SELECT {store._FACT_COLUMNS}, {store._VALUE_COLUMNS}, e.id AS e_id, e.content AS e_content, e.kind AS e_kind, "
        f"e.source AS e_source FROM facts f JOIN fact_values v ON v.id = ({store._AT}) JOIN episodes e ON "
        f"v.source_kind = 'episode' AND CAST(e.id AS TEXT) = v.source_ref AND e.agent = f.agent WHERE f.agent = ? AND v.value IS NOT NULL "
        f"AND v.rule IN ({', '.join('?' * len(rules))}) ORDER BY v.valid_from",
        (now, agent, *rules)).fetchall()
    return [{**store.shaped(r, r, now), "episode": {"id": r["e_id"], "content": r["e_content"], "kind": r["e_kind"],
                                                    "source": r["e_source"]}} for r in rows]


def label_of(conn, agent: str, key: str) -> str | None:
    row = conn.execute("SELECT label FROM facts WHERE agent = ? AND key = ?", (agent, key)).fetchone()
    return None if row is None else row[0]


def value_of(conn, agent: str, key: str) -> str | None:
    """KEY's latest value (whatever its valid time), None when it has none."""
    row = conn.execute("SELECT v.value FROM facts f JOIN fact_values v ON v.fact_id = f.id WHERE f.agent = ? AND "
                       "f.key = ? ORDER BY v.valid_from DESC, v.id DESC LIMIT 1", (agent, key)).fetchone()
    return None if row is None else row[0]


def all_keys(conn, agent: str) -> list[str]:
    return [k for (k,) in conn.execute("SELECT key FROM facts WHERE agent = ? ORDER BY key", (agent,))]


def keys_with_values(conn, agent: str) -> list[str]:
    """The keys of the namespace's facts that still hold a value (`fact forget` leaves a key empty)."""
    return [k for (k,) in conn.execute("SELECT key FROM facts f WHERE agent = ? AND EXISTS (SELECT 1 FROM fact_values v "
                                       "WHERE v.fact_id = f.id AND v.value IS NOT NULL)", (agent,))]
