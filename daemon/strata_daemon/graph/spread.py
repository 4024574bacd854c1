"""Spreading activation over the spiderweb, a pure function over a neighbour lookup.

Each seed holds activation 1.0. A node passes activation x (weight / cap) to each
neighbour (weights never exceed the cap, so activation stays in 0..1); with fan-out
normalisation it passes that divided by the square root of its number of neighbours, so a
hub linked to everything does not light up the whole graph. A node keeps the best
activation that reaches it; nodes below the threshold are neither returned nor expanded.
The search is breadth-first, one lookup per depth, and asks the lookup only for edges heavy
enough to matter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable

from strata_daemon.errors import InvalidInput

# (nodes, least useful weight per node) -> node -> [(neighbour, weight, "edge" or a link type)].
# An edge lighter than a node's floor cannot carry activation above the threshold, so a lookup
# may leave it out.
Neighbours = Callable[[list[str], dict[str, float]], dict[str, list[tuple[str, float, str]]]]


def check_range(depth: int, threshold: float, max_depth: int = 5) -> None:
    """Refuse a depth or threshold a spread cannot use, before any read: they come from people
    and agents (`web spread`, `related`, `web neighbors`)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= max_depth:
        raise InvalidInput(f"depth must be a whole number from 1 to {max_depth}, not {depth!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise InvalidInput(f"threshold must be above 0 and at most 1, not {threshold!r}")


def strength(weight: float, cap: float) -> float:
    """An edge's strength: the share of a node's activation one hop along it passes on (weight /
    cap, at most 1). A spread, `related`, `web neighbors` and deep recall all read edges by it;
    a spread follows an edge only where what it passes reaches the threshold."""
    return min(weight / cap, 1.0)


@dataclass
class Reached:
    node: str
    activation: float
    depth: int
    path: tuple[str, ...]  # seed first, this node last
    weight: float  # of the last edge on the path
    via: str = ""  # what that last edge is: "edge" (Hebbian) or a link type

    def as_dict(self) -> dict:
        return {"node": self.node, "activation": round(self.activation, 6), "depth": self.depth,
                "path": list(self.path), "weight": round(self.weight, 6), "via": self.via}


def spread(seeds: Iterable[str], neighbours: Neighbours, *, depth: int, threshold: float, cap: float,
           fan_out: bool = True) -> list[Reached]:
    """Nodes reached from the seeds (seeds excluded), most activated first."""
    seed_set = list(dict.fromkeys(seeds))
    best: dict[str, Reached] = {s: Reached(s, 1.0, 0, (s,), 0.0) for s in seed_set}
    frontier = seed_set
    for level in range(1, depth + 1):
        if not frontier:
            break
        found = neighbours(frontier, {n: threshold * cap / best[n].activation for n in frontier})
        grown: list[str] = []
        for node in frontier:
            edges = found.get(node, [])
            if not edges:
                continue
            here = best[node]
            share = 1.0 / math.sqrt(len(edges)) if fan_out else 1.0
            for other, weight, via in edges:
                activation = here.activation * strength(weight, cap) * share
                if activation < threshold:
                    continue
                known = best.get(other)
                if known is None:
                    best[other] = Reached(other, activation, level, here.path + (other,), weight, via)
                    grown.append(other)
                elif activation > known.activation and other not in seed_set:
                    best[other] = Reached(other, activation, level, here.path + (other,), weight, via)
        frontier = grown
    out = [r for n, r in best.items() if n not in seed_set]
    out.sort(key=lambda r: (-r.activation, r.depth, r.node))
    return out
