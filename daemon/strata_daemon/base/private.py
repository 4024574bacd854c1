"""Files only this user may read: 0600, in folders 0700, replaced in one rename so that a
reader never sees half of one."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def private_folder(path: Path, top: Path) -> None:
    """PATH and every folder between TOP and it, made 0700 (mkdir's mode leaves a folder made
    on the way as the umask says)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = path
    while folder != top and top in folder.parents:
        os.chmod(folder, 0o700)
        folder = folder.parent


def write_private(path: Path, text: str) -> None:
    """Replace PATH with TEXT (0600) in one rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def redaction_key(state_dir: Path) -> bytes:
    """The key of the hashes that end redaction placeholders (state/redaction.key, 0600): made
    once, on first need, whole before it has its name (a link), so that two processes starting
    together read one key. A home that cannot be written (read-only, or not laid out yet) gets
    no key, and its hashes are plain."""
    path = state_dir / "redaction.key"
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return b""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process named its key first: that one holds
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return b""
    finally:
        tmp.unlink(missing_ok=True)
