"""`strata bench http`: recall round trips through `strata serve` over its Unix socket, one client
and then several at once, against the same recalls made in-process through the Python API."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.procs import serving, stop
from strata_bench.recall import corpus_home
from strata_bench.stats import ratio, summary_ms
from strata_daemon.errors import StrataError
from strata_daemon.faces.http.client import UnixConnection

WARMUP = 20


def _recalls(socket_path: Path, texts: list[str], k: int, mode: str, progress) -> list[float]:
    """Recalls on one kept-alive connection; the seconds of each."""
    conn = UnixConnection(socket_path, timeout=600)
    times = []
    try:
        for q in texts:
            body = json.dumps({"query": q, "k": k, "mode": mode})
            t = time.perf_counter()
            conn.request("POST", "/v1/recall", body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            times.append(time.perf_counter() - t)
            if response.status != 200:
                raise StrataError(f"recall over HTTP failed ({response.status}): {data[:300]!r}")
            if progress:
                progress(1)
    finally:
        conn.close()
    return times


async def bench_http(n: int, *, mode: str = "balanced", queries: int = 300, clients: int = 4, k: int = 10,
                     seed: int = 0, progress: Callable[[int], None] | None = None,
                     embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    texts = corpus.queries(queries + WARMUP, seed=seed)
    async with corpus_home(n, seed, mode, texts, k, progress, embed_progress, cache) as (home, baseline):
        proc, path = serving(home, "serve")
        try:
            single = _recalls(path, texts, k, mode, progress)[WARMUP:]
            shares = [texts[WARMUP + i::clients] for i in range(clients)]
            started = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                parallel = [t for part in pool.map(lambda s: _recalls(path, s, k, mode, progress), shares)
                            for t in part]
            wall = time.perf_counter() - started
        finally:
            stop(proc)
    ours, base, together = summary_ms(single), summary_ms(baseline), summary_ms(parallel)
    return {
        "benchmark": "http", "n": n, "mode": mode, "queries": len(single), "k": k, "seed": seed,
        "transport": "unix socket", **ours,
        "concurrent": {"clients": clients, "requests": len(parallel), "seconds": round(wall, 3),
                       "requests_per_s": round(len(parallel) / wall, 1), **together},
        "baseline": {"name": "the same recalls in-process through the Python API, one at a time", **base,
                     "requests_per_s": round(1000 / base["mean_ms"], 1)},
        "ratio_p50": ratio(ours["p50_ms"], base["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], base["p95_ms"]),
    }
