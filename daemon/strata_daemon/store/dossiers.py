"""Dossiers in SQLite: every function takes a connection and runs on the database thread.
Writes run inside the caller's transaction (Database.transact). Versions are append-only
(triggers refuse to delete or rewrite one)."""

from __future__ import annotations

import json
import re

from strata_daemon.base.timeutil import iso
from strata_daemon.errors import NotFound
from strata_daemon.store import facts as facts_store, fulltext

_VERSION_COLUMNS = "version, text, sources, generator, input_hash, notes, created_at, actor"
# A line of a dossier ends with what it cites (`[e12, f34]`, dossier.md.j2): the lines a
# refresh reports are these, not the headings and blanks around them.
_CITING = re.compile(r"\[[ef]\d+(?:, *[ef]\d+)*\]\s*$", re.MULTILINE)


def choice_rows(conn, agent: str) -> list[dict]:
    """A person's rows for the namespace's topics (`strata dossier add|remove`): topic, query,
    fact_prefixes (a list, or None), enabled (None when never chosen), added."""
    return [{"topic": r["topic"], "query": r["query"],
             "fact_prefixes": None if r["fact_prefixes"] is None else json.loads(r["fact_prefixes"]),
             "enabled": None if r["enabled"] is None else bool(r["enabled"]), "added": r["added_at"] is not None}
            for r in conn.execute("SELECT topic, query, fact_prefixes, enabled, added_at FROM dossier_topics "
                                  "WHERE agent = ?", (agent,))]


def written_count(conn, agent: str) -> int:
    """Topics with at least one version."""
    return conn.execute("SELECT count(DISTINCT topic) FROM dossier_versions WHERE agent = ?", (agent,)).fetchone()[0]


def states(conn, agent: str) -> dict[str, dict]:
    return {r["topic"]: {"version": r["current_version"], "refreshed_at": r["refreshed_at"],
                         "checked_at": r["checked_at"]}
            for r in conn.execute("SELECT topic, current_version, refreshed_at, checked_at FROM dossier_topics "
                                  "WHERE agent = ?", (agent,))}


def _ensure(conn, agent: str, topic: str, now: float) -> None:
    conn.execute("INSERT INTO dossier_topics (agent, topic, changed_at) VALUES (?, ?, ?) "
                 "ON CONFLICT (agent, topic) DO NOTHING", (agent, topic, now))


def choose(conn, agent: str, topic: str, *, now: float, enabled: bool, added: bool = False,
           query: str | None = None, fact_prefixes: list[str] | None = None) -> None:
    _ensure(conn, agent, topic, now)
    conn.execute("UPDATE dossier_topics SET enabled = ?, changed_at = ?, "
                 "added_at = CASE WHEN ? = 1 THEN coalesce(added_at, ?) ELSE added_at END, "
                 "query = coalesce(?, query), fact_prefixes = coalesce(?, fact_prefixes) "
                 "WHERE agent = ? AND topic = ?",
                 (int(enabled), now, int(added), now, query,
                  None if fact_prefixes is None else json.dumps(fact_prefixes), agent, topic))


def _shaped(topic: str, r) -> dict:
    return {"topic": topic, "version": r["version"], "text": r["text"], "sources": json.loads(r["sources"]),
            "generator": r["generator"], "input_hash": r["input_hash"], "notes": json.loads(r["notes"]),
            "created_at": r["created_at"], "created_at_iso": iso(r["created_at"]), "actor": r["actor"]}


def version(conn, agent: str, topic: str, number: int | None = None) -> dict | None:
    """A stored version (the current one when `number` is None), or None."""
    if number is None:
        row = conn.execute(f"SELECT {_VERSION_COLUMNS} FROM dossier_versions WHERE agent = ? AND topic = ? "
                           "ORDER BY version DESC LIMIT 1", (agent, topic)).fetchone()
    else:
        row = conn.execute(f"SELECT {_VERSION_COLUMNS} FROM dossier_versions WHERE agent = ? AND topic = ? "
                           "AND version = ?", (agent, topic, number)).fetchone()
    return None if row is None else _shaped(topic, row)


def versions(conn, agent: str, topic: str) -> list[dict]:
    out = []
    for r in conn.execute(f"SELECT {_VERSION_COLUMNS} FROM dossier_versions WHERE agent = ? AND topic = ? "
                          "ORDER BY version DESC", (agent, topic)):
        v = _shaped(topic, r)
        text = v.pop("text")
        v["lines"] = len(_CITING.findall(text))
        v["sources"] = len(v["sources"])
        out.append(v)
    return out


def store(conn, agent: str, topic: str, *, text: str, sources: list[dict], generator: str, input_hash: str,
          notes: dict, now: float, actor: str) -> int:
    _ensure(conn, agent, topic, now)
    number = conn.execute("SELECT coalesce(max(version), 0) + 1 FROM dossier_versions WHERE agent = ? AND topic = ?",
                          (agent, topic)).fetchone()[0]
    conn.execute("INSERT INTO dossier_versions (agent, topic, version, text, sources, generator, input_hash, notes, "
                 "created_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (agent, topic, number, text, json.dumps(sources), generator, input_hash,
                  json.dumps(notes, sort_keys=True), now, actor))
    conn.execute("UPDATE dossier_topics SET current_version = ?, refreshed_at = ?, checked_at = ? "
                 "WHERE agent = ? AND topic = ?", (number, now, now, agent, topic))
    return number


def checked(conn, agent: str, topic: str, now: float) -> None:
    _ensure(conn, agent, topic, now)
    conn.execute("UPDATE dossier_topics SET checked_at = ? WHERE agent = ? AND topic = ?", (now, agent, topic))


def require_version(conn, agent: str, topic: str, number: int | None) -> dict:
    v = version(conn, agent, topic, number)
    if v is None:
        which = "yet" if number is None else f"at version {number}"
        kept = conn.execute("SELECT 1 FROM dossier_topics WHERE agent = ? AND topic = ?", (agent, topic)).fetchone()
        raise NotFound(f"no dossier on {topic!r} {which} in this namespace",
                       hint=f"`strata dossier refresh {topic}` writes one; `strata dossier history {topic}` "
                            "lists versions" if kept else f"`strata dossier add {topic}` starts one")
    return v


# -- what a refresh reads from the other layers ----------------------------------------------

def topic_facts(conn, agent: str, prefixes: tuple[str, ...], now: float) -> list[dict]:
    found: dict[str, dict] = {}
    for prefix in prefixes:
        for f in facts_store.listing(conn, agent, now=now, prefix=prefix):
            found.setdefault(f["key"], f)
    return sorted(found.values(), key=lambda f: f["key"])


def _side(r, p: str) -> dict | None:
    if r[f"{p}_id"] is None:
        return None
    ref = r[f"{p}_ref"]
    return {"value_id": r[f"{p}_id"], "value": r[f"{p}_value"], "valid_from": r[f"{p}_from"],
            "source": f"{r[f'{p}_kind']}:{ref}" if ref is not None else r[f"{p}_kind"]}


def topic_changes(conn, agent: str, fact_ids: list[int], since: float, limit: int, *, window: float) -> list[dict]:
    """Value changes of these facts: every conflict nobody acknowledged (`flagged`: the rule of
    `strata fact conflicts`, with WINDOW), and the others whose new value holds from `since`
    on; newest first."""
    if not fact_ids:
        return []
    marks = ", ".join("?" * len(fact_ids))
    rows = conn.execute(
        f"SELECT * FROM (SELECT c.id, c.late, c.acknowledged_at, f.key, f.label, "
        f"{facts_store.CONFLICT_REASON} AS reason, "
        "o.id AS old_id, o.value AS old_value, o.valid_from AS old_from, o.source_kind AS old_kind, "
        "o.source_ref AS old_ref, n.id AS new_id, n.value AS new_value, n.valid_from AS new_from, "
        "n.source_kind AS new_kind, n.source_ref AS new_ref "
        f"FROM {facts_store.CHANGES} JOIN facts f ON f.id = c.fact_id WHERE c.agent = ? AND c.fact_id IN ({marks})) "
        "WHERE reason IS NOT NULL AND acknowledged_at IS NULL OR new_from >= ? "
        "ORDER BY new_from DESC, id DESC LIMIT ?", (window, agent, *fact_ids, since, limit)).fetchall()
    return [{"id": r["id"], "key": r["key"], "label": r["label"],
             "flagged": r["reason"] is not None and r["acknowledged_at"] is None, "late": bool(r["late"]),
             "old": _side(r, "old"), "new": _side(r, "new")} for r in rows]


def later_mentions(conn, agent: str, identifier: str, after: float, limit: int = 10) -> list[dict]:
    """Active memories of the hot tier after `after` that name an identifier such as T-12 (as an FTS phrase)."""
    phrase = '"' + identifier.replace('"', "") + '"'
    found = fulltext.matching(conn, agent, phrase)
    if found is None:
        return []
    return [dict(r) for r in conn.execute(
        # As a subquery (fulltext.matching): joined, the planner walks the namespace's memories by
        # time and runs the match once per row (140 ms at 3,000 memories instead of under 1 ms).
        "SELECT e.id, e.kind, e.content, e.event_at FROM episodes e "
        f"WHERE {found[0]} AND e.agent = ? "
        "AND e.state = 'active' AND e.tier = 'hot' AND e.event_at >= ? ORDER BY e.event_at LIMIT ?",
        (found[1], agent, after, limit))]


def discovery_inputs(conn, agent: str, min_mentions: int, now: float) -> tuple[list[tuple[str, str, int]], list[str]]:
    entities = [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT type, value, mentions FROM entities WHERE agent = ? AND mentions >= ? AND type IN "
        "('person', 'host', 'handle') ORDER BY mentions DESC LIMIT 200", (agent, min_mentions))]
    keys = [f["key"] for f in facts_store.listing(conn, agent, now=now)]
    return entities, keys


# -- the spiderweb around a topic (strata_daemon/dossier/about.py says what is about one) ----------

def _marks(values) -> str:
    return ", ".join("?" * len(values))


def entities_among(conn, agent: str, types: tuple[str, ...], values: list[str]) -> list[tuple[str, str]]:
    """The entities (type, value) of these types stored under one of these values."""
    rows = conn.execute(f"SELECT type, value FROM entities WHERE agent = ? AND type IN ({_marks(types)}) "
                        f"AND value IN ({_marks(values)})", (agent, *types, *values)).fetchall()
    return [(r[0], r[1]) for r in rows]


def linked_to_nodes(conn, agent: str, nodes: list[str]) -> set[int]:
    """The memories a person or a phase linked to one of the nodes (not a mere mention), either way."""
    if not nodes:
        return set()
    return {int(r[0][8:]) for r in conn.execute(
        f"SELECT src FROM web_links WHERE agent = ? AND dst IN ({_marks(nodes)}) AND type <> 'mentions' "
        "AND src LIKE 'episode:%' UNION "
        f"SELECT dst FROM web_links WHERE agent = ? AND src IN ({_marks(nodes)}) AND type <> 'mentions' "
        "AND dst LIKE 'episode:%'", (agent, *nodes, agent, *nodes))}


def active_memories(conn, agent: str, ids: set[int], limit: int) -> list[dict]:
    """Of these memories the active ones (id, kind, content, event_at, importance), newest first."""
    if not ids:
        return []
    rows = conn.execute(f"SELECT id, kind, content, event_at, importance FROM episodes WHERE agent = ? AND "
                        f"state = 'active' AND id IN ({_marks(ids)}) ORDER BY event_at DESC LIMIT ?",
                        (agent, *ids, limit)).fetchall()
    return [dict(r) for r in rows]


def linked_among(conn, agent: str, ids: set[int], nodes: list[str]) -> set[int]:
    """Of these memories, those with a link to one of the nodes (a mention, or a link a person
    or a phase made) or an explicit link from one."""
    if not ids or not nodes:
        return set()
    eps = [f"episode:{i}" for i in ids]
    rows = conn.execute(
        f"SELECT src FROM web_links WHERE agent = ? AND src IN ({_marks(eps)}) AND dst IN ({_marks(nodes)}) "
        f"UNION SELECT dst FROM web_links WHERE agent = ? AND dst IN ({_marks(eps)}) AND src IN ({_marks(nodes)}) "
        "AND type <> 'mentions'", (agent, *eps, *nodes, agent, *eps, *nodes)).fetchall()
    return {int(r[0][8:]) for r in rows}


def explicit_partners(conn, agent: str, ids: set[int]) -> dict[int, set[int]]:
    """Memories joined to these by an explicit link, either way: id -> partner ids."""
    if not ids:
        return {}
    eps = [f"episode:{i}" for i in ids]
    out: dict[int, set[int]] = {}
    for a, b in conn.execute(
            f"SELECT src, dst FROM web_links WHERE agent = ? AND src IN ({_marks(eps)}) AND type <> 'mentions' "
            "AND dst LIKE 'episode:%' UNION "
            f"SELECT dst, src FROM web_links WHERE agent = ? AND dst IN ({_marks(eps)}) AND type <> 'mentions' "
            "AND src LIKE 'episode:%'", (agent, *eps, agent, *eps)):
        out.setdefault(int(a[8:]), set()).add(int(b[8:]))
    return out


def contents(conn, agent: str, ids: set[int]) -> list[dict]:
    """The id and content of these memories, whatever their state."""
    return [dict(r) for r in conn.execute(
        f"SELECT id, content FROM episodes WHERE agent = ? AND id IN ({_marks(ids)})", (agent, *ids))]
