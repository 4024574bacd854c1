"""The composition root: a home's configuration checked whole, and the services of one agent
namespace built from it, each handed the settings and tuned constants it uses. Nothing else
builds a layer's service; the facade (memory.py) holds what this returns."""

from __future__ import annotations

from functools import cached_property

from strata_daemon.app.phases.steps import STEP_KEYS, WAKE_KEYS, spec_problem
from strata_daemon.base.credentials import Redactor
from strata_daemon.base.private import redaction_key
from strata_daemon.arena.arms import Arm, arms_of, preset_problem, presets_of
from strata_daemon.arena.reward import check as check_reward
from strata_daemon.config import overrides
from strata_daemon.config.home import Home
from strata_daemon.config.load import Config, overlay
from strata_daemon.config.settings import BY_KEY
from strata_daemon.consolidation.rules import RULES
from strata_daemon.embedding.models import Models
from strata_daemon.episodes.model import Limits
from strata_daemon.errors import ConfigError
from strata_daemon.facts.rules import compile_rules
from strata_daemon.scoring import ScoringParams
from strata_daemon.store.db import Database


def configuration(home: Home) -> Config:
    """The home's strata.toml, checked whole: each layer checks what it will be handed."""
    config = home.config()
    check(config)
    return config


def scoring_params(config: Config) -> ScoringParams:
    try:
        return ScoringParams.configured(config["scoring.preset"], config.tuning.scoring)
    except ValueError as e:
        raise ConfigError(f"scoring settings: {e}") from None


def arms(config: Config) -> list[Arm]:
    """The arena's arms: the configured mode first, then arena.arms with their presets."""
    return arms_of(list(config["arena.arms"]), config["recall.mode"], presets_of(config["arena.presets"]))


def check(config: Config) -> None:
    """What a layer refuses to be handed, said as a configuration error naming the key."""
    where = str(config.path) if config.path else "the defaults"
    scoring_params(config)  # the weights and the preset's combination
    try:
        check_reward(config.tuning.arena.weights)
        known = {**{k: v[1] for k, v in overrides.KEYS.items()}, "scoring.preset": BY_KEY["scoring.preset"].default}
        bad = next((b for name, spec in config["arena.presets"].items() if (b := preset_problem(name, spec, known))),
                   None)
        if bad:
            raise ValueError(bad)
        for arm in arms(config):
            scoring_params(overlay(config, dict(arm.overrides)))
    except ValueError as e:
        raise ConfigError(f"{where}: arena: {e}", hint="`strata config show` lists the arena settings") from None
    except ConfigError as e:
        raise ConfigError(f"{where}: arena preset: {e.message}") from None
    bad = next((r for r in config["consolidation.rules"] if r not in RULES), None)
    if bad is not None:
        raise ConfigError(f"{where}: consolidation.rules has unknown rule {bad!r} (rules: {', '.join(RULES)})")
    steps = [(name, spec, STEP_KEYS) for name, spec in config["loop.steps"].items()]
    steps += [("wake", config["loop.wake"], WAKE_KEYS)] if config["loop.wake"] else []
    bad = next((b for name, spec, keys in steps if (b := spec_problem(name, spec, keys))), None)
    if bad:
        raise ConfigError(f"{where}: loop.steps: {bad}")
    compile_rules(config["facts.rules"], tuple(config["store.kinds"]))  # names a broken rule now


def limits(config: Config, redactor: Redactor | None = None) -> Limits:
    return Limits(int(config["store.max_content_bytes"]), tuple(config["store.kinds"]), config["store.default_kind"],
                  float(config["store.default_importance"]), redactor)


def redactor(home: Home, config: Config) -> Redactor:
    """The home's redactor (privacy.*), its hashes keyed by state/redaction.key, read or made at
    the first secret it meets: a command that stores none writes nothing (reads never write)."""
    return Redactor(enabled=bool(config["privacy.redact"]), patterns=dict(config["privacy.patterns"]),
                    key_source=lambda: redaction_key(home.state_dir))


def models(home: Home, config: Config, agent: str) -> Models:
    return Models(model=config["embedding.model"], runtime=config["embedding.runtime"],
                  threads=int(config["embedding.threads"]), with_source=bool(config["embedding.with_source"]),
                  folder=home.state_dir / "models", agent=agent, vector_cache=bool(config["recall.vector_cache"]),
                  exact_below=config.tuning.recall.vector_exact_below)


class Layers:
    """One namespace's services, as built from one configuration: each when first used, so that
    a command that stores one memory loads neither recall's numpy nor the capsule's templates.
    Recall is handed to the dossiers and the arena as the function each ranks with; the
    capsule's text reaches the dossiers through a function too (the capsule renders them)."""

    def __init__(self, db: Database, home: Home, config: Config, agent: str, actor: str, models: Models, *,
                 read_only: bool):
        self.db, self.home, self.config, self.agent, self.actor = db, home, config, agent, actor
        self.models, self.read_only = models, read_only
        self.redactor = redactor(home, config)
        self.limits, self.params = limits(config, self.redactor), scoring_params(config)

    def built(self, name: str) -> bool:
        return name in self.__dict__  # where cached_property keeps what it built

    @cached_property
    def web(self):
        from strata_daemon.graph.api import Web

        return Web(self.db, self.agent, self.config.tuning.graph, self.actor)

    @cached_property
    def recall(self):
        from strata_daemon.recall.api import Recall

        return Recall(self.db, self.agent, config=self.config, params=self.params, limits=self.limits,
                      models=self.models, web=self.web, read_only=self.read_only)

    @cached_property
    def facts(self):
        from strata_daemon.facts.api import Facts

        return Facts(self.db, self.agent, self.config, self.actor, self.models, self.redactor)

    @cached_property
    def dossiers(self):
        from strata_daemon.dossier.api import Dossiers

        return Dossiers(self.db, self.agent, self.config, self.actor, self.home, lambda *a, **kw:
                        self.recall.for_dossier(*a, **kw), lambda: self.capsule.read_text())

    @cached_property
    def capsule(self):
        from strata_daemon.capsule.api import Capsule

        return Capsule(self.db, self.agent, self.config, self.actor, self.home, self.facts, self.dossiers)

    @cached_property
    def consolidation(self):
        from strata_daemon.consolidation.api import Consolidation

        return Consolidation(self.db, self.agent, self.actor, self.web, tuned=self.config.tuning,
                             rules=self.config["consolidation.rules"])

    @cached_property
    def forgetting(self):
        from strata_daemon.forgetting.api import Forgetting

        return Forgetting(self.db, self.agent, self.actor, self.home, self.capsule, self.dossiers)

    @cached_property
    def arena(self):
        from strata_daemon.arena.api import Arena

        return Arena(self.db, self.agent, self.actor, lambda *a, **kw: self.recall.for_arena(*a, **kw),
                     enabled=bool(self.config["arena.enabled"]), arms=arms(self.config),
                     latency_budget_ms=float(self.config["arena.latency_budget_ms"]), tuned=self.config.tuning.arena)
