"""Arms: named recall strategies. An arm is a mode, optionally with a preset of recall and scoring
settings laid over the configuration ("deep+relevance"). Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from strata_daemon.config.settings import MODES

# What a preset may change: how candidates are found, fused and scored. Not the mode (the arm
# names it), k (the caller's) or anything about embeddings (one index serves every arm).
_TUNABLE_PREFIXES = ("recall.", "scoring.")
_FIXED = {"recall.mode", "recall.k", "recall.vector_cache", "recall.vector_exact_below"}

BUILTIN_PRESETS: dict[str, dict[str, Any]] = {
    # The composite almost only by how well the text matches: for agents whose questions are
    # lookups, where usage history and age say little.
    "relevance": {"scoring.weights.relevance": 0.85, "scoring.weights.recency": 0.03,
                  "scoring.weights.strength": 0.03, "scoring.weights.priority": 0.03,
                  "scoring.weights.wilson": 0.03, "scoring.weights.context": 0.03},
    # Newer first: for agents whose world changes fast (status, tasks).
    "recent": {"scoring.weights.relevance": 0.45, "scoring.weights.recency": 0.30,
               "scoring.weights.strength": 0.10},
    # What has helped before: more weight on feedback and use.
    "proven": {"scoring.weights.relevance": 0.45, "scoring.weights.priority": 0.15,
               "scoring.weights.wilson": 0.25},
    # The vector list counts more (paraphrase-heavy questions) or less (identifiers, codes).
    "semantic": {"recall.vector_weight": 1.2},
    "lexical": {"recall.vector_weight": 0.35},
    # The long-term preset's thresholds (30-day half-life, stale after 90 days): for agents that
    # need old memories the default thresholds would already hide in the active phase.
    "lasting": {"scoring.preset": "long-term"},
}


# How much of the home each mode searches: fast the question's words, balanced also the vectors
# and the graph, deep also a second hop and the cross-encoder.
SEARCH_DEPTH = {"fast": 0, "balanced": 1, "deep": 2}


@dataclass(frozen=True)
class Arm:
    name: str
    mode: str
    preset: str | None
    overrides: tuple[tuple[str, Any], ...] = ()

    def searches_less_than(self, other: "Arm") -> bool:
        return SEARCH_DEPTH[self.mode] < SEARCH_DEPTH[other.mode]


def preset_problem(name: str, preset: Any, known: Mapping[str, Any]) -> str | None:
    """Why a user's preset is unusable, or None; `known` maps setting keys to their defaults."""
    if not isinstance(preset, dict) or not preset:
        return f"preset {name!r} must be a non-empty table of settings"
    for key, value in preset.items():
        if key not in known or not key.startswith(_TUNABLE_PREFIXES) or key in _FIXED:
            return f"preset {name!r}: {key!r} is not a recall.* or scoring.* setting a preset may change"
        default = known[key]
        if default is not None and type(value) is not type(default) and not (
                isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool)):
            return f"preset {name!r}: {key} must have the type of its default ({default!r})"
    return None


def presets_of(user: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The built-in presets, with the user's (same name: the user's wins)."""
    return {**BUILTIN_PRESETS, **{k: dict(v) for k, v in user.items()}}


def parse_arm(name: str, presets: Mapping[str, Mapping[str, Any]]) -> Arm:
    """"mode" or "mode+preset"; ValueError naming what is wrong."""
    if not isinstance(name, str):
        raise ValueError(f"arm {name!r} must be a string")
    mode, _, preset = name.partition("+")
    if mode not in MODES:
        raise ValueError(f"arm {name!r}: {mode!r} is not a mode ({', '.join(MODES)})")
    if not preset:
        return Arm(name, mode, None)
    if preset not in presets:
        raise ValueError(f"arm {name!r}: no preset {preset!r} (presets: {', '.join(sorted(presets))})")
    return Arm(name, mode, preset, tuple(sorted(presets[preset].items())))


def arms_of(names: list[str], default_mode: str, presets: Mapping[str, Mapping[str, Any]]) -> list[Arm]:
    """The configured arms, the default strategy (the configured mode, no preset) first."""
    out = [Arm(default_mode, default_mode, None)]
    for name in names:
        arm = parse_arm(name, presets)
        if arm.name not in {a.name for a in out}:
            out.append(arm)
    return out
