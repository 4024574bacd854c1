"""`strata bench sealed`: what sealing a home costs, and whether it keeps the words of its
memories off the disk. Balanced recall on a filled home and on the same home sealed by `strata
encrypt`, turn by turn (the two answer each question in alternating order); ingest into a new
plain home and a new sealed one, in alternating rounds; then a byte search of every file a
sealed home wrote (database, WAL, a backup, an export) for the words of its memories, with the
same search of the plain home as the control that it finds them."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.ingest import populate
from strata_bench.kept import filled_home
from strata_bench.recall import WARMUP
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app import sealing
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import Home, init_home

PROBE_BYTES = 32  # each memory is looked for by the first bytes of its text


async def _recall_turns(plain: Home, sealed: Home, texts: list[str], k: int,
                        progress: Callable[[int], None] | None) -> dict:
    times: dict[str, list[float]] = {"plain": [], "sealed": []}
    same = 0
    async with await Memory.open(plain, actor="bench") as a, await Memory.open(sealed, actor="bench") as b:
        homes = {"plain": a, "sealed": b}
        for i, q in enumerate(texts):
            ids = {}
            for name in (("plain", "sealed") if i % 2 == 0 else ("sealed", "plain")):
                started = time.perf_counter()
                r = await homes[name].recall(q, k=k, mode="balanced")
                elapsed = time.perf_counter() - started
                ids[name] = [h["id"] for h in r["hits"]]
                if i >= WARMUP:
                    times[name].append(elapsed)
            same += i >= WARMUP and ids["plain"] == ids["sealed"]
            if progress:
                progress(1)
    plain_ms, sealed_ms = summary_ms(times["plain"]), summary_ms(times["sealed"])
    return {"plain": plain_ms, "sealed": sealed_ms, "queries": len(times["plain"]),
            "same_hits": same, "ratio_p50": ratio(sealed_ms["p50_ms"], plain_ms["p50_ms"]),
            "ratio_p95": ratio(sealed_ms["p95_ms"], plain_ms["p95_ms"])}


async def _ingest(root: Path, n: int, seed: int, key_file: Path | None) -> tuple[float, Home]:
    home, _ = init_home(root)
    if key_file is not None:
        sealing.seal(home, str(key_file))
    async with await Memory.open(home, actor="bench") as mem:
        run = await populate(mem, n, seed)
    return n / run["total_s"], home


def _files_with(home: Home, export: Path, probes: list[bytes]) -> dict:
    files = [p for p in home.state_dir.rglob("*") if p.is_file()] + [export]
    found = set()
    for path in files:
        data = path.read_bytes()
        found |= {i for i, p in enumerate(probes) if p in data}
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files), "memories_found": len(found)}


def _backup_and_export(home: Home, export: Path) -> None:
    env = {**os.environ, "STRATA_HOME": str(home.root)}
    strata = [sys.executable, "-m", "strata_daemon"]
    subprocess.run([*strata, "backup"], env=env, check=True, capture_output=True)
    subprocess.run([*strata, "export", "-o", str(export)], env=env, check=True, capture_output=True)


async def _ingest_rounds(tmp: Path, n: int, seed: int, rounds: int) -> tuple[dict, dict[str, Home]]:
    rates: dict[str, list[float]] = {"plain": [], "sealed": []}
    homes: dict[str, Home] = {}
    for r in range(rounds):
        for name in (("plain", "sealed") if r % 2 == 0 else ("sealed", "plain")):
            root = tmp / f"ingest-{name}-{r}"
            key = tmp / "keys" / f"ingest-{r}.key" if name == "sealed" else None
            rate, homes[name] = await _ingest(root, n, seed + r, key)
            rates[name].append(rate)
    plain, sealed = statistics.median(rates["plain"]), statistics.median(rates["sealed"])
    return {"n": n, "rounds": rounds, "plain_per_s": round(plain, 1), "sealed_per_s": round(sealed, 1),
            "ratio": ratio(plain, sealed)}, homes


async def bench_sealed(n: int, *, queries: int = 300, k: int = 10, ingest_n: int = 20_000, rounds: int = 2,
                       seed: int = 0, cache: Path | None = None, progress: Callable[[int], None] | None = None,
                       embed_progress: Callable[[int], None] | None = None) -> dict:
    texts = corpus.queries(queries + WARMUP, seed=seed)
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as name:
        tmp = Path(name)
        plain, _, cached = await filled_home(tmp / "plain", n, seed, "balanced", embed_progress, cache)
        shutil.copytree(plain.root, tmp / "sealed")
        started = time.perf_counter()
        sealed = Home(tmp / "sealed")
        sealing.seal(sealed, str(tmp / "keys" / "recall.key"))
        seal_s = time.perf_counter() - started
        recall = await _recall_turns(plain, sealed, texts, k, progress)
        ingest, homes = await _ingest_rounds(tmp, ingest_n, seed, rounds)
        probes = [e["content"].encode("utf-8")[:PROBE_BYTES] for e in corpus.observations(ingest_n, seed=seed + rounds - 1)
                  if len(e["content"].encode("utf-8")) >= PROBE_BYTES]
        search = {}
        for kind, home in homes.items():
            export = tmp / f"{kind}.jsonl"
            _backup_and_export(home, export)
            search[kind] = _files_with(home, export, probes)
    return {
        "benchmark": "sealed", "n": n, "seed": seed, "k": k, "corpus_cached": cached,
        "seal_seconds": round(seal_s, 2), "recall": recall, "ingest": ingest,
        "plaintext": {"memories_probed": len(probes), "sealed": search["sealed"], "plain_control": search["plain"]},
    }
