"""Sealing a home: `strata init --encrypt`, `strata encrypt`, `strata rekey` and `strata decrypt`.
The database and every backup in state/backups/ are written again under the new key (or none)
while nothing else has the file open; the key itself stays outside the home."""

from __future__ import annotations

import os
import time
from pathlib import Path

from strata_daemon.app.phases.lock import holder
from strata_daemon.config import sealing
from strata_daemon.config.home import Home
from strata_daemon.config.sealing import Key
from strata_daemon.errors import ConfigError, Conflict, InvalidInput
from strata_daemon.store import cipher, driver, users

DOCS = "docs/sealing.md"


def _configured(home: Home) -> str:
    return home.config()["store.key_file"]


def status(home: Home) -> dict:
    """Whether the home's database is sealed, and where its key comes from (never the key)."""
    db, key_file = home.db_path, _configured(home)
    sealed = cipher.is_sealed(db)
    out = {"sealed": sealed, "database": str(db), "key_source": None, "key_file": key_file or None,
           "problem": None}
    try:
        key = sealing.home_key(home.root, key_file)
    except ConfigError as e:  # a missing or unreadable key: what doctor reports
        out["problem"] = e.message
        return out
    out["key_source"] = key.source if key else None
    if sealed and key is None:
        out["problem"] = "the database is sealed and no key for it is given"
    return out


def _refuse_busy(home: Home, doing: str) -> None:
    if home.config()["store.url"]:
        raise InvalidInput("this home keeps its memories on a PostgreSQL server, which strata does not seal",
                           hint=f"use the server's own encryption (disk encryption, TLS); {DOCS}#postgresql")
    pid = holder(home.state_dir / "daemon.lock")
    if pid is not None:
        raise Conflict(f"the daemon (pid {pid}) runs on this home",
                       hint=f"stop it first (systemctl --user stop strata, or Ctrl-C), {doing}, then start it")


def _new_key(home: Home, key_file: str | None, *, fallback: Path) -> tuple[Key, Path | None, bool]:
    """The key to seal with: from KEY_FILE when it exists (a key a person brings), else a new
    one written there (or at FALLBACK). Returns (key, its file, whether strata wrote it)."""
    path = Path(key_file).expanduser().absolute() if key_file else fallback
    if path.exists():
        bad = sealing.key_file_problem(path, home.root)
        if bad:
            raise InvalidInput(bad, hint="keep the key outside the home, readable by its owner alone")
        return Key(sealing.read_key_file(path, "the key file"), f"the key file {path}"), path, False
    sealing.write_key_file(path, sealing.new_secret(), home.root)
    return Key(sealing.read_key_file(path, "the key file"), f"the key file {path}"), path, True


def _reseal_all(home: Home, old: Key | None, key: Key | None, doing: str) -> dict:
    files = [home.db_path] if home.db_path.exists() else []
    folder = home.state_dir / "backups"
    if folder.is_dir():
        files += sorted(p for p in folder.glob("*.db") if p.is_file())
    started = time.perf_counter()
    alone = users.exclusive(home.db_path, doing)
    try:
        changed = [p for p in files if driver.reseal(p, old, key)]
    finally:
        os.close(alone)
    return {"files": [str(p) for p in changed], "seconds": round(time.perf_counter() - started, 3)}


def seal(home: Home, key_file: str | None = None) -> dict:
    """Seal a plain home (a new one too): the key from STRATA_KEY or the systemd credential when
    one is given, else from KEY_FILE (written there when missing, at a place in the user's
    config folder when not named); store.key_file then names it."""
    _refuse_busy(home, "seal it")
    if cipher.is_sealed(home.db_path):
        raise InvalidInput(f"the home at {home.root} is sealed already",
                           hint="`strata rekey` changes its key; `strata decrypt` unseals it")
    given = sealing.home_key(home.root, "") if key_file is None else None
    key_file = key_file or _configured(home) or None  # a key file named in strata.toml already
    if given is not None:
        key, path, wrote = given, None, False
    else:
        key, path, wrote = _new_key(home, key_file, fallback=sealing.default_key_file(home.root))
    done = _reseal_all(home, None, key, "seal it")
    if path is not None:
        sealing.record_key_file(home.config_path, str(path))
    return {"sealed": True, "key_source": key.source, "key_file": str(path) if path else None,
            "key_written": wrote, **done}


def _sealed_key(home: Home, doing: str, plain_hint: str) -> Key:
    """The key a sealed home opens with now, before DOING; refused on a plain home or a busy one."""
    _refuse_busy(home, doing)
    if not cipher.is_sealed(home.db_path):
        raise InvalidInput(f"the home at {home.root} is not sealed", hint=plain_hint)
    old = cipher.key_for(home.db_path)
    if old is None:
        raise cipher.missing_key(home.db_path)
    return old


def rekey(home: Home, key_file: str | None = None) -> dict:
    """Seal a sealed home again under a new key: KEY_FILE's (written there when missing), or a
    new file beside the current one. The old key file is left for the person to remove."""
    old = _sealed_key(home, "change its key", "`strata encrypt` seals it")
    current = _configured(home)
    base = Path(current).expanduser() if current else sealing.default_key_file(home.root)
    fallback = base.with_name(f"{base.stem}-{time.strftime('%Y%m%d-%H%M%S')}.key")
    key, path, wrote = _new_key(home, key_file, fallback=fallback)
    if key.secret == old.secret:
        raise InvalidInput(f"{path} holds the key the home is sealed with already", hint="name a new file")
    done = _reseal_all(home, old, key, "change its key")
    sealing.record_key_file(home.config_path, str(path))
    out = {"sealed": True, "key_source": key.source, "key_file": str(path), "key_written": wrote,
           "old_key_source": old.source, **done}
    if not old.source.startswith("the key file"):
        out["warning"] = f"the key still comes first from {old.source}: give the new one there"
    return out


def unseal(home: Home) -> dict:
    """Write the home's database and backups in the clear again; store.key_file is cleared."""
    old = _sealed_key(home, "unseal it", "nothing to do")
    done = _reseal_all(home, old, None, "unseal it")
    sealing.record_key_file(home.config_path, "")
    return {"sealed": False, **done}


def export_key(home: Home) -> Key | None:
    """The key a sealed home's exports are sealed with (its own); None for a plain home."""
    return cipher.key_for(home.db_path) if cipher.is_sealed(home.db_path) else None


def import_key(home: Home, key_file: str | None) -> Key:
    """The key a sealed export is read with: KEY_FILE's, else the home's."""
    if key_file:
        path = Path(key_file).expanduser()
        return Key(sealing.read_key_file(path, "the key file"), f"the key file {path}")
    key = cipher.key_for(home.db_path)
    if key is None:
        raise InvalidInput("the export is sealed and this home has no key to open it",
                           hint="name the key of the home that wrote it: strata import FILE --key-file PATH")
    return key
