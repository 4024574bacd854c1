"""What recall reads besides the full-text index (store/fulltext.py): candidate rows in a
recall's scope, a namespace's counts, the session neighbours a spread reaches, and the memories
said in or stating a named time. Every read names the namespace."""

from __future__ import annotations

from strata_daemon.store.fulltext import Scope

CANDIDATE_COLUMNS = ("e.id, e.kind, e.content, e.event_at, e.last_access_at, e.access_count, e.importance, "
                     "e.success_count, e.failure_count, e.factual, e.context, e.state, e.source, e.session, "
                     "e.confidence, e.quality, e.strength_factor, e.tier")
# A stated span starts at most this long before a window it meets: the longest a phrase
# states is a year ("last year", "in 2022"), so the index on its start bounds the search.
STATED_SPAN_MOST = 366 * 86400.0


def namespace_counts(conn, agent: str) -> tuple[int, int]:
    """(memories, feedback given) of the namespace: what its learning phase is read from."""
    row = conn.execute("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?", (agent,)).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def rows_in_scope(conn, scope: Scope, ids) -> dict[int, dict]:
    """The candidate rows of these ids that the recall's scope holds."""
    ids = list(ids)
    if not ids:
        return {}
    where, params = scope.where(by_id=True)
    return {r["id"]: dict(r) for r in conn.execute(
        f"SELECT {CANDIDATE_COLUMNS} FROM episodes e WHERE e.id IN ({', '.join('?' * len(ids))}) AND {where}",
        (*ids, *params))}


def session_neighbours(conn, agent: str, ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
    """id -> (previous id, next id) in its session, by id order, for memories with a session."""
    if not ids:
        return {}
    return {r[0]: (r[1], r[2]) for r in conn.execute(
        "SELECT e.id, (SELECT max(p.id) FROM episodes p WHERE p.agent = e.agent AND p.session = e.session "
        "AND p.id < e.id), (SELECT min(n.id) FROM episodes n WHERE n.agent = e.agent AND n.session = e.session "
        f"AND n.id > e.id) FROM episodes e WHERE e.id IN ({', '.join('?' * len(ids))}) AND +e.agent = ? "
        "AND e.session IS NOT NULL", (*ids, agent))}


def said_between(conn, agent: str) -> tuple[float | None, float | None]:
    """When the namespace's first and last memories were said (None, None when it holds none)."""
    return tuple(conn.execute("SELECT min(event_at), max(event_at) FROM episodes WHERE agent = ?",
                              (agent,)).fetchone())


def window_members(conn, scope: Scope, spans: list[tuple[float, float]], limit: int) -> list[int]:
    """The ids of the memories in scope said within the spans or stating a time within them, at
    most `limit` of each, the spans taken in the order given (each span's latest first)."""
    where, params = scope.where()
    by_id, by_id_params = scope.where(by_id=True)
    said: dict[int, None] = {}  # ordered, latest first
    stating: dict[int, None] = {}
    for start, end in spans:
        if len(said) < limit:
            said.update((r[0], None) for r in conn.execute(
                f"SELECT e.id FROM episodes e WHERE {where} AND e.event_at >= ? AND e.event_at < ? "
                "ORDER BY e.event_at DESC LIMIT ?", (*params, start, end, limit - len(said))))
        if len(stating) < limit:
            # From the stated spans by their start, then each memory by its key: led by the
            # namespace's index instead, SQLite would read every memory of the namespace.
            stating.update((r[0], None) for r in conn.execute(
                f"SELECT e.id FROM episodes e WHERE e.id IN (SELECT episode_id FROM stated_times WHERE start_at >= ? "
                f"AND start_at < ? AND end_at > ?) AND {by_id} ORDER BY e.id DESC LIMIT ?",
                (start - STATED_SPAN_MOST, end, start, *by_id_params, limit - len(stating))))
    return list({**said, **stating})
