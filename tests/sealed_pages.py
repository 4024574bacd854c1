"""A sealed file's pages in the clear, read with the cipher's own layout (SQLCipher 4 defaults:
4,096-byte pages, each ending in a 16-byte IV and a 64-byte HMAC, AES-256-CBC under the raw key;
page 1 starts with the 16-byte salt). The tests byte-search them as they byte-search a plain
file: every page, free pages and WAL frames included, not only the rows SQL still reaches."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

PAGE, RESERVE, SALT = 4096, 80, 16
WAL_HEADER, FRAME_HEADER = 32, 24


def _page(data: bytes, key: bytes, first: bool) -> bytes:
    if len(data) < PAGE:
        return b""
    start = SALT if first else 0
    iv = data[PAGE - RESERVE:PAGE - RESERVE + 16]
    body = data[start:PAGE - RESERVE]
    dec = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    return dec.update(body) + dec.finalize()


def clear_pages(path: Path, key_hex: str) -> bytes:
    """Every page of the sealed database or WAL file at PATH, decrypted."""
    raw, key = path.read_bytes(), bytes.fromhex(key_hex)
    if path.name.endswith("-wal"):
        step = FRAME_HEADER + PAGE
        return b"".join(_page(raw[i + FRAME_HEADER:i + step], key, False)
                        for i in range(WAL_HEADER, len(raw) - step + 1, step))
    return b"".join(_page(raw[i:i + PAGE], key, i == 0) for i in range(0, len(raw), PAGE))


def readable(path: Path) -> bytes:
    """What a byte search of PATH should look at: its bytes, and when it is sealed (with the
    suite's STRATA_KEY) its pages in the clear too."""
    raw = path.read_bytes()
    key = os.environ.get("STRATA_KEY")
    name = path.name.removesuffix("-wal")
    sealed = key and (path.name.endswith("-wal") or raw[:16] != b"SQLite format 3\x00") and name.endswith(".db")
    return raw + clear_pages(path, key) if sealed and raw else raw
