"""Spiderweb SQL: edges, links, entities, the working set, the decay clock. Each function runs
on the database thread; those that write run inside the caller's Database.transact. Every
statement names the namespace. Edges are read and written as stored levels: what a level
weighs, and the Hebbian rules, are the graph layer's (strata_daemon.graph.hebbian, .edges)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Callable

from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.store.nodes import episode_id, kind_of


def clock(conn, agent: str) -> float:
    row = conn.execute("SELECT web_clock FROM namespaces WHERE agent = ?", (agent,)).fetchone()
    return row[0] if row else 0.0


def edge_count(conn, agent: str) -> int:
    return conn.execute("SELECT count(*) FROM web_edges WHERE agent = ?", (agent,)).fetchone()[0]


def held(conn, agent: str, nodes: list[str]) -> dict[str, tuple[str, str] | None]:
    """Each node's (state, text), None when the namespace has no such item. State: an episode's
    own ('active', 'archived', ...), 'current' or 'retracted' for a fact, 'entity'. Text, for a
    person reading the web: a memory's, a fact's `label = value` (`(retracted)`), an entity's value."""
    out: dict[str, tuple[str, str] | None] = {n: None for n in nodes}
    ids = {episode_id(n): n for n in nodes if kind_of(n) == "episode"}
    if ids:
        marks = ", ".join("?" * len(ids))
        for i, state, content in conn.execute(
                f"SELECT id, state, content FROM episodes WHERE agent = ? AND id IN ({marks})", (agent, *ids)):
            out[ids[i]] = (state, content)
    keys = {n[5:]: n for n in nodes if kind_of(n) == "fact"}
    if keys:
        marks = ", ".join("?" * len(keys))
        for key, label, value in conn.execute(
                f"SELECT f.key, f.label, (SELECT v.value FROM fact_values v WHERE v.fact_id = f.id "
                f"ORDER BY v.valid_from DESC, v.id DESC LIMIT 1) FROM facts f WHERE f.agent = ? AND f.key IN ({marks})",
                (agent, *keys)):
            out[keys[key]] = ("retracted", f"{label} = (retracted)") if value is None else \
                ("current", f"{label} = {value}")
    ents = {tuple(n.split(":", 2)[1:]): n for n in nodes if kind_of(n) == "entity"}
    if ents:
        pairs = ", ".join("(?, ?)" for _ in ents)
        for etype, value in conn.execute(
                f"SELECT type, value FROM entities WHERE agent = ? AND (type, value) IN (VALUES {pairs})",
                (agent, *(x for pair in ents for x in pair))):
            out[ents[(etype, value)]] = ("entity", value)
    return out


def states(conn, agent: str, nodes: list[str]) -> dict[str, str | None]:
    return {n: None if h is None else h[0] for n, h in held(conn, agent, nodes).items()}


def texts(conn, agent: str, nodes: list[str]) -> dict[str, str | None]:
    return {n: None if h is None else h[1] for n, h in held(conn, agent, nodes).items()}


def require(conn, agent: str, nodes: list[str]) -> dict[str, str]:
    """The nodes' states; NotFound naming the first that the namespace does not hold."""
    found = states(conn, agent, nodes)
    for node, state in found.items():
        if state is None:
            if kind_of(node) == "entity":
                raise NotFound(f"no entity {node[7:]!r} in namespace {agent!r}")
            if kind_of(node) == "episode":  # a person calls it a memory, as `show` and `forget` do
                raise NotFound(f"no memory {node.split(':', 1)[1]} in namespace {agent!r}",
                               hint="`strata timeline` lists what this namespace holds")
            raise NotFound(f"no {kind_of(node)} {node.split(':', 1)[1]!r} in namespace {agent!r}")
    return found  # type: ignore[return-value]


def coactivate(conn, agent: str, pairs: list[tuple[str, str]], level_after: Callable[[float | None, float], float],
               now: float) -> int:
    """Co-activate each edge (a, b), a < b as stored, creating those missing: each is written at
    `level_after(its level, None when new; the decay clock)`. The arithmetic is the caller's
    (graph.hebbian.strengthened_level), passed in so that consolidation, applied by a store
    module, strengthens an edge without importing the graph layer. Returns how many edges."""
    if not pairs:
        return 0
    t = clock(conn, agent)
    held = []
    for a, b in pairs:
        row = conn.execute("SELECT level FROM web_edges WHERE agent = ? AND a = ? AND b = ?", (agent, a, b)).fetchone()
        held.append(None if row is None else row[0])
    conn.executemany(
        "INSERT INTO web_edges (agent, a, b, level, activations, created_at, last_at) VALUES (?, ?, ?, ?, 1, ?, ?) "
        "ON CONFLICT (agent, a, b) DO UPDATE SET level = excluded.level, activations = web_edges.activations + 1, "
        "last_at = excluded.last_at",
        [(agent, a, b, level_after(level, t), now, now) for (a, b), level in zip(pairs, held)])
    return len(pairs)


def context(conn, agent: str) -> list[dict]:
    return [{"node": r[0], "activated_at": r[1], "source": r[2]} for r in conn.execute(
        "SELECT node, activated_at, source FROM web_context WHERE agent = ? ORDER BY activated_at, node", (agent,))]


def last_activated(conn, agent: str) -> float | None:
    """When the working set last took an item; None when it is empty."""
    return conn.execute("SELECT max(activated_at) FROM web_context WHERE agent = ?", (agent,)).fetchone()[0]


def put_context(conn, agent: str, nodes: list[str], now: float, source: str) -> None:
    """The nodes join the working set at `now`; one already in it is activated again."""
    conn.executemany("INSERT INTO web_context (agent, node, activated_at, source) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (agent, node) DO UPDATE SET activated_at = excluded.activated_at, "
                     "source = excluded.source", [(agent, n, now, source) for n in nodes])


def drop_context(conn, agent: str, nodes: list[str]) -> None:
    conn.executemany("DELETE FROM web_context WHERE agent = ? AND node = ?", [(agent, n) for n in nodes])


def clear_context(conn, agent: str) -> None:
    conn.execute("DELETE FROM web_context WHERE agent = ?", (agent,))


def audit(conn, agent: str, action: str, data: dict, now: float, *, actor: str) -> None:
    """An audit row of the web as a whole (a commit, a decay run)."""
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                 "VALUES (?, ?, 'web', NULL, ?, ?, ?)",
                 (now, agent, action, json.dumps(data, ensure_ascii=False), actor))


def decay_clock(conn, agent: str, now: float) -> float:
    """The namespace's decay clock, its row created first: a decay run may come before any write."""
    conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))
    return clock(conn, agent)


def advance_clock(conn, agent: str, t: float) -> None:
    """Set the decay clock to `t` and count one decay run."""
    conn.execute("UPDATE namespaces SET web_clock = ?, web_decay_runs = web_decay_runs + 1 WHERE agent = ?", (t, agent))


def prune(conn, agent: str, below: float) -> int:
    """Delete the edges whose level is below `below`, a range delete on the level index; how many."""
    return conn.execute("DELETE FROM web_edges WHERE agent = ? AND level < ?", (agent, below)).rowcount


def decay_runs(conn, agent: str) -> int:
    return conn.execute("SELECT web_decay_runs FROM namespaces WHERE agent = ?", (agent,)).fetchone()[0]


def edges_touching(conn, agent: str, nodes: list[str]) -> list[tuple[str, str, float]]:
    """(a, b, level) of every edge with an end among the nodes; one joining two of them comes twice."""
    marks = ", ".join("?" * len(nodes))
    return conn.execute(f"SELECT a, b, level FROM web_edges WHERE agent = ? AND a IN ({marks}) UNION ALL "
                        f"SELECT a, b, level FROM web_edges WHERE agent = ? AND b IN ({marks})",
                        (agent, *nodes, agent, *nodes)).fetchall()


def heaviest_edges(conn, agent: str, node: str, least: float, limit: int) -> list[tuple[str, float]]:
    """(other end, level) of a node's edges at level `least` or above, heaviest first: at most
    `limit` (-1: all) where the node is `a`, then as many where it is `b`. Read down the level
    index, so a hub with thousands of edges costs `limit` rows, not thousands."""
    return [*conn.execute("SELECT b, level FROM web_edges WHERE agent = ? AND a = ? AND level >= ? "
                          "ORDER BY level DESC LIMIT ?", (agent, node, least, limit)),
            *conn.execute("SELECT a, level FROM web_edges WHERE agent = ? AND b = ? AND level >= ? "
                          "ORDER BY level DESC LIMIT ?", (agent, node, least, limit))]


def typed_links(conn, agent: str, node: str, limit: int) -> list[tuple[str, str]]:
    """(other end, link type) of a node's typed links: at most `limit` (-1: all) it makes, then
    as many made to it, newest first."""
    return [*conn.execute("SELECT dst, type FROM web_links WHERE agent = ? AND src = ? LIMIT ?", (agent, node, limit)),
            *conn.execute("SELECT src, type FROM web_links WHERE agent = ? AND dst = ? ORDER BY created_at DESC "
                          "LIMIT ?", (agent, node, limit))]


LINK_TYPES = ("related", "supports", "contradicts", "supersedes")


def record_mentions(conn, agent: str, found: list[tuple[int, list[tuple[str, str]]]], now: float, *,
                    actor: str) -> int:
    """Entities episodes mention, (episode id, [(type, value)]) each: every entity upserted once
    with its count of mentions (a batch names the same few hosts and people thousands of times)
    and linked from each episode that mentions it ("mentions")."""
    pairs = [(episode, kind, value) for episode, entities in found for kind, value in entities]
    if not pairs:
        return 0
    conn.executemany(
        "INSERT INTO entities (agent, type, value, mentions, first_at, last_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (agent, type, value) DO UPDATE SET mentions = entities.mentions + excluded.mentions, "
        "last_at = excluded.last_at",
        [(agent, kind, value, n, now, now) for (kind, value), n in Counter((k, v) for _, k, v in pairs).items()])
    add_mentions(conn, agent, [(f"episode:{episode}", f"entity:{kind}:{value}") for episode, kind, value in pairs],
                 now, actor=actor)
    return len(pairs)


def add_mentions(conn, agent: str, pairs: list[tuple[str, str]], now: float, *, actor: str) -> None:
    """"mentions" links (source node, mentioned node); one that exists already stays as it is."""
    conn.executemany("INSERT OR IGNORE INTO web_links (agent, src, dst, type, created_at, actor) "
                     "VALUES (?, ?, ?, 'mentions', ?, ?)", [(agent, src, dst, now, actor) for src, dst in pairs])


def superseders(conn, agent: str, nodes: list[str]) -> list[tuple[str, str]]:
    """(superseded node, node that supersedes it) for the nodes given."""
    if not nodes:
        return []
    return conn.execute(f"SELECT dst, src FROM web_links WHERE agent = ? AND dst IN ({', '.join('?' * len(nodes))}) "
                        "AND type = 'supersedes'", (agent, *nodes)).fetchall()


def supersession_of(conn, agent: str, episode: int) -> dict[str, list[int]]:
    """The memories one memory supersedes and those that supersede it (newest first)."""
    node = f"episode:{episode}"
    out: dict[str, list[int]] = {"supersedes": [], "superseded_by": []}
    for src, dst in conn.execute("SELECT src, dst FROM web_links WHERE agent = ? AND type = 'supersedes' AND "
                                 "(src = ? OR dst = ?) ORDER BY created_at DESC", (agent, node, node)):
        other = episode_id(dst if src == node else src)
        if other is not None:
            out["supersedes" if src == node else "superseded_by"].append(other)
    return out


def add_supersessions(conn, agent: str, pairs: list[tuple[str, str]], now: float, *, actor: str) -> None:
    """"supersedes" links (newer memory, older memory) that capture found, each audited like a
    link a person makes, so `web unlink` undoes one and the trail says where it came from."""
    for src, dst in pairs:
        if conn.execute("INSERT OR IGNORE INTO web_links (agent, src, dst, type, created_at, actor) "
                        "VALUES (?, ?, ?, 'supersedes', ?, ?)", (agent, src, dst, now, actor)).rowcount:
            conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                         "VALUES (?, ?, 'web', NULL, 'link', ?, ?)",
                         (now, agent, json.dumps({"src": src, "dst": dst, "type": "supersedes", "by": "capture"}),
                          actor))


def link(conn, agent: str, src: str, dst: str, kind: str, now: float, *, actor: str, remove: bool = False) -> dict:
    if kind not in LINK_TYPES:
        raise InvalidInput(f"unknown link type {kind!r}", hint=f"use one of: {', '.join(LINK_TYPES)}")
    if src == dst:
        raise InvalidInput(f"{src} cannot be linked to itself")
    require(conn, agent, [src, dst])
    if remove:
        changed = conn.execute("DELETE FROM web_links WHERE agent = ? AND src = ? AND dst = ? AND type = ?",
                               (agent, src, dst, kind)).rowcount
    else:
        changed = conn.execute("INSERT OR IGNORE INTO web_links (agent, src, dst, type, created_at, actor) "
                               "VALUES (?, ?, ?, ?, ?, ?)", (agent, src, dst, kind, now, actor)).rowcount
    if changed:
        conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                     "VALUES (?, ?, 'web', NULL, ?, ?, ?)",
                     (now, agent, "unlink" if remove else "link",
                      json.dumps({"src": src, "dst": dst, "type": kind}, ensure_ascii=False), actor))
    return {"src": src, "dst": dst, "type": kind, "status": ("removed" if remove else "created") if changed
            else ("absent" if remove else "exists")}


def links_of(conn, agent: str, node: str, limit: int) -> list[dict]:
    return [{"src": r[0], "dst": r[1], "type": r[2], "created_at": r[3], "actor": r[4]} for r in conn.execute(
        "SELECT src, dst, type, created_at, actor FROM web_links WHERE agent = ? AND src = ? UNION ALL "
        "SELECT src, dst, type, created_at, actor FROM web_links WHERE agent = ? AND dst = ? "
        "ORDER BY created_at DESC LIMIT ?", (agent, node, agent, node, limit))]


def forget_node(conn, agent: str, node: str) -> list[str]:
    """Remove a node from the web (a purged memory): its edges, links and working-set entry;
    entities it alone mentioned go too. Returns the entity nodes removed with it."""
    mentioned = [r[0] for r in conn.execute(
        "SELECT dst FROM web_links WHERE agent = ? AND src = ? AND type = 'mentions' AND dst LIKE 'entity:%'",
        (agent, node))]
    conn.execute("DELETE FROM web_edges WHERE agent = ? AND (a = ? OR b = ?)", (agent, node, node))
    conn.execute("DELETE FROM web_links WHERE agent = ? AND (src = ? OR dst = ?)", (agent, node, node))
    conn.execute("DELETE FROM web_context WHERE agent = ? AND node = ?", (agent, node))
    gone = []
    for ent in mentioned:
        etype, value = ent.split(":", 2)[1:]
        conn.execute("UPDATE entities SET mentions = mentions - 1 WHERE agent = ? AND type = ? AND value = ?",
                     (agent, etype, value))
        if conn.execute("SELECT mentions FROM entities WHERE agent = ? AND type = ? AND value = ?",
                        (agent, etype, value)).fetchone()[0] <= 0:
            conn.execute("DELETE FROM entities WHERE agent = ? AND type = ? AND value = ?", (agent, etype, value))
            gone += [ent, *forget_node(conn, agent, ent)]
    return gone


def entity_list(conn, agent: str, kind: str | None, limit: int) -> list[dict]:
    where, params = ("AND type = ?", (kind,)) if kind else ("", ())
    return [{"node": f"entity:{r[0]}:{r[1]}", "type": r[0], "value": r[1], "mentions": r[2], "first_at": r[3],
             "last_at": r[4]} for r in conn.execute(
        f"SELECT type, value, mentions, first_at, last_at FROM entities WHERE agent = ? {where} "
        "ORDER BY mentions DESC, type, value LIMIT ?", (agent, *params, limit))]


def edge_rows(conn, agent: str, node: str, limit: int) -> list[tuple[str, float, int, float, float]]:
    """A node's edges in full, heaviest first: (other node, level, activations, created_at, last_at)."""
    return conn.execute(
        "SELECT b AS other, level, activations, created_at, last_at FROM web_edges WHERE agent = ? AND a = ? "
        "UNION ALL SELECT a, level, activations, created_at, last_at FROM web_edges WHERE agent = ? AND b = ? "
        "ORDER BY level DESC, other LIMIT ?", (agent, node, agent, node, limit)).fetchall()


def levels_below(conn, agent: str, node: str, least: float) -> list[float]:
    """The levels of a node's edges below `least`, highest first."""
    return [r[0] for r in conn.execute(
        "SELECT level FROM web_edges WHERE agent = ? AND a = ? AND level < ? UNION ALL "
        "SELECT level FROM web_edges WHERE agent = ? AND b = ? AND level < ? ORDER BY 1 DESC",
        (agent, node, least, agent, node, least))]


def link_count(conn, agent: str, node: str) -> int:
    return conn.execute("SELECT count(*) FROM web_links WHERE agent = ? AND (src = ? OR dst = ?)",
                        (agent, node, node)).fetchone()[0]

