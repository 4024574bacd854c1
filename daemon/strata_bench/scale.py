"""`strata bench scale`: every layer measured at one corpus size, on the synthetic
agent-operations history, against the flat memory a layered one must beat, in the same run:
a numpy cosine top-k over the same embeddings and a bare FTS5 BM25 query.

One size is measured in one process, in this order: import throughput into a fresh home;
embedding throughput on a sample; then, on the embedded corpus (kept between runs with a
corpus cache), recall latency in each mode after warm-up recalls that build the working set's
Hebbian edges, the two baselines, the vector stage's recall@10 against exact search, fact
get/set, the database's size, a graph of as many edges as memories for decay and spreading,
each daemon phase through the daemon's own job functions, and last the real daemon idling on
the home. `sizes.py` runs several sizes, each in its own process so that peak memory is per size.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from strata_bench import corpus
from strata_bench.consolidate import NIGHT_AFTER
from strata_bench.daemon import idle_daemon, proc_rss_mb
from strata_bench.dossier import TOPICS
from strata_bench.embed import bench_embed
from strata_bench.ingest import populate
from strata_bench.kept import filled_home
from strata_bench.recall import WARMUP, bare_fts_seconds
from strata_bench.stats import ratio, summary_ms
from strata_bench.web import graph
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases import jobs
from strata_daemon.app.public import VECTOR_TABLE, VectorCache
from strata_daemon.config.home import init_home

MODES = ("fast", "balanced", "deep")
USE_RECALLS = 100  # recalls before measuring, so the working set has built Hebbian edges (deep uses them)
FACT_OPS = 200
SPREADS = 100
DECAY_RUNS = 3
EMBED_SAMPLE = 1000
K = 10


def steps(n: int, queries: int, idle_seconds: float) -> int:
    """The progress bar's length for one size."""
    return (n + 1 + USE_RECALLS + (queries + WARMUP) * (len(MODES) + 2) + 2 * FACT_OPS + DECAY_RUNS + SPREADS + 7
            + int(idle_seconds))


async def _ingest(n: int, seed: int, progress) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        async with await Memory.open(home, actor="bench") as mem:
            run = await populate(mem, n, seed, progress)
        size = _database_bytes(home)
    return {"ingest_per_s": round(n / run["total_s"], 1), "ingest_seconds": round(run["total_s"], 2),
            "ingest_bytes_per_1000": round(size / n * 1000)}


def _flat_matrix(conn, agent: str) -> tuple[np.ndarray, np.ndarray]:
    """Every vector of the namespace as one matrix (ids, vectors): the flat vector store."""
    rows = conn.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE} WHERE agent = ?", (agent,)).fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    if len(ids) > 1 and not (np.diff(ids) > 0).all():  # sorted by id (recall_at_k looks ids up); usually already
        order = np.argsort(ids)
        ids, matrix = ids[order], matrix[order]
    return ids, matrix


def flat_top(matrix: np.ndarray, vector: np.ndarray, k: int) -> np.ndarray:
    """Rows of the k most similar vectors, best first (vectors are unit length: dot = cosine)."""
    sims = matrix @ vector
    top = np.argpartition(-sims, min(k, len(sims) - 1))[:k]
    return top[np.argsort(-sims[top], kind="stable")]


def recall_at_k(found: list[int], exact_rows: np.ndarray, ids: np.ndarray, matrix: np.ndarray,
                vector: np.ndarray) -> float:
    """Share of the exact top k found; a found memory exactly as similar as the exact k-th
    counts (ties are common among near-identical status lines)."""
    if not len(exact_rows):
        return 1.0
    floor = float(matrix[exact_rows[-1]] @ vector) - 1e-6
    rows = np.searchsorted(ids, np.asarray(found, dtype=np.int64))
    good = sum(1 for r in rows if r < len(ids) and float(matrix[r] @ vector) >= floor)
    return min(good, len(exact_rows)) / len(exact_rows)


async def _recalls(mem: Memory, texts: list[str], progress) -> dict[str, list[float]]:
    """Each query in every mode, the order of the modes turning per query so none is always first."""
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for i, q in enumerate(texts):
        for j in range(len(MODES)):
            mode = MODES[(i + j) % len(MODES)]
            t = time.perf_counter()
            await mem.recall(q, mode=mode, k=K, explain=False)
            if i >= WARMUP:
                times[mode].append(time.perf_counter() - t)
            progress(1)
    return times


async def _vector_part(mem: Memory, texts: list[str], progress) -> dict:
    """The flat vector baseline (query embedding included, as in recall) and the recall@10 of
    the vector stage recall uses (the in-memory copy) against exact search."""
    emb = await mem.embedder()
    ids, matrix = await mem.db.run(_flat_matrix, mem.agent)
    cache = VectorCache(mem.agent)
    await mem.db.run(cache.sync)
    flat, stage, recalls = [], [], []
    for i, q in enumerate(texts):
        t = time.perf_counter()
        vector = (await asyncio.to_thread(emb.embed_queries, [q]))[0]
        exact = flat_top(matrix, vector, K)
        if i >= WARMUP:
            flat.append(time.perf_counter() - t)
            t = time.perf_counter()
            found = [eid for eid, _ in cache.search(vector, K)]
            stage.append(time.perf_counter() - t)
            recalls.append(recall_at_k(found, exact, ids, matrix, vector))
        progress(1)
    return {"flat": flat, "stage": stage, "vector_recall_at_10": round(statistics.fmean(recalls), 4),
            "vectors": len(ids)}


async def _facts(mem: Memory, seed: int, progress) -> dict:
    rng = random.Random(seed)
    keys = [f"scale.{rng.choice(('host', 'service', 'person'))}.{i}.state" for i in range(FACT_OPS)]
    sets, gets = [], []
    for i, key in enumerate(keys):
        t = time.perf_counter()
        await mem.set_fact(key, f"value {i} {rng.random():.6f}")
        sets.append(time.perf_counter() - t)
        progress(1)
    for key in rng.sample(keys, len(keys)):
        t = time.perf_counter()
        await mem.get_fact(key)
        gets.append(time.perf_counter() - t)
        progress(1)
    s, g = summary_ms(sets), summary_ms(gets)
    return {"fact_set_p50_ms": s["p50_ms"], "fact_set_p95_ms": s["p95_ms"], "fact_get_p50_ms": g["p50_ms"],
            "fact_get_p95_ms": g["p95_ms"]}


async def _timed(run, progress) -> tuple[float, dict]:
    t = time.perf_counter()
    out = await run
    progress(1)
    return time.perf_counter() - t, out


async def _web_part(mem: Memory, n: int, seed: int, progress) -> dict:
    """A graph of n edges among n/10 nodes (hubs and a long tail) beside the working set's own:
    decay (the web's part of the decay phase) and spreading on it."""
    rng = random.Random(seed)
    starts = await graph(mem, max(n // 10, 64), n, rng, lambda _: None)
    decays = []
    for _ in range(DECAY_RUNS):
        seconds, out = await _timed(mem.decay_web(), progress)
        decays.append(seconds)
    spreads = []
    for s in (rng.choice(starts) for _ in range(SPREADS)):
        t = time.perf_counter()
        await mem.spread(s)
        spreads.append(time.perf_counter() - t)
        progress(1)
    sp = summary_ms(spreads)
    return {"decay_edges": n, "decay_edges_s": round(statistics.median(decays), 6),
            "edges_after_decay": out["edges"], "spread_p50_ms": sp["p50_ms"], "spread_p95_ms": sp["p95_ms"]}


async def _phases(mem: Memory, progress) -> dict:
    """Each phase once, through the daemon's own job functions, on the home as the recalls left
    it (their access events for fold; every dossier due)."""
    out = {}
    for name, run in (("fold", jobs.fold), ("decay", jobs.decay),
                      ("consolidate", lambda m: m.consolidate(now=NIGHT_AFTER, detail=False)),
                      ("dossiers", jobs.dossiers), ("capsule", jobs.capsule), ("backup", jobs.backup)):
        seconds, _ = await _timed(run(mem), progress)
        out[f"{name}_s"] = round(seconds, 4)
    return out


def _database_bytes(home) -> int:
    return sum(p.stat().st_size for p in home.state_dir.glob("memory.db*") if p.is_file())


async def measure(n: int, *, queries: int = 200, seed: int = 0, idle_seconds: float = 30.0, cache: Path | None = None,
                  progress: Callable[[int], None] | None = None,
                  embed_progress: Callable[[int], None] | None = None) -> dict:
    progress = progress or (lambda _: None)
    out: dict = {"n": n, **await _ingest(n, seed, progress)}
    sample = await asyncio.to_thread(bench_embed, min(n, EMBED_SAMPLE), seed=seed, baseline=False)
    out["embed_per_s"] = sample["texts_per_s"]
    texts = corpus.queries(queries + WARMUP, seed=seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, embed_s, cached = await filled_home(Path(tmp) / "home", n, seed, "balanced", embed_progress, cache)
        home.config_path.write_text("".join(f'[dossier.topics."{t}"]\n' for t in TOPICS[:5]), encoding="utf-8")
        progress(1)
        out.update(embed_seconds=embed_s, corpus_cached=cached)
        async with await Memory.open(home, actor="bench") as mem:
            for i, q in enumerate(corpus.queries(USE_RECALLS, seed=seed + 1)):
                await mem.recall(q, mode="balanced")
                if i % 3 == 2:
                    await mem.commit_working_set()
                progress(1)
            times = await _recalls(mem, texts, progress)
            vec = await _vector_part(mem, texts, progress)
            bm25 = await asyncio.to_thread(bare_fts_seconds, home.db_path, texts, K)
            progress(queries + WARMUP)
            out.update(await _facts(mem, seed, progress))
            out["db_bytes_per_1000"] = round(_database_bytes(home) / n * 1000)
            out.update(await _web_part(mem, n, seed, progress))
            out["phases"] = await _phases(mem, progress)
        idle = await asyncio.to_thread(idle_daemon, home, idle_seconds, progress)
    for mode, samples in times.items():
        s = summary_ms(samples)
        out.update({f"{mode}_{k}": v for k, v in s.items() if k != "mean_ms"})
    flat, stage, base = summary_ms(vec["flat"]), summary_ms(vec["stage"]), summary_ms(bm25)
    out.update(
        vector_recall_at_10=vec["vector_recall_at_10"], vector_stage_p50_ms=stage["p50_ms"],
        vector_stage_p95_ms=stage["p95_ms"], vectors=vec["vectors"],
        baselines={"flat_vector": {"name": "numpy cosine top-10 over every vector, query embedding included",
                                   "p50_ms": flat["p50_ms"], "p95_ms": flat["p95_ms"]},
                   "bm25": {"name": "bare FTS5 bm25() top-10, no scoring or write",
                            "p50_ms": base["p50_ms"], "p95_ms": base["p95_ms"]}},
        balanced_to_flat_vector_p95=ratio(out["balanced_p95_ms"], flat["p95_ms"]),
        balanced_to_bm25_p95=ratio(out["balanced_p95_ms"], base["p95_ms"]),
        daemon_idle_rss_mb=round(statistics.median(idle["rss"]), 1), daemon_peak_rss_mb=idle["peak"],
        daemon_idle_cpu_percent=round(100.0 * idle["daemon_cpu"] / idle["wall"], 3),
        peak_rss_mb=proc_rss_mb(os.getpid(), "VmHWM"),
        queries=queries)
    return out
