"""Spiderweb nodes as the database names them: any item, `kind:id`. Pure: no I/O.

- `episode:12` a memory;
- `fact:bridge` a fact, by its normalised key;
- `entity:host:gw-02` an entity, by its type and value.

Reading what a person or an agent wrote as one of these names (a bare `12`, `fact:Bridge`) is
strata_daemon.graph.nodes.parse: it normalises fact keys, which the store knows nothing of.
"""

from __future__ import annotations

KINDS = ("episode", "fact", "entity")


def kind_of(node: str) -> str:
    return node.split(":", 1)[0]


def episode_id(node: str) -> int | None:
    return int(node[8:]) if node.startswith("episode:") else None
