"""Spiderweb SQL: edges, the working set, decay. Each function runs on the database thread;
those that write run inside Database.transact. Every statement names the namespace."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass

from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.graph import hebbian
from strata_daemon.graph.hebbian import Rules
from strata_daemon.graph.nodes import episode_id, kind_of


@dataclass(frozen=True)
class WorkingSet:
    capacity: int  # most items held; the least recently activated leave first
    ttl_seconds: float  # a context idle this long is committed by the next call that touches it


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
            raise NotFound(f"no {kind_of(node)} {node.split(':', 1)[1]!r} in namespace {agent!r}")
    return found  # type: ignore[return-value]


def coactivate(conn, agent: str, nodes: list[str], rules: Rules, now: float) -> int:
    """Strengthen the edge of every pair of distinct nodes (creating it at `rules.start`); returns
    how many pairs."""
    pairs = hebbian.pairs(nodes)
    if not pairs:
        return 0
    t = clock(conn, agent)
    held = {}
    for a, b in pairs:
        row = conn.execute("SELECT level FROM web_edges WHERE agent = ? AND a = ? AND b = ?", (agent, a, b)).fetchone()
        held[(a, b)] = None if row is None else hebbian.weight_of(row[0], t)
    conn.executemany(
        "INSERT INTO web_edges (agent, a, b, level, activations, created_at, last_at) VALUES (?, ?, ?, ?, 1, ?, ?) "
        "ON CONFLICT (agent, a, b) DO UPDATE SET level = excluded.level, activations = activations + 1, "
        "last_at = excluded.last_at",
        [(agent, a, b, hebbian.level_of(hebbian.strengthened(held[(a, b)], rules), t), now, now) for a, b in pairs])
    return len(pairs)


def context(conn, agent: str) -> list[dict]:
    return [{"node": r[0], "activated_at": r[1], "source": r[2]} for r in conn.execute(
        "SELECT node, activated_at, source FROM web_context WHERE agent = ? ORDER BY activated_at, node", (agent,))]


def commit(conn, agent: str, rules: Rules, now: float, *, actor: str, reason: str) -> dict:
    """Co-activate everything in the working set and empty it, in the caller's transaction: a
    crash before this leaves the set whole, after it the edges are stored."""
    items = [c["node"] for c in context(conn, agent)]
    strengthened = coactivate(conn, agent, items, rules, now)
    conn.execute("DELETE FROM web_context WHERE agent = ?", (agent,))
    if items:
        conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                      "VALUES (?, ?, 'web', NULL, 'commit', ?, ?)",
                      (now, agent, json.dumps({"nodes": items, "reason": reason}, ensure_ascii=False), actor))
    return {"committed": items, "edges_strengthened": strengthened, "reason": reason}


def expire(conn, agent: str, rules: Rules, ws: WorkingSet, now: float, *, actor: str) -> dict | None:
    """Commit the working set if it has been idle for its time-to-live."""
    newest = conn.execute("SELECT max(activated_at) FROM web_context WHERE agent = ?", (agent,)).fetchone()[0]
    if newest is None or now - newest < ws.ttl_seconds:
        return None
    return commit(conn, agent, rules, now, actor=actor, reason="expired")


def activate(conn, agent: str, nodes: list[str], rules: Rules, ws: WorkingSet, now: float, *,
             source: str, actor: str, known: bool = False) -> dict:
    """Put nodes in the working set (after committing it if it expired); beyond its capacity the
    least recently activated leave it uncommitted. `known`: the caller just read them from this
    namespace (a recall's hits), so they need no check."""
    if not known:
        require(conn, agent, nodes)
    expired = expire(conn, agent, rules, ws, now, actor=actor)
    fresh = list(dict.fromkeys(nodes))
    conn.executemany("INSERT INTO web_context (agent, node, activated_at, source) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (agent, node) DO UPDATE SET activated_at = excluded.activated_at, "
                     "source = excluded.source", [(agent, n, now, source) for n in fresh])
    held = context(conn, agent)
    # Oldest first; among equal times, a node being activated now stays.
    order = sorted(held, key=lambda c: (c["activated_at"], c["node"] in fresh, c["node"]))
    evicted = [c["node"] for c in order[:max(0, len(held) - ws.capacity)]]
    if evicted:
        conn.executemany("DELETE FROM web_context WHERE agent = ? AND node = ?", [(agent, n) for n in evicted])
    return {"activated": fresh, "evicted": evicted, "expired_commit": expired,
            "context": [c for c in held if c["node"] not in evicted]}


def decay(conn, agent: str, rules: Rules, now: float, *, actor: str) -> dict:
    """One decay run: every weight x factor (by moving the clock), then prune the edges below the
    threshold. Cost grows with what is pruned, not with the number of edges."""
    conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))
    t = hebbian.advanced(clock(conn, agent), rules)
    conn.execute("UPDATE namespaces SET web_clock = ?, web_decay_runs = web_decay_runs + 1 WHERE agent = ?", (t, agent))
    pruned = conn.execute("DELETE FROM web_edges WHERE agent = ? AND level < ?",
                          (agent, hebbian.prune_level(t, rules))).rowcount
    left = conn.execute("SELECT count(*) FROM web_edges WHERE agent = ?", (agent,)).fetchone()[0]
    runs = conn.execute("SELECT web_decay_runs FROM namespaces WHERE agent = ?", (agent,)).fetchone()[0]
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                 "VALUES (?, ?, 'web', NULL, 'decay', ?, ?)",
                 (now, agent, json.dumps({"pruned": pruned, "edges": left, "factor": rules.factor}), actor))
    return {"pruned": pruned, "edges": left, "factor": rules.factor, "decay_runs": runs}


def neighbours(conn, agent: str, nodes: list[str], *, link_weight: float = 0.0, fan_limit: int | None = None,
               floors: dict[str, float] | None = None) -> dict[str, list[tuple[str, float, str]]]:
    """Each node's neighbours, heaviest first: (node, weight, "edge" or the link type). Hebbian
    edges weigh what they weigh now; typed links (either direction) weigh `link_weight` (0:
    not followed). Where two nodes are joined both ways the heavier counts. `fan_limit` keeps
    a node's heaviest neighbours only, so an entity mentioned everywhere stays cheap; with it,
    `floors` leaves out a node's edges lighter than its floor."""
    if not nodes:
        return {}
    t = clock(conn, agent)
    marks = ", ".join("?" * len(nodes))
    best: dict[str, dict[str, tuple[float, str]]] = {n: {} for n in nodes}

    def offer(here: str, other: str, w: float, via: str) -> None:
        held = best[here].get(other)
        if held is None or w > held[0]:
            best[here][other] = (w, via)

    cap = -1 if fan_limit is None else fan_limit
    if fan_limit is None:
        for a, b, level in conn.execute(
                f"SELECT a, b, level FROM web_edges WHERE agent = ? AND a IN ({marks}) UNION ALL "
                f"SELECT a, b, level FROM web_edges WHERE agent = ? AND b IN ({marks})",
                (agent, *nodes, agent, *nodes)):
            w = hebbian.weight_of(level, t)
            if a in best:
                offer(a, b, w, "edge")
            if b in best:
                offer(b, a, w, "edge")
    else:
        # Node by node and heaviest first, so that a hub with thousands of edges (or an entity
        # mentioned by thousands of memories) costs `fan_limit` rows, not thousands.
        for n in nodes:
            floor = (floors or {}).get(n, 0.0)
            least = hebbian.level_of(floor, t) if floor > 0 else -math.inf
            for other, level in conn.execute(
                    "SELECT b, level FROM web_edges WHERE agent = ? AND a = ? AND level >= ? ORDER BY level DESC "
                    "LIMIT ?", (agent, n, least, cap)):
                offer(n, other, hebbian.weight_of(level, t), "edge")
            for other, level in conn.execute(
                    "SELECT a, level FROM web_edges WHERE agent = ? AND b = ? AND level >= ? ORDER BY level DESC "
                    "LIMIT ?", (agent, n, least, cap)):
                offer(n, other, hebbian.weight_of(level, t), "edge")
    if link_weight > 0:
        for n in nodes:
            if link_weight < (floors or {}).get(n, 0.0):
                continue
            for dst, kind in conn.execute("SELECT dst, type FROM web_links WHERE agent = ? AND src = ? LIMIT ?",
                                          (agent, n, cap)):
                offer(n, dst, link_weight, kind)
            for src, kind in conn.execute("SELECT src, type FROM web_links WHERE agent = ? AND dst = ? "
                                          "ORDER BY created_at DESC LIMIT ?", (agent, n, cap)):
                offer(n, src, link_weight, kind)
    out = {}
    for n, found in best.items():
        ranked = sorted(((o, w, via) for o, (w, via) in found.items()), key=lambda e: (-e[1], e[0]))
        out[n] = ranked if fan_limit is None else ranked[:fan_limit]
    return out


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
        "ON CONFLICT (agent, type, value) DO UPDATE SET mentions = mentions + excluded.mentions, "
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


def edges_of(conn, agent: str, node: str, limit: int) -> list[dict]:
    """A node's edges in full, heaviest first."""
    t = clock(conn, agent)
    rows = conn.execute(
        "SELECT b AS other, level, activations, created_at, last_at FROM web_edges WHERE agent = ? AND a = ? "
        "UNION ALL SELECT a, level, activations, created_at, last_at FROM web_edges WHERE agent = ? AND b = ? "
        "ORDER BY level DESC, other LIMIT ?", (agent, node, agent, node, limit)).fetchall()
    return [{"node": r[0], "weight": round(hebbian.weight_of(r[1], t), 6), "activations": r[2],
             "created_at": r[3], "last_activated_at": r[4]} for r in rows]


def lighter(conn, agent: str, node: str, weight: float) -> list[float]:
    """The weights of a node's edges lighter than WEIGHT, heaviest first: those a spread from
    the node leaves out when its lookup asks for WEIGHT at least."""
    t = clock(conn, agent)
    least = hebbian.level_of(weight, t)
    return [hebbian.weight_of(r[0], t) for r in conn.execute(
        "SELECT level FROM web_edges WHERE agent = ? AND a = ? AND level < ? UNION ALL "
        "SELECT level FROM web_edges WHERE agent = ? AND b = ? AND level < ? ORDER BY 1 DESC",
        (agent, node, least, agent, node, least))]


def link_count(conn, agent: str, node: str) -> int:
    return conn.execute("SELECT count(*) FROM web_links WHERE agent = ? AND (src = ? OR dst = ?)",
                        (agent, node, node)).fetchone()[0]


def check_range(depth: int, threshold: float, max_depth: int = 5) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= max_depth:
        raise InvalidInput(f"depth must be a whole number from 1 to {max_depth}, not {depth!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise InvalidInput(f"threshold must be above 0 and at most 1, not {threshold!r}")
