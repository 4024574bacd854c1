"""Where a sealed home's key comes from. The key is never kept in the home: it is read from
STRATA_KEY, from a systemd credential named strata-key ($CREDENTIALS_DIRECTORY, given by the
unit's LoadCredential= or LoadCredentialEncrypted=), or from the file store.key_file names, in
that order. A key is 64 hex digits (what strata writes: used as the cipher key itself, so
opening costs nothing) or a passphrase (stretched by the cipher at every opening, 0.2 s here)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from strata_daemon.base import bounded
from strata_daemon.errors import ConfigError

ENV_VAR = "STRATA_KEY"
CREDENTIAL = "strata-key"
_HEX = re.compile(r"[0-9a-fA-F]{64}")
_LIMIT = 4096  # a key file is one line; a larger file is the wrong file


@dataclass(frozen=True)
class Key:
    secret: str = field(repr=False)  # a key must not reach a log or a traceback's locals
    source: str = ""  # where it was read, for doctor and for errors (never the key itself)

    @property
    def raw(self) -> bool:
        return bool(_HEX.fullmatch(self.secret))

    def pragma(self) -> str:
        """The value of SQLCipher's PRAGMA key: a raw key as x'HEX', a passphrase quoted."""
        if self.raw:
            return f"\"x'{self.secret.lower()}'\""
        return "'" + self.secret.replace("'", "''") + "'"


def new_secret() -> str:
    return secrets.token_hex(32)


def read_key_file(path: Path, what: str) -> str:
    # bounded: a key file swapped for a FIFO or a device must not hang or flood the opening
    text = bounded.read_text(path, _LIMIT, error=ConfigError,
                             hint=f"{what} holds one line: 64 hex digits or a passphrase, readable by the "
                                  "user strata runs as")
    if text is None:
        raise ConfigError(f"{what} {path} does not exist",
                          hint="restore it from where you keep its copy; without it the sealed home cannot be "
                               "opened")
    text = text.strip()
    if not text:
        raise ConfigError(f"{what} {path} is empty", hint="a key is 64 hex digits or a passphrase")
    return text


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def key_file_problem(path: Path, home_root: Path) -> str | None:
    """Why this file may not hold a home's key: inside the home (a copy of the home would carry
    its key), or readable by others."""
    if _inside(path, home_root):
        return f"the key file {path} is inside the home it opens; keep it outside (a copy of the home would carry it)"
    try:
        if path.stat().st_mode & 0o077:
            return f"the key file {path} can be read by other users; `chmod 600 {path}`"
    except OSError:
        pass
    return None


def home_key(root: Path, key_file: str) -> Key | None:
    """The key of the home at ROOT, from the first source that gives one; None when none does."""
    env = os.environ.get(ENV_VAR)
    if env is not None:
        if not env.strip():
            raise ConfigError(f"{ENV_VAR} is set but empty", hint="unset it, or set it to the home's key")
        return Key(env.strip(), f"the environment ({ENV_VAR})")
    creds = os.environ.get("CREDENTIALS_DIRECTORY")
    if creds and (Path(creds) / CREDENTIAL).is_file():
        path = Path(creds) / CREDENTIAL
        return Key(read_key_file(path, "the systemd credential"), f"the systemd credential {CREDENTIAL}")
    if key_file:
        path = Path(key_file).expanduser()
        bad = key_file_problem(path, root)
        if bad and path.exists():
            raise ConfigError(bad, hint="move it (and set store.key_file to its new place), or fix its mode")
        return Key(read_key_file(path, "the key file"), f"the key file {path}")
    return None


def default_key_file(root: Path) -> Path:
    """Where `strata init --encrypt` writes a new key when none is named: the user's config
    folder, named after the home so that several homes keep apart."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]
    return base / "strata" / "keys" / f"{root.name or 'home'}-{digest}.key"


def write_key_file(path: Path, secret: str, home_root: Path) -> None:
    """Write a new key, 0600, in a folder made 0700; never over an existing file."""
    if _inside(path, home_root):
        raise ConfigError(f"the key file {path} would be inside the home it opens",
                          hint="name a place outside the home with --key-file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConfigError(f"{path} exists already; strata does not write a key over a file",
                          hint="name another path with --key-file, or move that file away") from None
    except OSError as e:
        raise ConfigError(f"cannot write the key file {path}: {e.strerror or e}",
                          hint="name a writable place with --key-file") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secret + "\n")


_LINE = re.compile(r"^\s*#?\s*store\.key_file\s*=.*$")


def record_key_file(config_path: Path, key_file: str) -> None:
    """Set store.key_file in strata.toml (empty: comment it out), keeping every other line: the
    setting's line is replaced where it is, or added before the file's first table."""
    from strata_daemon.config.load import load_config

    before = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    lines = before.splitlines()
    tables = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    new = f"store.key_file = {json.dumps(key_file)}" if key_file else '# store.key_file = ""'
    found = [i for i in range(tables) if _LINE.match(lines[i])]
    live = [i for i in found if not lines[i].lstrip().startswith("#")]
    at = (live or found or [None])[0]
    if at is None:
        lines.insert(tables, new)
    else:
        lines[at] = new
    fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    try:
        load_config(config_path)
    except ConfigError as e:
        config_path.write_text(before, encoding="utf-8")
        raise ConfigError(f"could not set store.key_file in {config_path} ({e.message})",
                          hint=f'set it by hand: store.key_file = {json.dumps(key_file)}') from None
