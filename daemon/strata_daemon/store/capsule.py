"""Capsule renders and a person's overrides in SQLite: functions on a connection, run on the
database thread; writes inside the caller's transaction."""

from __future__ import annotations

import json

from strata_daemon.errors import NotFound
from strata_daemon.store import fulltext


def _render(r) -> dict:
    return {"id": r["id"], "blocks": json.loads(r["blocks"]), "sha256": r["sha256"], "lines": r["lines"],
            "created_at": r["created_at"]}


def recent_renders(conn, agent: str, limit: int, *, file: str | None = None) -> list[dict]:
    """The namespace's newest LIMIT renders; with FILE, also the newest LIMIT renders of that
    file by any namespace (and those from before renders knew their file): what an edit of it
    is told from, never shown."""
    own = conn.execute("SELECT id, blocks, sha256, lines, created_at FROM capsule_renders WHERE agent = ? "
                       "ORDER BY id DESC LIMIT ?", (agent, limit)).fetchall()
    if file is None:
        return [_render(r) for r in own]
    same = conn.execute("SELECT id, blocks, sha256, lines, created_at FROM capsule_renders WHERE agent <> ? AND "
                        "(file = ? OR file IS NULL) ORDER BY id DESC LIMIT ?", (agent, file, limit)).fetchall()
    return [_render(r) for r in sorted([*own, *same], key=lambda r: -r["id"])]


def last_render(conn, agent: str) -> dict | None:
    found = recent_renders(conn, agent, 1)
    return found[0] if found else None


def record_render(conn, agent: str, blocks: dict[str, list[str]], sha256: str, lines: int, now: float,
                  *, keep: int, file: str) -> int:
    """Record a render of FILE and keep the newest `keep`: a render every quarter of an hour,
    each with every line of the capsule, grew the table by a megabyte a day for no reader."""
    rid = conn.execute("INSERT INTO capsule_renders (agent, blocks, sha256, lines, created_at, file) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (agent, json.dumps(blocks), sha256, lines, now, file)).lastrowid
    conn.execute("DELETE FROM capsule_renders WHERE agent = ? AND id NOT IN "
                 "(SELECT id FROM capsule_renders WHERE agent = ? ORDER BY id DESC LIMIT ?)", (agent, agent, keep))
    return rid


def overrides(conn, agent: str) -> list[dict]:
    return [dict(r) for r in conn.execute(
        "SELECT id, block, kind, line, created_at FROM capsule_overrides WHERE agent = ? AND cleared_at IS NULL "
        "ORDER BY id", (agent,))]


def add_override(conn, agent: str, block: str, kind: str, line: str, now: float) -> None:
    exists = conn.execute("SELECT 1 FROM capsule_overrides WHERE agent = ? AND block = ? AND kind = ? AND line = ? "
                          "AND cleared_at IS NULL", (agent, block, kind, line)).fetchone()
    if not exists:
        conn.execute("INSERT INTO capsule_overrides (agent, block, kind, line, created_at) VALUES (?, ?, ?, ?, ?)",
                     (agent, block, kind, line, now))


def drop_override(conn, agent: str, block: str, kind: str, line: str, now: float) -> None:
    conn.execute("UPDATE capsule_overrides SET cleared_at = ? WHERE agent = ? AND block = ? AND kind = ? AND line = ? "
                 "AND cleared_at IS NULL", (now, agent, block, kind, line))


def clear(conn, agent: str, override_id: int, now: float) -> dict:
    row = conn.execute("SELECT id, block, kind, line FROM capsule_overrides WHERE id = ? AND agent = ? "
                       "AND cleared_at IS NULL", (override_id, agent)).fetchone()
    if row is None:
        raise NotFound(f"no capsule override {override_id} in this namespace",
                       hint="`strata capsule overrides` lists them")
    conn.execute("UPDATE capsule_overrides SET cleared_at = ? WHERE id = ?", (now, override_id))
    return dict(row)


def hot_window(conn, agent: str, after: float, until: float, limit: int) -> list[dict]:
    """The active memories of the hot tier from `after` to `until` (id, kind, content, event_at,
    importance), newest first, at most `limit`; not one a person marked irrelevant."""
    return [dict(r) for r in conn.execute(
        "SELECT id, kind, content, event_at, importance FROM episodes WHERE agent = ? AND state = 'active' "
        "AND tier = 'hot' AND irrelevant = 0 AND event_at >= ? AND event_at <= ? ORDER BY event_at DESC LIMIT ?",
        (agent, after, until, limit))]


_TASK_COLUMNS = "e.id, e.kind, e.content, e.event_at, e.importance"


def active(conn, agent: str, ids: list[int]) -> list[dict]:
    """The namespace's active memories among IDS, either tier."""
    marks = ",".join("?" * len(ids))
    return [dict(r) for r in conn.execute(
        f"SELECT {_TASK_COLUMNS} FROM episodes e WHERE e.agent = ? AND e.state = 'active' AND e.id IN ({marks})",
        (agent, *ids))] if ids else []


def closers(conn, agent: str, after: float, query: str, limit: int) -> list[dict]:
    """Active memories from AFTER on that the full-text QUERY finds (a closing word and a
    task's words), newest first, at most LIMIT."""
    found = fulltext.matching(conn, agent, query)
    if found is None:
        return []
    return [dict(r) for r in conn.execute(
        f"SELECT {_TASK_COLUMNS} FROM episodes e WHERE e.agent = ? AND e.state = 'active' AND e.event_at >= ? "
        f"AND {found[0]} ORDER BY e.event_at DESC LIMIT ?", (agent, after, found[1], limit))]


def episode_count(conn, agent: str) -> int:
    """The namespace's memories as the write path counts them (0 before its first)."""
    row = conn.execute("SELECT episode_count FROM namespaces WHERE agent = ?", (agent,)).fetchone()
    return row[0] if row else 0


def loop_count(conn) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'loop_count'").fetchone()
    return int(row[0]) if row else 0


def archive_bytes(conn, agent: str) -> tuple[int, int]:
    row = conn.execute("SELECT count(*), coalesce(sum(length(CAST(content AS BLOB))), 0) FROM episodes "
                       "WHERE agent = ?", (agent,)).fetchone()
    return int(row[0]), int(row[1])


def override_lines(conn, agent: str) -> list[str]:
    """Every line a person wrote into the namespace's capsule, cleared or not."""
    return [line for (line,) in conn.execute("SELECT line FROM capsule_overrides WHERE agent = ?", (agent,))]
