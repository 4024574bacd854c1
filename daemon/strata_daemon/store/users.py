"""Who has the database open. Every Database holds a shared lock on a file beside it for as
long as it is open; a restore takes the lock exclusively, so it never replaces a database that
a server, an MCP session or the inspector is using, and nobody opens it while it is replaced.
The kernel drops a dead process's lock, so a killed process never blocks a restore."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from strata_daemon.errors import Conflict, StorageError

PATIENCE = 10.0  # seconds an opener waits for a restore under way


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".users")


def _open(db_path: Path) -> int:
    return os.open(lock_path(db_path), os.O_RDWR | os.O_CREAT, 0o600)


def share(db_path: Path) -> int | None:
    """Take the shared lock; returns its descriptor (closing it releases the lock), or None on
    a home where the file cannot be made (a read-only mount: nothing can restore there)."""
    try:
        fd = _open(db_path)
    except OSError:
        return None
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise StorageError(f"{db_path} is being restored from a backup",
                                   hint="try again when `strata backup --restore` has finished") from None
            time.sleep(0.05)


def exclusive(db_path: Path, doing: str = "restore") -> int:
    """Take the lock alone, or say which processes have the database open (DOING: what waits)."""
    fd = _open(db_path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pids = holders(db_path)
        os.close(fd)
        named = ", ".join(f"pid {p} ({_command(p)})" for p in pids) or "another process"
        raise Conflict(f"the database is open in {named}",
                       hint="stop it first (strata serve, strata mcp, the inspector or a Python program), "
                            f"then {doing}") from None
    return fd


def holders(db_path: Path) -> list[int]:
    """The pids holding the lock, from /proc/locks (Linux); empty where it cannot be read."""
    try:
        inode = os.stat(lock_path(db_path)).st_ino
        with open("/proc/locks") as f:
            rows = [line.split() for line in f]
    except OSError:
        return []
    me = os.getpid()
    return sorted({int(r[4]) for r in rows if len(r) > 5 and r[1] == "FLOCK" and r[5].endswith(f":{inode}")
                   and r[4].isdigit() and int(r[4]) != me})


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = [w.decode(errors="replace") for w in f.read().split(b"\0") if w]
    except OSError:
        return "?"
    # `python -m strata_daemon serve ...` or `strata serve ...`: what follows the program names it.
    rest = words[words.index("strata_daemon") + 1:] if "strata_daemon" in words else words[1:]
    shown = " ".join(["strata", *rest]) if rest else " ".join(words[:1])
    return shown if len(shown) <= 100 else shown[:99] + "…"
