"""The daemon's records: phase runs, the loop count, strength snapshots, and the integrity
check of the database file."""

from __future__ import annotations

import json
from pathlib import Path

from strata_daemon.store import driver

SNAPSHOT_FIELDS = ("episodes", "mean", "p10", "p50", "p90", "weak", "potentiated", "edges")


def start_run(conn, phase: str, now: float, actor: str, pid: int) -> int:
    return conn.execute("INSERT INTO phase_runs (phase, started_at, status, actor, pid) VALUES (?, ?, 'running', ?, ?)",
                        (phase, now, actor, pid)).lastrowid


def end_run(conn, run_id: int, now: float, status: str, result: dict | None, error: str | None) -> None:
    conn.execute("UPDATE phase_runs SET ended_at = ?, status = ?, result = ?, error = ? WHERE id = ?",
                 (now, status, None if result is None else json.dumps(result, default=str), error, run_id))


def running(conn) -> list[tuple[int, int | None, str]]:
    """(run id, pid, actor) of the runs recorded as running."""
    return [(r[0], r[1], r[2]) for r in conn.execute("SELECT id, pid, actor FROM phase_runs WHERE status = 'running'")]


def interrupt(conn, run_ids: list[int], now: float) -> None:
    """These runs end as 'interrupted': the process running them is gone."""
    for part in (run_ids[i:i + 500] for i in range(0, len(run_ids), 500)):
        conn.execute(f"UPDATE phase_runs SET status = 'interrupted', ended_at = ?, error = 'the process running it "
                     f"ended before it did' WHERE id IN ({', '.join('?' * len(part))})", (now, *part))


def backed_up_mid_run(conn) -> int:
    """A backup is made while its own phase run is open, so the database restored from it holds
    that run as 'running', as if its process had died: it ended when the copy was made, and
    ends 'ok' there. Returns how many."""
    return conn.execute("UPDATE phase_runs SET status = 'ok', ended_at = started_at "
                        "WHERE phase = 'backup' AND status = 'running'").rowcount


def last_runs(conn) -> list[dict]:
    """Each phase's last run as recorded (result still JSON text)."""
    return [dict(r) for r in conn.execute(
        "SELECT p.phase, p.started_at, p.ended_at, p.status, p.result, p.error, p.pid FROM phase_runs p "
        "JOIN (SELECT phase, max(id) AS id FROM phase_runs GROUP BY phase) m ON m.id = p.id")]


def last_started(conn) -> dict[str, float]:
    """When each phase last started a run that ended (a stop's interrupted run did nothing:
    after a restart the phase is due as if it never began)."""
    return {r[0]: r[1] for r in conn.execute("SELECT phase, max(started_at) FROM phase_runs "
                                             "WHERE status != 'interrupted' GROUP BY phase")}


def recent_failures(conn, limit: int = 10) -> list[tuple[str, float, str]]:
    return [tuple(r) for r in conn.execute("SELECT phase, started_at, error FROM phase_runs WHERE status = 'failed' "
                                           "ORDER BY id DESC LIMIT ?", (limit,))]


def prune_runs(conn, before: float) -> int:
    """Remove the phase runs that ended before `before`, except each phase's last."""
    return conn.execute("DELETE FROM phase_runs WHERE ended_at < ? AND id NOT IN "
                        "(SELECT max(id) FROM phase_runs GROUP BY phase)", (before,)).rowcount


def bump_loop(conn) -> int:
    conn.execute("INSERT INTO meta (key, value) VALUES ('loop_count', '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = CAST(meta.value AS INTEGER) + 1")
    return loop_count(conn)


def loop_count(conn) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'loop_count'").fetchone()
    return int(row[0]) if row else 0


def quick_check(db_path: Path) -> str:
    """SQLite's quick_check of the file, on a connection of its own ("ok" when sound)."""
    conn = driver.connect(db_path)
    try:
        return conn.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        conn.close()


def strength_inputs(conn, agent: str) -> tuple[list[tuple[float, int]], int]:
    """(event time, accesses) of the namespace's active memories, and its edge count."""
    rows = conn.execute("SELECT event_at, access_count FROM episodes WHERE agent = ? AND state = 'active'",
                        (agent,)).fetchall()
    edges = conn.execute("SELECT count(*) FROM web_edges WHERE agent = ?", (agent,)).fetchone()[0]
    return [(r[0], r[1]) for r in rows], edges


def add_snapshot(conn, agent: str, now: float, summary: dict) -> None:
    conn.execute(f"INSERT INTO strength_snapshots (agent, taken_at, {', '.join(SNAPSHOT_FIELDS)}) "
                 f"VALUES (?, ?, {', '.join('?' * len(SNAPSHOT_FIELDS))})",
                 (agent, now, *(summary[f] for f in SNAPSHOT_FIELDS)))


def latest_snapshot(conn, agent: str) -> dict | None:
    row = conn.execute(f"SELECT taken_at, {', '.join(SNAPSHOT_FIELDS)} FROM strength_snapshots WHERE agent = ? "
                       "ORDER BY id DESC LIMIT 1", (agent,)).fetchone()
    return None if row is None else dict(row)
