"""A sealed home's exports: the JSON Lines encrypted with AES-256-GCM under a key stretched
from the home's (scrypt, with a salt of the file's own), in frames of up to 1 MiB. Each frame's
number, and whether it is the last, is bound into its tag: a file cut short, reordered or
changed fails to read instead of importing part of itself."""

from __future__ import annotations

import hashlib
import os
from typing import BinaryIO

MAGIC = b"strata sealed export 1\n"
_SALT = 16
_NONCE = 12
_FRAME = 1 << 20
_TAG = 16


class SealedExportError(Exception):
    """The file is not a sealed export this key opens, or it was cut short or changed."""


def _aead(secret: str, salt: bytes):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(hashlib.scrypt(secret.encode("utf-8"), salt=salt, n=2**14, r=8, p=1, dklen=32))


def _bound(header: bytes, number: int, last: bool) -> bytes:
    return header + number.to_bytes(8, "big") + (b"\x01" if last else b"\x00")


def is_sealed_export(head: bytes) -> bool:
    return head.startswith(MAGIC)


class SealedWriter:
    """A text stream's write() and close() over a binary file, sealing what is written."""

    def __init__(self, raw: BinaryIO, secret: str) -> None:
        salt = os.urandom(_SALT)
        self._raw, self._aead, self._header = raw, _aead(secret, salt), MAGIC + salt
        self._buffer, self._number = bytearray(), 0
        raw.write(self._header)

    def write(self, text: str) -> int:
        self._buffer += text.encode("utf-8")
        while len(self._buffer) >= _FRAME:
            self._frame(bytes(self._buffer[:_FRAME]), last=False)
            del self._buffer[:_FRAME]
        return len(text)

    def _frame(self, plain: bytes, *, last: bool) -> None:
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, plain, _bound(self._header, self._number, last))
        self._raw.write(len(sealed).to_bytes(4, "big") + nonce + sealed)
        self._number += 1

    def close(self) -> None:
        """Seal what is left as the last frame (an export must end with one to be read)."""
        self._frame(bytes(self._buffer), last=True)
        self._buffer.clear()
        self._raw.flush()


class SealedReader:
    """readline() over a sealed export, one frame opened at a time."""

    def __init__(self, raw: BinaryIO, secret: str) -> None:
        head = raw.read(len(MAGIC) + _SALT)
        if not is_sealed_export(head) or len(head) < len(MAGIC) + _SALT:
            raise SealedExportError("not a sealed strata export")
        self._raw, self._aead, self._header = raw, _aead(secret, head[len(MAGIC):]), head
        self._plain, self._number, self._done = b"", 0, False

    def again(self, raw: BinaryIO) -> "SealedReader":
        """A reader of the same export from its start on RAW (the file again, or a copy of a
        pipe's bytes), with the key already stretched."""
        other = object.__new__(SealedReader)
        head = raw.read(len(self._header))
        if head != self._header:
            raise SealedExportError("the export changed while it was read")
        other._raw, other._aead, other._header = raw, self._aead, head
        other._plain, other._number, other._done = b"", 0, False
        return other

    def _next_frame(self) -> bool:
        size = self._raw.read(4)
        if len(size) < 4:
            raise SealedExportError("the export is cut short (its last part is missing)")
        length = int.from_bytes(size, "big")
        if length > _FRAME + _TAG:
            raise SealedExportError("the export is damaged (a part is larger than any strata writes)")
        nonce, sealed = self._raw.read(_NONCE), self._raw.read(length)
        if len(nonce) < _NONCE or len(sealed) < length:
            raise SealedExportError("the export is cut short")
        from cryptography.exceptions import InvalidTag

        for last in (False, True):
            try:
                self._plain += self._aead.decrypt(nonce, sealed, _bound(self._header, self._number, last))
            except InvalidTag:
                continue
            self._number += 1
            self._done = last
            return True
        raise SealedExportError("this key does not open the export, or the export was changed")

    def readline(self, size: int = -1, /) -> bytes:
        while b"\n" not in self._plain and not self._done:
            self._next_frame()
        cut = self._plain.find(b"\n") + 1 or len(self._plain)
        if size >= 0:
            cut = min(cut, size)
        line, self._plain = self._plain[:cut], self._plain[cut:]
        if not line and self._done and self._raw.read(1):
            raise SealedExportError("the export has bytes after its last part: it was changed")
        return line
