"""One daemon per home: an exclusive lock on state/daemon.lock, held while the daemon runs and
released by the kernel if it dies, so a `kill -9` never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from strata_daemon.errors import Conflict


class DaemonLock:
    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def acquire(self, patience: float = 1.0) -> None:
        """Take the lock. `holder()` (status, the TUI) holds it for a moment to probe, so a busy
        lock is tried again for `patience` seconds before another daemon is assumed."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + patience
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
            other = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise Conflict(f"another strata daemon already runs on this home (pid {other})",
                           hint="stop it first, or give this one another home with --home") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None


def holder(path: Path) -> int | None:
    """The pid of the daemon holding the lock, or None when no daemon runs on the home."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        return int(text) if text.isdigit() else -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
