"""`strata backup --restore`: put a backup back as the home's database, keeping the current one."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import Conflict, InvalidInput
from .home import Home
from .phases.lock import holder
from .storage import copies, driver, users


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


def restore(home: Home, source: Path) -> dict:
    """Replace the database with the backup at `source`. Refused while a daemon runs on the
    home or any process has the database open; the database it replaces is kept in
    state/backups/ first."""
    pid = holder(home.state_dir / "daemon.lock")
    if pid is not None:
        raise Conflict(f"the daemon (pid {pid}) runs on this home",
                       hint="stop it first (systemctl --user stop strata, or Ctrl-C), restore, then start it")
    source = source.expanduser().resolve()
    _check_backup(source)
    if source == home.db_path.resolve():
        raise InvalidInput("that is the database itself", hint="name a file in state/backups/")
    alone = users.exclusive(home.db_path)
    try:
        kept = None
        if home.db_path.exists():
            try:
                kept = copies.keep_copy(home.db_path, home.state_dir / "backups", "before-restore")
            except driver.driver_errors():
                # Damaged (the case `strata doctor` sends people here for): SQLite cannot read
                # it, so its files are kept as they are and removed, and the backup copied in.
                kept = copies.keep_copy(home.db_path, home.state_dir / "backups", "before-restore-damaged",
                                        raw=True)
                for suffix in ("", "-wal", "-shm"):
                    home.db_path.with_name(home.db_path.name + suffix).unlink(missing_ok=True)
        driver.copy(source, home.db_path)
    finally:
        os.close(alone)
    return {"restored_from": str(source), "database": str(home.db_path), "bytes": home.db_path.stat().st_size,
            "previous_kept_as": None if kept is None else str(kept)}
