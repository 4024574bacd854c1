"""UCB1 over the arms: mean reward plus an exploration bonus that shrinks as an arm
is pulled, c x sqrt(ln(total pulls + 1) / pulls). Pure: no I/O."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence


@dataclass
class ArmStats:
    pulls: int = 0
    reward_sum: float = 0.0

    @property
    def mean(self) -> float:
        return self.reward_sum / self.pulls if self.pulls else 0.0

    def add(self, reward: float) -> None:
        self.pulls += 1
        self.reward_sum += reward


def ucb(stats: Mapping[str, ArmStats], c: float) -> dict[str, float]:
    """Each arm's UCB1 score; an arm never pulled scores infinity (it is tried first)."""
    total = sum(s.pulls for s in stats.values())
    return {name: (math.inf if s.pulls == 0 else s.mean + c * math.sqrt(math.log(total + 1) / s.pulls))
            for name, s in stats.items()}


def choose(order: Sequence[str], stats: Mapping[str, ArmStats], c: float) -> str:
    """The arm to pull next: the highest UCB1 score; ties go to the arm listed first."""
    scores = ucb({name: stats.get(name, ArmStats()) for name in order}, c)
    return max(order, key=lambda name: (scores[name], -order.index(name)))


def leader(order: Sequence[str], stats: Mapping[str, ArmStats], min_pulls: int) -> str | None:
    """The arm with the best mean among those pulled at least `min_pulls` times."""
    ready = [n for n in order if stats.get(n, ArmStats()).pulls >= min_pulls]
    return max(ready, key=lambda n: (stats[n].mean, -order.index(n))) if ready else None


def paired_gain(leader: Sequence[float], default: Sequence[float]) -> tuple[float, float]:
    """The leader's mean gain over the default on the same episodes, and its standard error
    (infinite with fewer than two episodes): the gain must stand out of the noise of the
    episodes, because the leader was chosen as the best of several noisy means."""
    diffs = [a - b for a, b in zip(leader, default, strict=True)]
    if not diffs:
        return 0.0, math.inf
    gain = statistics.fmean(diffs)
    return gain, statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else math.inf


def clearly_better(leader: Sequence[float], default: Sequence[float], min_gain: float, z: float
                   ) -> tuple[float, float, bool]:
    """(gain, standard error, adopt): the leader is adopted when its gain on the same episodes
    reaches `min_gain` and `z` standard errors."""
    gain, error = paired_gain(leader, default)
    return gain, error, gain >= min_gain and gain >= z * error


def held_apart(episodes: Sequence[Mapping], confirm: int) -> tuple[list, list]:
    """(the pulls' episodes, the confirmation's): episodes of even id are pulled on, the newest
    `confirm` of odd id confirm. A leader is the best of several noisy means on the episodes it
    was pulled on; confirmed on the same, it keeps the luck that made it lead. By id, not by
    age, so that an episode stays on its side from run to run (the statistics carry over), and
    both sides span the same stretch of time. A single episode serves both."""
    pool = [e for e in episodes if e["id"] % 2 == 0]
    held = [e for e in episodes if e["id"] % 2 == 1][-confirm:]
    if not pool or not held:  # one episode, or ids that all share a parity
        return list(episodes), list(episodes[-confirm:])
    return pool, held
