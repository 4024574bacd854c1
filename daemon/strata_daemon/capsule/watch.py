"""Watching the capsule for a person's edits (watchfiles): on each save, check the file, take
in what changed and render again. strata's own writes are recognised by their hash and
ignored; editors' temporary and backup files are never looked at (only the capsule's own
name is). A broken capsule is reported and left alone: the last good render stays in
state/capsule/, and the next good save is taken in."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

from strata_daemon.base.wording import counted
from strata_daemon.capsule import files
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.store import capsule as store

if TYPE_CHECKING:
    from strata_daemon.capsule.api import Capsule

log = logging.getLogger("strata.capsule")


async def handle_change(cap: Capsule) -> dict:
    """What the watcher does with one save. Returns {"action": "own-write" | "invalid" |
    "rendered" | "missing", ...}; never raises for the file's sake."""
    try:
        text = await asyncio.to_thread(files.read, cap.path)
    except InvalidInput as e:
        log.error("capsule %s: %s", cap.path, e.message)
        cap.last_problems = [{"line": 0, "level": "error", "code": "unreadable", "message": e.message}]
        return {"action": "invalid", "problems": cap.last_problems}
    if text is None:
        log.warning("capsule %s was removed; the next render restores the last good version", cap.path)
        return {"action": "missing"}
    digest = files.sha256(text)
    if digest == cap.written_sha256:
        return {"action": "own-write"}
    last = await cap.db.run(store.last_render, cap.agent)
    if last is not None and last["sha256"] == digest:
        return {"action": "own-write"}
    checked = await cap.check(text)
    if not checked["ok"]:
        errors = [p for p in checked["problems"] if p["level"] == "error"]
        for p in errors:
            log.error("capsule %s line %d: %s", cap.path.name, p["line"], p["message"])
        cap.last_problems = checked["problems"]
        return {"action": "invalid", "problems": checked["problems"]}
    cap.last_problems = []
    r = await cap.render()
    taken = len(r["absorbed"]) + len(r["pinned"]) + len(r["hidden"])
    log.info("capsule edited by hand: %s taken in, %s pinned, %d hidden; %s", counted(len(r["absorbed"]), "fact"),
             counted(len(r["pinned"]), "line"), len(r["hidden"]), r["status"])
    return {"action": "rendered", "taken": taken, **r}


async def watch(cap: Capsule, stop: asyncio.Event, *, on_handled: Callable[[dict], Awaitable[None] | None] | None = None
                ) -> None:
    """Run until `stop` is set. Each debounced batch of changes to the capsule is handled once."""
    from watchfiles import awatch

    path: Path = cap.path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    debounce = int(cap.config.tuning.capsule.watch_debounce_ms)
    log.info("watching %s for edits", path)
    async for _ in awatch(path.parent, stop_event=stop, debounce=debounce, step=50, recursive=False,
                          watch_filter=lambda _change, changed: Path(changed).name == path.name):
        try:
            result = await handle_change(cap)
        except StrataError as e:
            log.error("capsule: %s", e.message)
            result = {"action": "failed", **e.as_dict()}
        except Exception as e:  # a watcher that dies stops taking edits in: log and keep going
            log.exception("capsule watcher: %s", e)
            result = {"action": "failed", "message": str(e)}
        if on_handled is not None:
            maybe = on_handled(result)
            if asyncio.iscoroutine(maybe):
                await maybe
