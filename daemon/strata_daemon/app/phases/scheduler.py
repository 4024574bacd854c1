"""The daemon's loop: the `schedule` library says which phases are due; each due phase runs as
its own task, one run per phase at a time, so a slow dossier refresh never holds up a fold.
A failed run is retried after a backoff (5 s, doubling, at most the phase's interval).

On a store several daemons share, the phases that run once for the store (Phase.shared) run
only in the daemon that leads (Database.lead, asked every LEAD_SECONDS); one that takes the
lead over reads when each last ran and runs what is due."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time

import schedule

from strata_daemon.app.phases.clock import Clock, ClockScheduler
from strata_daemon.app.phases.registry import BY_NAME, FOLLOWS, PHASES
from strata_daemon.app.phases.runs import actor, run_phase
from strata_daemon.base import timeutil
from strata_daemon.base.wording import field
from strata_daemon.errors import StrataError
from strata_daemon.store.phases import last_started as recorded_starts

log = logging.getLogger("strata.phases")
TICK_SECONDS = 0.5
LEAD_SECONDS = 5.0  # how often a daemon asks whether it leads: a dead leader is followed within this
FIRST_RETRY_SECONDS = 5.0


class PhaseLoop:
    def __init__(self, mem, stop: asyncio.Event, clock: Clock | None = None,
                 last_started: dict[str, float] | None = None):
        """`last_started` (phase -> epoch seconds, from the phase records) carries the schedule
        over a restart: a nightly phase that ran 20 hours ago is due in 4, not in 24."""
        self.mem, self.stop = mem, stop
        self.scheduler = ClockScheduler(clock or Clock())
        self.pending: dict[str, None] = {p.name: None for p in PHASES if p.at_start}
        self.running: dict[str, asyncio.Task] = {}
        self.failures: dict[str, int] = {}
        self.last_started = dict(last_started or {})
        self.leading, self._asked = True, 0.0  # a home's own file: its one daemon leads
        self.schedule()

    def schedule(self) -> None:
        """(Re)schedule every phase at its configured interval after its last run (or from
        now, when it never ran); pending retries are kept. Called again after a config reload."""
        now = timeutil.now()
        for p in PHASES:
            self.scheduler.clear(p.name)
            every = p.interval(self.mem.config)
            if every is None:
                continue
            job = self.scheduler.every(max(1.0, every)).seconds.do(self._due, p.name).tag(p.name)
            if p.name in self.last_started:
                left = self.last_started[p.name] + every - now
                if left <= 0:
                    self._due(p.name)
                else:
                    job.next_run = self.scheduler.clock.now() + datetime.timedelta(seconds=left)

    def _due(self, name: str) -> None:
        self.pending[name] = None

    def _retry(self, name: str):
        self._due(name)
        return schedule.CancelJob

    async def _run(self, name: str) -> None:
        self.last_started[name] = timeutil.now()
        r = await run_phase(self.mem, name, actor=actor(self.mem.db, "daemon"))
        for follower in FOLLOWS.get(name, ()):  # even after a failure: the follower shows what it can
            self._due(follower)
        if r["status"] == "interrupted":
            return
        if r["status"] == "failed":
            n = self.failures[name] = self.failures.get(name, 0) + 1
            wait = min(BY_NAME[name].period(self.mem.config), FIRST_RETRY_SECONDS * 2 ** (n - 1))
            self.scheduler.every(wait).seconds.do(self._retry, name).tag(f"{name}-retry")
            log.warning("phase %s: retrying in %g s (failure %d in a row)", name, wait, n)
            return
        self.failures.pop(name, None)
        again = BY_NAME[name].again
        if again and again(r["result"]):
            self._due(name)
        log.log(logging.INFO if _noteworthy(r["result"]) else logging.DEBUG, "phase %s: %s (%.2f s)", name,
                _summary(r["result"]), r["seconds"])

    def tick(self) -> list[asyncio.Task]:
        """Start every due phase that is not already running; returns the tasks started."""
        self.scheduler.run_pending()
        started = []
        for name in list(self.pending):
            if BY_NAME[name].shared and not self.leading:
                del self.pending[name]  # the leading daemon runs it
            elif name not in self.running:
                del self.pending[name]
                task = asyncio.create_task(self._run(name), name=f"phase-{name}")
                self.running[name] = task
                task.add_done_callback(lambda _t, n=name: self.running.pop(n, None))
                started.append(task)
        return started

    async def lead(self) -> None:
        """Ask whether this daemon leads the store's daemons; one that has just taken the lead
        reads when each phase last ran (the old leader's runs) and schedules from there."""
        if time.monotonic() - self._asked < LEAD_SECONDS:
            return
        self._asked = time.monotonic()
        try:
            leading = await self.mem.db.lead()
        except StrataError as e:
            log.warning("cannot tell whether this daemon leads: %s", e.message)
            leading = False
        if leading and not self.leading:
            log.info("this daemon now runs the phases the store's daemons share (%s)",
                     ", ".join(p.name for p in PHASES if p.shared))
            self.last_started.update(await self.mem.db.run(recorded_starts))
            self.schedule()
        self.leading = leading

    async def run(self) -> None:
        while not self.stop.is_set():
            await self.lead()
            self.tick()
            try:
                await asyncio.wait_for(self.stop.wait(), timeout=TICK_SECONDS)
            except asyncio.TimeoutError:
                pass

    async def drain(self, timeout: float) -> None:
        """Let running phases finish their current step; cancel what is still running after
        `timeout` (a transaction in flight completes or rolls back on the database thread)."""
        tasks = list(self.running.values())
        if not tasks:
            return
        done, still = await asyncio.wait(tasks, timeout=timeout)
        for t in still:
            t.cancel()
        await asyncio.gather(*still, return_exceptions=True)


def _noteworthy(result: dict) -> bool:
    """Whether a run did something worth an info line (an idle fold is not)."""
    keys = ("events", "embedded", "refreshed", "pruned", "absorbed", "loop", "path", "skipped", "failed", "stored")
    return any(result.get(k) for k in keys) or result.get("status") == "rendered" or bool(result.get("problems"))


def _summary(result: dict) -> str:
    """A phase's result as a journal line reads well: `loop 3, low disk no`, not Python values."""
    return ", ".join(f"{k.replace('_', ' ')} {field(k, v)}" for k, v in result.items()
                     if not isinstance(v, (dict, list)) or v)[:300]
