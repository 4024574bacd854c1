"""The async Python API, and the facade every face goes through: one agent namespace of one home.

The CLI, the daemon, the MCP server, the HTTP API and the inspector all hold a Memory; it
returns values and leaves presenting them to its caller. It holds the namespace's services
(wiring.py builds them) and does little itself: each layer is one of its attributes (`facts`,
`web`, `dossiers`, `capsule`, `consolidation`, `arena`, `forgetting`), and what spans several
is in the modules beside this one (observing, changes, status).
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Iterable, Mapping

from strata_daemon.app import changes, observing, wiring
from strata_daemon.app.phases.runs import daemon_status
from strata_daemon.arena.arms import Arm
from strata_daemon.base import timeutil
from strata_daemon.base.namespace import check_namespace
from strata_daemon.config.home import Home, resolve_home
from strata_daemon.config.load import Config
from strata_daemon.embedding import backlog
from strata_daemon.episodes import storing
from strata_daemon.episodes.model import normalize
from strata_daemon.errors import NotPermitted
from strata_daemon.store import episode_reads as reads, vectors
from strata_daemon.store.db import Database


class Memory:
    def __init__(self, db: Database, home: Home, config: Config, agent: str, actor: str):
        self.db, self.home, self.agent, self.actor = db, home, agent, actor
        self.models = wiring.models(home, config, agent)
        self._configure(config)
        self._shared: dict[str, Memory] = {}

    def _configure(self, config: Config) -> None:
        """Every service, as the configuration builds it (each when first used)."""
        self.config = config
        self._layers = wiring.Layers(self.db, self.home, config, self.agent, self.actor, self.models,
                                     read_only=self.read_only)
        self.limits, self.params = self._layers.limits, self._layers.params

    # The layers, one attribute each (wiring.Layers builds them).
    facts = property(lambda self: self._layers.facts)
    web = property(lambda self: self._layers.web)
    dossiers = property(lambda self: self._layers.dossiers)
    capsule = property(lambda self: self._layers.capsule)
    consolidation = property(lambda self: self._layers.consolidation)
    forgetting = property(lambda self: self._layers.forgetting)
    arena = property(lambda self: self._layers.arena)
    _recall = property(lambda self: self._layers.recall)

    def reconfigure(self, config: Config) -> list[str]:
        """Take a reloaded configuration (the daemon's SIGHUP); returns the keys whose values
        changed. The loaded embedder and the in-memory vectors are kept unless their own
        settings changed; the namespace stays the one the process opened."""
        changed = [k for k, v in config.values.items() if v != self.config.values.get(k)]
        changed += [f"experimental.{k}" for k in set(config.experimental) | set(self.config.experimental)
                    if config.experimental.get(k) != self.config.experimental.get(k)]
        if any(k.startswith("embedding.") for k in changed):
            self.models = wiring.models(self.home, config, self.agent)
        elif any(k in ("recall.vector_cache", "experimental.recall.vector_exact_below") for k in changed):
            self.models.keep_vectors(bool(config["recall.vector_cache"]), config.tuning.recall.vector_exact_below)
        self._configure(config)
        return changed

    @classmethod
    async def open(cls, home: Home | str | None = None, *, agent: str | None = None,
                   actor: str = "api") -> "Memory":
        home = home if isinstance(home, Home) else resolve_home(home)
        home.require()
        config = wiring.configuration(home)
        home.ensure_layout()
        agent = check_namespace(config["agent.namespace"] if agent is None else agent)
        db = await Database.open(home.db_path)
        await storing.pay_owed_stated_times(db)
        return cls(db, home, config, agent, actor)

    async def close(self) -> None:
        for view in self._shared.values():
            await view.close()
        self._shared.clear()
        await self.db.close()

    @property
    def read_only(self) -> bool:
        return self.db.read_only is not None

    async def shared(self, name: str) -> "Memory":
        """Another namespace of this home, to read only: allowed when strata.toml lists it in
        agent.shared. The view has its own connection, on which an SQLite authorizer refuses every
        change; its recalls are not logged (no recall id, no access events)."""
        name = check_namespace(name)
        # Its own namespace too is read only through a view: a scope only reads, whatever it names.
        if name != self.agent and name not in self.config["agent.shared"]:
            raise NotPermitted(f"namespace {name!r} is not shared with agent {self.agent!r}",
                               hint="a person can list it in agent.shared in strata.toml")
        view = self._shared.get(name)
        if view is None:
            db = await Database.open(self.db.path, read_only=f"namespace {name!r} is read only through a scope "
                                                               f"(agent {self.agent!r}); nothing was changed")
            view = self._shared[name] = Memory(db, self.home, self.config, name, self.actor)
            view.models.share_embedder(self.models)
        return view

    async def __aenter__(self) -> "Memory":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- writing -----------------------------------------------------------------------------

    def validate(self, record: Mapping[str, Any], *, now: float | None = None) -> dict:
        return normalize(record, self.limits, agent=self.agent, now=now or timeutil.now())

    async def observe(self, content: str | bytes, *, kind: str | None = None, importance: float | None = None,
                      context: Mapping | None = None, at: str | float | None = None, source: str | None = None,
                      session: str | None = None, factual: bool = False) -> dict:
        """Store one observation. Returns {"id", "status": created|repeat|duplicate, "occurrences"}."""
        return await observing.observe(self, content, kind=kind, importance=importance, context=context, at=at,
                                       source=source, session=session, factual=factual)

    async def observe_many(self, rows: Iterable[dict], *, validated: bool = False,
                           progress: Callable[[int], None] | None = None,
                           input_sha256: str | None = None, skip_purged: bool = False) -> dict:
        """Store many observations in short transactions (app/observing.py says how)."""
        return await observing.observe_many(self, rows, validated=validated, progress=progress,
                                            input_sha256=input_sha256, skip_purged=skip_purged)

    async def forget(self, episode_id: int, *, purge: bool = False, reason: str | None = None) -> dict:
        """Archive a memory (undone by `restore`), or purge it: its words leave every layer and
        the file, for good (strata_daemon/forgetting/)."""
        return await changes.forget(self, episode_id, purge=purge, reason=reason)

    async def forget_matching(self, text: str, *, purge: bool = False, apply: bool = False) -> dict:
        """What holds TEXT wherever words are kept and what goes with it; with APPLY, the memories
        are archived and the facts retracted (both undoable), or with PURGE all of it is purged."""
        return await changes.forget_matching(self, text, purge=purge, apply=apply)

    async def forget_fact(self, key: str | None = None, *, matching: str | None = None, apply: bool = False) -> dict:
        """A fact's values leave its history, the audit, dossiers and the capsule (or, asked by
        words, every fact holding them). Without APPLY, what would go."""
        return await changes.forget_fact(self, key, matching=matching, apply=apply)

    async def forget_topic(self, topic: str | None = None, *, matching: str | None = None,
                           apply: bool = False) -> dict:
        """A dossier topic and every version of it leave for good (or, asked by words, every
        topic whose name or query holds them). Without APPLY, what would go."""
        return await changes.forget_topic(self, topic, matching=matching, apply=apply)

    async def restore(self, episode_id: int) -> dict:
        return await changes.restore(self, episode_id)

    async def mark(self, episode_id: int, *, factual: bool | None = None, irrelevant: bool | None = None) -> dict:
        return await changes.mark(self, episode_id, factual=factual, irrelevant=irrelevant)

    async def feedback(self, recall_id: int, outcome: str, *, used: Iterable[int] | None = None) -> dict:
        """Feedback on a recall (app/changes.py says where it goes)."""
        return await changes.feedback(self, recall_id, outcome, used=used)

    async def fold(self) -> dict:
        """Fold pending access events into features. Maintenance: covers every namespace."""
        return await changes.fold(self)

    # -- embeddings (maintenance: the backlog spans every namespace) -------------------------

    async def embedder(self):
        """The configured embedder, loaded on first use."""
        return await self.models.embedder()

    def release_models(self) -> None:
        """Unload the embedder, the in-memory vectors, the cross-encoder and the dossier LLM. A
        long-lived process that only uses them now and then (the daemon) stays small."""
        self.models.release()
        if self._layers.built("dossiers"):
            self.dossiers.release()

    def embedded_text(self) -> str:
        """What of a memory is embedded: one of `vectors.TEXTS` (`embedding.with_source`)."""
        return self.models.embedded_text()

    async def embed_pending(self, *, batch: int = backlog.EMBED_BATCH, limit: int | None = None, own: bool = False,
                            progress: Callable[[int], None] | None = None) -> dict:
        """Embed memories that have no vector yet (this namespace's only, with `own`)."""
        return await self.models.embed_pending(self.db, agent=self.agent if own else None, batch=batch,
                                               limit=limit, progress=progress)

    async def reindex(self, *, force: bool = False, progress: Callable[[int], None] | None = None) -> dict:
        """Embed everything as configured (embedding/models.py says when the index is reset)."""
        return await self.models.reindex(self.db, force=force, progress=progress)

    async def embedding_backlog(self, *, every_namespace: bool = False) -> int:
        """Memories waiting for a vector: this namespace's, or the home's."""
        return await self.db.run(vectors.backlog, None if every_namespace else self.agent)

    # -- reading -----------------------------------------------------------------------------

    async def recall(self, query: str, *, k: int | None = None, mode: str | None = None,
                     context: Mapping | None = None, kinds: Iterable[str] = (),
                     include_archived: bool = False, explain: bool = True, hop: bool | None = None,
                     given: Callable[[dict], list[dict]] | None = None) -> dict:
        """Ranked memories for a query, logged as a recall (its id takes feedback). Without a
        mode, the strategy is the arena's choice for the namespace (or recall.mode). Without
        `explain`, hits leave out why they ranked (what the faces print unless asked). `hop`: the
        second hop may bring in memories the question's words do not find (default: every mode
        but fast). `given` picks the hits handed on, the only ones logged (app/context.py)."""
        arm, strategy = (None, {"arm": mode, "chosen_by": "mode"}) if mode else await self.arena.strategy()
        return await self._recall.recall(query, k=k, mode=mode, context=context, kinds=kinds,
                                         include_archived=include_archived, explain=explain, arm=arm,
                                         strategy=strategy, hop=hop, given=given)

    async def context(self, text: str, *, budget: int | None = None, mode: str | None = None,
                      k: int | None = None, record: bool = True, changes: Mapping[str, Any] | None = None) -> dict:
        """One block for an agent's turn within `budget` tokens (context.budget): the capsule
        condensed, the facts the text names, then the best memories; logged as a recall, whose
        id takes the turn's feedback, unless `record` is off; then `changes` may lay settings
        over the configuration, as for `rank` (app/context.py)."""
        from strata_daemon.app import context

        return await context.build(self, text, budget=budget, mode=mode, k=k, record=record, changes=changes)

    async def rank(self, query: str, k: int, *, mode: str | None = None, changes: Mapping[str, Any] | None = None,
                   arm: Arm | None = None, at: float | None = None) -> tuple[list[dict], float]:
        """Memories as a recall ranks them, nothing recorded: (hits, seconds). `changes` lays
        settings or tuned constants over the configuration, as an arena preset does (a
        benchmark's grid point); `arm` is one of the arena's; `at`, a past time to rank with the
        memories' use as it stood then."""
        return await self._recall.for_arena(query, k, arm or self.arm_of(mode, changes), {}, at)

    def arm_of(self, mode: str | None, changes: Mapping[str, Any] | None) -> Arm:
        """A mode with settings laid over the configuration, as an arena arm (a benchmark's grid point)."""
        mode = mode or self.config["recall.mode"]
        name = mode + "".join(f"+{key}={value!r}" for key, value in sorted((changes or {}).items()))
        return Arm(name, mode, None, tuple(sorted((changes or {}).items())))

    async def get(self, episode_id: int) -> dict:
        """Everything about one memory, with every score as of now."""
        from strata_daemon.app import status  # scores as recall would: numpy, which storing needs not

        return await status.get(self, changes.checked_id(episode_id, "memory", self.agent))

    async def get_many(self, ids: Iterable[int]) -> dict[int, dict]:
        """Several memories as stored (no scores or history), by id; ids not in this namespace
        are left out."""
        return await reads.get_episodes(self.db, self.agent, [i for i in map(int, ids) if 0 < i < 2**63])

    async def timeline(self, **filters) -> list[dict]:
        if "kinds" in filters:
            filters["kinds"] = self.limits.known_kinds(filters["kinds"])
        return await reads.timeline(self.db, self.agent, **filters)

    def export(self) -> AsyncIterator[dict]:
        return reads.export_episodes(self.db, self.agent)

    async def data_version(self) -> int:
        """Changes whenever another process commits to the home: what an inspector polls to know
        its screen is out of date."""
        return await self.db.data_version()

    async def daemon_status(self) -> dict:
        """Whether a daemon runs on this home, its heartbeat and loop count, and each phase's
        last run and (from its interval) next one."""
        return await daemon_status(self)

    async def status(self) -> dict:
        from strata_daemon.app import status

        return await status.status(self)
