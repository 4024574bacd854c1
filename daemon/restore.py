"""`strata backup --restore`: put a backup back as the home's database, keeping the current one."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .errors import Conflict, InvalidInput
from .home import Home
from .phases.lock import holder
from .storage import driver


def _check_backup(source: Path) -> None:
    if not source.is_file():
        raise InvalidInput(f"no file at {source}", hint="backups are in state/backups/ (strata backup makes one)")
    try:
        conn = driver.sqlite_module().connect(f"file:{source}?mode=ro", uri=True)
        try:
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            conn.execute("SELECT id FROM _migrations").fetchall()
        finally:
            conn.close()
    except driver.driver_errors() as e:
        raise InvalidInput(f"{source} is not a strata database ({e})", hint="nothing was changed") from None
    if not ok:
        raise InvalidInput(f"{source} fails SQLite's integrity check", hint="choose an older backup; nothing was changed")


def _reserve(folder: Path, stem: str) -> Path:
    """A new empty 0600 file `stem.db` in `folder`, or `stem-2.db`, `stem-3.db`... if taken:
    two restores in one second must not write the second's kept copy over the first's, which
    may be the very file being restored."""
    for n in range(1, 1000):
        path = folder / (f"{stem}.db" if n == 1 else f"{stem}-{n}.db")
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return path
        except FileExistsError:
            continue
    raise Conflict(f"{folder} holds 999 files named {stem}*", hint="remove old ones, then restore again")


def restore(home: Home, source: Path) -> dict:
    """Replace the database with the backup at `source`. Refused while a daemon runs on the
    home; the database it replaces is kept in state/backups/ first."""
    pid = holder(home.state_dir / "daemon.lock")
    if pid is not None:
        raise Conflict(f"the daemon (pid {pid}) runs on this home",
                       hint="stop it first (systemctl --user stop strata, or Ctrl-C), restore, then start it")
    source = source.expanduser().resolve()
    _check_backup(source)
    if source == home.db_path.resolve():
        raise InvalidInput("that is the database itself", hint="name a file in state/backups/")
    kept = None
    if home.db_path.exists():
        folder = home.state_dir / "backups"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        kept = _reserve(folder, f"before-restore-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
        driver.copy(home.db_path, kept)
    driver.copy(source, home.db_path)
    return {"restored_from": str(source), "database": str(home.db_path), "bytes": home.db_path.stat().st_size,
            "previous_kept_as": None if kept is None else str(kept)}
