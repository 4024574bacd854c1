"""`strata run`: the long-running process. It opens the home, then on an interval folds access
events into features, commits an idle working set and embeds waiting memories, and every
dossier.refresh_interval_hours refreshes the due dossiers and renders the capsule, while a
watcher takes in a person's edits to the capsule, until SIGTERM or SIGINT; the full phase
schedule builds on this loop."""

from __future__ import annotations

import asyncio
import logging
import signal
import time

from .capsule.watch import watch
from .errors import EmbeddingUnavailable, StrataError
from .memory import Memory

EMBED_PER_PASS = 512  # bounds one pass so a large backlog never starves the other work

log = logging.getLogger("strata")


async def run(home, *, agent: str | None = None) -> int:
    mem = await Memory.open(home, agent=agent, actor="daemon")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    interval = float(mem.config["daemon.fold_interval_seconds"])
    embedding_ok = True
    dossier_every = float(mem.config["dossier.refresh_interval_hours"]) * 3600.0
    dossiers_at = None  # monotonic time of the last dossier pass; None: due at start
    watcher = asyncio.create_task(watch(mem, stop))
    try:
        status = await mem.status()
        log.info("strata started: home %s, database %s (%d bytes), namespace %s with %d memories",
                 status["home"], status["database"], status["database_bytes"], mem.agent, status["episodes"])
        log.info("folding access events, committing an idle working set and embedding new memories every %g s; "
                 "stop with Ctrl-C or SIGTERM",
                 interval)
        while not stop.is_set():
            try:
                folded = await mem.fold()
                if folded["events"]:
                    log.info("fold: %d access events into %d memories", folded["events"], folded["episodes"])
            except Exception as e:  # a failed pass is logged and retried, never fatal
                log.error("fold failed: %s", getattr(e, "message", e))
            try:
                committed = await mem.web.expire()
                if committed:
                    log.info("web: idle working set committed, %d items, %d edges strengthened",
                             len(committed["committed"]), committed["edges_strengthened"])
            except Exception as e:
                log.error("web expiry failed: %s", getattr(e, "message", e))
            if embedding_ok:
                try:
                    done = await mem.embed_pending(limit=EMBED_PER_PASS)
                    if done["embedded"]:
                        log.info("embed: %d memories, %d waiting", done["embedded"], done["backlog"])
                except EmbeddingUnavailable as e:
                    # Recall keeps working on full text; say so once, not every pass.
                    log.warning("embedding is off: %s (%s)", e.message, e.hint or "")
                    embedding_ok = False
                except Exception as e:
                    log.error("embed failed: %s", getattr(e, "message", e))
            if dossiers_at is None or time.monotonic() - dossiers_at >= dossier_every:
                dossiers_at = time.monotonic()
                await _dossiers(mem)
                await _capsule(mem)
            try:
                await asyncio.wait_for(stop.wait(), timeout=interval)
            except asyncio.TimeoutError:
                pass
        log.info("strata stopping")
    finally:
        stop.set()
        await asyncio.gather(watcher, return_exceptions=True)
        await mem.close()
    log.info("strata stopped")
    return 0


async def _dossiers(mem: Memory) -> None:
    try:
        done = await mem.dossiers.refresh_due()
    except Exception as e:  # the topic list itself failed (a bad config, a locked database)
        log.error("dossiers failed: %s", getattr(e, "message", e))
        return
    for r in done["results"]:
        if r["status"] == "refreshed":
            log.info("dossier %s: version %d by the %s synthesizer, %d lines", r["topic"], r["version"],
                     r["generator"], r["lines"])
    for f in done["failed"]:
        log.error("dossier %s: %s", f["topic"], f["message"])


async def _capsule(mem: Memory) -> None:
    try:
        r = await mem.capsule.render()
        log.info("capsule %s: %s, %d lines", mem.capsule.path, r["status"], r["lines"])
    except StrataError as e:  # a broken capsule: reported, the file left as the person saved it
        log.error("capsule not rendered: %s", e.message)
