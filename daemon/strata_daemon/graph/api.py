"""The spiderweb of a Memory: `mem.activate(...)`, `commit_working_set`, `decay_web`, `spread`, ...
Each call is one database hop; writes are one short transaction."""

from __future__ import annotations

from typing import Iterable

from strata_daemon.base import timeutil
from strata_daemon.base.numbers import whole
from strata_daemon.config.tuning import Graph
from strata_daemon.errors import InvalidInput
from strata_daemon.graph import edges, entities
from strata_daemon.graph.nodes import parse
from strata_daemon.graph.spread import check_range, spread, strength
from strata_daemon.store import graph as store
from strata_daemon.store.db import Database
from strata_daemon.store.nodes import episode_id


def supersessions(facts: list[dict]) -> list[tuple[str, str]]:
    """(newer, older) memory pairs from capture results: a value that replaced another memory's
    different value, or that a later memory's different value already follows (it arrived
    late). Values a person set, or that a memory only confirmed, link nothing."""
    out = []
    for f in facts:
        if f["status"] not in ("created", "changed", "recorded", "retracted"):
            continue
        me = f"episode:{f['episode_id']}"
        for side, newer in (("replaces", False), ("replaced_by", True)):
            other = f.get(side)
            if not other or other["value"] is None or other["value"] == f["value"]:
                continue
            if other["source"].startswith("episode:") and other["source"] != me:
                out.append((other["source"], me) if newer else (me, other["source"]))
    return out


def _nodes(items: Iterable) -> list[str]:
    if isinstance(items, (str, int)):
        items = [items]
    nodes = [parse(i) for i in items]
    if not nodes:
        raise InvalidInput("no items given", hint="name one or more items: episode:ID, fact:KEY, entity:TYPE:VALUE")
    return list(dict.fromkeys(nodes))


class Web:
    def __init__(self, db: Database, agent: str, tuned: Graph, actor: str):
        self.db, self.agent, self.actor = db, agent, actor
        self.rules = tuned  # the Hebbian rules (graph/hebbian.py) and the rest of the graph's constants
        self.working_set = edges.WorkingSet(tuned.context_capacity, tuned.context_ttl_seconds)
        self.depth = tuned.spread_depth
        self.threshold = tuned.spread_threshold
        self.fan_out = tuned.fan_out_normalise
        self.feed_recalls = tuned.recall_feed
        self.extract = tuned.entities
        self.link_weight = tuned.link_weight
        self.fan_limit = tuned.spread_fan_limit

    async def activate(self, items: Iterable, *, source: str | None = None) -> dict:
        """Put items in the working set; they are co-activated with everything in it at commit."""
        nodes = _nodes(items)
        return await self.db.transact(lambda c: edges.activate(
            c, self.agent, nodes, self.rules, self.working_set, timeutil.now(), source=source or self.actor,
            actor=self.actor))

    def feed_in(self, conn, hits: list[dict], recall_id: int, now: float) -> dict | None:
        """Inside a recall's write transaction: its best hits in the hot tier join the working set."""
        nodes = [f"episode:{h['id']}" for h in hits if h.get("tier") != "cold"][:max(self.feed_recalls, 0)]
        if not nodes:
            return None
        return edges.activate(conn, self.agent, nodes, self.rules, self.working_set, now,
                              source=f"recall:{recall_id}", actor=self.actor, known=True)

    def mentions_in(self, conn, rows: list[dict], results: list[dict], facts: list[dict], now: float) -> int:
        """Inside an observation's write transaction: link a memory whose captured value replaced
        another memory's to it (`supersedes`), and each new memory to the entities it mentions
        and the facts it set."""
        store.add_supersessions(conn, self.agent, supersessions(facts), now, actor=self.actor)
        if not self.extract:
            return 0
        linked = store.record_mentions(conn, self.agent, [
            (result["id"], entities.extract(row["content"], row.get("source")))
            for row, result in zip(rows, results) if result["status"] == "created"], now, actor=self.actor)
        store.add_mentions(conn, self.agent, [(f"episode:{f['episode_id']}", f"fact:{f['key']}")
                                              for f in facts if f["status"] != "skipped"], now, actor=self.actor)
        return linked

    def link_in(self, conn, src, dst, kind: str, now: float, *, remove: bool = False) -> dict:
        """A typed link from one item to another (related, supports, contradicts, supersedes),
        inside the caller's write transaction."""
        a, b = _nodes([src])[0], _nodes([dst])[0]
        return store.link(conn, self.agent, a, b, kind, now, actor=self.actor, remove=remove)

    async def entities(self, *, kind: str | None = None, limit: int = 100) -> list[dict]:
        limit = whole(limit, "limit")
        if not 1 <= limit <= 100000:
            raise InvalidInput(f"limit must be between 1 and 100000, not {limit}", hint="ask for 1 to 100000 entities")
        if kind is not None and kind.casefold().rstrip("s") in entities.TYPES:
            kind = kind.casefold().rstrip("s")  # `hosts`, `Person`: one of the types
        elif kind is not None:
            raise InvalidInput(f"entity type {kind!r} is not one strata knows",
                               hint=f"one of: {', '.join(entities.TYPES)}")
        return await self.db.run(lambda c: store.entity_list(c, self.agent, kind, limit))

    def neighbours_in(self, conn, nodes: list[str], floors: dict[str, float] | None = None) -> dict:
        return edges.neighbours(conn, self.agent, nodes, link_weight=self.link_weight, fan_limit=self.fan_limit,
                                floors=floors)

    async def commit(self) -> dict:
        """Co-activate the working set now and empty it."""
        return await self.db.transact(lambda c: edges.commit(c, self.agent, self.rules, timeutil.now(),
                                                             actor=self.actor, reason="committed"))

    async def expire(self) -> dict | None:
        """Commit the working set if it has been idle past graph.context_ttl_seconds."""
        return await self.db.transact(lambda c: edges.expire(c, self.agent, self.rules, self.working_set,
                                                             timeutil.now(), actor=self.actor))

    async def context(self) -> dict:
        now = timeutil.now()

        def read(conn):
            items = store.context(conn, self.agent)
            newest = max((i["activated_at"] for i in items), default=None)
            return {"items": items, "capacity": self.working_set.capacity,
                    "expires_at": None if newest is None else newest + self.working_set.ttl_seconds,
                    "expired": newest is not None and now - newest >= self.working_set.ttl_seconds}
        return await self.db.run(read)

    async def decay(self) -> dict:
        """One decay run now (the daemon's decay phase calls this nightly)."""
        return await self.db.transact(lambda c: edges.decay(c, self.agent, self.rules, timeutil.now(),
                                                            actor=self.actor))

    def _rated(self, weight: float, threshold: float) -> dict:
        """An edge's strength, and whether a spread from its node follows it (`related` too)."""
        s = strength(weight, self.rules.edge_cap)
        return {"strength": round(s, 6), "followed": s >= threshold}

    async def neighbours(self, item, *, limit: int = 50, threshold: float | None = None) -> dict:
        """An item's edges, heaviest first, and its typed links; each with its strength and
        whether a spread (`related`) at THRESHOLD (default graph.spread_threshold) follows it."""
        node = _nodes([item])[0]
        limit = whole(limit, "limit")
        if not 1 <= limit <= 10000:
            raise InvalidInput(f"limit must be between 1 and 10000, not {limit}", hint="ask for 1 to 10000")
        threshold = self.threshold if threshold is None else threshold
        check_range(self.depth, threshold)

        def read(conn):
            state = store.require(conn, self.agent, [node])[node]
            return {"node": node, "state": state, "threshold": threshold,
                    "neighbours": [{**e, **self._rated(e["weight"], threshold)}
                                   for e in edges.edges_of(conn, self.agent, node, limit)],
                    "links": [{**k, **self._rated(self.link_weight, threshold)}
                              for k in store.links_of(conn, self.agent, node, limit)]}
        return await self.db.run(read)

    async def texts(self, items) -> dict[str, str | None]:
        """What each item says (a memory's text, a fact's `label = value`, an entity's value),
        None for one the namespace does not hold."""
        nodes = _nodes(items)
        return await self.db.run(lambda c: store.texts(c, self.agent, nodes))

    async def spread(self, items, *, depth: int | None = None, threshold: float | None = None,
                     fan_out: bool | None = None, include_archived: bool = False, limit: int = 50) -> dict:
        """Nodes reached from the items over weighted edges, most activated first, each with the
        path that reached it. Archived memories are left out unless asked for."""
        seeds = _nodes(items)
        limit = whole(limit, "limit")
        depth = self.depth if depth is None else depth
        threshold = self.threshold if threshold is None else threshold
        check_range(depth, threshold)
        fan = self.fan_out if fan_out is None else fan_out

        def read(conn):
            seed_states = store.require(conn, self.agent, seeds)
            reached = spread(seeds, lambda nodes, floors: self.neighbours_in(conn, nodes, floors), depth=depth,
                             threshold=threshold, cap=self.rules.edge_cap, fan_out=fan)
            found = store.states(conn, self.agent, [r.node for r in reached])
            keep = [r for r in reached if found[r.node] is not None
                    and (include_archived or found[r.node] != "archived")]
            return seed_states, [{**r.as_dict(), "state": found[r.node]} for r in keep[:limit]]

        seed_states, out = await self.db.run(read)
        warnings = [f"{s} is archived; spreading from it anyway" for s, st in seed_states.items() if st == "archived"]
        return {"seeds": seeds, "depth": depth, "threshold": threshold, "fan_out": fan, "reached": out,
                "warnings": warnings}

    async def related(self, item, *, limit: int = 10, depth: int | None = None,
                      threshold: float | None = None) -> dict:
        """Associated memories: the episodes a spread from the item reaches. `left_out` counts
        the item's edges and links too weak to pass the threshold, which the spread did not
        follow, with the strength of the strongest of them."""
        node = _nodes([item])[0]
        limit = whole(limit, "limit")
        result = await self.spread(node, limit=10_000, depth=depth, threshold=threshold)
        result["reached"] = [r for r in result["reached"] if episode_id(r["node"]) is not None][:limit]
        cap, least = self.rules.edge_cap, result["threshold"]

        def weak(conn) -> list[float]:
            # What the spread's lookup leaves out for a seed: edges lighter than threshold x cap,
            # and typed links when they weigh less (graph.link_weight 0: links are not followed).
            out = edges.lighter(conn, self.agent, node, least * cap)
            if strength(self.link_weight, cap) < least:
                out += [self.link_weight] * store.link_count(conn, self.agent, node)
            return out

        weights = await self.db.run(weak)
        result["left_out"] = {"below_threshold": len(weights),
                              "strongest": round(max(strength(w, cap) for w in weights), 6) if weights else None}
        return result
