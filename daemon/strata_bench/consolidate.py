"""`strata bench consolidate`: a full consolidation pass over the synthetic corpus (embedded
first), through the same code path as the nightly phase, then the pass after it (nothing
new: the cost of an idle night). Baseline from the same run: reading the memories the
pass reads, with no rule applied.

Whether the pass costs recall is measured too: a seeded sample of the corpus's memories is
each looked for by its own words (balanced recall, k 10) before the pass and after it. A
query finds its memory when the memory, or one with the very same text, is among the hits.
"""

from __future__ import annotations

import random
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Callable

from strata_bench.kept import filled_home
from strata_bench.stats import ratio
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import consolidation_reads

NIGHT_AFTER = 1_767_225_600.0 + 181 * 86400.0  # the night after the corpus's last day
K = 10


async def own_words(mem: Memory, n: int, seed: int) -> list[tuple[int, str]]:
    """A seeded sample of n memories, (id, text), in id order."""
    rows = [(e["id"], e["content"]) async for e in mem.export()]  # in id order
    picked = random.Random(seed).sample(range(len(rows)), min(n, len(rows)))
    return [rows[i] for i in sorted(picked)]


async def found_share(mem: Memory, queries: list[tuple[int, str]], progress: Callable[[int], None] | None) -> float:
    """The share of the queries whose memory (or a twin with the same text) is in the top K."""
    found = 0
    for i, text in queries:
        hits = (await mem.recall(text, k=K, mode="balanced", explain=False))["hits"]
        found += any(h["id"] == i or h["content"] == text for h in hits)
        if progress:
            progress(1)
    return found / len(queries) if queries else 0.0


async def bench_consolidate(n: int, *, seed: int = 0, queries: int = 300,
                            progress: Callable[[int], None] | None = None,
                            embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _, cached = await filled_home(Path(tmp) / "home", n, seed, "balanced", embed_progress, cache)
        async with await Memory.open(home, actor="bench") as mem:
            asked = await own_words(mem, queries, seed)
            before = await found_share(mem, asked, progress)
            started = time.perf_counter()
            await mem.db.run(consolidation_reads, mem.agent)
            read_s = time.perf_counter() - started
            # Memory first, in a dry run of its own: tracing every allocation slows the pass down.
            tracemalloc.start()
            await mem.consolidate(dry_run=True, now=NIGHT_AFTER, detail=False)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            if progress:
                progress(1)
            dry = await mem.consolidate(dry_run=True, now=NIGHT_AFTER, detail=False)
            if progress:
                progress(1)
            first = await mem.consolidate(now=NIGHT_AFTER, detail=False)
            if progress:
                progress(1)
            second = await mem.consolidate(now=NIGHT_AFTER, detail=False)  # the same night: must change nothing
            if progress:
                progress(1)
            after = await found_share(mem, asked, progress)
            tiers = (await mem.status())["by_tier"]
    return {
        "benchmark": "consolidate", "n": n, "seed": seed, "memories": first["memories"],
        "seconds": first["seconds"], "dry_run_seconds": dry["seconds"],
        "peak_mb": round(peak / 2**20, 1), "second_pass_seconds": second["seconds"],
        "counts": first["counts"], "second_pass_counts": second["counts"], "corpus_cached": cached,
        "by_tier": tiers,
        "own_words": {"queries": len(asked), "k": K, "recall_at_10_before": round(before, 4),
                      "recall_at_10_after": round(after, 4), "ratio": ratio(after, before, 4)},
        "baseline": {"name": "reading the memories the pass reads", "seconds": round(read_s, 3)},
        "ratio": ratio(first["seconds"], read_s),
    }
