"""The SQLite driver: one that can load sqlite-vec, opened with strata's pragmas; a sealed
file through the cipher's driver (store/cipher.py) with its key."""

from __future__ import annotations

import functools
import importlib.util
import os
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

from strata_daemon.config.sealing import Key
from strata_daemon.errors import INSTALL_CORE, StorageError
from strata_daemon.store import cipher

BUSY_TIMEOUT_MS = 10_000


@functools.cache
def sqlite_module() -> ModuleType:
    """The one SQLite this process opens every file with: SQLCipher's build (sqlcipher3, which
    opens plain files as they are and sealed ones with their key; many Python builds' own sqlite3
    cannot load extensions), else the stdlib's where it can. One library only: sqlite-vec, loaded
    once per process, keeps the routines of the library that loaded it last, so a second
    library's connections crash on it; and two libraries on one file break each other's locks."""
    try:
        import sqlcipher3
    except ImportError:  # pragma: no cover - sqlcipher3-wheels is a dependency
        if hasattr(sqlite3.Connection, "enable_load_extension"):
            return sqlite3
        raise StorageError("sqlcipher3-wheels is not installed, and this Python's sqlite3 cannot load extensions",
                           hint=INSTALL_CORE) from None
    return sqlcipher3


def driver_errors() -> tuple[type[BaseException], ...]:
    mod = sqlite_module()
    return (mod.Error,) if mod is sqlite3 else (mod.Error, sqlite3.Error)


FULL_HINT = "free some space, then run it again; nothing committed was lost"


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
    if "disk" in low and "full" in low or "i/o error" in low and _full(path):
        return StorageError(f"the disk holding {path} is full", hint=FULL_HINT)
    if "unable to open" in low:
        return StorageError(f"cannot open the database {path} ({text})",
                            hint="check that the home exists and is writable (strata init DIR)")
    return StorageError(f"database error on {path}: {text}")


def _full(path: Path | str) -> bool:
    """Whether the filesystem holding PATH has no block left: SQLite reports a write the disk
    refused while appending to the WAL as a disk I/O error, not as a full disk."""
    try:
        return os.statvfs(Path(path).parent).f_bavail == 0
    except OSError:
        return False


def _create_private(path: Path) -> None:
    # SQLite gives -wal and -shm files the mode of the main file, so 0600 here covers all three.
    if not path.exists():
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)


def _sealed_key(path: Path | str) -> Key | None:
    """The key of the file at PATH when it is sealed (an error when none is given); else None."""
    if not cipher.is_sealed(path):
        return None
    key = cipher.key_for(path)
    if key is None:
        raise cipher.missing_key(path)
    return key


def _key_to_open(path: Path | str) -> Key | None:
    """The key of an existing sealed file, or of a new one in a sealed home; None for plain."""
    key = _sealed_key(path)
    if key is not None:
        return key
    try:
        new = Path(path).stat().st_size == 0
    except FileNotFoundError:
        new = True
    return cipher.key_for_new(path) if new else None


def connect_read_only(path: Path | str):
    """A connection that cannot change the file, no pragma set and no extension loaded."""
    key = _sealed_key(path)
    if key is not None:
        return cipher.open_keyed(f"file:{path}?mode=ro", key, uri=True)
    return sqlite_module().connect(f"file:{path}?mode=ro", uri=True)


def copy(source: Path, target: Path) -> None:
    """SQLite's online backup of `source` into `target` (created 0600 if missing): consistent
    while others write the source, which is only read. The copy is left in rollback-journal
    mode, one self-contained file: a WAL-mode file opened read-only later (a restore, a kept
    benchmark corpus) would leave -wal and -shm files beside it. Opening it with `connect`
    turns WAL on again. A copy inside a home is sealed as the home is; one outside any home
    keeps the source's key, so a sealed home is never copied out in the clear."""
    source_key = _sealed_key(source)
    target_key = cipher.key_for_new(target) if cipher.home_of(target) is not None else source_key
    if (source_key and source_key.secret) != (target_key and target_key.secret):
        return _copy_across_keys(source, target, source_key, target_key)
    src = connect_read_only(source)
    dest = connect(target, key=target_key)
    try:
        src.backup(dest)
        dest.execute("PRAGMA journal_mode = DELETE")
    finally:
        dest.close()
        src.close()


def _copy_across_keys(source: Path, target: Path, source_key: Key | None, target_key: Key | None) -> None:
    # The backup API copies pages as they are, so between two keys (or a key and none) the rows
    # are exported instead, into a file beside the target that replaces it whole when done.
    partial = target.with_name(target.name + ".partial-export")
    partial.unlink(missing_ok=True)
    _create_private(partial)
    src = cipher.open_keyed(str(source), source_key) if source_key else \
        sqlite_module().connect(str(source), isolation_level=None)
    try:
        src.enable_load_extension(True)
        src.load_extension(_vec0())
        cipher.export(src, partial, target_key)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    for suffix in ("-wal", "-shm"):
        target.with_name(target.name + suffix).unlink(missing_ok=True)
    os.replace(partial, target)


def reseal(path: Path, old: Key | None, key: Key | None) -> bool:
    """Encrypt the database file at PATH with KEY (None: leave it plain) in place, from OLD when
    it is sealed; False when it was KEY's already. The caller holds the file alone (users.exclusive)."""
    sealed = cipher.is_sealed(path)
    if sealed and old is None:
        raise cipher.missing_key(path)
    source_key = old if sealed else None
    if (source_key and source_key.secret) == (key and key.secret):
        return False
    if path.with_name(path.name + "-wal").exists():
        conn = cipher.open_keyed(str(path), source_key) if source_key else sqlite_module().connect(str(path))
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            conn.close()
    _copy_across_keys(path, path, source_key, key)
    return True


def _vec0() -> str:
    """The sqlite-vec extension the sqlite-vec package ships, found without importing the package
    (its module loads numpy, which opening a database does not need)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StorageError("sqlite-vec is not installed", hint=INSTALL_CORE)
    return os.path.normpath(os.path.join(spec.submodule_search_locations[0], "vec0"))


def connect(path: Path | str, *, check_same_thread: bool = False, key: Key | None = None):
    """A connection in autocommit mode (strata issues BEGIN itself), WAL, sqlite-vec loaded;
    sealed with KEY, or with the key its file or home asks for."""
    mod = sqlite_module()
    try:
        if str(path) != ":memory:":
            key = key or _key_to_open(path)
            _create_private(Path(path))
        if key is not None:
            conn = cipher.open_keyed(str(path), key, check_same_thread=check_same_thread,
                                     timeout=BUSY_TIMEOUT_MS / 1000)
        else:
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


def row_class(conn) -> type:
    """The Row type of the module that made CONN (sqlite3's Row refuses another driver's cursor)."""
    return sys.modules[type(conn).__module__.partition(".")[0]].Row
