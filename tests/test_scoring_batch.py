"""The numpy composite recall ranks by agrees with score_episode, the scalar reference, on
random candidates that reach every branch: future and ancient memories, never and often
accessed, potentiated, factual, promoted, hot and cold, rated and unrated, relevance and
importance outside 0..1, both learning phases, both threshold modes and every preset."""

from __future__ import annotations

import random

import numpy as np
import pytest

from strata_daemon.config.tuning import Scoring
from strata_daemon.scoring import PRESETS, EpisodeFeatures, ScoringParams, context_match, score_episode
from strata_daemon.scoring.batch import Columns, composites

NOW = 1_700_000_000.0
DAY = 86400.0


def _row(rng: random.Random) -> dict:
    event_at = NOW - rng.choice((-2 * DAY, 0.0, rng.uniform(0, 3 * DAY), rng.uniform(3 * DAY, 900 * DAY)))
    accessed = rng.choice((None, event_at + rng.uniform(0, 10 * DAY), NOW + DAY))
    return {"event_at": event_at, "last_access_at": accessed, "access_count": rng.choice((0, 1, 9, 10, 500, 20000)),
            "importance": rng.uniform(-0.5, 1.5), "success_count": rng.choice((0, 0, 1, 3, 40)),
            "failure_count": rng.choice((0, 0, 2, 5, 60)), "factual": rng.random() < 0.2,
            "confidence": rng.uniform(0, 1), "quality": rng.choice((None, "good", "bad")),
            "strength_factor": rng.uniform(0.2, 1), "tier": rng.choice(("hot", "cold")),
            "context": {k: v for k, v in (("env", rng.choice(("prod", "Prod ", "dev"))), ("task", "deploy"))
                        if rng.random() < 0.6}}


def _features(r: dict) -> EpisodeFeatures:
    return EpisodeFeatures(r["event_at"], r["last_access_at"], r["access_count"], r["importance"], r["success_count"],
                           r["failure_count"], bool(r["factual"]), r["context"], r["confidence"], r["quality"] == "good",
                           r["strength_factor"], r["tier"] == "cold")


@pytest.mark.parametrize("thresholds", ("penalty", "filter"))
@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("phase", ("passive", "active"))
def test_batch_composites_equal_the_scalar_reference(preset, phase, thresholds):
    rng = random.Random(f"{preset}-{phase}")
    params = ScoringParams.configured(preset, Scoring(), thresholds=thresholds, cold_factor=0.7,
                                      stability_penalty=0.6, success_penalty=0.5)
    rows = [_row(rng) for _ in range(400)]
    relevance = [rng.uniform(-0.2, 1.3) for _ in rows]
    asked = {"env": "prod", "task": "deploy"}
    context = [context_match(asked, r["context"]) for r in rows]
    composite, eligible = composites(Columns.of(rows), np.array(relevance), np.array(context), NOW, params, phase)
    expected = [score_episode(_features(r), rel, asked, NOW, params, phase) for r, rel in zip(rows, relevance)]
    assert len(set(context)) == 3  # no key, one, both
    assert composite == pytest.approx([b.composite for b in expected], rel=1e-12, abs=1e-12)
    assert eligible.tolist() == [b.eligible for b in expected]
    if phase == "active" and thresholds == "filter":
        assert 0 < sum(eligible) < len(rows)  # both branches of the thresholds were reached
    else:  # penalties and the cold tier rank, they never hide
        assert eligible.all()
    if phase == "active" and thresholds == "penalty":
        penalised = [b.penalty for b in expected]
        assert {1.0, 0.6, 0.5, 0.3} <= set(map(lambda p: round(p, 6), penalised))  # none, either and both
    assert {b.tier for b in expected} == {1.0, 0.7}


def test_batch_of_nothing_and_a_bad_phase():
    composite, eligible = composites(Columns.of([]), np.zeros(0), np.zeros(0), NOW, ScoringParams.configured("balanced", Scoring()))
    assert composite.shape == eligible.shape == (0,)
    with pytest.raises(ValueError, match="phase"):
        composites(Columns.of([]), np.zeros(0), np.zeros(0), NOW, ScoringParams.configured("balanced", Scoring()), "eager")
