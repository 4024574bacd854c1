"""The time the phase schedule runs on. The daemon uses the wall clock; tests use a
ManualClock and advance it, so a nightly phase is tested without waiting a night.

The `schedule` library reads `datetime.now()` itself. Every phase is scheduled by interval
(`every(n).seconds`), so a job's next run is "now + interval"; ClockJob moves that instant
onto the clock's time line and asks the clock, not the wall, whether the job is due."""

from __future__ import annotations

import datetime

import schedule


class Clock:
    def now(self) -> datetime.datetime:
        return datetime.datetime.now()


class ManualClock(Clock):
    """Stands still until advanced."""

    def __init__(self, start: datetime.datetime | None = None):
        self._now = start or datetime.datetime.now()

    def now(self) -> datetime.datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += datetime.timedelta(seconds=seconds)


class ClockJob(schedule.Job):
    def __init__(self, interval: float, scheduler: "ClockScheduler"):
        self.clock = scheduler.clock
        super().__init__(interval, scheduler)

    @property
    def should_run(self) -> bool:
        return self.next_run is not None and self.clock.now() >= self.next_run

    def _schedule_next_run(self) -> None:
        super()._schedule_next_run()
        self.next_run += self.clock.now() - datetime.datetime.now()


class ClockScheduler(schedule.Scheduler):
    def __init__(self, clock: Clock):
        super().__init__()
        self.clock = clock

    def every(self, interval: float = 1) -> ClockJob:
        return ClockJob(interval, self)
