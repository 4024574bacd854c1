"""`strata bench recall`: recall latency on the synthetic corpus, through the same code path
users get (query embedding, scoring, filters and the access-event write included), against a
bare FTS5 query."""

from __future__ import annotations

import contextlib
import random
import tempfile
import time
from pathlib import Path
from typing import AsyncIterator, Callable

from strata_bench import corpus, stores
from strata_bench.kept import filled_home
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import connect, fts_table, match_expression, query_pieces as pieces

WARMUP = 20


def bare_fts_seconds(db_path: Path, queries: list[str], k: int, agent: str = "default") -> list[float]:
    conn = connect(db_path)
    table = fts_table(conn, agent)
    times = []
    for i, q in enumerate(queries):
        expr = match_expression(q)
        started = time.perf_counter()
        if expr:
            conn.execute(f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ? "
                         "ORDER BY rank LIMIT ?", (expr, k)).fetchall()
        if i >= WARMUP:
            times.append(time.perf_counter() - started)
    conn.close()
    return times


async def on_server(home) -> str | None:
    """With --store-url: the filled home's store copied into a database of its own on the server,
    and the home pointed at it (its SQLite file stays, for the FTS5 baseline). Its URL, or None."""
    url = stores.new_database()
    if url is not None:
        async with await Memory.open(home, actor="bench") as mem:
            copied = await mem.copy_store(url)
        if not copied["same"]:
            raise RuntimeError(f"the corpus's copy on the server differs: {copied['tables']}")
        text = home.config_path.read_text(encoding="utf-8") if home.config_path.exists() else ""
        home.config_path.write_text(stores.toml_line(url) + text, encoding="utf-8")
    return url


def bare_tsvector_seconds(url: str, queries: list[str], k: int, agent: str = "default") -> list[float]:
    """What a developer would write against the same words on PostgreSQL: the query's pieces OR'd
    into a tsquery, ranked by ts_rank, over strata's own column and GIN index."""
    import psycopg

    times = []
    with psycopg.connect(url) as conn:
        for i, q in enumerate(queries):
            words = " | ".join(dict.fromkeys(pieces(q)))
            started = time.perf_counter()
            if words:
                conn.execute("SELECT id, ts_rank(search, q) AS r FROM episodes, to_tsquery('strata', %s) q "
                             "WHERE agent = %s AND search @@ q ORDER BY r DESC LIMIT %s", (words, agent, k)).fetchall()
            if i >= WARMUP:
                times.append(time.perf_counter() - started)
    return times


async def in_process(mem: Memory, texts: list[str], k: int, mode: str,
                     progress: Callable[[int], None] | None = None) -> list[float]:
    """The seconds of each recall through the Python API: the baseline of the remote faces."""
    times = []
    for q in texts:
        t = time.perf_counter()
        await mem.recall(q, k=k, mode=mode)
        times.append(time.perf_counter() - t)
        if progress:
            progress(1)
    return times


@contextlib.asynccontextmanager
async def corpus_home(n: int, seed: int, mode: str, texts: list[str], k: int,
                      progress: Callable[[int], None] | None = None,
                      embed_progress: Callable[[int], None] | None = None,
                      cache: Path | None = None) -> AsyncIterator[tuple[Path, list[float]]]:
    """A temporary home holding the corpus (embedded unless fast), closed again, and the
    in-process seconds of the recalls of `texts` after the warm-up ones: the home a remote face
    is measured on, and its baseline."""
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _, _ = await filled_home(Path(tmp) / "home", n, seed, mode, embed_progress, cache)
        async with await Memory.open(home, actor="bench") as mem:
            baseline = (await in_process(mem, texts, k, mode, progress))[WARMUP:]
        yield home.root, baseline


async def cool(mem: Memory, share: float, seed: int) -> int:
    """Move a seeded random `share` of the memories to the cold tier, as consolidation's archive
    would over time: what recall costs when much of a home is cold. Returns how many moved."""
    ids = [e["id"] async for e in mem.export()]
    chosen = random.Random(seed).sample(ids, round(share * len(ids)))
    await mem.db.transact(lambda conn: conn.executemany("UPDATE episodes SET tier = 'cold' WHERE id = ?",
                                                        [(i,) for i in chosen]))
    return len(chosen)


async def bench_recall(n: int, *, mode: str = "balanced", queries: int = 300, k: int = 10, seed: int = 0,
                       progress: Callable[[int], None] | None = None,
                       embed_progress: Callable[[int], None] | None = None, cache: Path | None = None,
                       settings: dict | None = None, cold: float = 0.0, fresh: int = 0) -> dict:
    """With `fresh`, that many memories are observed before each recall and none embeds them
    in between (no daemon): the recall catches them up (`recall.embed_waiting`) while timed."""
    texts = corpus.queries(queries + WARMUP, seed=seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, embed_s, cached = await filled_home(Path(tmp) / "home", n, seed, mode, embed_progress, cache, settings)
        url = await on_server(home)
        async with await Memory.open(home, actor="bench") as mem:
            cooled = await cool(mem, cold, seed) if cold else 0
            times, hits, cold_hits, used, first_ms = [], 0, 0, mode, None
            for i, q in enumerate(texts):
                for j in range(fresh):
                    await mem.observe(f"just noted ({i}.{j}): {texts[(i + j + 1) % len(texts)]}")
                started = time.perf_counter()
                result = await mem.recall(q, k=k, mode=mode)
                elapsed = time.perf_counter() - started
                used = result["mode_used"]
                if first_ms is None:  # cold: loads the model and, for balanced, the vectors
                    first_ms = round(elapsed * 1000, 1)
                if i >= WARMUP:
                    times.append(elapsed)
                    hits += len(result["hits"])
                    cold_hits += sum(h["tier"] == "cold" for h in result["hits"])
                if progress:
                    progress(1)
        baseline = bare_fts_seconds(home.db_path, texts, k)
        server = summary_ms(bare_tsvector_seconds(url, texts, k)) if url else None
    ours, base = summary_ms(times), summary_ms(baseline)
    return {
        "benchmark": "recall", "n": n, "mode": mode, "mode_used": used, "queries": len(times), "k": k,
        "seed": seed, "settings": settings or {}, "fresh_per_query": fresh, **ours, "hits_per_query": round(hits / len(times), 2),
        "cold_memories": cooled, "cold_hit_share": round(cold_hits / hits, 4) if hits else 0.0,
        "embed_seconds": embed_s, "corpus_cached": cached,
        "first_recall_ms": first_ms,
        "baseline": {"name": "bare FTS5 bm25 top-k query, no scoring or write", **base},
        "ratio_p50": ratio(ours["p50_ms"], base["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], base["p95_ms"]),
        "store": "sqlite" if url is None else "postgresql",
        **({} if server is None else {
            "tsvector_baseline": {"name": "bare tsvector ts_rank top-k query, no scoring or write", **server},
            "ratio_tsvector_p50": ratio(ours["p50_ms"], server["p50_ms"]),
            "ratio_tsvector_p95": ratio(ours["p95_ms"], server["p95_ms"])}),
    }
