"""`strata bench recall`: recall latency on the synthetic corpus, through the same code path
users get (query embedding, scoring, filters and the access-event write included), against a
bare FTS5 query."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from pathlib import Path
from typing import AsyncIterator, Callable

from ..episodes.fts import match_expression
from ..home import Home, init_home
from ..memory import Memory
from ..storage import driver
from ..storage.migrations import MIGRATIONS
from . import corpus, ingest
from .ingest import populate
from .stats import ratio, summary_ms

WARMUP = 20


def bare_fts_seconds(db_path: Path, queries: list[str], k: int) -> list[float]:
    conn = driver.connect(db_path)
    times = []
    for i, q in enumerate(queries):
        expr = match_expression(q)
        started = time.perf_counter()
        if expr:
            conn.execute("SELECT rowid, bm25(episodes_fts) FROM episodes_fts WHERE episodes_fts MATCH ? "
                         "ORDER BY rank LIMIT ?", (expr, k)).fetchall()
        if i >= WARMUP:
            times.append(time.perf_counter() - started)
    conn.close()
    return times


async def filled(mem: Memory, n: int, seed: int, mode: str,
                 embed_progress: Callable[[int], None] | None = None) -> float | None:
    """Import the corpus and, unless the mode is fast, embed it (the vector retriever needs
    every memory embedded); the seconds the embedding took."""
    await populate(mem, n, seed)
    if mode == "fast":
        return None
    t = time.perf_counter()
    await mem.embed_pending(batch=64, progress=embed_progress)
    return round(time.perf_counter() - t, 3)


def corpus_file(cache: Path, n: int, seed: int, mode: str, config) -> Path:
    """Where a filled corpus database is kept between runs: named by everything that shapes it
    (size, seed, embedded or not, the model, the schema, the generator's and importer's code),
    so a change to any of them makes a new one rather than reusing a stale one."""
    shape = b"".join(Path(m.__file__).read_bytes() for m in (corpus, ingest))
    shape += f"{len(MIGRATIONS)}:{config['embedding.model']}:{config['embedding.runtime']}".encode()
    what = "fts" if mode == "fast" else "embedded"
    return cache / f"corpus-{n}-{seed}-{what}-{hashlib.sha256(shape).hexdigest()[:16]}.db"


async def filled_home(root: Path, n: int, seed: int, mode: str, embed_progress: Callable[[int], None] | None = None,
                      cache: Path | None = None) -> tuple[Home, float | None, bool]:
    """A new home at `root` holding the corpus (embedded unless fast), taken from `cache` when
    a run before kept it there: (home, seconds the embedding took, whether it came from the cache)."""
    home, _ = init_home(root)
    kept = None if cache is None else corpus_file(cache, n, seed, mode, home.config())
    if kept is not None and kept.is_file():
        driver.copy(kept, home.db_path)
        return home, None, True
    async with await Memory.open(home, actor="bench") as mem:
        embed_s = await filled(mem, n, seed, mode, embed_progress)
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = kept.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        driver.copy(home.db_path, partial)
        os.replace(partial, kept)
    return home, embed_s, False


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


async def bench_recall(n: int, *, mode: str = "balanced", queries: int = 300, k: int = 10, seed: int = 0,
                       progress: Callable[[int], None] | None = None,
                       embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    texts = corpus.queries(queries + WARMUP, seed=seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, embed_s, cached = await filled_home(Path(tmp) / "home", n, seed, mode, embed_progress, cache)
        async with await Memory.open(home, actor="bench") as mem:
            times, hits, used, first_ms = [], 0, mode, None
            for i, q in enumerate(texts):
                started = time.perf_counter()
                result = await mem.recall(q, k=k, mode=mode)
                elapsed = time.perf_counter() - started
                used = result["mode_used"]
                if first_ms is None:  # cold: loads the model and, for balanced, the vectors
                    first_ms = round(elapsed * 1000, 1)
                if i >= WARMUP:
                    times.append(elapsed)
                    hits += len(result["hits"])
                if progress:
                    progress(1)
        baseline = bare_fts_seconds(home.db_path, texts, k)
    ours, base = summary_ms(times), summary_ms(baseline)
    return {
        "benchmark": "recall", "n": n, "mode": mode, "mode_used": used, "queries": len(times), "k": k,
        "seed": seed, **ours, "hits_per_query": round(hits / len(times), 2), "embed_seconds": embed_s,
        "corpus_cached": cached,
        "first_recall_ms": first_ms,
        "baseline": {"name": "bare FTS5 bm25 top-k query, no scoring or write", **base},
        "ratio_p50": ratio(ours["p50_ms"], base["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], base["p95_ms"]),
    }
