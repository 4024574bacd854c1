"""`strata bench embed`: embedding throughput on corpus texts and single-query latency."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable

from ..embedding.llama import LlamaEmbedder
from ..embedding.model import configured_model
from . import corpus
from .stats import summary_ms


def bench_embed(n: int, *, seed: int = 0, queries: int = 100, model: str | None = None, threads: int = 2,
                progress: Callable[[int], None] | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        embedder = LlamaEmbedder(configured_model(model, Path(tmp) / "models"), threads=threads)
        texts = [o["content"] for o in corpus.observations(n, seed=seed)]
        started = time.perf_counter()
        for i in range(0, len(texts), 64):
            embedder.embed(texts[i:i + 64])
            if progress:
                progress(len(texts[i:i + 64]))
        elapsed = time.perf_counter() - started
        times = []
        for q in corpus.queries(queries, seed=seed):
            t = time.perf_counter()
            embedder.embed([q])
            times.append(time.perf_counter() - t)
    query = summary_ms(times)
    return {"benchmark": "embed", "n": n, "seed": seed, "model": embedder.name, "dimension": embedder.dim,
            "threads": threads, "texts_per_s": round(n / elapsed, 1), "seconds": round(elapsed, 3),
            "mean_chars": round(sum(map(len, texts)) / max(n, 1), 1),
            "query_p50_ms": query["p50_ms"], "query_p95_ms": query["p95_ms"]}
