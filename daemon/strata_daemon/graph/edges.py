"""The spiderweb's edges and working set on the database thread: the arithmetic of
graph.hebbian over the levels store.graph reads and writes. Each function takes the caller's
connection, so what one call changes (a commit: co-activate, empty the set, audit) stays one
transaction."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from strata_daemon.config.tuning import Graph
from strata_daemon.graph import hebbian
from strata_daemon.store import graph as store


@dataclass(frozen=True)
class WorkingSet:
    capacity: int  # most items held; the least recently activated leave first
    ttl_seconds: float  # a context idle this long is committed by the next call that touches it


def coactivate(conn, agent: str, nodes: list[str], rules: Graph, now: float) -> int:
    """Strengthen the edge of every pair of distinct nodes (creating it at `rules.edge_start`); returns
    how many pairs."""
    return store.coactivate(conn, agent, hebbian.pairs(nodes), partial(hebbian.strengthened_level, rules), now)


def commit(conn, agent: str, rules: Graph, now: float, *, actor: str, reason: str) -> dict:
    """Co-activate everything in the working set and empty it, in the caller's transaction: a
    crash before this leaves the set whole, after it the edges are stored."""
    items = [c["node"] for c in store.context(conn, agent)]
    strengthened = coactivate(conn, agent, items, rules, now)
    store.clear_context(conn, agent)
    if items:
        store.audit(conn, agent, "commit", {"nodes": items, "reason": reason}, now, actor=actor)
    return {"committed": items, "edges_strengthened": strengthened, "reason": reason if items else "empty"}


def expire(conn, agent: str, rules: Graph, ws: WorkingSet, now: float, *, actor: str) -> dict | None:
    """Commit the working set if it has been idle for its time-to-live."""
    newest = store.last_activated(conn, agent)
    if newest is None or now - newest < ws.ttl_seconds:
        return None
    return commit(conn, agent, rules, now, actor=actor, reason="expired")


def activate(conn, agent: str, nodes: list[str], rules: Graph, ws: WorkingSet, now: float, *,
             source: str, actor: str, known: bool = False) -> dict:
    """Put nodes in the working set (after committing it if it expired); beyond its capacity the
    least recently activated leave it uncommitted. `known`: the caller just read them from this
    namespace (a recall's hits), so they need no check."""
    if not known:
        store.require(conn, agent, nodes)
    expired = expire(conn, agent, rules, ws, now, actor=actor)
    fresh = list(dict.fromkeys(nodes))
    store.put_context(conn, agent, fresh, now, source)
    held = store.context(conn, agent)
    # Oldest first; among equal times, a node being activated now stays.
    order = sorted(held, key=lambda c: (c["activated_at"], c["node"] in fresh, c["node"]))
    evicted = [c["node"] for c in order[:max(0, len(held) - ws.capacity)]]
    if evicted:
        store.drop_context(conn, agent, evicted)
    return {"activated": fresh, "evicted": evicted, "expired_commit": expired,
            "context": [c for c in held if c["node"] not in evicted]}


def decay(conn, agent: str, rules: Graph, now: float, *, actor: str) -> dict:
    """One decay run: every weight x factor (by moving the clock), then prune the edges below the
    threshold. Cost grows with what is pruned, not with the number of edges."""
    t = hebbian.advanced(store.decay_clock(conn, agent, now), rules)
    store.advance_clock(conn, agent, t)
    pruned = store.prune(conn, agent, hebbian.prune_level(t, rules))
    left = store.edge_count(conn, agent)
    runs = store.decay_runs(conn, agent)
    store.audit(conn, agent, "decay", {"pruned": pruned, "edges": left, "factor": rules.decay_factor}, now, actor=actor)
    return {"pruned": pruned, "edges": left, "factor": rules.decay_factor, "decay_runs": runs}


def neighbours(conn, agent: str, nodes: list[str], *, link_weight: float = 0.0, fan_limit: int | None = None,
               floors: dict[str, float] | None = None) -> dict[str, list[tuple[str, float, str]]]:
    """Each node's neighbours, heaviest first: (node, weight, "edge" or the link type). Hebbian
    edges weigh what they weigh now; typed links (either direction) weigh `link_weight` (0:
    not followed). Where two nodes are joined both ways the heavier counts. `fan_limit` keeps
    a node's heaviest neighbours only, so an entity mentioned everywhere stays cheap; with it,
    `floors` leaves out a node's edges lighter than its floor."""
    if not nodes:
        return {}
    t = store.clock(conn, agent)
    best: dict[str, dict[str, tuple[float, str]]] = {n: {} for n in nodes}

    def offer(here: str, other: str, w: float, via: str) -> None:
        held = best[here].get(other)
        if held is None or w > held[0]:
            best[here][other] = (w, via)

    cap = -1 if fan_limit is None else fan_limit
    if fan_limit is None:
        for a, b, level in store.edges_touching(conn, agent, nodes):
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
            for other, level in store.heaviest_edges(conn, agent, n, least, cap):
                offer(n, other, hebbian.weight_of(level, t), "edge")
    if link_weight > 0:
        for n in nodes:
            if link_weight < (floors or {}).get(n, 0.0):
                continue
            for other, kind in store.typed_links(conn, agent, n, cap):
                offer(n, other, link_weight, kind)
    out = {}
    for n, found in best.items():
        ranked = sorted(((o, w, via) for o, (w, via) in found.items()), key=lambda e: (-e[1], e[0]))
        out[n] = ranked if fan_limit is None else ranked[:fan_limit]
    return out


def edges_of(conn, agent: str, node: str, limit: int) -> list[dict]:
    """A node's edges in full, heaviest first."""
    t = store.clock(conn, agent)
    return [{"node": other, "weight": round(hebbian.weight_of(level, t), 6), "activations": activations,
             "created_at": created_at, "last_activated_at": last_at}
            for other, level, activations, created_at, last_at in store.edge_rows(conn, agent, node, limit)]


def lighter(conn, agent: str, node: str, weight: float) -> list[float]:
    """The weights of a node's edges lighter than WEIGHT, heaviest first: those a spread from
    the node leaves out when its lookup asks for WEIGHT at least."""
    t = store.clock(conn, agent)
    return [hebbian.weight_of(level, t) for level in store.levels_below(conn, agent, node, hebbian.level_of(weight, t))]
