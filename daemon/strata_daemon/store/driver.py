"""The SQLite driver: one that can load sqlite-vec, opened with strata's pragmas."""

from __future__ import annotations

import functools
import importlib.util
import os
import sqlite3
from pathlib import Path
from types import ModuleType

from strata_daemon.errors import INSTALL_CORE, StorageError

BUSY_TIMEOUT_MS = 10_000


@functools.cache
def sqlite_module() -> ModuleType:
    """stdlib sqlite3 when its build can load extensions, else sqlean's bundled SQLite."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean
    except ImportError:  # pragma: no cover - sqlean-py is a dependency
        raise StorageError(
            "this Python's sqlite3 cannot load extensions and sqlean-py is not installed",
            hint=INSTALL_CORE,
        ) from None
    return sqlean


def driver_errors() -> tuple[type[BaseException], ...]:
    mod = sqlite_module()
    return (mod.Error,) if mod is sqlite3 else (mod.Error, sqlite3.Error)


def describe(exc: BaseException, path: Path | str) -> StorageError:
    """Turn a driver exception into a message a person can act on."""
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return StorageError(f"the database {path} stayed locked for over {BUSY_TIMEOUT_MS // 1000} s",
                            hint="another strata process holds a long write; try again")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return StorageError(f"the database {path} is damaged ({text})",
                            hint="restore it from a backup in state/backups/ (`strata backup --list`), "
                                 "or move it away to start afresh")
    if "readonly" in low or "read-only" in low:
        return StorageError(f"the database {path} is read-only ({text})",
                            hint="check the permissions of the home and of state/")
    if "disk" in low and "full" in low:
        return StorageError(f"the disk holding {path} is full", hint="free some space; nothing committed was lost")
    if "unable to open" in low:
        return StorageError(f"cannot open the database {path} ({text})",
                            hint="check that the home exists and is writable (strata init DIR)")
    return StorageError(f"database error on {path}: {text}")


def _create_private(path: Path) -> None:
    # SQLite gives -wal and -shm files the mode of the main file, so 0600 here covers all three.
    if not path.exists():
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)


def copy(source: Path, target: Path) -> None:
    """SQLite's online backup of `source` into `target` (created 0600 if missing): consistent
    while others write the source, which is only read. The copy is left in rollback-journal
    mode, one self-contained file: a WAL-mode file opened read-only later (a restore, a kept
    benchmark corpus) would leave -wal and -shm files beside it. Opening it with `connect`
    turns WAL on again."""
    src = sqlite_module().connect(f"file:{source}?mode=ro", uri=True)
    dest = connect(target)
    try:
        src.backup(dest)
        dest.execute("PRAGMA journal_mode = DELETE")
    finally:
        dest.close()
        src.close()


def _vec0() -> str:
    """The sqlite-vec extension the sqlite-vec package ships, found without importing the package
    (its module loads numpy, which opening a database does not need)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StorageError("sqlite-vec is not installed", hint=INSTALL_CORE)
    return os.path.normpath(os.path.join(spec.submodule_search_locations[0], "vec0"))


def connect(path: Path | str, *, check_same_thread: bool = False):
    """A connection in autocommit mode (strata issues BEGIN itself), WAL, sqlite-vec loaded."""
    mod = sqlite_module()
    try:
        if str(path) != ":memory:":
            _create_private(Path(path))
        conn = mod.connect(str(path), isolation_level=None, check_same_thread=check_same_thread,
                           timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # Freed space is zeroed, so what a purge deletes (or an update replaces) leaves no copy
        # of its words in the file's free pages.
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -32000")
        conn.enable_load_extension(True)
        conn.load_extension(_vec0())
        conn.enable_load_extension(False)
    except driver_errors() as e:
        raise describe(e, path) from None
    except OSError as e:
        raise describe(e, path) from None
    return conn
