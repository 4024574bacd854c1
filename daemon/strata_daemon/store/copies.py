"""Database copies kept side by side in state/backups/ (backups, the database a restore
replaced): written under a hidden per-process name, then given a name of their own that no
other copy has, so two copies made in one second never replace each other."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Callable

from strata_daemon.errors import Conflict, StorageError
from strata_daemon.store import driver

PARTIAL = ".partial"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True


def left_behind(folder: Path) -> list[Path]:
    """The partial copies of processes that died while copying (killed, or on a full disk), with
    the -wal, -shm and -journal files SQLite left beside them: each holds every memory, and no
    listing shows it."""
    out = []
    for partial in sorted(folder.glob(f".*{PARTIAL}*")):
        stem = partial.name.split(PARTIAL)[0]
        pid = stem.split(".")[-2] if stem.count(".") >= 2 else ""
        if pid.isdigit() and not _pid_alive(int(pid)):
            out.append(partial)
    return out


def sweep(folder: Path) -> int:
    """Remove what left_behind finds; how many copies went."""
    gone = left_behind(folder)
    for path in gone:
        path.unlink(missing_ok=True)
    return sum(p.name.endswith(PARTIAL) for p in gone)


def _order(p: Path) -> tuple[str, int]:
    """(time stem, number): `X.db` is (X, 1), `X-2.db` is (X, 2)."""
    stem, _, n = p.stem.rpartition("-")
    return (stem, int(n)) if stem and n.isdigit() and stem[-1] == "Z" else (p.stem, 1)


def newest_last(paths) -> list[Path]:
    """By time, then by the number a copy made in the same second carries: `X.db`, `X-2.db`, ...
    `X-10.db` (as text, `X-10` would sort before `X-2`, and pruning would take the newest)."""
    return sorted(paths, key=_order)


def keep_copy(db_path: Path | None, folder: Path, prefix: str, *, raw: bool = False, suffix: str = ".db",
              write: Callable[[Path], None] | None = None) -> Path:
    """SQLite's online backup of `db_path` into `folder` as `PREFIX-TIME.db`, or `PREFIX-TIME-2.db`,
    `-3`... after the highest number that second's copies carry (never a lower one a pruned copy
    freed: it would sort as the oldest). The copy only appears once it is whole.
    `raw` copies the file's bytes instead, with its -wal and -shm beside: a damaged database,
    which SQLite cannot read, is kept as it is. `write` makes the copy at the path it is given
    instead (a PostgreSQL store's dump, named `PREFIX-TIME.SUFFIX`)."""
    stem = f"{prefix}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = folder / f".{stem}.{os.getpid()}.{secrets.token_hex(4)}{PARTIAL}"
    try:
        if write is not None:
            write(partial)
        elif raw:
            _raw_copy(db_path, partial)
        else:
            try:
                driver.copy(db_path, partial)
            except driver.driver_errors() as e:
                raise driver.describe(e, folder) from e
        taken = [n for s_, n in map(_order, folder.glob(f"{stem}*{suffix}")) if s_ == stem]
        for n in range(max(taken, default=0) + 1, 1000):
            target = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
            try:  # claim the name first: os.replace alone would take a name another copy holds
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                continue
            os.replace(partial, target)
            if raw:
                for suffix in ("-wal", "-shm"):
                    side = db_path.with_name(db_path.name + suffix)
                    if side.exists():
                        _raw_copy(side, target.with_name(target.name + suffix))
            return target
        raise Conflict(f"{folder} holds 999 copies named {stem}*", hint="remove old ones, then try again")
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise StorageError(f"the disk holding {folder} is full", hint=driver.FULL_HINT) from e
        raise
    finally:  # a copy that failed leaves nothing, its journal and WAL included
        for left in (partial, *(partial.with_name(partial.name + s_) for s_ in ("-journal", "-wal", "-shm"))):
            left.unlink(missing_ok=True)


def _raw_copy(source: Path, target: Path) -> None:
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    shutil.copyfile(source, target)
