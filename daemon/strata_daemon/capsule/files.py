"""Reading and replacing the capsule file: atomic (temporary file, fsync, rename), private
(0600), and only over the text that was read. Blocking (call from a thread), except the
render lock."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import secrets
import time
from pathlib import Path

from strata_daemon.base import bounded
from strata_daemon.errors import InvalidInput


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextlib.asynccontextmanager
async def exclusive(lock_path: Path):
    """One render of a capsule at a time across processes (an advisory lock on a file of its
    own): renders that met each other's writes retried until they gave up. A person's editor
    takes no lock; the merge on write still covers it."""
    lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


LIMIT = bounded.MIB  # a capsule within its 300-line budget is a few KiB
UNREADABLE_HINT = ("put a text file there: `strata capsule show --last-good` prints strata's newest render, "
                   "or move the path away and `strata capsule render` writes one")


BOM = "\ufeff"  # some editors (Notepad, some IDEs' defaults) start a UTF-8 file with one


def read(path: Path) -> str | None:
    """The capsule's text, without a byte-order mark; None when there is no file. A folder, a
    device, a file that is not UTF-8 or is over LIMIT is an InvalidInput naming the problem, as
    is a link to a file that holds no capsule block: every face serves the capsule to the agent,
    and a link to any readable file (`/etc/passwd`) would hand it that file."""
    text = bounded.read_text(path, LIMIT, hint=UNREADABLE_HINT)
    if text is not None and text.strip() and path.is_symlink() and "<!-- strata:begin " not in text:
        raise InvalidInput(f"{path} links to {path.resolve()}, which holds no capsule block",
                           hint="point the link at a capsule strata has rendered into (or an empty file), or "
                                "remove the link: `strata capsule render` writes a capsule there")
    return None if text is None else text.removeprefix(BOM)


def _text_of(f) -> str | None:
    if f is None:
        return None
    f.seek(0)
    return f.read().decode("utf-8").removeprefix(BOM)


def _target(path: Path) -> Path:
    """Where a write of PATH lands: a link's file when the capsule is a link to one (a capsule
    kept in a repository of notes stays a link, and its file is what changes)."""
    if path.is_symlink():
        target = path.resolve()
        if target.is_file():
            return target
    return path


def replace_if_unchanged(path: Path, expected: str | None, text: str) -> bool:
    """Write `text` over the file if it still holds `expected` (None: does not exist yet).
    False when it changed since it was read: the caller reads it again and merges.

    An edit saved in place in the microseconds between the last check and the rename lands in
    the file being replaced; that file is read again after the rename and such an edit is put
    back (False again). An editor renaming its own file over the capsule in that window can
    still lose to strata's rename: nothing closes that without a lock editors would take."""
    path = _target(path)
    if read(path) != expected:
        return False
    # A name of its own per write: a render and the watcher's render may write at once in one
    # process, and a shared name let one rename or remove the other's file.
    tmp = path.with_name(f".{path.name}.strata-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        with contextlib.ExitStack() as stack:
            try:
                replaced = stack.enter_context(open(path, "rb"))  # readable after the rename too
            except FileNotFoundError:
                replaced = None
            if _text_of(replaced) != expected:
                os.unlink(tmp)
                return False
            os.replace(tmp, path)
            late = _text_of(replaced)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    if late != expected:  # saved in place inside the window: put it back for the caller to merge
        replace_if_unchanged(path, text, late)
        return False
    return True


def overwrite(path: Path, text: str) -> None:
    """Write TEXT over the file in place (a kept render a purge redacts): the old bytes are
    overwritten where they lie rather than left in blocks a new file's rename frees."""
    with open(path, "r+b") as f:
        old = len(f.read())
        data = text.encode("utf-8")
        f.seek(0)
        f.write(data + b"\0" * max(0, old - len(data)))
        f.flush()
        os.fsync(f.fileno())
        f.truncate(len(data))
        os.fsync(f.fileno())


def keep_version(folder: Path, text: str, keep: int) -> Path:
    """Save a copy of a render in `folder` and keep only the newest `keep`."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    ns = time.time_ns()  # one reading: a second that turned between two would misorder the names
    path = folder / f"CAPSULE-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(ns // 10**9))}-{ns % 10**9:09d}.md"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(text.encode("utf-8"))
    for old in sorted(folder.glob("CAPSULE-*.md"))[:-keep] if keep > 0 else sorted(folder.glob("CAPSULE-*.md")):
        old.unlink()
    return path
