"""Running one phase with its record, and what the records say of the daemon."""

from __future__ import annotations

import json
import logging
import os
import socket
import time

from strata_daemon.app import listeners
from strata_daemon.app.phases.registry import BY_NAME, PHASES
from strata_daemon.base import stopping, timeutil
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.store import phases as store

log = logging.getLogger("strata.phases")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process has that pid now: not ours, but alive
        return True
    return True


def actor(db, base: str) -> str:
    """Who records a phase run: `daemon` or `cli`, and on a store several hosts share, on which
    host (`daemon@HOST`), since a process id means something only there."""
    return base if db.dialect == "sqlite" else f"{base}@{socket.gethostname()}"


def mark_interrupted(conn, now: float, hosts: tuple[str, ...] = ()) -> int:
    """Rows left 'running' by a process that is gone (killed, or stopped before it could end
    them): they end as 'interrupted'. Returns how many. With `hosts` (the actors of this host, on
    a shared store), only their rows: another host's process cannot be seen from here."""
    stale = [run for run, pid, who in store.running(conn) if (not hosts or who in hosts)
             and (pid is None or (pid != os.getpid() and not _alive(pid)))]
    store.interrupt(conn, stale, now)
    return len(stale)


def last_runs(conn) -> dict[str, dict]:
    out = {}
    for r in store.last_runs(conn):
        # Shown as it is, though the daemon's next start records it: a dead process runs nothing.
        gone = r["status"] == "running" and (r["pid"] is None or not _alive(r["pid"]))
        out[r["phase"]] = {"started_at": r["started_at"], "started_at_iso": timeutil.iso(r["started_at"]),
                           "ended_at": r["ended_at"], "status": "interrupted" if gone else r["status"],
                           "result": None if r["result"] is None else json.loads(r["result"]), "error": r["error"]}
    return out


def recent_failures(conn, limit: int = 10) -> list[dict]:
    return [{"phase": phase, "started_at": at, "started_at_iso": timeutil.iso(at), "error": error}
            for phase, at, error in store.recent_failures(conn, limit)]


async def run_phase(mem, name: str, *, actor: str) -> dict:
    """Run one phase now and record it. A failure is recorded and returned, not raised."""
    phase = BY_NAME.get(name)
    if phase is None:
        raise InvalidInput(f"unknown phase {name!r}", hint=f"phases: {', '.join(p.name for p in PHASES)}")
    run_id = await mem.db.transact(store.start_run, name, timeutil.now(), actor, os.getpid())
    started = time.perf_counter()
    try:
        result = await phase.run(mem)
    except stopping.Stopped:  # its transaction rolled back; the next run does the work again
        await mem.db.transact(store.end_run, run_id, timeutil.now(), "interrupted", None, "stopped on request")
        log.info("phase %s interrupted by the stop; it runs again when next due", name)
        return {"phase": name, "status": "interrupted", "seconds": round(time.perf_counter() - started, 3)}
    except Exception as e:  # recorded and retried by the scheduler; never fatal
        message = e.message if isinstance(e, StrataError) else f"{type(e).__name__}: {e}"
        await mem.db.transact(store.end_run, run_id, timeutil.now(), "failed", None, message)
        log.error("phase %s failed: %s", name, message)
        return {"phase": name, "status": "failed", "error": message,
                "seconds": round(time.perf_counter() - started, 3)}
    await mem.db.transact(store.end_run, run_id, timeutil.now(), "ok", result, None)
    return {"phase": name, "status": "ok", "result": result, "seconds": round(time.perf_counter() - started, 3)}


async def daemon_status(mem) -> dict:
    """What `Memory.daemon_status` returns: read from the home's lock, heartbeat and phase records."""
    from strata_daemon.app.phases.lock import holder

    beat = mem.home.state_dir / "heartbeat"
    now = timeutil.now()
    runs, loops, failures = await mem.db.run(lambda c: (last_runs(c), store.loop_count(c), recent_failures(c)))
    lock = mem.home.state_dir / "daemon.lock"
    pid = holder(lock)
    # The running daemon wrote its pid into the lock as it started: a phase it has not run yet is
    # due one period after that.
    started = lock.stat().st_mtime if pid else None
    phases = []
    for p in PHASES:
        last = runs.get(p.name)
        due = last["started_at"] + p.period(mem.config) if last is not None else \
            started + p.period(mem.config) if started is not None and not (p.at_start or p.after) else None
        phases.append({"phase": p.name, "every_seconds": p.period(mem.config), "after": p.after,
                       "at_start": p.at_start, "last": last, "next_at": due, "next_at_iso": timeutil.iso(due)})
    return {"running": pid, "loop_count": loops,
            "heartbeat_age_seconds": round(now - beat.stat().st_mtime, 1) if beat.exists() else None,
            "listeners": listeners.of_daemon(mem.home.state_dir, pid), "phases": phases, "recent_errors": failures}
