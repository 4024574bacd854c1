"""Consolidation's SQL: what it reads, and applying its actions with an audit row each that
holds the values before, so every change can be explained and undone. Runs on the database
thread, in the caller's transaction."""

from __future__ import annotations

import json
import time

import numpy as np

from strata_daemon.store import graph as web_store
from strata_daemon.store.dialect import on_postgres
from strata_daemon.store.vectors import TABLE, indexed

COLUMNS = ("id", "kind", "source", "content", "event_at", "importance", "access_count", "last_access_at",
           "success_count", "failure_count", "factual", "confidence", "quality", "strength_factor", "potentiated_at",
           "stale_at", "replayed_at", "embedded", "state", "superseded_by", "tier", "tier_at")
MERGE_MARK = "consolidation_merge_seq"  # meta key: vectors up to this sequence were compared
# A pass writes in transactions of about this long, with a pause between them longer than
# SQLite's longest busy-wait sleep (100 ms), so another writer waiting on the lock gets it.
APPLY_SECONDS = 0.25
APPLY_PAUSE = 0.12


def memories(conn, agent: str) -> dict[int, dict]:
    """The namespace's active memories by id, as the rows read: a row is a quarter the size of
    a dict of it (a million memories), and the rules only read columns by name."""
    return {r["id"]: r for r in conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM episodes WHERE agent = ? AND state = 'active' AND irrelevant = 0",
        (agent,))}


def replay_times(conn, agent: str) -> list[float]:
    """When memories in any state were last replayed: a memory archived after its replay still
    spent the night's budget."""
    return [r[0] for r in conn.execute("SELECT replayed_at FROM episodes WHERE agent = ? AND replayed_at IS NOT NULL",
                                       (agent,))]


def vectors(conn, agent: str, ids: list[int]) -> tuple[list[int], np.ndarray]:
    """The unit vectors of those of `ids` that are the namespace's active memories and have
    one: (their ids in the order given, one row each)."""
    if not ids or indexed(conn) is None:
        return [], np.zeros((0, 0), dtype=np.float32)
    found, rows = [], []
    for start in range(0, len(ids), 10_000):  # within SQLite's limit on bound parameters
        chunk = ids[start:start + 10_000]
        got = dict(conn.execute(
            f"SELECT e.id, v.embedding FROM episodes e JOIN {TABLE} v ON v.rowid = e.id WHERE e.id IN "
            f"({', '.join('?' * len(chunk))}) AND +e.agent = ? AND e.state = 'active' AND e.irrelevant = 0",
            (*chunk, agent)))
        for i in chunk:
            if i in got:
                found.append(i)
                rows.append(np.frombuffer(got[i], dtype=np.float32))
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    return found, np.vstack(rows)


def merge_mark(conn) -> int | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (MERGE_MARK,)).fetchone()
    return None if row is None else int(row[0])


def fact_sources(conn, agent: str) -> set[int]:
    """Memories a fact value came from: never merged, since the fact's history cites them."""
    return {int(r[0]) for r in conn.execute("SELECT DISTINCT source_ref FROM fact_values WHERE agent = ? "
                                            "AND source_kind = 'episode'", (agent,)) if str(r[0]).isdigit()}


def done_pairs(conn, agent: str, rule: str) -> set[tuple[int, int]]:
    return {(r[0], r[1]) for r in conn.execute("SELECT a, b FROM consolidation_pairs WHERE agent = ? AND rule = ?",
                                               (agent, rule))}


def contradictions(conn, agent: str) -> list[tuple[int, int, str]]:
    """(one, other, how) pairs of memories that contradict: a `contradicts` link between two
    memories, or two memories whose captured values of one fact differ, one after the other."""
    out = []
    for src, dst in conn.execute("SELECT src, dst FROM web_links WHERE agent = ? AND type = 'contradicts' "
                                 "AND src LIKE 'episode:%' AND dst LIKE 'episode:%'", (agent,)):
        out.append((int(src.split(":")[1]), int(dst.split(":")[1]), "a contradicts link"))
    previous: dict[int, tuple[str | None, str]] = {}
    for fact_id, key, value, ref in conn.execute(
            "SELECT v.fact_id, f.key, v.value, v.source_ref FROM fact_values v JOIN facts f ON f.id = v.fact_id "
            "WHERE v.agent = ? AND v.source_kind = 'episode' ORDER BY v.fact_id, v.valid_from, v.id", (agent,)):
        if not str(ref).isdigit():
            continue
        before = previous.get(fact_id)
        if before is not None and before[0] != value and before[1] != ref:
            out.append((int(before[1]), int(ref), f"fact {key} changed from {_said(before[0])} to {_said(value)}"))
        previous[fact_id] = (value, ref)
    return out


def _said(value: str | None) -> str:
    """A fact value as a reason quotes it: in quotes, or `no value` for an ended fact."""
    return "no value" if value is None else f"'{value}'"


def _audit(conn, agent: str, episode: int, rule: str, data: dict, actor: str, now: float) -> None:
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                 "VALUES (?, ?, 'episode', ?, ?, ?, ?)",
                 (now, agent, episode, f"consolidate:{rule}", json.dumps(data, ensure_ascii=False), actor))


def _carry_edges(conn, agent: str, dup: int, keep: int) -> int:
    """The survivor takes each Hebbian edge of the memory it absorbs (the heavier where both have one)."""
    old, new = f"episode:{dup}", f"episode:{keep}"
    edges = conn.execute("SELECT a, b, level, activations, created_at, last_at FROM web_edges WHERE agent = ? "
                         "AND (a = ? OR b = ?)", (agent, old, old)).fetchall()
    carried = 0
    for a, b, level, activations, created, last in edges:
        other = b if a == old else a
        if other == new:
            continue
        lo, hi = sorted((new, other))
        conn.execute("INSERT INTO web_edges (agent, a, b, level, activations, created_at, last_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, a, b) DO UPDATE SET "
                     "level = max(web_edges.level, excluded.level), "
                     "activations = web_edges.activations + excluded.activations, "
                     "last_at = max(web_edges.last_at, excluded.last_at)", (agent, lo, hi, level, activations, created, last))
        carried += 1
    return carried


def apply(conn, agent: str, actions: list, start: int, before: dict[int, dict], level_after, now: float,
          actor: str, run: int, seconds: float) -> int:
    """Write the actions from `start` on for about `seconds`, and return where the next
    transaction goes on: one update and one audit row each (with the values before it), plus
    what some rules do besides: a merge links and carries edges, interference and associate
    mark their pair, associate strengthens its edge. A merge is never split: its survivor
    carries the counts of what it absorbs, and a stop between the halves would count them twice."""
    deadline = time.monotonic() + seconds
    n = start
    while n < len(actions):
        a = actions[n]
        joins = a.rule == "merge" and "into" in (a.extra or ())
        if n > start and not joins and time.monotonic() > deadline:
            break
        n += 1
        if a.set:
            cols = list(a.set)
            conn.execute(f"UPDATE episodes SET {', '.join(f'{c} = ?' for c in cols)}, updated_at = ? "
                         "WHERE id = ? AND agent = ?", (*a.set.values(), now, a.episode, agent))
        data = {"run": run, **a.as_dict(before.get(a.episode, {}))}
        if a.rule == "merge" and "into" in (a.extra or ()):
            web_store.link(conn, agent, f"episode:{a.extra['into']}", f"episode:{a.episode}", "supersedes", now,
                           actor=actor)
            data["edges_carried"] = _carry_edges(conn, agent, a.episode, a.extra["into"])
        elif a.rule in ("interference", "associate"):
            other = a.extra["by"] if a.rule == "interference" else a.extra["with"]
            lo, hi = (a.episode, other) if a.rule == "interference" else sorted((a.episode, other))
            conn.execute("INSERT OR IGNORE INTO consolidation_pairs (agent, rule, a, b, at) VALUES (?, ?, ?, ?, ?)",
                         (agent, a.rule, lo, hi, now))
            if a.rule == "associate" and other != a.episode:  # an edge joins two memories, as hebbian.pairs
                web_store.coactivate(conn, agent, [tuple(sorted((f"episode:{a.episode}", f"episode:{other}")))],
                                     level_after, now)
        _audit(conn, agent, a.episode, a.rule, data, actor, now)
    return n


def next_run(conn) -> int:
    conn.execute("INSERT INTO meta (key, value) VALUES ('consolidation_runs', '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = CAST(meta.value AS INTEGER) + 1")
    return int(conn.execute("SELECT value FROM meta WHERE key = 'consolidation_runs'").fetchone()[0])


def last_run(conn) -> int:
    """The newest run's number, 0 before the first (runs are numbered across namespaces)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'consolidation_runs'").fetchone()
    return 0 if row is None else int(row[0])


def set_merge_mark(conn, seq: int) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (MERGE_MARK, str(seq)))


def undo(conn, agent: str, run: int, now: float, *, actor: str) -> int:
    """Put back the values a run changed, newest change first. Returns how many changes."""
    # The audit's data is JSON text: its run, as SQLite's json_extract or PostgreSQL's jsonb reads it.
    of_run = ("(data::jsonb ->> 'run') = CAST(? AS text)" if on_postgres(conn)
              else "json_extract(data, '$.run') = ?")
    if conn.execute("SELECT 1 FROM audit WHERE agent = ? AND action = 'consolidate:undo' "
                    f"AND {of_run}", (agent, run)).fetchone():
        from strata_daemon.errors import Conflict
        raise Conflict(f"consolidation run {run} was already undone")
    rows = conn.execute("SELECT item_id, action, data FROM audit WHERE agent = ? AND action LIKE 'consolidate:%' "
                        f"AND action != 'consolidate:undo' AND {of_run} ORDER BY id DESC", (agent, run)).fetchall()
    if not rows:  # nothing to put back: no undo is recorded, so a mistyped run is not marked undone
        return 0
    for episode, action, raw in rows:
        data = json.loads(raw)
        before = data.get("before") or {}
        if "state" in before and "tier" not in before:  # recorded before tiers: an archive or merge
            before = {**before, "tier": "hot"}
        if before:
            cols = list(before)
            conn.execute(f"UPDATE episodes SET {', '.join(f'{c} = ?' for c in cols)}, updated_at = ? "
                         "WHERE id = ? AND agent = ?", (*before.values(), now, episode, agent))
        if action == "consolidate:merge" and "into" in data:
            web_store.link(conn, agent, f"episode:{data['into']}", f"episode:{episode}", "supersedes", now,
                           actor=actor, remove=True)
        elif action in ("consolidate:interference", "consolidate:associate"):
            other = data.get("by", data.get("with"))
            lo, hi = (episode, other) if action == "consolidate:interference" else sorted((episode, other))
            conn.execute("DELETE FROM consolidation_pairs WHERE agent = ? AND rule = ? AND a = ? AND b = ?",
                         (agent, action.split(":")[1], lo, hi))
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                 "VALUES (?, ?, 'consolidation', NULL, 'consolidate:undo', ?, ?)",
                 (now, agent, json.dumps({"run": run, "changes": len(rows)}), actor))
    return len(rows)


def newest_embedded(conn, agent: str) -> int | None:
    """The sequence number of the namespace's newest stored vectors (None: none yet)."""
    return conn.execute("SELECT max(embedded) FROM episodes WHERE agent = ?", (agent,)).fetchone()[0]
