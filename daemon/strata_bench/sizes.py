"""`strata bench scale` over several sizes: each size measured by `scale.measure` in its own
process (so peak memory is that size's), then one JSON document and one markdown table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from strata_daemon.errors import StrataError

# (field, label) rows of the markdown table, in the order a reader wants them.
ROWS = (
    ("ingest_per_s", "import, memories/s"), ("embed_per_s", "embedding, texts/s"),
    ("fast_p50_ms", "fast recall p50, ms"), ("fast_p95_ms", "fast recall p95, ms"),
    ("balanced_p50_ms", "balanced recall p50, ms"), ("balanced_p95_ms", "balanced recall p95, ms"),
    ("balanced_p99_ms", "balanced recall p99, ms"),
    ("deep_p50_ms", "deep recall p50, ms"), ("deep_p95_ms", "deep recall p95, ms"),
    ("baselines.flat_vector.p95_ms", "flat vector store (numpy cosine) p95, ms"),
    ("baselines.bm25.p95_ms", "bare FTS5 BM25 p95, ms"),
    ("balanced_to_flat_vector_p95", "balanced / flat vector, p95"), ("balanced_to_bm25_p95", "balanced / BM25, p95"),
    ("vector_recall_at_10", "vector stage recall@10 vs exact"), ("vector_stage_p95_ms", "vector stage p95, ms"),
    ("fact_get_p95_ms", "fact get p95, ms"), ("fact_set_p95_ms", "fact set p95, ms"),
    ("spread_p95_ms", "spread p95, ms"), ("decay_edges_s", "web decay of n edges, s"),
    ("phases.fold_s", "fold phase, s"), ("phases.decay_s", "decay phase (web + strength snapshot), s"),
    ("phases.consolidate_s", "consolidation, s"), ("phases.dossiers_s", "dossier refresh (5 topics), s"),
    ("phases.capsule_s", "capsule render, s"), ("phases.backup_s", "backup, s"),
    ("db_bytes_per_1000", "database bytes per 1,000 memories"), ("peak_rss_mb", "benchmark process peak RSS, MB"),
    ("daemon_idle_rss_mb", "daemon idle RSS, MB"), ("daemon_idle_cpu_percent", "daemon idle CPU, %"),
)


def field(size: dict, path: str):
    value = size
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value < 10:
        return f"{value:.4g}"
    return f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)


def markdown(result: dict) -> str:
    sizes = result["sizes"]
    head = "| | " + " | ".join(f"{s['n']:,}" for s in sizes) + " |"
    lines = [head, "|---" * (len(sizes) + 1) + "|"]
    lines += ["| " + label + " | " + " | ".join(_cell(field(s, key)) for s in sizes) + " |" for key, label in ROWS]
    return "\n".join(lines) + "\n"


def child_argv(n: int, out: Path, *, queries: int, seed: int, idle_seconds: float, cache: Path | None) -> list[str]:
    argv = [sys.executable, "-m", "strata_daemon", "bench", "scale", "--n", str(n), "--queries", str(queries),
            "--seed", str(seed), "--idle-seconds", str(idle_seconds), "--size-out", str(out)]
    return argv + (["--corpus-cache", str(cache)] if cache else [])


def run_sizes(sizes: list[int], *, queries: int, seed: int, idle_seconds: float, cache: Path | None) -> list[dict]:
    """Each size in a child process of this same command; its progress bars pass through."""
    out = []
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        for n in sizes:
            target = Path(tmp) / f"scale-{n}.json"
            proc = subprocess.run(child_argv(n, target, queries=queries, seed=seed, idle_seconds=idle_seconds,
                                             cache=cache), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  env=os.environ.copy())
            if proc.returncode != 0:
                raise StrataError(f"measuring {n:,} memories failed (exit {proc.returncode}); its error is above",
                                  hint=f"run `strata bench scale --n {n}` alone to see it without the others")
            out.append(json.loads(target.read_text(encoding="utf-8")))
    return out
