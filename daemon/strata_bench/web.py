"""`strata bench web`: spiderweb decay of a large graph, spreading on it, and deep recall on
the synthetic corpus, each through the user code path (Memory.web, Memory.recall) against a
flat baseline from the same run:
- decay: an eager UPDATE of every weight and DELETE below the threshold, on a plain table of
  the same edges in the same database;
- spread: the same spreading function over an in-memory adjacency dict (no SQL);
- deep recall: balanced recall on the same home, queries interleaved.
"""

from __future__ import annotations

import math
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.ingest import populate
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import spread
from strata_daemon.config.home import init_home

_CHUNK = 100_000
DECAY_RUNS = 5
WARMUP = 20


def _edges(nodes: int, edges: int, rng: random.Random):
    """Distinct undirected edges whose endpoints favour low-numbered nodes (a few hubs, a long
    tail, as co-activation produces), with weights 1..10 skewed low."""
    seen: set[tuple[int, int]] = set()
    while len(seen) < edges:
        a, b = int(nodes * rng.random() ** 2), rng.randrange(nodes)
        if a != b:
            seen.add((min(a, b), max(a, b)))
    for a, b in seen:
        yield f"entity:n:{a:06d}", f"entity:n:{b:06d}", min(10.0, 1.0 + rng.expovariate(0.5))


async def graph(mem: Memory, nodes: int, edges: int, rng: random.Random, progress) -> list[str]:
    """Entity nodes and web edges written straight into the namespace (and the edges into a plain
    table for the baselines); returns the nodes that start an edge."""
    now = time.time()

    def insert_nodes(conn):
        conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (mem.agent, now))
        conn.executemany("INSERT INTO entities (agent, type, value, mentions, first_at, last_at) "
                         "VALUES (?, 'n', ?, 1, ?, ?)", [(mem.agent, f"{i:06d}", now, now) for i in range(nodes)])
        conn.execute("CREATE TABLE bench_flat_edges (a TEXT, b TEXT, weight REAL, PRIMARY KEY (a, b)) WITHOUT ROWID")

    def insert_edges(conn, rows):
        conn.executemany("INSERT INTO web_edges (agent, a, b, level, activations, created_at, last_at) "
                         "VALUES (?, ?, ?, ?, 1, ?, ?)", [(mem.agent, a, b, math.log(w), now, now) for a, b, w in rows])
        conn.executemany("INSERT INTO bench_flat_edges VALUES (?, ?, ?)", rows)

    await mem.db.transact(insert_nodes)
    chunk, touched = [], set()
    for row in _edges(nodes, edges, rng):
        chunk.append(row)
        touched.add(row[0])
        if len(chunk) == _CHUNK:
            await mem.db.transact(insert_edges, chunk)
            progress(len(chunk))
            chunk = []
    if chunk:
        await mem.db.transact(insert_edges, chunk)
        progress(len(chunk))
    return sorted(touched)


async def _flat_decay(mem: Memory, factor: float, prune: float) -> float:
    def run(conn):
        conn.execute("UPDATE bench_flat_edges SET weight = weight * ?", (factor,))
        conn.execute("DELETE FROM bench_flat_edges WHERE weight < ?", (prune,))
    t = time.perf_counter()
    await mem.db.transact(run)
    return time.perf_counter() - t


async def _adjacency(mem: Memory) -> dict[str, list[tuple[str, float, str]]]:
    """The graph as a dict, for the in-memory spreading baseline (weights as they are now)."""
    adj: dict[str, list[tuple[str, float, str]]] = {}
    for a, b, w in await mem.db.fetchall("SELECT a, b, weight FROM bench_flat_edges"):
        adj.setdefault(a, []).append((b, w, "edge"))
        adj.setdefault(b, []).append((a, w, "edge"))
    for edges in adj.values():
        edges.sort(key=lambda e: (-e[1], e[0]))
    return adj


async def _graph_part(nodes: int, edges: int, spreads: int, seed: int, progress) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        async with await Memory.open(home, actor="bench") as mem:
            t = time.perf_counter()
            starts = await graph(mem, nodes, edges, rng, progress)
            populate_s = time.perf_counter() - t
            g = mem.config.tuning.graph
            decays, flat = [], []
            for _ in range(DECAY_RUNS):
                t = time.perf_counter()
                result = await mem.decay_web()
                decays.append(time.perf_counter() - t)
                flat.append(await _flat_decay(mem, g.decay_factor, g.prune_below))
                progress(1)
            seeds = [rng.choice(starts) for _ in range(spreads + WARMUP)]
            times, reached = [], []
            for i, s in enumerate(seeds):
                t = time.perf_counter()
                r = await mem.spread(s)
                if i >= WARMUP:
                    times.append(time.perf_counter() - t)
                    reached.append(len(r["reached"]))
                progress(1)
            adj = await _adjacency(mem)
            base = []
            for s in seeds[WARMUP:]:
                t = time.perf_counter()
                spread([s], lambda ns, floors: {n: adj.get(n, [])[:g.spread_fan_limit] for n in ns},
                       depth=g.spread_depth, threshold=g.spread_threshold, cap=g.edge_cap, fan_out=g.fan_out_normalise)
                base.append(time.perf_counter() - t)
    ours, flat_spread = summary_ms(times), summary_ms(base)
    decay_s, flat_s = statistics.median(decays), statistics.median(flat)
    return {
        "nodes": nodes, "edges": edges, "populate_seconds": round(populate_s, 2),
        "decay_1m_edges_s": round(decay_s, 4), "decay_runs": DECAY_RUNS, "edges_after_decay": result["edges"],
        "decay_baseline": {"name": "eager UPDATE of every weight and DELETE below the threshold, same edges",
                           "seconds": round(flat_s, 4)},
        "decay_ratio": ratio(decay_s, flat_s, 5),
        "spreads": spreads, "spread_p50_ms": ours["p50_ms"], "spread_p95_ms": ours["p95_ms"], "spread": ours,
        "reached_per_spread": round(statistics.fmean(reached), 1) if reached else 0,
        "spread_baseline": {"name": "the same spreading over an in-memory adjacency dict, no SQL", **flat_spread},
        "spread_ratio_p95": ratio(ours["p95_ms"], flat_spread["p95_ms"]),
    }


async def _deep_part(n: int, queries: int, seed: int, progress, embed_progress) -> dict:
    texts = corpus.queries(queries + WARMUP, seed=seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        async with await Memory.open(home, actor="bench") as mem:
            await populate(mem, n, seed)
            t = time.perf_counter()
            await mem.embed_pending(progress=embed_progress)
            embed_s = time.perf_counter() - t
            # Use before measuring: each warm-up recall feeds the working set, committed every
            # third recall, so Hebbian edges exist as they would after a while of real use.
            for i, q in enumerate(corpus.queries(300, seed=seed + 1)):
                await mem.recall(q, mode="balanced")
                if i % 3 == 2:
                    await mem.commit_working_set()
            edges = (await mem.db.fetchone("SELECT count(*) FROM web_edges"))[0]
            links = (await mem.db.fetchone("SELECT count(*) FROM web_links"))[0]
            deep, balanced, graph_hits = [], [], 0
            for i, q in enumerate(texts):
                for mode in (("deep", "balanced") if i % 2 else ("balanced", "deep")):
                    t = time.perf_counter()
                    r = await mem.recall(q, mode=mode)
                    elapsed = time.perf_counter() - t
                    if i >= WARMUP:
                        (deep if mode == "deep" else balanced).append(elapsed)
                        if mode == "deep":
                            graph_hits += sum("graph" in h["explain"]["retrievers"] for h in r["hits"])
                progress(1)
    d, b = summary_ms(deep), summary_ms(balanced)
    return {
        "deep_n": n, "deep_queries": len(deep), "embed_seconds": round(embed_s, 1), "hebbian_edges": edges,
        "links": links, "deep_recall_p50_ms": d["p50_ms"], "deep_recall_p95_ms": d["p95_ms"], "deep_recall": d,
        "graph_hits_per_query": round(graph_hits / len(deep), 2) if deep else 0,
        "deep_baseline": {"name": "balanced recall, same home, queries interleaved", **b},
        "deep_ratio_p95": ratio(d["p95_ms"], b["p95_ms"]),
    }


async def bench_web(*, nodes: int = 100_000, edges: int = 1_000_000, spreads: int = 300, deep_n: int = 100_000,
                    queries: int = 300, seed: int = 0, progress: Callable[[int], None] | None = None,
                    embed_progress: Callable[[int], None] | None = None) -> dict:
    """deep_n = 0 skips the deep-recall part (it embeds the whole corpus first)."""
    progress = progress or (lambda n: None)
    out = {"benchmark": "web", "seed": seed, **await _graph_part(nodes, edges, spreads, seed, progress)}
    if deep_n:
        out.update(await _deep_part(deep_n, queries, seed, progress, embed_progress))
    return out
