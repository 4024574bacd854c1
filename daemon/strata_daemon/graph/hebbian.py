"""Edge arithmetic of the spiderweb, pure functions (no I/O).

The Hebbian rules (config/tuning.py, Graph): a new edge starts at `edge_start`, each
co-activation adds `edge_increment` up to `edge_cap`, a decay run multiplies every weight by
`decay_factor` and edges that fall below `prune_below` go.

Decay is lazy so that a run costs nothing per edge. An edge stores `level`, the logarithm of
its weight minus the namespace's decay `clock` at the time it was written; the clock is the
sum of ln(factor) over every decay run so far (it only goes down). The weight now is
exp(level + clock). A decay run moves the clock, and pruning is a range delete on `level`:
weight < prune_below  <=>  level < ln(prune_below) - clock.
"""

from __future__ import annotations

import math

from strata_daemon.config.tuning import Graph


def strengthened_level(rules: Graph, level: float | None, clock: float) -> float:
    """The level to store for an edge after one co-activation, from its stored level (None: the
    edge is new) at the decay clock: what store.graph.coactivate, which only reads and writes
    levels, is handed (bound to the rules) as the arithmetic."""
    return level_of(strengthened(None if level is None else weight_of(level, clock), rules), clock)


def strengthened(weight: float | None, rules: Graph) -> float:
    """The weight after one co-activation; None: the edge is new."""
    if weight is None:
        return min(rules.edge_start, rules.edge_cap)
    return min(weight + rules.edge_increment, rules.edge_cap)


def level_of(weight: float, clock: float) -> float:
    return math.log(weight) - clock


def weight_of(level: float, clock: float) -> float:
    return math.exp(level + clock)


def advanced(clock: float, rules: Graph) -> float:
    """The decay clock after one run."""
    return clock + math.log(rules.decay_factor)


def prune_level(clock: float, rules: Graph) -> float:
    """Edges whose level is below this weigh less than `prune_below`."""
    return math.log(rules.prune_below) - clock


def pairs(nodes: list[str]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct nodes, each as (smaller, larger): an edge has no direction."""
    unique = sorted(set(nodes))
    return [(a, b) for i, a in enumerate(unique) for b in unique[i + 1:]]
