"""Migration 29: identifiers in fact keys."""

from __future__ import annotations

import re
import unicodedata

NAME = "identifiers in fact keys"

# The key rules as of this migration (facts/keys.py then), written out so that they stay what
# they were: before it, every `_` or `-` became a space (`db-01` the key `db 01`); from it, one
# before a digit keeps the identifier whole (`db-01`, `node_2` as `node-2`).
_OLD = re.compile(r"[\s_\-]+")
_NEW = re.compile(r"(?P<joins>(?<=\w)[_\-]+(?=\d))|[\s_\-]+")


def _folded(label: str) -> str:
    return unicodedata.normalize("NFKC", label).casefold()


def _old(label: str) -> str:
    return _OLD.sub(" ", _folded(label)).strip()


def _new(label: str) -> str:
    return _NEW.sub(lambda m: "-" if m["joins"] else " ", _folded(label)).strip()


def _renamed(node: str, names: dict[str, str]) -> str:
    return names.get(node, node)


def up(conn) -> None:
    # A key is renamed only where it was made from its label by the old rule (a key captured
    # from a statement, `dana whitfield.email`, was not), and never onto a key in use.
    names: dict[str, dict[str, str]] = {}
    taken = {(agent, key) for agent, key in conn.execute("SELECT agent, key FROM facts")}
    for fid, agent, key, label in conn.execute("SELECT id, agent, key, label FROM facts").fetchall():
        new = _new(label)
        if key != _old(label) or new == key or (agent, new) in taken:
            continue
        conn.execute("UPDATE facts SET key = ? WHERE id = ?", (new, fid))
        taken.add((agent, new))
        names.setdefault(agent, {})[f"fact:{key}"] = f"fact:{new}"
    for agent, nodes in names.items():
        _rename_nodes(conn, agent, nodes)


def _rename_nodes(conn, agent: str, nodes: dict[str, str]) -> None:
    """The spiderweb's names of the renamed facts: edges (ends kept in order), links, the working set."""
    marks = ",".join("?" * len(nodes))
    old = list(nodes)
    edges = conn.execute(f"SELECT a, b, level, activations, created_at, last_at FROM web_edges WHERE agent = ? "
                         f"AND (a IN ({marks}) OR b IN ({marks}))", (agent, *old, *old)).fetchall()
    conn.execute(f"DELETE FROM web_edges WHERE agent = ? AND (a IN ({marks}) OR b IN ({marks}))", (agent, *old, *old))
    for a, b, *rest in edges:
        a, b = sorted((_renamed(a, nodes), _renamed(b, nodes)))
        conn.execute("INSERT OR IGNORE INTO web_edges (agent, a, b, level, activations, created_at, last_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", (agent, a, b, *rest))
    for column in ("src", "dst"):
        for before, after in nodes.items():
            conn.execute(f"UPDATE OR IGNORE web_links SET {column} = ? WHERE agent = ? AND {column} = ?",
                         (after, agent, before))
    for before, after in nodes.items():
        conn.execute("UPDATE OR IGNORE web_context SET node = ? WHERE agent = ? AND node = ?", (after, agent, before))
