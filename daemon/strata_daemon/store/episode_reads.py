"""Reads of the episodic store. Reads never write; every query is scoped to one namespace."""

from __future__ import annotations

from typing import AsyncIterator

from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.store.db import Database
from strata_daemon.store.episodes import episode_dict
from strata_daemon.store.nodes import episode_id


async def get_episode(db: Database, agent: str, episode_id: int) -> dict:
    row = await db.fetchone("SELECT * FROM episodes WHERE id = ? AND agent = ?", (episode_id, agent))
    if row is None:
        raise NotFound(f"no memory {episode_id} in namespace {agent!r}",
                       hint="`strata timeline` lists what this namespace holds")
    return episode_dict(row)


async def get_episodes(db: Database, agent: str, ids: list[int]) -> dict[int, dict]:
    """The namespace's memories among `ids` (missing ones are left out)."""
    out: dict[int, dict] = {}
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        # `+agent`: look the ids up by rowid, not every memory of the namespace by agent.
        rows = await db.fetchall(f"SELECT * FROM episodes WHERE +agent = ? AND id IN ({', '.join('?' * len(part))})",
                                 (agent, *part))
        out.update((r["id"], episode_dict(r)) for r in rows)
    return out


async def pending_accesses(db: Database, agent: str, episode_id: int) -> dict:
    """Access events not yet folded, so `show` can tell the whole story before the daemon folds."""
    row = await db.fetchone("SELECT count(*), max(a.at) FROM access_events a JOIN episodes e ON e.id = a.episode_id "
                            "WHERE a.episode_id = ? AND e.agent = ? AND a.folded = 0", (episode_id, agent))
    return {"count": row[0], "last_at": row[1]}


async def audit_of(db: Database, agent: str, item_kind: str, item_id: int) -> list[dict]:
    rows = await db.fetchall("SELECT at, action, data, actor FROM audit WHERE agent = ? AND item_kind = ? "
                             "AND item_id = ? ORDER BY id", (agent, item_kind, item_id))
    return [dict(r) for r in rows]


async def timeline(db: Database, agent: str, *, since: float | None = None, until: float | None = None,
                   kinds: tuple[str, ...] = (), states: tuple[str, ...] = ("active",), limit: int = 50,
                   offset: int = 0, newest_first: bool = True) -> list[dict]:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInput(f"limit must be a whole number of 1 or more, not {limit!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput(f"offset must be a whole number of 0 or more, not {offset!r}")
    where, params = ["agent = ?"], [agent]
    if since is not None:
        where.append("event_at >= ?")
        params.append(since)
    if until is not None:
        where.append("event_at <= ?")
        params.append(until)
    if kinds:
        where.append(f"kind IN ({', '.join('?' * len(kinds))})")
        params += kinds
    if states:
        where.append(f"state IN ({', '.join('?' * len(states))})")
        params += states
    order = "DESC" if newest_first else "ASC"
    rows = await db.fetchall(f"SELECT * FROM episodes WHERE {' AND '.join(where)} "
                             f"ORDER BY event_at {order}, id {order} LIMIT ? OFFSET ?", (*params, limit, offset))
    return [episode_dict(r) for r in rows]


async def export_episodes(db: Database, agent: str, *, chunk: int = 2000) -> AsyncIterator[dict]:
    last = 0
    while True:
        rows = await db.fetchall("SELECT * FROM episodes WHERE agent = ? AND id > ? ORDER BY id LIMIT ?",
                                 (agent, last, chunk))
        if not rows:
            return
        for r in rows:
            yield episode_dict(r)
        last = rows[-1]["id"]


async def counts(db: Database, agent: str) -> dict:
    rows = await db.fetchall("SELECT state, tier, count(*) FROM episodes WHERE agent = ? GROUP BY state, tier",
                             (agent,))
    by_state: dict[str, int] = {}
    by_tier = {"hot": 0, "cold": 0}  # of the memories recall reaches (not the archived ones)
    for state, tier, n in rows:
        by_state[state] = by_state.get(state, 0) + n
        if state in ("active", "superseded"):
            by_tier[tier] += n
    ns = await db.fetchone("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?", (agent,))
    recalls = await db.scalar("SELECT count(*) FROM recalls WHERE agent = ?", (agent,))
    # From the few unfolded events to their memories, not from every memory to its events.
    pending = await db.scalar("SELECT count(*) FROM access_events a CROSS JOIN episodes e ON e.id = a.episode_id "
                              "WHERE a.folded = 0 AND e.agent = ?", (agent,))
    return {"episodes": sum(by_state.values()), "by_state": by_state, "by_tier": by_tier, "recalls": recalls,
            "feedback": ns[1] if ns else 0, "pending_access_events": pending}


def ids_by_source(conn, agent: str, sources: list[str]) -> list[tuple[int, str]]:
    """(id, source) of the namespace's memories from these sources, by id within each batch."""
    out = []
    for part in (sources[i:i + 500] for i in range(0, len(sources), 500)):
        out += [(r[0], r[1]) for r in conn.execute(f"SELECT id, source FROM episodes WHERE agent = ? AND source IN "
                                                   f"({', '.join('?' * len(part))}) ORDER BY id", (agent, *part))]
    return out


def existing_ids(conn, agent: str, ids: list[int]) -> set[int]:
    """Which of `ids` are memories of the namespace (on the database thread)."""
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        found.update(r[0] for r in conn.execute(
            f"SELECT id FROM episodes WHERE +agent = ? AND id IN ({', '.join('?' * len(part))})", (agent, *part)))
    return found


def worked_on_since(conn, agent: str, at: float) -> list[int]:
    """Memories someone put in the namespace's working set at or after `at` (not a recall's feed):
    what an agent marks as in use."""
    return [episode_id(r[0]) for r in conn.execute(
        "SELECT node FROM web_context WHERE agent = ? AND node LIKE 'episode:%' AND activated_at >= ? "
        "AND source NOT LIKE 'recall:%' ORDER BY activated_at, node", (agent, at))]


NO_USE = {"access_count": 0, "last_access_at": None, "success_count": 0, "failure_count": 0}


def usage_before(conn, ids: list[int], at: float) -> dict[int, dict]:
    """What recall scores of each memory's use, as it stood just before `at`: accesses (not
    passed over) and their latest time, successes and failures. Memories with no use then are
    absent. On the database thread."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    out = {i: {"access_count": n, "last_access_at": last, "success_count": 0, "failure_count": 0}
           for i, n, last in conn.execute(
               f"SELECT episode_id, sum(n), max(at) FROM access_events WHERE episode_id IN ({marks}) AND at < ? "
               f"AND folded != 2 GROUP BY episode_id", (*ids, at))}
    for i, outcome, n in conn.execute(f"SELECT episode_id, outcome, count(*) FROM feedback_events WHERE episode_id "
                                      f"IN ({marks}) AND at < ? GROUP BY episode_id, outcome", (*ids, at)):
        row = out.setdefault(i, dict(NO_USE))
        row["success_count" if outcome == "success" else "failure_count"] = n
    return out


def import_progress(conn, agent: str, input_sha256: str) -> int:
    """Rows of this input an earlier import stored (0 for an input never imported)."""
    row = conn.execute("SELECT rows_stored FROM imports WHERE agent = ? AND input_sha256 = ?",
                       (agent, input_sha256)).fetchone()
    return 0 if row is None else int(row[0])


def stated_times_of(conn, ids: list[int]) -> dict[int, list[tuple[int, int, float, float]]]:
    """The times these memories state (episodes/stated.py), by memory: (at, length, start, end)
    in the order they appear."""
    found: dict[int, list[tuple[int, int, float, float]]] = {}
    for part in range(0, len(ids), 500):
        chunk = ids[part:part + 500]
        for eid, *row in conn.execute(f"SELECT episode_id, at, length, start_at, end_at FROM stated_times "
                                      f"WHERE episode_id IN ({', '.join('?' * len(chunk))}) ORDER BY episode_id, at",
                                      chunk):
            found.setdefault(eid, []).append(tuple(row))
    return found


def ids_by_hashes(conn, agent: str, hashes: list[str]) -> list[int]:
    """The ids of the namespace's memories with these text hashes."""
    return [i for part in (hashes[n:n + 500] for n in range(0, len(hashes), 500)) for (i,) in conn.execute(
        f"SELECT id FROM episodes WHERE agent = ? AND content_hash IN ({', '.join('?' * len(part))})", (agent, *part))]


def merge_group(conn, agent: str, episode_id: int) -> list[dict]:
    """The other memories consolidation merged with EPISODE_ID, (id, state, superseded_by):
    the one it was merged into, up to the survivor, and every memory merged into those, in
    turn. Near-duplicates that hold the same words."""
    rows = conn.execute(
        "WITH RECURSIVE up(id) AS (SELECT ? UNION SELECT e.superseded_by FROM episodes e JOIN up ON e.id = up.id "
        "WHERE e.agent = ? AND e.superseded_by IS NOT NULL), "
        "down(id) AS (SELECT id FROM up UNION SELECT e.id FROM episodes e JOIN down d ON e.superseded_by = d.id "
        "WHERE e.agent = ?) "
        "SELECT e.id, e.state, e.superseded_by FROM down JOIN episodes e USING (id) WHERE e.agent = ? AND e.id <> ? "
        "ORDER BY e.id", (episode_id, agent, agent, agent, episode_id))
    return [dict(r) for r in rows]
