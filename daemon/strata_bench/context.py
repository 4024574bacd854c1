"""`strata bench context`: context blocks through the running daemon (`strata run`, its Unix
socket), as the prompt hook asks for one on every turn, against recalls of the same questions
(k 10) through the same socket in the same run, interleaved so that both meet the same
machine. The recall asks for 10 hits, as an agent's recall does; a block asks for more (one
per 12 tokens of its budget), which is part of what it costs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.procs import serving, stop
from strata_bench.recall import corpus_home
from strata_bench.stats import ratio, summary_ms
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.faces.http.client import UnixConnection

WARMUP = 20


def _post(conn: UnixConnection, path: str, body: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    seconds = time.perf_counter() - started
    if response.status != 200:
        raise StrataError(f"POST {path} failed ({response.status}): {data[:300]!r}")
    return seconds, json.loads(data)


async def bench_context(n: int, *, budget: int = 512, queries: int = 300, seed: int = 0,
                        progress: Callable[[int], None] | None = None,
                        embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    texts = corpus.queries(queries + WARMUP, seed=seed)
    async with corpus_home(n, seed, "balanced", texts[:WARMUP + 1], 10, None, embed_progress, cache) as (home, _):
        proc, path = serving(home, "run")
        conn = UnixConnection(path, timeout=600)
        blocks, recalls, tokens, memories = [], [], [], []
        try:
            for i, q in enumerate(texts):
                seconds, block = _post(conn, "/v1/context", {"text": q, "budget": budget})
                recall_seconds, _ = _post(conn, "/v1/recall", {"query": q, "k": 10})
                if block["tokens"] > budget:
                    raise StrataError(f"a block of {block['tokens']} tokens for a budget of {budget}")
                if i >= WARMUP:
                    blocks.append(seconds)
                    recalls.append(recall_seconds)
                    tokens.append(block["tokens"])
                    memories.append(len(block["parts"]["memories"]))
                if progress:
                    progress(1)
        finally:
            conn.close()
            stop(proc)
    ours, base = summary_ms(blocks), summary_ms(recalls)
    return {
        "benchmark": "context", "n": n, "budget": budget, "queries": len(blocks), "seed": seed,
        "transport": "the daemon's unix socket", **ours,
        "tokens": {"mean": round(sum(tokens) / len(tokens), 1), "max": max(tokens)},
        "memories_per_block": round(sum(memories) / len(memories), 1),
        "baseline": {"name": "a recall of the same question (k 10) through the same socket, interleaved", **base},
        "ratio_p50": ratio(ours["p50_ms"], base["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], base["p95_ms"]),
    }


async def cmd_context(args) -> int:
    """`strata bench context`."""
    from strata_bench.run import _cache, _report
    from strata_daemon.faces.cli.output import Progress

    if args.n < 100 or args.queries < 1 or not 32 <= args.budget <= 100000:
        raise InvalidInput("need --n >= 100, --queries >= 1 and --budget between 32 and 100000")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(args.queries + WARMUP, "blocks and recalls through the daemon", unit="questions")
    result = await bench_context(args.n, budget=args.budget, queries=args.queries, seed=args.seed,
                                 progress=bar.advance, embed_progress=embed_bar.advance, cache=_cache(args))
    return _report(result, args, bar)
