"""What each phase does. Each takes the open Memory and returns counts for the phase record;
blocking work (SQLite backup, disk checks) runs in threads."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from pathlib import Path
from typing import Callable

from strata_daemon.app.phases import notify, snapshots, steps as loop_steps
from strata_daemon.app.phases.wake import wake_input
from strata_daemon.base import stopping, timeutil
from strata_daemon.base.private import write_private
from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.store import copies, phases as phase_records, recalls as history
from strata_daemon.store.postgres import dumps

log = logging.getLogger("strata.phases")
# One run is bounded so that a stop (SIGTERM, a reload) waits seconds, not the whole backlog;
# while memories still wait, the phase runs again at once (`more_to_embed`).
EMBED_PER_RUN = 512
MIN_FREE_BYTES = 256 * 1024 * 1024


def _health(home, db_path: Path | None) -> dict:
    """The home's disk, and its database file's (None: a PostgreSQL store, whose files the server checks)."""
    disk = shutil.disk_usage(home.state_dir)
    if db_path is None:
        return {"quick_check": "ok", "free_bytes": disk.free, "wal_bytes": 0, "low_disk": disk.free < MIN_FREE_BYTES}
    wal = db_path.with_name(db_path.name + "-wal")
    check = phase_records.quick_check(db_path)
    return {"quick_check": check, "free_bytes": disk.free, "wal_bytes": wal.stat().st_size if wal.exists() else 0,
            "low_disk": disk.free < MIN_FREE_BYTES}


async def heartbeat(mem) -> dict:
    now = timeutil.now()
    path = mem.home.state_dir / "heartbeat"
    await asyncio.to_thread(write_private, path, f"{timeutil.iso(now)} {os.getpid()}\n")
    loop = await mem.db.transact(phase_records.bump_loop)
    notify.notify(f"STATUS=loop {loop}")
    health = await asyncio.to_thread(_health, mem.home, mem.db.path if mem.db.dialect == "sqlite" else None)
    expired = await mem.layers.web.expire()
    problems = [p for p, bad in (("database quick_check: " + health["quick_check"], health["quick_check"] != "ok"),
                                 (f"only {health['free_bytes'] // 2**20} MB free in {mem.home.state_dir}",
                                  health["low_disk"])) if bad]
    return {"loop": loop, **health, "working_set_committed": bool(expired), "problems": problems}


async def steps(mem) -> dict:
    """The loop steps in the order configured, then the wake step; each outcome is stored."""
    cfg = mem.config
    cap = max(1, min(int(cfg["loop.max_output_bytes"]), mem.limits.max_content_bytes - 200))  # room for the why
    loop = await mem.db.run(phase_records.loop_count)
    env = {"STRATA_HOME": str(mem.home.root), "STRATA_AGENT": mem.agent, "STRATA_LOOP": str(loop)}
    todo = [(loop_steps.parse(name, spec, mem.home.root), None) for name, spec in cfg["loop.steps"].items()
            if spec.get("enabled", True)]
    wake = cfg["loop.wake"]
    if wake:
        todo.append((loop_steps.parse("wake", wake, mem.home.root), wake))
    counts = {"ran": 0, "failed": 0, "stored": 0}
    for step, wake_spec in todo:
        stdin = await wake_input(mem, wake_spec) if wake_spec is not None else None
        outcome = await loop_steps.run(step, stdin=stdin, cap=cap, extra_env={**env, "STRATA_STEP": step.name})
        counts["ran"] += 1
        counts["failed"] += outcome.status != "ok"
        content, context = outcome.observation()
        if content:  # a quiet success leaves nothing to remember
            importance = step.importance if step.importance is not None else (0.5 if outcome.status == "ok" else 0.7)
            await mem.observe(content, kind=step.kind, importance=importance, context=context,
                              source=f"step:{step.name}")
            counts["stored"] += 1
        if outcome.status != "ok":
            log.warning("%s", content.splitlines()[0].rstrip(":"))
    return counts


async def fold(mem) -> dict:
    return await mem.fold()


def _releasing(again: Callable[[dict], bool] = lambda _: False):
    """After the phase, unload the models it used when daemon.release_models says so, unless
    `again` says the phase runs again at once (it would only load them again)."""
    def wrap(run):
        async def phase(mem) -> dict:
            result = None
            try:
                result = await run(mem)
                return result
            finally:
                if mem.config["daemon.release_models"] and not (result and again(result)):
                    mem.release_models()
        phase.__name__ = run.__name__
        return phase
    return wrap


def more_to_embed(result: dict) -> bool:
    """Whether an embed run left memories waiting (and embedded some: a failing model waits
    for the next interval)."""
    return result.get("embedded", 0) > 0 and result.get("backlog", 0) > 0


@_releasing(again=more_to_embed)
async def embed(mem) -> dict:
    try:
        return await mem.embed_pending(limit=EMBED_PER_RUN)
    except EmbeddingUnavailable as e:  # recall keeps working on full text
        return {"embedded": 0, "skipped": f"{e.message} ({e.hint or ''})"}


async def _prune_recalls(mem) -> dict:
    """The recall history older than daemon.recalls_keep_days (episodes/history.py), a batch a
    transaction: a stop waits for one batch, and what was pruned before it stays pruned."""
    days = float(mem.config["daemon.recalls_keep_days"])
    pruned = {"recalls": 0, "access_events": 0, "day_rows": 0}
    if days <= 0:
        return pruned
    before = timeutil.now() - days * 86400
    while True:
        stopping.check()
        batch = await mem.db.transact(history.prune_batch, before)
        pruned = {k: pruned[k] + batch[k] for k in pruned}
        if batch["recalls"] < history.BATCH:
            return pruned


async def decay(mem) -> dict:
    web = await mem.decay_web()
    before = timeutil.now() - float(mem.config.tuning.daemon.phase_runs_keep_days) * 86400
    pruned = await mem.db.transact(phase_records.prune_runs, before)
    return {**web, "strength": await snapshots.take(mem), "phase_runs_pruned": pruned,
            "recalls_pruned": await _prune_recalls(mem)}


async def consolidate(mem) -> dict:
    r = await mem.consolidate(detail=False)
    return {"run": r["run"], **r["counts"], "memories": r["memories"], "seconds": r["seconds"]}


@_releasing()
async def dossiers(mem) -> dict:
    done = await mem.layers.dossiers.refresh_due()
    return {"due": len(done["due"]), "refreshed": sum(r["status"] == "refreshed" for r in done["results"]),
            "failed": done["failed"]}


async def capsule(mem) -> dict:
    r = await mem.render_capsule()
    return {k: r[k] for k in ("status", "lines", "cut")} | {"absorbed": len(r["absorbed"])}


@_releasing()
async def arena(mem) -> dict:
    if not mem.config["arena.enabled"]:
        return {"skipped": "arena.enabled is false"}
    r = await mem.run_arena(if_new=True)
    if "skipped" in r:
        return r
    return {"run": r["run"], "decision": r["decision"], "leader": r["leader"], "strategy": r["strategy"]["arm"],
            "episodes": r["episodes"]["total"], "seconds": r["seconds"]}


def _prune(folder: Path, pattern: str, keep: int) -> int:
    kept = copies.newest_last(folder.glob(pattern))
    for old in kept[:-keep] if keep > 0 else []:
        dumps.remove(old)
    return min(len(kept), keep)


def _backup(db_path: Path, folder: Path, keep: int) -> dict:
    copies.sweep(folder)
    target = copies.keep_copy(db_path, folder, "memory")
    return {"path": str(target), "bytes": target.stat().st_size, "kept": _prune(folder, "memory-*.db", keep)}


def _dump(url: str, major: int, folder: Path, keep: int) -> dict:
    """pg_dump of the store into FOLDER, the list of its memories' hashes beside it."""
    copies.sweep(folder)
    target = copies.keep_copy(None, folder, "memory", suffix=dumps.SUFFIX, write=lambda p: dumps.dump(url, major, p))
    dumps.write_hashes(target, dumps.content_hashes(target, major))
    return {"path": str(target), "bytes": target.stat().st_size,
            "kept": _prune(folder, f"memory-*{dumps.SUFFIX}", keep)}


async def backup(mem) -> dict:
    folder, keep = mem.home.state_dir / "backups", int(mem.config["daemon.backup_keep"])
    if mem.db.dialect != "sqlite":
        return await asyncio.to_thread(_dump, mem.db.url, await mem.db.server_major(), folder, keep)
    return await asyncio.to_thread(_backup, mem.db.path, folder, keep)
