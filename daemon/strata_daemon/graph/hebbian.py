"""Edge arithmetic of the spiderweb, pure functions (no I/O).

The Hebbian rules: a new edge starts at `start` (1.0), each co-activation adds `increment`
(1.0) up to `cap` (10.0), a decay run multiplies every weight by `factor` (0.95) and edges
that fall below `prune_below` (0.01) go.

Decay is lazy so that a run costs nothing per edge. An edge stores `level`, the logarithm of
its weight minus the namespace's decay `clock` at the time it was written; the clock is the
sum of ln(factor) over every decay run so far (it only goes down). The weight now is
exp(level + clock). A decay run moves the clock, and pruning is a range delete on `level`:
weight < prune_below  <=>  level < ln(prune_below) - clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Rules:
    start: float = 1.0
    increment: float = 1.0
    cap: float = 10.0
    factor: float = 0.95
    prune_below: float = 0.01

    @classmethod
    def from_config(cls, cfg) -> "Rules":
        return cls(float(cfg["web.edge_start"]), float(cfg["web.edge_increment"]), float(cfg["web.edge_cap"]),
                   float(cfg["web.decay_factor"]), float(cfg["web.prune_below"]))

    def strengthened_level(self, level: float | None, clock: float) -> float:
        """The level to store for an edge after one co-activation, from its stored level (None:
        the edge is new) at the decay clock. A method so that whoever holds the rules can hand
        the arithmetic to store.graph.coactivate, which only reads and writes levels."""
        return level_of(strengthened(None if level is None else weight_of(level, clock), self), clock)


def strengthened(weight: float | None, rules: Rules) -> float:
    """The weight after one co-activation; None: the edge is new."""
    if weight is None:
        return min(rules.start, rules.cap)
    return min(weight + rules.increment, rules.cap)


def level_of(weight: float, clock: float) -> float:
    return math.log(weight) - clock


def weight_of(level: float, clock: float) -> float:
    return math.exp(level + clock)


def advanced(clock: float, rules: Rules) -> float:
    """The decay clock after one run."""
    return clock + math.log(rules.factor)


def prune_level(clock: float, rules: Rules) -> float:
    """Edges whose level is below this weigh less than `prune_below`."""
    return math.log(rules.prune_below) - clock


def pairs(nodes: list[str]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct nodes, each as (smaller, larger): an edge has no direction."""
    unique = sorted(set(nodes))
    return [(a, b) for i, a in enumerate(unique) for b in unique[i + 1:]]
