"""`strata bench reliability`: crash and concurrency runs on a real daemon and real writer
processes. Crash: each cycle starts the daemon and a writer doing mixed writes, then kills
the writer (and every other cycle the daemon) with SIGKILL mid-write; every write the writer
acknowledged must then be in the database, SQLite's integrity check must pass, and the next
daemon must start. Concurrency: the daemon, writers and polling readers together; no error
may reach any of them and no acknowledged write may be missing."""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench.procs import spawn, strata
from strata_bench.stats import summary_ms
from strata_daemon.app.phases.lock import holder
from strata_daemon.app.public import connect
from strata_daemon.config.home import init_home


def _daemon(home: Path) -> subprocess.Popen:
    """A daemon that has taken the home's lock (after a SIGKILL the old lock must not stop it)."""
    proc = spawn(["-m", "strata_daemon", "run"], home)
    deadline = time.monotonic() + 60
    while holder(home / "state" / "daemon.lock") != proc.pid:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the daemon did not start: {proc.communicate(timeout=10)[1][-800:]}")
        time.sleep(0.05)
    return proc


def _writer(home: Path, name: str, seconds: float = 3600.0) -> subprocess.Popen:
    return spawn(["-m", "strata_bench.writer", str(home), name, str(seconds)], home)


def _acks(out: str) -> list[dict]:
    """The complete lines a writer printed (a kill may cut the last one short)."""
    found = []
    for line in out.splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return found


def verify(db_path: Path, acks: list[dict]) -> dict:
    """Which acknowledged writes are missing, and SQLite's integrity check."""
    conn = connect(db_path)
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        missing = []
        for a in acks:
            if a["op"] == "observe":
                row = conn.execute("SELECT content FROM episodes WHERE id = ?", (a["id"],)).fetchone()
                if row is None or not row[0].startswith(a["content"]):
                    missing.append(a)
            elif a["op"] == "fact":
                row = conn.execute("SELECT 1 FROM fact_values v JOIN facts f ON f.id = v.fact_id "
                                   "WHERE f.key = ? AND v.value = ?", (a["key"], a["value"])).fetchone()
                if row is None:
                    missing.append(a)
    finally:
        conn.close()
    return {"integrity": integrity, "missing": missing}


def _kill(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.communicate(timeout=30)[0]


def crash_cycles(home: Path, cycles: int, seed: int, progress: Callable[[int], None] | None) -> dict:
    rng = random.Random(seed)
    acks: list[dict] = []
    failures: list[str] = []
    daemon = None
    for cycle in range(cycles):
        if daemon is None:
            daemon = _daemon(home)  # after a kill: must start, take the lock, and resume
        writer = _writer(home, f"w{cycle}")
        time.sleep(rng.uniform(0.8, 2.0))  # the writer's start-up is about 0.7 s of it
        got = _acks(_kill(writer))
        acks += [a for a in got if a["op"] != "error"]
        failures += [f"cycle {cycle}: {a['kind']}: {a['message']}" for a in got if a["op"] == "error"]
        if cycle % 2:
            _kill(daemon)
            daemon = None
        check = verify(home / "state" / "memory.db", acks)
        if check["integrity"] != "ok":
            failures.append(f"cycle {cycle}: integrity check: {check['integrity']}")
        if check["missing"]:
            failures.append(f"cycle {cycle}: {len(check['missing'])} acknowledged writes missing")
        if progress:
            progress(1)
    resumed = _resumes_backlog(home, daemon)
    if not resumed["ok"]:
        failures.append(f"the restarted daemon did not work off its embedding backlog: {resumed}")
    final = verify(home / "state" / "memory.db", acks)
    return {"cycles": cycles, "acknowledged_writes": len(acks), "missing_writes": len(final["missing"]),
            "integrity": final["integrity"], "failures": failures[:20], "failed_cycles": len(failures),
            "backlog": resumed}


def _backlog(db_path: Path) -> int:
    conn = connect(db_path)
    try:
        return conn.execute("SELECT count(*) FROM episodes WHERE embedded = 0").fetchone()[0]
    finally:
        conn.close()


def _resumes_backlog(home: Path, daemon: subprocess.Popen | None) -> dict:
    """Writes made while no daemon runs wait to be embedded; a daemon started after a SIGKILL
    must work that backlog off (its embed phase runs at start)."""
    db = home / "state" / "memory.db"
    if daemon is not None:
        _kill(daemon)
    writer = _writer(home, "backlog", 2.5)
    writer.communicate(timeout=120)
    before, started = _backlog(db), time.time()
    daemon = _daemon(home)
    deadline = time.monotonic() + 300
    try:
        while True:
            conn = connect(db)
            try:
                ran = conn.execute("SELECT status FROM phase_runs WHERE phase = 'embed' AND started_at >= ? "
                                   "AND status != 'running' ORDER BY id DESC", (started,)).fetchone()
            finally:
                conn.close()
            if ran is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=60)
    after = _backlog(db)
    return {"before": before, "after": after, "embed_phase": None if ran is None else ran[0],
            "ok": ran is not None and ran[0] == "ok" and after < before}


def concurrency(home: Path, writers: int, readers: int, seconds: float,
                progress: Callable[[int], None] | None) -> dict:
    daemon = _daemon(home)
    started = time.perf_counter()
    procs = [_writer(home, f"c{i}", seconds) for i in range(writers)]
    reader_code = ("import asyncio, json, sys, time\nfrom strata_daemon import Memory\nfrom strata_daemon.errors import StrataError\n"
                   "async def main(mode, seconds):\n"
                   "    end, n, errors = time.monotonic() + seconds, 0, []\n"
                   "    async with await Memory.open(actor='reader') as mem:\n"
                   "        while time.monotonic() < end:\n"
                   "            try:\n"
                   "                if mode == 'poll':\n"
                   "                    await mem.db.run(lambda c: c.execute('PRAGMA data_version').fetchone())\n"
                   "                    await mem.timeline(limit=20)\n"
                   "                else:\n"
                   "                    await mem.status()\n"
                   "                    await mem.recall('web status', mode='fast')\n"
                   "                n += 1\n"
                   "            except StrataError as e:\n"
                   "                errors.append(e.message)\n"
                   "    print(json.dumps({'reads': n, 'errors': errors[:5], 'error_count': len(errors)}))\n"
                   "asyncio.run(main(sys.argv[1], float(sys.argv[2])))\n")
    readers_procs = [spawn(["-c", reader_code, "poll" if i % 2 == 0 else "status", str(seconds)], home)
                     for i in range(readers)]
    acks, errors, reads, read_errors = [], [], 0, []
    for p in procs:
        out, err = p.communicate(timeout=seconds + 120)
        got = _acks(out)
        acks += [a for a in got if a["op"] != "error"]
        errors += [f"{a['kind']}: {a['message']}" for a in got if a["op"] == "error"]
        if p.returncode != 0:
            errors.append(f"writer exited {p.returncode}: {err[-300:]}")
        if progress:
            progress(1)
    for p in readers_procs:
        out, err = p.communicate(timeout=seconds + 120)
        if p.returncode != 0 or not out.strip():
            read_errors.append(f"reader exited {p.returncode}: {err[-300:]}")
            continue
        r = json.loads(out.strip().splitlines()[-1])
        reads += r["reads"]
        read_errors += r["errors"]
        if progress:
            progress(1)
    wall = time.perf_counter() - started
    daemon.send_signal(signal.SIGTERM)
    _, daemon_err = daemon.communicate(timeout=60)
    check = verify(home / "state" / "memory.db", acks)
    return {"seconds": round(wall, 1), "writers": writers, "readers": readers, "writes": len(acks),
            "writes_per_s": round(len(acks) / wall, 1),
            "write_latency": summary_ms([a["ms"] / 1000 for a in acks]) if acks else None,
            "reads": reads, "reads_per_s": round(reads / wall, 1),
            "write_errors": errors[:10], "write_error_count": len(errors), "read_errors": read_errors[:10],
            "read_error_count": len(read_errors), "locked_errors": sum("locked" in e for e in errors + read_errors),
            "missing_writes": len(check["missing"]), "integrity": check["integrity"],
            "daemon_exit": daemon.returncode, "daemon_errors": [l for l in daemon_err.splitlines() if "ERROR" in l][:5]}


def routine_file(path: Path, n: int, seed: int) -> Path:
    """`n` routine lines of few shapes, with no number or name to tell them apart, over 60 days:
    the home on which consolidation once took 5.7 GB."""
    rng = random.Random(seed)
    subjects = ("the relay", "the nas", "the web server", "the gateway", "the database host", "the backup box")
    acts = ("restarted nginx", "rotated its logs", "finished the nightly backup fine", "kept the vpn connected",
            "ran apt upgrade with nothing to do", "finished its cron job", "renewed its certificate")
    start = time.time() - 60 * 86400
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"content": f"{rng.choice(subjects)} {rng.choice(acts)}", "kind": "event",
                                "at": start + i * 60 * 86400 / n}) + "\n")
    return path


# Linux counts a child's peak from its fork, the pages of the process it was forked from
# included (a test runner holding models, say): a bare interpreter starts the command and
# reads its account, so that what is counted is the command's own.
_MEASURER = ("import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL); _, s, u = os.wait4(p.pid, 0); "
             "print(u.ru_maxrss, os.waitstatus_to_exitcode(s))")


def _peak_rss(home: Path, *args: str) -> tuple[float, float, int]:
    """(seconds, peak resident MB, exit code) of one strata command, from the kernel's account."""
    started = time.perf_counter()
    proc = spawn(["-c", _MEASURER, sys.executable, "-m", "strata_daemon", *args], home)
    out, _ = proc.communicate()
    peak_kb, code = (int(x) for x in out.split())
    return time.perf_counter() - started, peak_kb / 1024, code


def _phase_status(db: Path, phase: str, since: float) -> str | None:
    conn = connect(db)
    try:
        row = conn.execute("SELECT status FROM phase_runs WHERE phase = ? AND started_at >= ? ORDER BY id DESC",
                           (phase, since)).fetchone()
    finally:
        conn.close()
    return row and row[0]


def _stop_mid(home: Path, phase: str) -> dict:
    """Start the daemon, SIGTERM it a moment into `phase`, and time its exit."""
    since = time.time()
    daemon = _daemon(home)
    db = home / "state" / "memory.db"
    deadline = time.monotonic() + 300
    while _phase_status(db, phase, since) != "running":
        if time.monotonic() > deadline or daemon.poll() is not None:
            _kill(daemon)
            return {"phase": phase, "reached": False}
        time.sleep(0.05)
    time.sleep(0.3)
    asked = time.perf_counter()
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        _kill(daemon)
    return {"phase": phase, "reached": True, "exit_seconds": round(time.perf_counter() - asked, 2),
            "exit_code": daemon.returncode, "recorded": _phase_status(db, phase, since)}


def shutdown(home: Path, similar: int, stops: int, seed: int, progress: Callable[[int], None] | None) -> dict:
    """A home of `similar` near-identical routine lines: SIGTERM a moment into the embed phase
    and into consolidation (`stops` times each; `interrupted` counts the stops that caught the
    phase running, the rest found it done), and consolidation's dry run, its time and peak
    resident memory."""
    lines = routine_file(home.parent / "routine.jsonl", similar, seed)
    stored = strata(home, "import", str(lines), "--no-embed", "--json")
    if stored.returncode != 0:
        raise RuntimeError(f"import failed: {stored.stderr[-500:]!r}")
    # Each stop interrupts a run of at most EMBED_PER_RUN; the backlog is still there for the next.
    runs = [_stop_mid(home, "embed") for _ in range(stops)]
    if progress:
        progress(stops)
    embedded = strata(home, "embed", "--json")
    if embedded.returncode != 0:
        raise RuntimeError(f"embedding failed: {embedded.stderr[-500:]!r}")
    seconds, peak_mb, code = _peak_rss(home, "consolidate", "--dry-run", "--json")
    # Due a second after each start; a stopped pass rolls back, so every start has it to do again.
    (home / "strata.toml").write_text("[daemon]\nconsolidation_interval_hours = 0.0003\n", encoding="utf-8")
    runs += [_stop_mid(home, "consolidate") for _ in range(stops)]
    if progress:
        progress(stops)
    exits = [r["exit_seconds"] for r in runs if r["reached"]]
    return {"memories": similar, "dry_run": {"seconds": round(seconds, 1), "peak_rss_mb": round(peak_mb),
                                             "exit_code": code},
            "stops": runs, "exit_seconds_max": max(exits) if exits else None,
            "exit_seconds_median": statistics.median(exits) if exits else None,
            "interrupted": sum(r.get("recorded") == "interrupted" for r in runs),
            "clean": all(r["reached"] and r["exit_code"] == 0 and r["recorded"] in ("interrupted", "ok")
                         for r in runs)}


PARTS = ("crash", "concurrency", "adversarial", "shutdown")


def bench_reliability(*, cycles: int = 100, seconds: float = 60.0, writers: int = 8, readers: int = 2,
                      similar: int = 26_000, stops: int = 3, parts: tuple[str, ...] = PARTS, seed: int = 0,
                      share: float = 1.0, progress: Callable[[int], None] | None = None) -> dict:
    from strata_bench.adversarial import adversarial

    out: dict = {"benchmark": "reliability"}
    ok = True
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        def home(name: str) -> Path:
            return init_home(Path(tmp) / name / "home")[0].root
        if "crash" in parts:
            crash = out["crash"] = crash_cycles(home("crash"), cycles, seed, progress)
            ok &= crash["missing_writes"] == 0 and crash["integrity"] == "ok" and not crash["failed_cycles"]
        if "concurrency" in parts:
            busy = out["concurrency"] = concurrency(home("busy"), writers, readers, seconds, progress)
            ok &= busy["missing_writes"] == 0 and busy["integrity"] == "ok" and not busy["write_error_count"] \
                and not busy["read_error_count"] and busy["daemon_exit"] == 0
        if "adversarial" in parts:
            found = out["adversarial"] = adversarial(home("adversarial"), Path(tmp) / "adversarial", progress,
                                                     share=share, seed=seed)
            ok &= found["tracebacks"] == found["server_errors"] == found["unanswered"] == 0 \
                and not found["data_changed"]
        if "shutdown" in parts:
            stopped = out["shutdown"] = shutdown(home("shutdown"), similar, stops, seed, progress)
            ok &= stopped["clean"] and (stopped["exit_seconds_max"] or 0) <= 10 \
                and stopped["dry_run"]["peak_rss_mb"] <= 500
    out["data_lost"] = sum(out[p]["missing_writes"] for p in ("crash", "concurrency") if p in out)
    out["ok"] = bool(ok) and out["data_lost"] == 0
    return out
