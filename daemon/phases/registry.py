"""The phases, their intervals (settings) and whether they also run once at start."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from . import jobs


@dataclass(frozen=True)
class Phase:
    name: str
    interval: Callable[[object], float]  # seconds, from the config
    run: Callable[[object], Awaitable[dict]]
    at_start: bool
    doc: str


def _seconds(key: str, scale: float = 1.0) -> Callable[[object], float]:
    return lambda cfg: float(cfg[key]) * scale


PHASES: tuple[Phase, ...] = (
    Phase("heartbeat", _seconds("daemon.heartbeat_seconds"), jobs.heartbeat, True,
          "touch state/heartbeat, advance the loop count, check the database and the disk, commit an idle "
          "working set"),
    Phase("fold", _seconds("daemon.fold_interval_seconds"), jobs.fold, True,
          "fold recall access events into memory features"),
    Phase("embed", _seconds("daemon.embed_interval_seconds"), jobs.embed, True,
          "embed memories waiting for a vector, at most 512 a run"),
    Phase("decay", _seconds("daemon.decay_interval_hours", 3600), jobs.decay, False,
          "spiderweb decay and prune"),
    Phase("dossiers", _seconds("dossier.refresh_interval_hours", 3600), jobs.dossiers, True,
          "refresh the dossiers not checked within dossier.min_interval_hours"),
    Phase("capsule", _seconds("daemon.capsule_interval_seconds"), jobs.capsule, True,
          "render the capsule (also after each dossiers run)"),
    Phase("backup", _seconds("daemon.backup_interval_hours", 3600), jobs.backup, False,
          "SQLite online backup into state/backups/, keeping daemon.backup_keep"),
)
BY_NAME = {p.name: p for p in PHASES}
FOLLOWS = {"dossiers": "capsule"}  # a run of the key is followed by a run of the value
