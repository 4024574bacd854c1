"""`strata bench ingest`: time the import path (JSONL -> validate -> store) on the synthetic corpus,
against bare SQLite inserts of the same rows in the same run."""

from __future__ import annotations

import io
import json
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.stats import ratio
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import EPISODE_COLUMNS, connect, parse_jsonl
from strata_daemon.base import timeutil
from strata_daemon.config.home import init_home


def corpus_jsonl(n: int, seed: int) -> bytes:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in corpus.observations(n, seed=seed)).encode()


async def populate(mem: Memory, n: int, seed: int, progress: Callable[[int], None] | None = None) -> dict:
    """Import n corpus observations through the same path as `strata import`; returns timings."""
    data = corpus_jsonl(n, seed)
    started = time.perf_counter()
    parsed = parse_jsonl(io.BytesIO(data), mem.limits, agent=mem.agent, now=timeutil.now())
    parsed_at = time.perf_counter()
    totals = await mem.observe_many(parsed.rows, validated=True, progress=progress)
    done = time.perf_counter()
    return {"rows": parsed.rows, "totals": totals, "parse_s": parsed_at - started, "store_s": done - parsed_at,
            "total_s": done - started}


def bare_insert_seconds(rows: list[dict], folder: Path) -> float:
    """The floor: the same rows into one plain table, no FTS, no indexes, no audit, one transaction."""
    conn = connect(folder / "baseline.db")
    conn.execute(f"CREATE TABLE episodes (id INTEGER PRIMARY KEY, {', '.join(EPISODE_COLUMNS)})")
    tuples = [tuple(r[c] for c in EPISODE_COLUMNS) for r in rows]
    started = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(f"INSERT INTO episodes ({', '.join(EPISODE_COLUMNS)}) VALUES ({', '.join('?' * len(EPISODE_COLUMNS))})",
                     tuples)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


async def bench_ingest(n: int, *, seed: int = 0, progress: Callable[[int], None] | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        async with await Memory.open(home, actor="bench") as mem:
            run = await populate(mem, n, seed, progress)
            status = await mem.status()
        baseline_s = bare_insert_seconds(run["rows"], Path(tmp))
    per_s = n / run["total_s"]
    baseline_per_s = n / baseline_s
    return {
        "benchmark": "ingest", "n": n, "seed": seed,
        "observations_per_s": round(per_s, 1),
        "seconds": round(run["total_s"], 3), "parse_seconds": round(run["parse_s"], 3),
        "store_seconds": round(run["store_s"], 3),
        "created": run["totals"]["created"], "repeats_folded": run["totals"]["repeat"],
        "baseline": {"name": "bare SQLite executemany, no FTS/indexes/audit",
                     "observations_per_s": round(baseline_per_s, 1)},
        "ratio_to_baseline": ratio(per_s, baseline_per_s),
        "database_bytes_per_1000": round(status["database_bytes"] / n * 1000) if n else None,
    }
