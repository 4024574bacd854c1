"""`strata bench daemon`: the daemon's cost on a realistic home. Each phase is timed through
`run_phase` (the daemon's own path) on the synthetic corpus; then the real daemon runs as a
subprocess for a while, idle, and its CPU share and resident memory are read from /proc.
Baselines from the same run: a bare `PRAGMA quick_check` of the same database for the
phases, and an idle Python process holding the same imports for CPU and memory."""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.dossier import TOPICS
from strata_bench.ingest import populate
from strata_bench.stats import ratio
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.registry import PHASES
from strata_daemon.app.phases.runs import run_phase
from strata_daemon.app.public import connect
from strata_daemon.base.cpu import process_cpu_seconds
from strata_daemon.config.home import init_home

READY_TIMEOUT = 600.0  # the at-start phases on 100k memories, on a slow machine
FOLD_RECALLS = 50  # recalls before each timed fold, so it has access events to fold
_BASELINE = "import time, strata_daemon.app.memory, strata_daemon.app.runner, numpy, onnxruntime; print('ready', flush=True); time.sleep(1e9)"


def proc_rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {field} for process {pid}")


async def _prepare(mem: Memory, name: str, round_: int) -> None:
    """Give a phase the work it meets in the daemon."""
    if name == "fold":
        for q in corpus.queries(FOLD_RECALLS, seed=round_):
            await mem.recall(q, mode="fast")
    elif name == "embed":  # a run embeds at most EMBED_PER_RUN new memories
        from strata_daemon.app.phases.jobs import EMBED_PER_RUN

        fresh = [dict(o, content=f"{o['content']} (round {round_})")
                 for o in corpus.observations(EMBED_PER_RUN, seed=1000 + round_)]
        await mem.observe_many(fresh)


async def _time_phases(mem: Memory, repeat: int, progress) -> dict:
    out = {}
    for phase in PHASES:
        times = []
        for r in range(repeat):
            await _prepare(mem, phase.name, r)
            started = time.perf_counter()
            result = await run_phase(mem, phase.name, actor="bench")
            times.append(time.perf_counter() - started)
            if result["status"] != "ok":
                raise RuntimeError(f"phase {phase.name} failed in the benchmark: {result['error']}")
            if progress:
                progress(1)
        out[phase.name] = {"median_s": round(statistics.median(times), 4), "max_s": round(max(times), 4)}
    return out


def _quick_check_seconds(db_path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        conn = connect(db_path)
        started = time.perf_counter()
        conn.execute("PRAGMA quick_check").fetchone()
        times.append(time.perf_counter() - started)
        conn.close()
    return statistics.median(times)


def _settled(db_path: Path, since: float) -> bool:
    """Whether the daemon's at-start phases (and what follows them) have run and none is running."""
    conn = connect(db_path)
    try:
        done = {r[0] for r in conn.execute("SELECT phase FROM phase_runs WHERE actor = 'daemon' AND started_at >= ? "
                                           "AND status != 'running'", (since,))}
        running = conn.execute("SELECT count(*) FROM phase_runs WHERE status = 'running'").fetchone()[0]
    finally:
        conn.close()
    wanted = {p.name for p in PHASES if p.at_start or p.after}
    return wanted <= done and running == 0


def _watch(daemon: subprocess.Popen, baseline: subprocess.Popen, seconds: float, progress) -> dict:
    """CPU seconds and RSS of both processes over `seconds` of idling."""
    cpu0 = {p.pid: process_cpu_seconds(p.pid) for p in (daemon, baseline)}
    started = time.monotonic()
    rss: list[float] = []
    while (left := seconds - (time.monotonic() - started)) > 0:
        time.sleep(min(1.0, left))
        if daemon.poll() is not None:
            raise RuntimeError(f"the daemon exited with {daemon.returncode} while idling")
        rss.append(proc_rss_mb(daemon.pid))
        if progress:
            progress(1)
    wall = time.monotonic() - started
    cpu = {pid: process_cpu_seconds(pid) - c for pid, c in cpu0.items()}
    return {"wall": wall, "daemon_cpu": cpu[daemon.pid], "baseline_cpu": cpu[baseline.pid], "rss": rss,
            "peak": proc_rss_mb(daemon.pid, "VmHWM"), "baseline_rss": proc_rss_mb(baseline.pid)}


def idle_daemon(home, seconds: float, progress) -> dict:
    env = {**os.environ, "STRATA_HOME": str(home.root)}
    env.pop("NOTIFY_SOCKET", None)
    log = open(home.state_dir / "bench-daemon.log", "w+b")
    daemon = subprocess.Popen([sys.executable, "-m", "strata_daemon", "run"], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=log)
    baseline = subprocess.Popen([sys.executable, "-c", _BASELINE], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, text=True)
    try:
        launched, deadline = time.time(), time.monotonic() + READY_TIMEOUT
        while not _settled(home.db_path, launched):
            if daemon.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError("the daemon did not settle: " + log.read().decode(errors="replace")[-2000:])
            time.sleep(0.5)
        settle_s = time.time() - launched
        baseline.stdout.readline()  # imported and sleeping
        watched = _watch(daemon, baseline, seconds, progress)
        stop_started = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=60)
        stop_s = time.monotonic() - stop_started
    finally:
        for p in (daemon, baseline):
            if p.poll() is None:
                p.kill()
                p.wait()
        log.close()
    return {**watched, "settle_s": settle_s, "stop_s": stop_s, "exit_code": code}


async def bench_daemon(n: int, *, seconds: float = 600.0, repeat: int = 3, seed: int = 0,
                       progress: Callable[[int], None] | None = None,
                       embed_progress: Callable[[int], None] | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        topics = "".join(f'[dossier.topics."{t}"]\n' for t in TOPICS)
        home.config_path.write_text(topics, encoding="utf-8")
        async with await Memory.open(home, actor="bench") as mem:
            await populate(mem, n, seed)
            await mem.embed_pending(progress=embed_progress)  # an idle daemon has no backlog
            phases = await _time_phases(mem, repeat, progress)
        quick_check = await asyncio.to_thread(_quick_check_seconds, home.db_path, repeat)
        database_mb = round(sum(p.stat().st_size for p in home.state_dir.glob("memory.db*")) / 2**20, 1)
        idle = await asyncio.to_thread(idle_daemon, home, seconds, progress)
    cpu_percent = 100.0 * idle["daemon_cpu"] / idle["wall"]
    base_percent = 100.0 * idle["baseline_cpu"] / idle["wall"]
    rss_mb = round(statistics.median(idle["rss"]), 1)
    return {
        "benchmark": "daemon", "n": n, "seed": seed, "idle_seconds": round(idle["wall"], 1),
        "idle_cpu_percent": round(cpu_percent, 3), "rss_mb": rss_mb, "rss_peak_mb": idle["peak"],
        "phases": phases, "database_mb": database_mb, "settle_seconds": round(idle["settle_s"], 1),
        "stop_seconds": round(idle["stop_s"], 2), "stop_exit_code": idle["exit_code"],
        "baseline": {"name": "idle Python with the same imports; bare PRAGMA quick_check",
                     "idle_cpu_percent": round(base_percent, 3), "rss_mb": idle["baseline_rss"],
                     "quick_check_s": round(quick_check, 4)},
        "ratio_rss": ratio(rss_mb, idle["baseline_rss"]),
        "ratio_heartbeat_to_quick_check": ratio(phases["heartbeat"]["median_s"], quick_check),
    }
