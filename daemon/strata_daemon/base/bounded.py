"""Reading what a user hands strata without trusting its size: a file, a symlink to a device,
a pipe. Every read stops one byte past its limit, before it allocates more, and says what was
wrong in words a person can act on."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from strata_daemon.errors import InvalidInput, StrataError

KIB, MIB = 1024, 1024 * 1024


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n // KIB} KiB" if n >= KIB else f"{n} bytes"


def read_bytes(path: Path, limit: int, *, error: type[StrataError] = InvalidInput, hint: str | None = None
               ) -> bytes | None:
    """The file's bytes, or None when nothing is at `path`. A folder, a device, a pipe or
    socket, or a file over `limit` bytes is refused with `error`."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{path} is a folder, not a file", hint=hint)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{path} is not a regular file (a device, pipe or socket)", hint=hint)
        if st.st_size > limit:
            raise error(f"{path} is {st.st_size:,} bytes, more than the {_size(limit)} strata reads", hint=hint)
        # O_NONBLOCK: a file swapped for a pipe after the check must not hang the read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise error(f"cannot read {path}: {e.strerror or e}", hint=hint) from None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:  # a file of the kernel's (/proc/self/mem) that gives no bytes to read
            raise error(f"cannot read {path}: {e.strerror or e}", hint=hint) from None
    if len(data) > limit:
        raise error(f"{path} is more than the {_size(limit)} strata reads", hint=hint)
    return data


def read_text(path: Path, limit: int, *, error: type[StrataError] = InvalidInput, hint: str | None = None
              ) -> str | None:
    """read_bytes, decoded as UTF-8 (a byte that is not is named by its offset)."""
    data = read_bytes(path, limit, error=error, hint=hint)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{path} is not UTF-8 text (byte {e.start} is not)", hint=hint) from None


def read_stream(stream: BinaryIO, limit: int, *, what: str = "the input",
                error: type[StrataError] = InvalidInput, hint: str | None = None) -> bytes:
    """Everything a stream holds up to `limit` bytes; more is refused before it is read."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise error(f"{what} is more than the {_size(limit)} allowed", hint=hint)
    return data
