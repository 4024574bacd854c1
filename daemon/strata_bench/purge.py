"""`strata bench purge`: the time of `forget ID --purge` in a home of n memories that has lived
a little (embedded, a rendered capsule, dossiers, recalls with feedback), end to end: the
purge's transaction over every layer, the capsule and dossiers written again when they held
the memory, the WAL folded into the file. The baseline, timed in the same run, is the bare
deletion of a memory's row (its full-text entry and vector going with it by trigger and by
hand), which is all a purge did before it reached the derived layers."""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus
from strata_bench.kept import filled_home
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import VECTOR_TABLE

TOPICS = ("backup", "deploy", "revenue")


async def _lived(mem: Memory, seed: int, recalls: int) -> None:
    for topic in TOPICS:
        await mem.add_topic(topic, query=topic)
        await mem.refresh_dossier(topic, force=True)
    for q in corpus.queries(recalls, seed=seed):
        r = await mem.recall(q, k=5)
        if r["hits"]:
            await mem.feedback(r["recall_id"], "success", used=[r["hits"][0]["id"]])
    await mem.render_capsule()


async def bench_purge(n: int, *, seed: int = 0, purges: int = 30, recalls: int = 50, cache: Path | None = None,
                      progress: Callable[[int], None] | None = None,
                      embed_progress: Callable[[int], None] | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _, _ = await filled_home(Path(tmp) / "home", n, seed, "balanced", embed_progress, cache)
        async with await Memory.open(home, actor="bench") as mem:
            await _lived(mem, seed, recalls)
            ids = [e["id"] async for e in mem.export()]
            rng = random.Random(seed)
            # Half at random, half among what the capsule, dossiers and recalls drew on: the purges
            # that have the most to redact.
            cited = [r[0] for r in await mem.db.fetchall(
                "SELECT DISTINCT episode_id FROM access_events ORDER BY episode_id")]
            chosen = rng.sample(ids, purges - purges // 2) + rng.sample(cited, min(len(cited), purges // 2))
            chosen = list(dict.fromkeys(chosen))
            timed, removed, bare, redacted = [], [], [], 0
            for i in chosen:
                t = time.perf_counter()
                r = await mem.forget(i, purge=True)
                timed.append(time.perf_counter() - t)
                removed.append(r["elapsed_ms"]["removed"] / 1000)
                redacted += r["audit_redacted"] + r["dossier_lines_redacted"] + r["capsule_lines_redacted"]
                if progress:
                    progress(1)
            left = [i for i in ids if i not in set(chosen)]
            for i in rng.sample(left, len(chosen)):
                t = time.perf_counter()
                await mem.db.transact(_bare_delete, i)
                bare.append(time.perf_counter() - t)
                if progress:
                    progress(1)
    purge_ms, bare_ms = summary_ms(timed), summary_ms(bare)
    return {"benchmark": "purge", "n": n, "seed": seed, "purges": len(timed), "lines_redacted": redacted,
            **purge_ms, "removed": summary_ms(removed), "baseline": {"what": "DELETE of the memory's row and vector only", **bare_ms},
            "ratio_p50": ratio(purge_ms["p50_ms"], bare_ms["p50_ms"]),
            "ratio_p95": ratio(purge_ms["p95_ms"], bare_ms["p95_ms"])}


def _bare_delete(conn, episode_id: int) -> None:
    conn.execute(f"DELETE FROM {VECTOR_TABLE} WHERE rowid = ?", (episode_id,))
    conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
