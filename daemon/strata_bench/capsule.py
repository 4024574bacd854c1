"""`strata bench capsule`: capsule render latency at scale through the user code path (reading
the file, taking in edits, the layers, templates, budget, atomic replace, the render record),
against the atomic replace of the same text alone; whether its facts are states and its tasks
open tasks, as the corpus generator knows them; and the time from a saved hand edit to its
fact being stored by the real watcher."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench.dossier import TOPICS
from strata_bench.ingest import populate
from strata_bench.stats import percentile, ratio, summary_ms
from strata_bench.truth import capsule_blocks, labels_by_id
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import capsule_files
from strata_daemon.config.home import init_home

WARMUP = 5
WATCH_SETTLE_S = 0.5  # between edits, so each is its own save rather than one debounced batch


async def bench_capsule(n: int, *, renders: int = 100, edits: int = 30, seed: int = 0,
                        progress: Callable[[int], None] | None = None) -> dict:
    end = 1_767_225_600.0 + 180 * 86400.0  # the corpus's last day: "now" for the renders
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        home.config_path.write_text('[experimental]\n"dossier.recall_mode" = "fast"\n', encoding="utf-8")
        async with await Memory.open(home, actor="bench") as mem:
            await populate(mem, n, seed)
            for t in TOPICS[:5]:  # priorities come from the most active dossiers
                await mem.refresh_dossier((await mem.add_topic(t))["topic"], now=end)
            times, lines = [], 0
            for i in range(renders + WARMUP):
                started = time.perf_counter()
                r = await mem.render_capsule(now=end + i)  # a new header each time: always a real write
                if i >= WARMUP:
                    times.append(time.perf_counter() - started)
                lines = r["lines"]
                if progress:
                    progress(1)
            path = mem.capsule_path
            text = path.read_text(encoding="utf-8")
            judged = capsule_blocks(text, await mem.capsule_facts(), await labels_by_id(mem, n, seed),
                                    await _task_window(mem, end + renders + WARMUP - 1))
            base = []
            for i in range(renders + WARMUP):
                started = time.perf_counter()
                await asyncio.to_thread(capsule_files.replace_if_unchanged, path, text, text)
                if i >= WARMUP:
                    base.append(time.perf_counter() - started)
            stats = await mem.capsule_stats()
            latency = await _watch_latency(mem, edits, progress)
    ours, floor = summary_ms(times), summary_ms(base)
    return {"benchmark": "capsule", "n": n, "renders": len(times), "seed": seed, **ours, "lines": lines,
            "bytes": stats["bytes"], "compression_ratio": stats["compression_ratio"],
            "baseline": {"name": "atomic replace of the same text alone (temporary file, fsync, rename)", **floor},
            "ratio_p50": ratio(ours["p50_ms"], floor["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], floor["p95_ms"]),
            **judged, **latency}


async def _task_window(mem: Memory, now: float) -> list[int]:
    """The memories a render at `now` reads for open tasks (as Capsule._items selects them)."""
    after = now - float(mem.config.tuning.capsule.task_days) * 86400.0
    rows = await mem.db.fetchall(
        "SELECT id, event_at FROM episodes WHERE agent = ? AND state = 'active' AND tier = 'hot' AND event_at >= ? "
        "AND event_at <= ? ORDER BY event_at DESC LIMIT ?",
        (mem.agent, min(after, now - float(mem.config.tuning.capsule.recent_days) * 86400.0), now,
         int(mem.config.tuning.capsule.task_scan)))
    return [r["id"] for r in rows if r["event_at"] >= after]


async def _watch_latency(mem: Memory, edits: int, progress) -> dict:
    stop = asyncio.Event()
    seen: dict[str, float] = {}

    def handled(r: dict) -> None:
        for a in r.get("absorbed", []):
            seen.setdefault(a["key"], time.monotonic())

    task = asyncio.create_task(mem.watch_capsule(stop, on_handled=handled))
    await asyncio.sleep(0.5)  # the watcher's first scan
    path = mem.capsule_path
    waits = []
    try:
        for i in range(edits):
            key = f"bench edit {i}"
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
            edited = text.replace("<!-- strata:begin facts -->\n", f"<!-- strata:begin facts -->\n- {key}: {i}\n", 1)
            await asyncio.to_thread(path.write_text, edited, encoding="utf-8")
            saved = time.monotonic()
            while key not in seen and time.monotonic() - saved < 30:
                await asyncio.sleep(0.005)
            waits.append(seen.get(key, time.monotonic()) - saved)
            await asyncio.sleep(WATCH_SETTLE_S)
            if progress:
                progress(1)
    finally:
        stop.set()
        await task
    return {"edits": len(waits), "watch_p50_s": round(statistics.median(waits), 3),
            "watch_p95_s": round(percentile(waits, 95), 3), "watch_max_s": round(max(waits), 3),
            "watch_debounce_ms": int(mem.config.tuning.capsule.watch_debounce_ms)}
