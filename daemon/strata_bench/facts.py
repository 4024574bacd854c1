"""`strata bench facts`: get, as-of get and set latency on a namespace with many keys and a long
history, through the user code path (Memory.facts), against a bare key-value table in the
same database."""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home

HOUR = 3600.0
_CHUNK = 50_000


def _key(i: int) -> str:
    return f"service {i} status"


def _history_rows(agent: str, keys: int, per_key: int, now: float):
    """(fact rows, value rows): every key changed once an hour, the newest value an hour ago."""
    facts = [(i + 1, agent, _key(i), f"Service {i} status", 0.5, None, now - HOUR, now - per_key * HOUR, now)
             for i in range(keys)]

    def values():
        vid = 0
        for i in range(keys):
            for j in range(per_key):
                vid += 1
                start = now - (per_key - j) * HOUR
                end = None if j == per_key - 1 else start + HOUR
                yield (vid, i + 1, agent, f"state {j % 7}", start, end, start, "rule", "bench", 0.9, "bench")
    return facts, values()


async def _populate(mem: Memory, keys: int, history: int, now: float, progress) -> int:
    per_key = max(1, history // keys)
    facts, values = _history_rows(mem.agent, keys, per_key, now)

    def insert_facts(conn):
        conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (mem.agent, now))
        conn.executemany("INSERT INTO facts (id, agent, key, label, importance, ttl_seconds, confirmed_at, "
                         "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", facts)
        conn.execute("CREATE TABLE bench_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.executemany("INSERT INTO bench_kv VALUES (?, ?)", [(f[2], "state 0") for f in facts])

    await mem.db.transact(insert_facts)
    total, chunk = 0, []
    for row in values:
        chunk.append(row)
        if len(chunk) == _CHUNK:
            await mem.db.transact(_insert_values, chunk)
            total += len(chunk)
            progress(len(chunk))
            chunk = []
    if chunk:
        await mem.db.transact(_insert_values, chunk)
        total += len(chunk)
        progress(len(chunk))
    return total


def _insert_values(conn, rows) -> None:
    conn.executemany("INSERT INTO fact_values (id, fact_id, agent, value, valid_from, valid_to, recorded_at, "
                     "source_kind, source_ref, confidence, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


async def _timed(fn, args_list, progress) -> list[float]:
    out = []
    for args in args_list:
        t = time.perf_counter()
        await fn(*args)
        out.append(time.perf_counter() - t)
        progress(1)
    return out


async def bench_facts(keys: int = 10_000, history: int = 1_000_000, ops: int = 1000, seed: int = 0,
                      progress: Callable[[int], None] | None = None) -> dict:
    progress = progress or (lambda n: None)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        async with await Memory.open(home, actor="bench") as mem:
            now = time.time()
            t = time.perf_counter()
            rows = await _populate(mem, keys, history, now, progress)
            populate_s = time.perf_counter() - t
            span = (rows // keys) * HOUR
            picks = [rng.randrange(keys) for _ in range(ops)]
            # Keys as people type them: any case and spacing (an `_` before a digit would join
            # `service_194` into one name, another key).
            typed = [_key(i).upper() if n % 3 == 0 else _key(i).replace(" status", "__Status")
                     for n, i in enumerate(picks)]
            get = await _timed(mem.get_fact, [(k,) for k in typed], progress)
            get_at = await _timed(lambda k, at: mem.get_fact(k, at=at),
                                  [(k, now - rng.uniform(HOUR, span)) for k in typed], progress)
            put = await _timed(lambda k, v: mem.set_fact(k, v),
                               [(k, f"state {rng.randrange(100, 200)}") for k in typed], progress)

            def kv_get(conn, key):
                return conn.execute("SELECT value FROM bench_kv WHERE key = ?", (key,)).fetchone()

            def kv_set(conn, key, value):
                conn.execute("INSERT OR REPLACE INTO bench_kv (key, value) VALUES (?, ?)", (key, value))

            base_get = await _timed(lambda k: mem.db.run(kv_get, k), [(_key(i),) for i in picks], progress)
            base_set = await _timed(lambda k, v: mem.db.transact(kv_set, k, v),
                                    [(_key(i), "x") for i in picks], progress)
            db_bytes = sum(p.stat().st_size for p in home.db_path.parent.glob(home.db_path.name + "*"))
    g, ga, s = summary_ms(get), summary_ms(get_at), summary_ms(put)
    bg, bs = summary_ms(base_get), summary_ms(base_set)
    return {
        "benchmark": "facts", "keys": keys, "history_rows": rows, "ops": ops, "seed": seed,
        "get_p50_ms": g["p50_ms"], "get_p95_ms": g["p95_ms"], "get_at_p50_ms": ga["p50_ms"],
        "get_at_p95_ms": ga["p95_ms"], "set_p50_ms": s["p50_ms"], "set_p95_ms": s["p95_ms"],
        "get": g, "get_at": ga, "set": s, "populate_seconds": round(populate_s, 2), "database_bytes": db_bytes,
        "baseline": {"name": "bare key-value table in the same database (SELECT by primary key; INSERT OR REPLACE "
                             "in its own transaction), no history", "get_p50_ms": bg["p50_ms"],
                     "get_p95_ms": bg["p95_ms"], "set_p50_ms": bs["p50_ms"], "set_p95_ms": bs["p95_ms"]},
        "ratio_get_p95": ratio(g["p95_ms"], bg["p95_ms"]), "ratio_set_p95": ratio(s["p95_ms"], bs["p95_ms"]),
    }
