"""`strata bench mcp`: the round trip of a recall through `strata mcp` over stdio, driven by the
SDK's own client, against the same recalls made in-process through the Python API."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.recall import corpus_home
from strata_bench.stats import ratio, summary_ms
from strata_daemon.errors import StrataError

WARMUP = 20


async def _through_mcp(home: Path, texts: list[str], k: int, mode: str, writes: int,
                       progress: Callable[[int], None] | None) -> dict:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "strata_daemon", "--home", str(home), "mcp"])
    started = time.perf_counter()
    async with Client(params, cache=None, read_timeout_seconds=600) as client:
        connected = time.perf_counter() - started
        recalls, observes = [], []
        for i, q in enumerate(texts):
            t = time.perf_counter()
            r = await client.call_tool("recall", {"query": q, "k": k, "mode": mode})
            elapsed = time.perf_counter() - t
            if r.is_error:
                raise StrataError(f"recall over MCP failed: {r.content[0].text}")
            if i >= WARMUP:
                recalls.append(elapsed)
            if progress:
                progress(1)
        for i in range(writes):
            t = time.perf_counter()
            r = await client.call_tool("observe", {"content": f"bench observation {i} over MCP", "kind": "note"})
            observes.append(time.perf_counter() - t)
            if r.is_error:
                raise StrataError(f"observe over MCP failed: {r.content[0].text}")
            if progress:
                progress(1)
    return {"connect_seconds": round(connected, 3), "recall": recalls, "observe": observes}


async def bench_mcp(n: int, *, mode: str = "balanced", queries: int = 300, k: int = 10, writes: int = 100,
                    seed: int = 0, progress: Callable[[int], None] | None = None,
                    embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    texts = corpus.queries(queries + WARMUP, seed=seed)
    async with corpus_home(n, seed, mode, texts, k, progress, embed_progress, cache) as (home, baseline):
        served = await _through_mcp(home, texts, k, mode, writes, progress)
    ours, base = summary_ms(served["recall"]), summary_ms(baseline)
    return {
        "benchmark": "mcp", "n": n, "mode": mode, "queries": len(served["recall"]), "k": k, "seed": seed,
        "transport": "stdio", **ours, "connect_seconds": served["connect_seconds"],
        "observe": {"count": writes, **summary_ms(served["observe"])} if writes else None,
        "baseline": {"name": "the same recalls in-process through the Python API", **base},
        "ratio_p50": ratio(ours["p50_ms"], base["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], base["p95_ms"]),
    }
