"""`strata bench embed`: embedding throughput on corpus texts and single-query latency, for the
configured embedder and, in the same run, the packaged MiniLM: in the other runtime when
MiniLM is the one configured, else in onnxruntime as by default."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.public import DEFAULT_EMBEDDER, EMBED_BATCH, EMBED_WINDOW, Embedder, load_embedder


def _throughput(embedder: Embedder, texts: list[str], progress: Callable[[int], None] | None) -> float:
    """Texts a second as `embed_pending` hands them over: a window at a time, shortest first, in batches."""
    started = time.perf_counter()
    for w in range(0, len(texts), EMBED_WINDOW):
        window = sorted(texts[w:w + EMBED_WINDOW], key=len)
        for i in range(0, len(window), EMBED_BATCH):
            embedder.embed(window[i:i + EMBED_BATCH])
            if progress:
                progress(len(window[i:i + EMBED_BATCH]))
    return len(texts) / (time.perf_counter() - started)


def is_default(model: str | None) -> bool:
    return model in (None, DEFAULT_EMBEDDER)


def bench_embed(n: int, *, seed: int = 0, queries: int = 100, model: str | None = None, runtime: str = "auto",
                threads: int = 2, baseline: bool = True, progress: Callable[[int], None] | None = None) -> dict:
    texts = [o["content"] for o in corpus.observations(n, seed=seed)]
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        models = Path(tmp) / "models"
        embedder = load_embedder(model, runtime, models, threads=threads)
        rate = _throughput(embedder, texts, progress)
        times = []
        for q in corpus.queries(queries, seed=seed):
            t = time.perf_counter()
            embedder.embed_queries([q])
            times.append(time.perf_counter() - t)
        other = None
        if baseline:
            # The default model: in the other runtime when it is the one measured, else as it runs by default.
            other_runtime = ("llama" if embedder.runtime == "onnx" else "onnx") if is_default(model) else "onnx"
            reference = load_embedder(None, other_runtime, models, threads=threads)
            other = {"runtime": other_runtime, "model": reference.name,
                     "texts_per_s": round(_throughput(reference, texts, progress), 1)}
    query = summary_ms(times)
    result = {"benchmark": "embed", "n": n, "seed": seed, "runtime": embedder.runtime, "model": embedder.name,
              "dimension": embedder.dim,
              "threads": threads, "texts_per_s": round(rate, 1), "mean_chars": round(sum(map(len, texts)) / n, 1),
              "query_p50_ms": query["p50_ms"], "query_p95_ms": query["p95_ms"]}
    if other:
        result["baseline"] = {**other, "ratio": ratio(rate, other["texts_per_s"])}
    return result
