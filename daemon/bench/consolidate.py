"""`strata bench consolidate`: a full consolidation pass over the synthetic corpus (embedded
first), through the same code path as the nightly phase, then the pass after it (nothing
new: the cost of an idle night). Baseline from the same run: reading the memories the
pass reads, with no rule applied."""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Callable

from ..consolidation import store
from ..memory import Memory
from .kept import filled_home
from .stats import ratio

NIGHT_AFTER = 1_767_225_600.0 + 181 * 86400.0  # the night after the corpus's last day


async def bench_consolidate(n: int, *, seed: int = 0, progress: Callable[[int], None] | None = None,
                            embed_progress: Callable[[int], None] | None = None, cache: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _, cached = await filled_home(Path(tmp) / "home", n, seed, "balanced", embed_progress, cache)
        async with await Memory.open(home, actor="bench") as mem:
            started = time.perf_counter()
            await mem.db.run(store.memories, mem.agent)
            read_s = time.perf_counter() - started
            # Memory first, in a dry run of its own: tracing every allocation slows the pass down.
            tracemalloc.start()
            await mem.consolidation.run(dry_run=True, now=NIGHT_AFTER, detail=False)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            if progress:
                progress(1)
            dry = await mem.consolidation.run(dry_run=True, now=NIGHT_AFTER, detail=False)
            if progress:
                progress(1)
            first = await mem.consolidation.run(now=NIGHT_AFTER, detail=False)
            if progress:
                progress(1)
            second = await mem.consolidation.run(now=NIGHT_AFTER, detail=False)  # the same night: must change nothing
            if progress:
                progress(1)
    return {
        "benchmark": "consolidate", "n": n, "seed": seed, "memories": first["memories"],
        "seconds": first["seconds"], "dry_run_seconds": dry["seconds"],
        "peak_mb": round(peak / 2**20, 1), "second_pass_seconds": second["seconds"],
        "counts": first["counts"], "second_pass_counts": second["counts"], "corpus_cached": cached,
        "baseline": {"name": "reading the memories the pass reads", "seconds": round(read_s, 3)},
        "ratio": ratio(first["seconds"], read_s),
    }
