"""The composite score: a weighted mean of six 0..1 signals (search relevance,
recency, hybrid strength, RFM priority, Wilson bound, context match), times the
factors that demote without hiding (trust, tier, threshold penalty), plus the
thresholds, presets and passive learning phase.

Forgetting demotes, it never hides: by default a memory below a threshold, or in
the cold tier, ranks lower by a documented factor and says why; only the opt-in
"filter" mode (the thresholds as strict cut-offs) makes thresholds exclude. The breakdown
keeps every signal so a result can explain itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from strata_daemon.config.tuning import Scoring
from strata_daemon.scoring.context import context_match
from strata_daemon.scoring.decay import hybrid_strength
from strata_daemon.scoring.recency import recency_score
from strata_daemon.scoring.rfm import rfm_priority
from strata_daemon.scoring.wilson import wilson_lower_bound, wilson_upper_bound, z_for_confidence

__all__ = ["PRESETS", "THRESHOLD_MODES", "EpisodeFeatures", "ScoreBreakdown", "ScoringParams", "Weights",
           "learning_phase", "missed_thresholds", "score_episode"]

PASSIVE = "passive"
ACTIVE = "active"
THRESHOLD_MODES = ("penalty", "filter")

# inv_cdf is not free and a daemon uses one or two confidence levels at most.
_z_for = lru_cache(maxsize=8)(z_for_confidence)


@dataclass(frozen=True)
class Weights:
    """Weights of the composite; all >= 0, not all zero. Their values are tuned constants
    (config/tuning.py ScoringWeights), written there once."""

    relevance: float
    recency: float
    strength: float
    priority: float
    wilson: float
    context: float

    def __post_init__(self) -> None:
        values = (self.relevance, self.recency, self.strength,
                  self.priority, self.wilson, self.context)
        if min(values) < 0 or sum(values) <= 0:
            raise ValueError(f"composite weights must be >= 0 and not all zero: {self!r}")

    @property
    def total(self) -> float:
        return (self.relevance + self.recency + self.strength
                + self.priority + self.wilson + self.context)


# Each stability threshold is where a never-accessed memory lands after a whole
# number of half-lives (time_weight * 0.5**k), so "stale" has a plain meaning.
PRESETS: dict[str, dict[str, Any]] = {
    # The default. 0.6 * 0.5**2 = 0.15: stale after two half-lives (14 days).
    # Wilson >= 0.5: the memory has helped more often than not.
    "balanced": {"half_life_hours": 168.0, "time_weight": 0.6, "frequency_weight": 0.4,
                 "stability_threshold": 0.15, "success_threshold": 0.5},
    # Conversations: 3-day half-life, more weight on time than frequency, since
    # yesterday's chat beats an old popular one. 0.7 * 0.5**2: stale after 6 days.
    "aggressive": {"half_life_hours": 72.0, "time_weight": 0.7, "frequency_weight": 0.3,
                   "stability_threshold": 0.175, "success_threshold": 0.5},
    # Knowledge bases: 30-day half-life, more weight on frequency, as reference
    # material is read rarely but stays true. 0.4 * 0.5**3: stale after 90 days.
    # Wilson >= 0.6: what is handed out as knowledge needs a clearly good record.
    "long-term": {"half_life_hours": 720.0, "time_weight": 0.4, "frequency_weight": 0.6,
                  "stability_threshold": 0.05, "success_threshold": 0.6},
}


@dataclass(frozen=True)
class ScoringParams:
    """What scoring weighs with: a preset's half-life and thresholds (PRESETS), the tuned
    constants (config/tuning.py: Scoring) for the rest. Built by `configured`."""
    half_life_hours: float
    time_weight: float
    frequency_weight: float
    stability_threshold: float   # on recency/100
    success_threshold: float     # on the Wilson lower bound
    confidence: float
    min_feedback_trials: int     # fewer rated recalls: success threshold abstains
    passive_min_episodes: int    # thresholds stay off until the namespace has
    passive_min_feedback: int    # this many episodes and feedback events
    potentiation_accesses: int
    confidence_weight: float     # how far a memory at confidence 0 falls (consolidation's stale decay)
    quality_boost: float         # how far a promoted ("good") memory rises
    # How the active phase's thresholds act: "penalty" multiplies the composite of a memory
    # below one by that threshold's penalty; "filter" leaves it out.
    thresholds: str
    stability_penalty: float     # stale: a tie-breaker, since age alone says little
    success_penalty: float       # a record clearly below the bar: the evidence is the agent's
    cold_factor: float           # the composite of a cold-tier memory is multiplied by this
    weights: Weights

    def __post_init__(self) -> None:
        problems = []
        if self.half_life_hours <= 0:
            problems.append("half_life_hours must be > 0")
        if min(self.time_weight, self.frequency_weight) < 0 or \
                abs(self.time_weight + self.frequency_weight - 1.0) > 1e-9:
            problems.append("time_weight and frequency_weight must be >= 0 and sum to 1")
        if not (0.0 <= self.stability_threshold <= 1.0 and 0.0 <= self.success_threshold <= 1.0):
            problems.append("stability_threshold and success_threshold must be within 0..1")
        if min(self.min_feedback_trials, self.passive_min_episodes, self.passive_min_feedback) < 0 \
                or self.potentiation_accesses < 1:
            problems.append("counts must be >= 0 (potentiation_accesses >= 1)")
        if not (0.0 <= self.confidence_weight <= 1.0 and 0.0 <= self.quality_boost <= 1.0):
            problems.append("confidence_weight and quality_boost must be within 0..1")
        if self.thresholds not in THRESHOLD_MODES:
            problems.append(f"thresholds must be one of {', '.join(THRESHOLD_MODES)}")
        if not all(0.0 < v <= 1.0 for v in (self.stability_penalty, self.success_penalty, self.cold_factor)):
            problems.append("stability_penalty, success_penalty and cold_factor must be above 0 and at most 1")
        if not isinstance(self.weights, Weights):
            problems.append("weights must be a Weights instance")
        if problems:
            raise ValueError(f"invalid scoring params ({'; '.join(problems)}): {self!r}")
        _z_for(self.confidence)  # rejects a confidence outside (0, 1) now, not at recall time

    @classmethod
    def configured(cls, preset: str, tuned: Scoring, **overrides: Any) -> "ScoringParams":
        """A preset's values, the tuned constants for the rest; a constant that is set (not None)
        takes the preset's place, and any field may be overridden by keyword."""
        try:
            values = dict(PRESETS[preset])
        except KeyError:
            valid = ", ".join(sorted(PRESETS))
            raise ValueError(f"unknown scoring preset {preset!r}; valid presets: {valid}") from None
        for name in ("half_life_hours", "stability_threshold", "success_threshold"):
            if getattr(tuned, name) is not None:
                values[name] = float(getattr(tuned, name))
        if tuned.time_weight is not None:
            values["time_weight"] = float(tuned.time_weight)
            values["frequency_weight"] = 1.0 - values["time_weight"]
        for name in ("confidence", "min_feedback_trials", "passive_min_episodes", "passive_min_feedback",
                     "potentiation_accesses", "confidence_weight", "quality_boost", "thresholds",
                     "stability_penalty", "success_penalty", "cold_factor"):
            values[name] = getattr(tuned, name)
        values["weights"] = Weights(**dataclasses.asdict(tuned.weights))
        values.update(overrides)
        return cls(**values)


def learning_phase(episode_count: int, feedback_count: int, params: ScoringParams) -> str:
    """"passive" until there is enough data for thresholds to be trusted."""
    enough = (episode_count >= params.passive_min_episodes
              and feedback_count >= params.passive_min_feedback)
    return ACTIVE if enough else PASSIVE


# Named tuples, not frozen dataclasses, which cost about five microseconds each to build:
# a recall builds both records for every hit it explains.
class EpisodeFeatures(NamedTuple):
    event_at: float                 # unix seconds, when it happened
    last_access_at: float | None
    access_count: int
    importance: float
    successes: int
    failures: int
    factual: bool
    context: Mapping[str, object]
    # Set by consolidation: stale decay lowers confidence, promotion marks good quality,
    # interference lowers the strength factor.
    confidence: float = 1.0
    good: bool = False
    strength_factor: float = 1.0
    cold: bool = False  # in the cold tier: archived by consolidation, or superseded by a merge


class ScoreBreakdown(NamedTuple):
    relevance: float
    recency: float
    strength: float
    priority: float
    wilson: float
    context: float
    trust: float  # the composite's multiplier from confidence and quality
    tier: float  # its multiplier from the tier: 1 when hot, cold_factor when cold
    penalty: float  # its multiplier from the thresholds missed (penalty mode)
    composite: float
    eligible: bool
    reason: str | None  # the thresholds missed, and what that did

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


def score_episode(features: EpisodeFeatures, relevance: float, query_context: Mapping[str, str],
                  now: float, params: ScoringParams, phase: str = PASSIVE) -> ScoreBreakdown:
    """Every signal for one candidate, its composite, and whether it may be recalled."""
    if phase != PASSIVE and phase != ACTIVE:
        raise ValueError(f"phase must be 'passive' or 'active', got {phase!r}")
    accessed = features.last_access_at if features.last_access_at is not None else features.event_at
    age_seconds = now - features.event_at
    recency = 1.0 if features.factual else recency_score(
        (now - accessed) / 3600.0, features.access_count, half_life_hours=params.half_life_hours,
        time_weight=params.time_weight, frequency_weight=params.frequency_weight) / 100.0
    strength = features.strength_factor * hybrid_strength(age_seconds / 86400.0, features.access_count,
                                                          potentiation_accesses=params.potentiation_accesses)
    priority = rfm_priority(age_seconds / 3600.0, features.access_count, features.importance,
                            half_life_hours=params.half_life_hours)
    wilson = wilson_lower_bound(features.successes, features.failures, _z_for(params.confidence))
    ctx = context_match(query_context, features.context)
    rel = 0.0 if relevance < 0.0 else (1.0 if relevance > 1.0 else float(relevance))

    w = params.weights
    trust = (1.0 - params.confidence_weight * (1.0 - features.confidence)) * (
        1.0 + params.quality_boost if features.good else 1.0)
    tier = params.cold_factor if features.cold else 1.0
    missed = [] if phase == PASSIVE or features.factual else missed_thresholds(
        recency, features.successes, features.failures, params)
    filtered = bool(missed) and params.thresholds == "filter"
    penalty = 1.0
    for _, factor in [] if filtered else missed:
        penalty *= factor
    composite = trust * tier * penalty * (w.relevance * rel + w.recency * recency + w.strength * strength
                                          + w.priority * priority + w.wilson * wilson + w.context * ctx) / w.total
    reason = None
    if missed:
        reason = "; ".join(why for why, _ in missed) + (": filtered out" if filtered else f": composite x{penalty:.3g}")
    return ScoreBreakdown(rel, recency, strength, priority, wilson, ctx, trust, tier, penalty, composite,
                          not filtered, reason)


def missed_thresholds(recency: float, successes: int, failures: int,
                      params: ScoringParams) -> list[tuple[str, float]]:
    """The active phase's thresholds a memory is below, as a person reads them, each with its
    penalty. The success threshold judges a memory only after `min_feedback_trials` rated
    recalls; in penalty mode it judges the record (the Wilson upper bound: bad beyond doubt), in
    filter mode the evidence (the lower bound, as a strict cut-off reads it, which also catches
    a short perfect record)."""
    out = []
    if recency < params.stability_threshold:
        out.append((f"below stability threshold ({recency:.3g} < {params.stability_threshold:.3g})",
                    params.stability_penalty))
    if successes + failures >= params.min_feedback_trials:
        z = _z_for(params.confidence)
        bound, which = ((wilson_lower_bound(successes, failures, z), "lower") if params.thresholds == "filter"
                        else (wilson_upper_bound(successes, failures, z), "upper"))
        if bound < params.success_threshold:
            out.append((f"below success threshold (Wilson {which} bound {bound:.3g} < "
                        f"{params.success_threshold:.3g})", params.success_penalty))
    return out
