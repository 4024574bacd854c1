"""Recording phase runs (SQL on the database thread) and running one phase with its record."""

from __future__ import annotations

import json
import logging
import os
import time

from strata_daemon.app import listeners
from strata_daemon.base import stopping, timeutil
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.app.phases.registry import BY_NAME, PHASES

log = logging.getLogger("strata.phases")


def _start(conn, phase: str, now: float, actor: str) -> int:
    return conn.execute("INSERT INTO phase_runs (phase, started_at, status, actor, pid) VALUES (?, ?, 'running', ?, ?)",
                        (phase, now, actor, os.getpid())).lastrowid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process has that pid now: not ours, but alive
        return True
    return True


def mark_interrupted(conn, now: float) -> int:
    """Rows left 'running' by a process that is gone (killed, or stopped before it could end
    them): they end as 'interrupted'. Returns how many."""
    stale = [r[0] for r in conn.execute("SELECT id, pid FROM phase_runs WHERE status = 'running'")
             if r[1] is None or (r[1] != os.getpid() and not _alive(r[1]))]
    for part in (stale[i:i + 500] for i in range(0, len(stale), 500)):
        conn.execute(f"UPDATE phase_runs SET status = 'interrupted', ended_at = ?, error = 'the process running it "
                     f"ended before it did' WHERE id IN ({', '.join('?' * len(part))})", (now, *part))
    return len(stale)


def _end(conn, run_id: int, now: float, status: str, result: dict | None, error: str | None) -> None:
    conn.execute("UPDATE phase_runs SET ended_at = ?, status = ?, result = ?, error = ? WHERE id = ?",
                 (now, status, None if result is None else json.dumps(result, default=str), error, run_id))


def last_runs(conn) -> dict[str, dict]:
    out = {}
    for r in conn.execute("SELECT p.phase, p.started_at, p.ended_at, p.status, p.result, p.error, p.pid "
                          "FROM phase_runs p JOIN (SELECT phase, max(id) AS id FROM phase_runs GROUP BY phase) m "
                          "ON m.id = p.id"):
        # Shown as it is, though the daemon's next start records it: a dead process runs nothing.
        gone = r["status"] == "running" and (r["pid"] is None or not _alive(r["pid"]))
        out[r["phase"]] = {"started_at": r["started_at"], "started_at_iso": timeutil.iso(r["started_at"]),
                           "ended_at": r["ended_at"], "status": "interrupted" if gone else r["status"],
                           "result": None if r["result"] is None else json.loads(r["result"]), "error": r["error"]}
    return out


def last_started(conn) -> dict[str, float]:
    """When each phase last started a run that ended (a stop's interrupted run did nothing:
    after a restart the phase is due as if it never began)."""
    return {r[0]: r[1] for r in conn.execute("SELECT phase, max(started_at) FROM phase_runs "
                                             "WHERE status != 'interrupted' GROUP BY phase")}


def recent_failures(conn, limit: int = 10) -> list[dict]:
    return [{"phase": r[0], "started_at": r[1], "started_at_iso": timeutil.iso(r[1]), "error": r[2]}
            for r in conn.execute("SELECT phase, started_at, error FROM phase_runs WHERE status = 'failed' "
                                  "ORDER BY id DESC LIMIT ?", (limit,))]


async def run_phase(mem, name: str, *, actor: str) -> dict:
    """Run one phase now and record it. A failure is recorded and returned, not raised."""
    phase = BY_NAME.get(name)
    if phase is None:
        raise InvalidInput(f"unknown phase {name!r}", hint=f"phases: {', '.join(p.name for p in PHASES)}")
    run_id = await mem.db.transact(_start, name, timeutil.now(), actor)
    started = time.perf_counter()
    try:
        result = await phase.run(mem)
    except stopping.Stopped:  # its transaction rolled back; the next run does the work again
        await mem.db.transact(_end, run_id, timeutil.now(), "interrupted", None, "stopped on request")
        log.info("phase %s interrupted by the stop; it runs again when next due", name)
        return {"phase": name, "status": "interrupted", "seconds": round(time.perf_counter() - started, 3)}
    except Exception as e:  # recorded and retried by the scheduler; never fatal
        message = e.message if isinstance(e, StrataError) else f"{type(e).__name__}: {e}"
        await mem.db.transact(_end, run_id, timeutil.now(), "failed", None, message)
        log.error("phase %s failed: %s", name, message)
        return {"phase": name, "status": "failed", "error": message,
                "seconds": round(time.perf_counter() - started, 3)}
    await mem.db.transact(_end, run_id, timeutil.now(), "ok", result, None)
    return {"phase": name, "status": "ok", "result": result, "seconds": round(time.perf_counter() - started, 3)}


async def daemon_status(mem) -> dict:
    """What `Memory.daemon_status` returns: read from the home's lock, heartbeat and phase records."""
    from strata_daemon.app.phases.lock import holder

    beat = mem.home.state_dir / "heartbeat"
    now = timeutil.now()
    runs, loops, failures = await mem.db.run(lambda c: (last_runs(c), c.execute(
        "SELECT value FROM meta WHERE key = 'loop_count'").fetchone(), recent_failures(c)))
    phases = []
    for p in PHASES:
        last = runs.get(p.name)
        due = None if last is None else last["started_at"] + p.period(mem.config)
        phases.append({"phase": p.name, "every_seconds": p.period(mem.config), "after": p.after,
                       "at_start": p.at_start, "last": last, "next_at": due, "next_at_iso": timeutil.iso(due)})
    pid = holder(mem.home.state_dir / "daemon.lock")
    return {"running": pid, "loop_count": int(loops[0]) if loops else 0,
            "heartbeat_age_seconds": round(now - beat.stat().st_mtime, 1) if beat.exists() else None,
            "listeners": listeners.of_daemon(mem.home.state_dir, pid), "phases": phases, "recent_errors": failures}
