"""Files only this user may read: 0600, in folders 0700, replaced in one rename so that a
reader never sees half of one."""

from __future__ import annotations

import os
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
