"""Unit tests for strata_daemon.scoring. Expected values are worked out by hand in the
comment beside each one; the code under test is never used to produce them."""

from __future__ import annotations

import math

import pytest

from strata_daemon.config.tuning import Scoring
from strata_daemon.scoring import (
    PRESETS,
    EpisodeFeatures,
    ScoringParams,
    Weights,
    context_match,
    hybrid_strength,
    is_potentiated,
    learning_phase,
    recency_score,
    rfm_components,
    rfm_priority,
    score_episode,
    wilson_lower_bound,
    wilson_upper_bound,
    z_for_confidence,
)


def params_(**changes) -> ScoringParams:
    """The default preset and the tuned constants, with some fields changed."""
    return ScoringParams.configured("balanced", Scoring(), **changes)


HOUR = 3600.0
DAY = 86400.0
NOW = 1_700_000_000.0


# --- recency -------------------------------------------------------------

@pytest.mark.parametrize(
    ("hours", "count", "expected"),
    [
        (0.0, 0, 60.0),      # 100*0.6*1 + 100*0.4*log10(1)/4 = 60 + 0
        (168.0, 0, 30.0),    # one half-life: 100*0.6*0.5 = 30
        (168.0, 9, 40.0),    # 30 + 100*0.4*(log10(10)/4 = 0.25) = 30 + 10
        (336.0, 99, 35.0),   # 100*0.6*0.25 = 15; 100*0.4*(log10(100)/4 = 0.5) = 20
        (0.0, 9999, 100.0),  # 60 + 100*0.4*(log10(10000)/4 = 1) = 100
    ],
)
def test_recency_hand_values(hours: float, count: int, expected: float) -> None:
    assert recency_score(hours, count) == pytest.approx(expected)


def test_recency_is_a_true_half_life() -> None:
    # h = 72: at t = 72 the time term is exactly half: 100*1.0*0.5 = 50
    assert recency_score(72.0, 0, half_life_hours=72.0, time_weight=1.0,
                         frequency_weight=0.0) == pytest.approx(50.0)


def test_recency_frequency_boost_saturates_for_huge_counts() -> None:
    # log10(1e12+1)/4 ~ 3 -> capped at 1 -> boost 100*0.4 = 40; time term at 10 years ~ 0
    assert recency_score(87600.0, 10**12) == pytest.approx(40.0)


def test_recency_negative_inputs_count_as_zero() -> None:
    # t < 0 -> t = 0, f < 0 -> f = 0: 60 + 0
    assert recency_score(-50.0, -3) == pytest.approx(60.0)


def test_recency_clamps_to_0_and_100() -> None:
    # base 200: 200*0.6 + 200*0.4*0.25 (f=9) = 120 + 20 = 140 -> 100
    assert recency_score(0.0, 9, base=200.0) == 100.0
    # a negative time weight: 100*(-1)*1 + 0 = -100 -> 0
    assert recency_score(0.0, 0, time_weight=-1.0, frequency_weight=0.0) == 0.0


def test_recency_factual_bypasses_decay() -> None:
    # a year untouched would otherwise be 60*0.5**(8760/168) ~ 1e-14
    assert recency_score(8760.0, 0, factual=True) == 100.0


# --- hybrid decay and potentiation ----------------------------------------

@pytest.mark.parametrize(
    ("age", "count", "expected"),
    [
        (0.0, 0, 1.0),                 # exp(0)
        (1.0, 0, 0.36787944),          # exp(-1)
        (3.0, 0, 0.04978707),          # exp(-3), the boundary
        (10.0, 0, 0.02668023),         # exp(-3) * (10-3+1)**-0.3 = 0.04978707 * 0.53588673
        (1.0, 10, 0.90483742),         # potentiated m = 0.1: exp(-0.1)
        (10.0, 10, 0.69601557),        # exp(-0.3) * 8**-0.03 = 0.74081822 * 2**-0.09 (0.93952275)
    ],
)
def test_hybrid_strength_hand_values(age: float, count: int, expected: float) -> None:
    assert hybrid_strength(age, count) == pytest.approx(expected, rel=1e-6)


def test_hybrid_strength_is_continuous_at_the_boundary() -> None:
    # both phases give exp(-3) at age 3; the power term is 1**-0.3 = 1 there
    at = hybrid_strength(3.0, 0)
    assert hybrid_strength(3.0 + 1e-9, 0) == pytest.approx(at, rel=1e-6)
    assert hybrid_strength(3.0 - 1e-9, 0) == pytest.approx(at, rel=1e-6)


def test_hybrid_strength_floor_and_negative_age() -> None:
    # exp(-3) * 998**-0.3 = 0.04978707 * 0.12597 = 0.00627 -> floor 0.01
    assert hybrid_strength(1000.0, 0) == 0.01
    assert hybrid_strength(-5.0, 0) == 1.0  # negative age -> 0 -> exp(0)


def test_potentiation_threshold() -> None:
    assert is_potentiated(10) and not is_potentiated(9)
    assert is_potentiated(3, potentiation_accesses=3)
    # nine accesses decay normally (exp(-1)), ten decay 10x slower (exp(-0.1))
    assert hybrid_strength(1.0, 9) == pytest.approx(math.exp(-1.0))
    assert hybrid_strength(1.0, 10) == pytest.approx(math.exp(-0.1))


# --- RFM priority --------------------------------------------------------

def test_rfm_hand_values() -> None:
    # R = 1, F = ln1/ln101 = 0, I = 0.5: 0.3*1 + 0.2*0 + 0.5*0.5 = 0.55
    assert rfm_priority(0.0, 0, 0.5) == pytest.approx(0.55)
    # R = exp(-ln2) = 0.5, F = ln101/ln101 = 1, I = 1: 0.15 + 0.2 + 0.5 = 0.85
    assert rfm_priority(168.0, 100, 1.0) == pytest.approx(0.85)
    # F = ln(11)/ln(101) = 2.3978953/4.6151205 = 0.5195737
    assert rfm_components(0.0, 10, 0.0) == pytest.approx((1.0, 0.5195737, 0.0), rel=1e-6)


def test_rfm_clamps_and_caps() -> None:
    # huge n: F = min(1, ln(1e9+1)/ln(101)) = 1; importance 1.7 -> 1, -0.3 -> 0
    assert rfm_components(0.0, 10**9, 1.7) == (1.0, 1.0, 1.0)
    assert rfm_components(-10.0, -4, -0.3) == (1.0, 0.0, 0.0)  # negative age/count -> 0


def test_rfm_weights_are_normalised_and_validated() -> None:
    # (1, 1, 2) at R=1, F=0, I=0.5: (1 + 0 + 1) / 4 = 0.5
    assert rfm_priority(0.0, 0, 0.5, weights=(1.0, 1.0, 2.0)) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        rfm_priority(0.0, 0, 0.5, weights=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError):
        rfm_priority(0.0, 0, 0.5, weights=(-0.1, 0.6, 0.5))


# --- Wilson lower bound --------------------------------------------------

def test_z_for_confidence() -> None:
    assert z_for_confidence(0.95) == pytest.approx(1.959964, abs=1e-6)  # two-sided 97.5th pct
    assert z_for_confidence(0.99) == pytest.approx(2.575829, abs=1e-6)  # 99.5th pct
    for bad in (0.0, 1.0, 1.5, -0.2):
        with pytest.raises(ValueError):
            z_for_confidence(bad)


def test_wilson_hand_values() -> None:
    # s=1, f=0: p=1, z²=3.8416; (1 + 1.9208 - 1.96*sqrt(0 + 0.9604 = 0.98²)) / 4.8416
    #         = (2.9208 - 1.9208) / 4.8416 = 0.2065433
    assert wilson_lower_bound(1, 0) == pytest.approx(0.2065433, rel=1e-6)
    # s=5, f=5: (0.5 + 0.19208 - 1.96*sqrt(0.025 + 0.009604)) / 1.38416
    #         = (0.69208 - 1.96*0.1860215) / 1.38416 = 0.3274778 / 1.38416 = 0.2365896
    assert wilson_lower_bound(5, 5) == pytest.approx(0.2365896, rel=1e-6)
    # The upper bound is the same interval's other end: (0.69208 + 0.3646021) / 1.38416 = 0.7634104
    assert wilson_upper_bound(5, 5) == pytest.approx(0.7634104, rel=1e-6)
    # s=0, f=5: (0 + 0.38416 + 1.96*sqrt(0 + 0.038416)) / 1.76832 = 0.76832 / 1.76832 = 0.4344915
    assert wilson_upper_bound(0, 5) == pytest.approx(0.4344915, rel=1e-6)
    assert wilson_upper_bound(0, 0) == 1.0 and wilson_upper_bound(7, 0) <= 1.0


def test_wilson_edge_cases() -> None:
    assert wilson_lower_bound(0, 0) == 0.0  # n == 0
    # p = 0: z²/2n - z*sqrt(z²/4n²) = z²/2n - z²/2n = 0, never negative
    assert wilson_lower_bound(0, 10) == pytest.approx(0.0, abs=1e-12)
    # same rate, more evidence -> tighter, higher bound
    assert wilson_lower_bound(50, 50) > wilson_lower_bound(5, 5)
    # n = 1e9 all successes: z²/n is ~4e-9, so the bound is ~1 - 3.8e-9
    assert wilson_lower_bound(10**9, 0) == pytest.approx(1.0, abs=1e-8)


# --- context match ----------------------------------------------------------

def test_context_match() -> None:
    memory = {"env": " Coding ", "task": "review", "n": 3}
    # env matches (trim + case), task does not: 1/2
    assert context_match({"env": "coding", "task": "debug"}, memory) == pytest.approx(0.5)
    # goal missing from memory counts as a miss: 1/2
    assert context_match({"env": "CODING", "goal": "ship"}, memory) == pytest.approx(0.5)
    # non-string memory values compare as strings: "3" == str(3)
    assert context_match({"n": "3"}, memory) == 1.0
    assert context_match({}, memory) == 0.0  # empty query: no boost


# --- params, presets, phases ----------------------------------------------

def test_weights_validation() -> None:
    with pytest.raises(ValueError):
        Weights(0, 0, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        Weights(-0.1, 0.1, 0.05, 0.1, 0.1, 0.1)


def test_params_validation() -> None:
    with pytest.raises(ValueError):
        params_(time_weight=0.7, frequency_weight=0.4)  # sums to 1.1
    with pytest.raises(ValueError):
        params_(confidence=1.0)
    with pytest.raises(ValueError, match="thresholds must be one of penalty, filter"):
        params_(thresholds="hide")
    with pytest.raises(ValueError, match="cold_factor"):
        params_(cold_factor=0.0)
    with pytest.raises(ValueError, match="success_penalty"):
        params_(success_penalty=1.5)


def test_presets() -> None:
    assert set(PRESETS) == {"balanced", "aggressive", "long-term"}
    assert ScoringParams.configured("balanced", Scoring()).half_life_hours == 168.0
    assert ScoringParams.configured("aggressive", Scoring()).half_life_hours == 72.0
    long_term = ScoringParams.configured("long-term", Scoring(), min_feedback_trials=5)
    assert (long_term.half_life_hours, long_term.min_feedback_trials) == (720.0, 5)
    for params in (ScoringParams.configured(p, Scoring()) for p in PRESETS):
        # every preset must itself be a valid configuration (weights sum to 1)
        assert params.time_weight + params.frequency_weight == pytest.approx(1.0)


def test_unknown_preset_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="aggressive.*balanced.*long-term"):
        ScoringParams.configured("speedy", Scoring())


def test_learning_phase_needs_both_episodes_and_feedback() -> None:
    params = params_()  # 200 episodes, 20 feedback events
    assert learning_phase(199, 500, params) == "passive"
    assert learning_phase(5000, 19, params) == "passive"
    assert learning_phase(200, 20, params) == "active"


# --- score_episode ----------------------------------------------------------

def _features(**overrides: object) -> EpisodeFeatures:
    values: dict[str, object] = dict(
        event_at=NOW - 168 * HOUR, last_access_at=None, access_count=0, importance=0.5,
        successes=0, failures=0, factual=False, context={"env": "coding"},
    )
    values.update(overrides)
    return EpisodeFeatures(**values)  # type: ignore[arg-type]


def test_score_episode_hand_computed_breakdown() -> None:
    b = score_episode(_features(), 0.8, {"env": "coding"}, NOW, params_(), "active")
    assert b.recency == pytest.approx(0.3)          # 0.6*0.5**(168/168) + 0
    # exp(-3) * (7-3+1)**-0.3 = 0.0497871 * 0.6170339 = 0.0307203
    assert b.strength == pytest.approx(0.0307203, rel=1e-5)
    assert b.priority == pytest.approx(0.4)         # 0.3*0.5 + 0.2*0 + 0.5*0.5
    assert b.wilson == 0.0 and b.context == 1.0
    # (0.55*0.8 + 0.10*0.3 + 0.05*0.0307203 + 0.10*0.4 + 0.10*0 + 0.10*1) / 1.0
    # = 0.44 + 0.03 + 0.0015360 + 0.04 + 0 + 0.1 = 0.6115360
    assert b.composite == pytest.approx(0.611536, rel=1e-5)
    assert b.eligible and b.reason is None  # 0.3 >= 0.15, no feedback yet


def test_score_episode_uses_last_access_for_recency_and_event_time_for_age() -> None:
    f = _features(event_at=NOW - 21 * DAY, last_access_at=NOW)
    b = score_episode(f, 0.5, {}, NOW, params_())
    assert b.recency == pytest.approx(0.6)    # accessed just now: 0.6*1 + 0
    assert b.priority == pytest.approx(0.3 * 0.125 + 0.25)  # R at 504 h = 0.5**3


def test_score_episode_weights_are_normalised() -> None:
    # only relevance weighted (weight 2): composite = 2*0.7/2 = 0.7
    params = params_(weights=Weights(2.0, 0, 0, 0, 0, 0))
    assert score_episode(_features(), 0.7, {}, NOW, params).composite == pytest.approx(0.7)


def test_score_episode_clamps_relevance() -> None:
    params = params_(weights=Weights(1.0, 0, 0, 0, 0, 0))
    assert score_episode(_features(), 1.5, {}, NOW, params).relevance == 1.0
    assert score_episode(_features(), -0.4, {}, NOW, params).composite == 0.0


def test_stability_threshold_penalises_in_the_active_phase_and_filters_only_when_asked() -> None:
    stale = _features(event_at=NOW - 504 * HOUR)  # 0.6*0.5**3 = 0.075 < 0.15
    fresh = score_episode(stale, 0.9, {}, NOW, params_(), "passive")
    assert fresh.eligible and fresh.reason is None and fresh.penalty == 1.0
    active = score_episode(stale, 0.9, {}, NOW, params_(stability_penalty=0.7), "active")
    assert active.eligible  # ranked lower, still recalled
    assert active.reason == "below stability threshold (0.075 < 0.15): composite x0.7"
    assert active.penalty == 0.7 and active.composite == pytest.approx(fresh.composite * 0.7)
    filtered = score_episode(stale, 0.9, {}, NOW, params_(thresholds="filter"), "active")
    assert not filtered.eligible and filtered.reason == "below stability threshold (0.075 < 0.15): filtered out"
    assert filtered.composite == pytest.approx(fresh.composite)


def test_cold_tier_ranks_below_an_equal_hot_match_and_above_a_worse_one() -> None:
    params = params_(cold_factor=0.8)
    hot = score_episode(_features(), 0.6, {}, NOW, params)
    cold = score_episode(_features(cold=True), 0.6, {}, NOW, params)
    better_cold = score_episode(_features(cold=True), 1.0, {}, NOW, params)
    assert cold.tier == 0.8 and hot.tier == 1.0 and cold.eligible
    assert cold.composite == pytest.approx(hot.composite * 0.8)
    assert better_cold.composite > hot.composite


def test_factual_memories_bypass_recency_and_thresholds() -> None:
    stale_fact = _features(event_at=NOW - 504 * HOUR, factual=True, failures=50)
    b = score_episode(stale_fact, 0.9, {}, NOW, params_(), "active")
    assert b.recency == 1.0 and b.eligible


def test_success_threshold_needs_enough_trials_and_judges_the_record() -> None:
    fresh = dict(event_at=NOW)
    # 1 success in 5 (>= 3 trials): Wilson upper ~ (0.2 + 0.384 + 1.96*0.2654) / 1.768 ~ 0.624: not clearly bad
    mixed = score_episode(_features(successes=1, failures=4, **fresh), 0.9, {}, NOW, params_(), "active")
    assert mixed.penalty == 1.0 and mixed.reason is None
    # 0 of 5: upper ~ 0.434 < 0.5, bad beyond doubt
    bad = score_episode(_features(failures=5, **fresh), 0.9, {}, NOW, params_(), "active")
    assert bad.eligible and bad.penalty == 0.8
    assert bad.reason == "below success threshold (Wilson upper bound 0.434 < 0.5): composite x0.8"
    # Stale as well: both penalties apply
    both = score_episode(_features(failures=5, event_at=NOW - 504 * HOUR), 0.9, {}, NOW, params_(), "active")
    assert both.penalty == pytest.approx(0.98 * 0.8) and both.reason.count("below") == 2
    # 3 of 3 is the best record three trials can show: never judged down (its lower bound is 0.439)
    proven = score_episode(_features(successes=3, **fresh), 0.9, {}, NOW, params_(), "active")
    assert proven.penalty == 1.0 and proven.wilson == pytest.approx(0.4385, abs=1e-4)
    # The filter mode judges the lower bound, which hides 1 in 5 and even 3 of 3
    strict = params_(thresholds="filter")
    assert not score_episode(_features(successes=1, failures=4, **fresh), 0.9, {}, NOW, strict, "active").eligible
    assert not score_episode(_features(successes=3, **fresh), 0.9, {}, NOW, strict, "active").eligible
    # 0 of 2 is too few trials to judge
    early = score_episode(_features(failures=2, **fresh), 0.9, {}, NOW, strict, "active")
    assert early.eligible


def test_score_episode_future_event_and_bad_phase() -> None:
    future = _features(event_at=NOW + 10 * HOUR)  # negative elapsed time counts as zero
    b = score_episode(future, 0.5, {}, NOW, params_())
    assert (b.recency, b.strength) == (pytest.approx(0.6), 1.0)
    with pytest.raises(ValueError):
        score_episode(future, 0.5, {}, NOW, params_(), "dormant")


def test_breakdown_as_dict() -> None:
    d = score_episode(_features(), 0.8, {}, NOW, params_()).as_dict()
    assert list(d) == ["relevance", "recency", "strength", "priority", "wilson",
                       "context", "trust", "tier", "penalty", "composite", "eligible", "reason"]
    assert d["relevance"] == 0.8 and d["reason"] is None


def test_strength_summary_spreads_and_counts():
    from strata_daemon.scoring import strength_summary

    empty = strength_summary([])
    assert empty["episodes"] == 0 and empty["mean"] is None and empty["p50"] is None
    s = strength_summary([(0.0, 0), (1.0, 0), (30.0, 0), (30.0, 12)], potentiation_accesses=10)
    assert s["episodes"] == 4 and s["potentiated"] == 1
    assert s["p90"] == 1.0 and s["p10"] < 0.05 and s["weak"] == 1  # a month-old unrecalled memory is weak
    assert s["p10"] <= s["p50"] <= s["p90"] and 0 < s["mean"] < 1


def test_confidence_quality_and_interference_move_the_composite() -> None:
    base = score_episode(_features(), 0.8, {}, NOW, params_())
    assert base.trust == 1.0
    stale = score_episode(_features(confidence=0.1), 0.8, {}, NOW, params_())
    assert stale.trust == pytest.approx(1 - 0.5 * 0.9) and stale.composite == pytest.approx(base.composite * 0.55)
    good = score_episode(_features(good=True), 0.8, {}, NOW, params_(quality_boost=0.2))
    assert good.composite == pytest.approx(base.composite * 1.2)
    weakened = score_episode(_features(strength_factor=0.5), 0.8, {}, NOW, params_())
    assert weakened.strength == pytest.approx(base.strength * 0.5) and weakened.composite < base.composite
    with pytest.raises(ValueError, match="confidence_weight"):
        params_(confidence_weight=2.0)
