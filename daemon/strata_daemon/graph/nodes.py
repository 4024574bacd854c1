"""Spiderweb nodes as a user or agent names them, made the names the store keeps
(strata_daemon.store.nodes). Pure: no I/O.

- `episode:12` a memory (a bare `12` means the same);
- `fact:bridge` a fact, by its normalised key (`fact:Bridge` names the same node);
- `entity:host:gw-02` an entity, by its type and value.
"""

from __future__ import annotations

from typing import Any

from strata_daemon.errors import InvalidInput
from strata_daemon.facts.keys import normalise_key
from strata_daemon.store.nodes import KINDS

MAX_NODE_CHARS = 300


def parse(raw: Any) -> str:
    """The canonical name of a node as a user or agent wrote it."""
    if isinstance(raw, bool):
        raise InvalidInput(f"{raw!r} is not an item")
    if isinstance(raw, int):
        raw = str(raw)
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInput("an item is empty", hint="name it as episode:ID, fact:KEY or entity:TYPE:VALUE")
    text = raw.strip()
    if text.isascii() and text.isdigit():
        text = f"episode:{text}"
    kind, sep, ident = text.partition(":")
    kind = kind.lower()
    if not sep or kind not in KINDS or not ident.strip():
        raise InvalidInput(f"{raw!r} is not an item", hint="name it as episode:ID, fact:KEY or entity:TYPE:VALUE")
    if kind == "episode":
        if not (ident.isascii() and ident.isdigit()) or not 0 < int(ident) < 2**63:
            raise InvalidInput(f"{raw!r}: an episode id is a positive whole number below 2^63")
        name = f"episode:{int(ident)}"
    elif kind == "fact":
        name = f"fact:{normalise_key(ident)}"
    else:
        etype, sep2, value = ident.partition(":")
        if not sep2 or not etype.strip() or not value.strip():
            raise InvalidInput(f"{raw!r}: an entity is entity:TYPE:VALUE")
        name = f"entity:{etype.strip().lower()}:{value.strip()}"
    if len(name) > MAX_NODE_CHARS or any(ord(ch) < 32 for ch in name):
        raise InvalidInput(f"{raw!r} is too long or holds control characters")
    return name
