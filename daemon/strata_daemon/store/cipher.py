"""Sealed database files: a home's SQLite file encrypted whole by SQLCipher (every page, the
WAL, the backups made from it), through the sqlcipher3 package that store/driver.py opens every
file with. Whether a file is sealed is read from its first bytes, not from a setting, so a
sealed file is never opened as a new one. A file's key is its home's (config/sealing.py says
where it comes from); a new file in a sealed home is sealed with it, so a backup never holds
the words in the clear."""

from __future__ import annotations

import os

from pathlib import Path
from types import ModuleType

from strata_daemon.config.load import load_config
from strata_daemon.config.sealing import ENV_VAR, Key, home_key
from strata_daemon.errors import INSTALL_CORE, StorageError

PLAIN_HEADER = b"SQLite format 3\x00"
DB_NAME = "memory.db"


def module() -> ModuleType:
    try:
        import sqlcipher3
    except ImportError:
        raise StorageError("this home is sealed and the package that opens sealed files (sqlcipher3-wheels) "
                           "is not installed", hint=INSTALL_CORE) from None
    return sqlcipher3


def is_sealed(path: Path | str) -> bool:
    """Whether the file at PATH is a sealed database: one whose first bytes are not SQLite's
    header, made of whole pages (a multiple of 512 bytes: a text file given by mistake is not
    one). A missing or empty file is neither yet."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(PLAIN_HEADER))
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return False
    return len(head) == len(PLAIN_HEADER) and head != PLAIN_HEADER and size % 512 == 0


def home_of(path: Path | str) -> Path | None:
    """The home a database file belongs to (state/memory.db, state/backups/NAME.db), if any."""
    for parent in list(Path(path).absolute().parents)[:3]:
        if (parent / "strata.toml").is_file():
            return parent
    return None


def _configured(root: Path) -> Key | None:
    return home_key(root, load_config(root / "strata.toml")["store.key_file"])


def key_for(path: Path | str) -> Key | None:
    """The key a file at PATH opens with: its home's, or STRATA_KEY's for a file in no home."""
    root = home_of(path)
    if root is not None:
        return _configured(root)
    return home_key(Path("/"), "")


def key_for_new(path: Path | str) -> Key | None:
    """The key a new file at PATH is sealed with: its home's key when the home is sealed (its
    database sealed or not made yet); None in a plain home or in none."""
    root = home_of(path)
    key = _configured(root) if root is not None else None
    if key is None:
        return None
    db = root / "state" / DB_NAME
    if Path(path).absolute() == db.absolute() or not db.exists() or is_sealed(db):
        return key
    return None


def missing_key(path: Path | str) -> StorageError:
    # Without a key, a sealed file and a damaged one look alike: both are named.
    return StorageError(f"{path} is not a plain SQLite file: sealed, with no key for it given, or damaged",
                        hint=f"give the home's key (store.key_file in strata.toml, {ENV_VAR}, or the systemd "
                             "credential strata-key: docs/sealing.md); if it is damaged, restore a backup "
                             "(strata backup --list)")


def open_keyed(target: str, key: Key, *, uri: bool = False, check_same_thread: bool = False, timeout: float = 5.0):
    """A sqlcipher3 connection with KEY set, checked: a wrong key is an error here, never a
    database that fails later or a new one."""
    mod = module()
    conn = mod.connect(target, uri=uri, isolation_level=None, check_same_thread=check_same_thread, timeout=timeout)
    try:
        conn.execute("PRAGMA cipher_log_level = NONE")  # its own stderr lines say less than our error
        conn.execute(f"PRAGMA key = {key.pragma()}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except mod.DatabaseError as e:
        conn.close()
        if "not a database" in str(e):
            raise StorageError(f"the key from {key.source} does not open {target.removeprefix('file:').split('?')[0]} "
                               "(or the file is damaged)",
                               hint="give the key the home was sealed with; a backup of the file opens with the "
                                    "same key") from None
        raise
    return conn


def export(source_conn, target: Path, key: Key | None) -> None:
    """Copy the open database SOURCE_CONN (a sqlcipher3 connection) into a new file TARGET,
    sealed with KEY or plain when None: SQLCipher's export, which copies across keys where the
    backup API cannot. The schema version is carried over by hand (the export leaves it out)."""
    version = source_conn.execute("PRAGMA user_version").fetchone()[0]
    pragma = key.pragma() if key is not None else "''"
    source_conn.execute(f"ATTACH DATABASE ? AS sealed_copy KEY {pragma}", (str(target),))
    try:
        source_conn.execute("SELECT sqlcipher_export('sealed_copy')").fetchone()
        source_conn.execute(f"PRAGMA sealed_copy.user_version = {int(version)}")
    finally:
        source_conn.execute("DETACH DATABASE sealed_copy")
