"""The phases: how often each runs (settings and tuned constants), which run once at start, which
follow another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from strata_daemon.app.phases import jobs


@dataclass(frozen=True)
class Phase:
    name: str
    interval: Callable[[object], float | None]  # seconds, from the config; None: only after `after`
    run: Callable[[object], Awaitable[dict]]
    at_start: bool
    doc: str
    after: str | None = None  # also runs right after each run of this phase
    again: Callable[[dict], bool] | None = None  # runs again at once while this holds for its result
    # Runs once for the store: on a store several daemons share (PostgreSQL), only by the one
    # that leads them (Database.lead); the others run it when they take over.
    shared: bool = False

    def period(self, cfg) -> float:
        """How often it runs: its own interval, or its leader's."""
        own = self.interval(cfg)
        return own if own is not None else BY_NAME[self.after].period(cfg)


def _seconds(key: str, scale: float = 1.0) -> Callable[[object], float]:
    """A setting's interval, or a tuned constant's (`daemon.fold_interval_seconds`)."""
    section, _, name = key.partition(".")
    return lambda cfg: float(cfg[key] if key in cfg.values else getattr(getattr(cfg.tuning, section), name)) * scale


def _never(_cfg) -> None:
    return None


PHASES: tuple[Phase, ...] = (
    Phase("heartbeat", _seconds("daemon.heartbeat_seconds"), jobs.heartbeat, True,
          "touch state/heartbeat, advance the loop count, check the database and the disk, commit an idle "
          "working set"),
    Phase("steps", _never, jobs.steps, False,
          "run the loop steps ([loop.steps.NAME]) and store their output as observations, then the wake step",
          after="heartbeat"),
    Phase("fold", _seconds("daemon.fold_interval_seconds"), jobs.fold, True,
          "fold recall access events into memory features"),
    Phase("embed", _seconds("daemon.embed_interval_seconds"), jobs.embed, True,
          f"embed memories waiting for a vector, {jobs.EMBED_PER_RUN} a run, again at once while more wait",
          again=jobs.more_to_embed),
    Phase("decay", _seconds("daemon.decay_interval_hours", 3600), jobs.decay, False,
          "spiderweb decay and prune, and a snapshot of memory strength", shared=True),
    Phase("consolidate", _seconds("daemon.consolidation_interval_hours", 3600), jobs.consolidate, False,
          "consolidation: merge near-duplicates, replay, potentiate, promote, interference, stale decay, "
          "archive to the cold tier, associate", shared=True),
    Phase("dossiers", _seconds("dossier.refresh_interval_hours", 3600), jobs.dossiers, True,
          "refresh the dossiers not checked within dossier.min_interval_hours", shared=True),
    Phase("capsule", _seconds("daemon.capsule_interval_seconds"), jobs.capsule, False,
          "render the capsule (also after each dossiers run)", after="dossiers"),
    Phase("arena", _seconds("arena.interval_hours", 3600), jobs.arena, False,
          "the retrieval arena: score the recall strategies on the evaluation episodes and choose the default",
          shared=True),
    Phase("backup", _seconds("daemon.backup_interval_hours", 3600), jobs.backup, False,
          "SQLite online backup (on PostgreSQL, pg_dump) into state/backups/, keeping daemon.backup_keep",
          shared=True),
)
BY_NAME = {p.name: p for p in PHASES}
FOLLOWS: dict[str, tuple[str, ...]] = {}
for _p in PHASES:
    if _p.after:
        FOLLOWS[_p.after] = (*FOLLOWS.get(_p.after, ()), _p.name)
