"""Pure scoring functions for ranking remembered episodes (no I/O)."""

from strata_daemon.scoring.composite import (
                                             PRESETS,
                                             EpisodeFeatures,
                                             ScoreBreakdown,
                                             ScoringParams,
                                             Weights,
                                             learning_phase,
                                             score_episode,
)
from strata_daemon.scoring.context import context_match
from strata_daemon.scoring.decay import hybrid_strength, is_potentiated, strength_summary
from strata_daemon.scoring.recency import recency_score
from strata_daemon.scoring.rfm import rfm_components, rfm_priority
from strata_daemon.scoring.wilson import wilson_lower_bound, wilson_upper_bound, z_for_confidence

__all__ = [
    "PRESETS", "EpisodeFeatures", "ScoreBreakdown", "ScoringParams", "Weights",
    "context_match", "hybrid_strength", "is_potentiated", "learning_phase",
    "recency_score", "rfm_components", "rfm_priority", "score_episode", "strength_summary",
    "wilson_lower_bound", "wilson_upper_bound", "z_for_confidence",
]
