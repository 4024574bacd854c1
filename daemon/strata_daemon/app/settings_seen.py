"""Which strata.toml the running daemon read (state/daemon-settings.json): a command the daemon
answers says so when the file changed since, as a person who edited it and saw no effect would
otherwise not know to reload it (SIGHUP)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from strata_daemon.base.private import write_private

FILE = "daemon-settings.json"


def _stamp(config_path: Path) -> int | None:
    try:
        return config_path.stat().st_mtime_ns
    except OSError:
        return None


def record(state_dir: Path, config_path: Path) -> None:
    """The daemon read CONFIG_PATH now (at start, or a reload that took)."""
    write_private(state_dir / FILE, json.dumps({"pid": os.getpid(), "read": _stamp(config_path)}))


def changed_since(state_dir: Path, config_path: Path, pid: int | None = None) -> bool:
    """Whether CONFIG_PATH changed since the daemon (PID, when given) last read it."""
    try:
        seen = json.loads((state_dir / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(seen, dict) or (pid is not None and seen.get("pid") != pid):
        return False
    return seen.get("read") != _stamp(config_path)
