"""`strata bench cli`: what a person or an agent waits for each time it runs `strata`, from the
exec to the exit, in a home of N embedded memories. Each command runs ROUNDS times, the
commands taking turns within a round (the machine's speed drifts within minutes), beside
`python -c "import sqlite3"` timed the same way: what any Python program costs to start.

`recall` is timed twice: answered by a running daemon (`strata run`, whose model is loaded),
and in the command's own process (`--no-daemon`, which loads the model)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.kept import filled_home
from strata_bench.procs import child_env, spawn
from strata_bench.stats import ratio, summary_ms
from strata_daemon.errors import StrataError

BASELINE = [sys.executable, "-c", "import sqlite3"]
DAEMON_SECONDS = 120.0


def commands(queries: list[str]) -> dict[str, Callable[[int], list[str]]]:
    """Each timed command's arguments for its I-th run."""
    return {
        "help": lambda i: ["--help"],
        "observe": lambda i: ["observe", f"bench note {i}: the nightly backup of db-0{i % 3} took {i % 50} minutes"],
        "fact_get": lambda i: ["fact", "get", "canary"],
        "status": lambda i: ["status"],
        "recall_daemon": lambda i: ["recall", queries[i % len(queries)]],
        "recall_no_daemon": lambda i: ["recall", "--no-daemon", queries[i % len(queries)]],
    }


def _timed(argv: list[str], home: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=child_env(home), capture_output=True, timeout=600)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise StrataError(f"`{' '.join(argv[1:])}` failed ({proc.returncode}): "
                          f"{proc.stderr.decode('utf-8', 'replace')[-300:]}")
    return seconds


def _daemon(home: Path) -> subprocess.Popen:
    """`strata run` on the home, once its API answers on the socket."""
    proc = spawn(["-m", "strata_daemon", "run"], home, stdout=subprocess.DEVNULL, text=False)
    record = home / "state" / "http-listeners.json"
    deadline = time.monotonic() + DAEMON_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StrataError(f"strata run ended: {proc.communicate()[1].decode('utf-8', 'replace')[-300:]}")
        try:
            if json.loads(record.read_text())["unix"]["up"]:
                return proc
        except (OSError, ValueError, KeyError, TypeError):
            pass
        time.sleep(0.1)
    proc.kill()
    raise StrataError("strata run did not serve its socket within two minutes")


def _rounds(home: Path, rounds: int, queries: list[str], progress) -> dict[str, list[float]]:
    strata = [sys.executable, "-m", "strata_daemon"]
    timed = {"baseline": [], **{name: [] for name in commands(queries)}}
    for i in range(rounds):
        timed["baseline"].append(_timed(BASELINE, home))
        for name, args in commands(queries).items():
            timed[name].append(_timed(strata + args(i), home))
        if progress:
            progress(1)
    return timed


async def bench_cli(n: int, *, rounds: int = 10, seed: int = 0, progress: Callable[[int], None] | None = None,
                    embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    queries = corpus.queries(rounds + 1, seed=seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _, _ = await filled_home(Path(tmp) / "home", n, seed, "balanced", embed_progress, cache)
        root = home.root
        _timed([sys.executable, "-m", "strata_daemon", "fact", "set", "canary", "alive"], root)
        daemon = _daemon(root)
        try:
            first = _timed([sys.executable, "-m", "strata_daemon", "recall", queries[-1]], root)  # loads its model
            timed = _rounds(root, rounds, queries, progress)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
    base = summary_ms(timed.pop("baseline"))
    out = {"benchmark": "cli", "n": n, "rounds": rounds, "seed": seed,
           "baseline": {"name": "python -c 'import sqlite3'", **base},
           "first_daemon_recall_ms": round(first * 1000, 1)}
    for name, seconds in timed.items():
        s = summary_ms(seconds)
        out[name] = {"p50_ms": s["p50_ms"], "p95_ms": s["p95_ms"], "ratio_p50": ratio(s["p50_ms"], base["p50_ms"])}
    return out
