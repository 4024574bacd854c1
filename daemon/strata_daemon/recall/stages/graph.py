"""Deep recall's graph: a spread over the spiderweb from the best candidates, and each memory's
strongest Hebbian edge to one of them (deep.py combines them)."""

from __future__ import annotations

from strata_daemon.graph import edges as web_edges
from strata_daemon.graph.spread import spread as spread_activation, strength
from strata_daemon.recall.deep import combine, seeds_of
from strata_daemon.recall.request import Request, Sources, State
from strata_daemon.store import recall as store
from strata_daemon.store.db import Database
from strata_daemon.store.fulltext import Scope
from strata_daemon.store.nodes import episode_id


async def graph_reach(db: Database, scope: Scope, web, seeds: list[int], known: dict[int, dict]
                      ) -> tuple[dict[int, dict], dict[int, tuple[float, int]], dict[int, dict]]:
    """For deep recall, in one hop: the memories a spread from the seed memories reaches
    (id -> {"activation", "path", "via"}), each memory's strongest direct Hebbian edge to a seed
    (id -> (weight / cap, seed id)), and the rows in scope of those that `known` lacks."""
    nodes = [f"episode:{i}" for i in seeds]

    def read(conn):
        reached = {}
        for r in spread_activation(nodes, lambda ns, floors: web.neighbours_in(conn, ns, floors), depth=web.depth,
                                   threshold=web.threshold, cap=web.rules.edge_cap, fan_out=web.fan_out):
            i = episode_id(r.node)
            if i is not None:
                reached[i] = {"activation": round(r.activation, 6), "path": list(r.path), "via": r.via}
        hebb: dict[int, tuple[float, int]] = {}
        for seed, edges in web_edges.neighbours(conn, scope.agent, nodes).items():
            for other, weight, _ in edges:
                i = episode_id(other)
                share = strength(weight, web.rules.edge_cap)
                if i is not None and share > hebb.get(i, (0.0, 0))[0]:
                    hebb[i] = (share, episode_id(seed))
        return reached, hebb, store.rows_in_scope(conn, scope, (set(reached) | set(hebb)) - known.keys())

    return await db.run(read)


async def graph(req: Request, src: Sources, st: State) -> dict | None:
    if req.mode != "deep":
        return None
    reached, hebb, rows = await graph_reach(src.db, req.scope, src.web, seeds_of(st.candidates, req.tuning.deep_seeds),
                                            {c.row["id"]: c.row for c in st.candidates})
    st.candidates, st.used = combine(st.candidates, reached, hebb, rows, req.tuning), "deep"
    return {"reached": len(reached)}
