"""The async Python API, and the facade every face goes through: one agent namespace of one home.

The CLI, the daemon, the MCP server, the HTTP API and the inspector all hold a Memory; it
returns values and leaves presenting them to its caller. Its methods are all a face may call:
those that span layers are written in the modules beside this one (observing, changes, status,
context, access), and those that are one layer's own are listed below, each bound to that layer's
service when read. The services themselves (`layers`, built by wiring.py) are for the
application's own modules and for tests; a face never reads them (tests/architecture.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Mapping

from strata_daemon.app import wiring
from strata_daemon.app.access import Access
from strata_daemon.app.changes import Changes
from strata_daemon.app.context import Context
from strata_daemon.app.observing import Observing
from strata_daemon.app.status import Status
from strata_daemon.arena.arms import Arm
from strata_daemon.base import timeutil
from strata_daemon.base.namespace import check_namespace
from strata_daemon.base.numbers import whole
from strata_daemon.config.home import Home, resolve_home
from strata_daemon.config.load import Config
from strata_daemon.embedding import backlog
from strata_daemon.episodes import storing
from strata_daemon.episodes.model import STATES
from strata_daemon.errors import InvalidInput, NotPermitted
from strata_daemon.store import engines, episode_reads as reads, vectors
from strata_daemon.store.nodes import episode_id
from strata_daemon.store.db import Database


class Through:
    """A facade method that is one layer's own: reading it gives that method of this namespace's
    service, with its own signature, defaults and docstring, so nothing of it is written twice."""

    def __init__(self, layer: str, name: str):
        self.layer, self.name = layer, name

    def __get__(self, mem: "Memory | None", owner: type | None = None) -> Any:
        return self if mem is None else getattr(getattr(mem.layers, self.layer), self.name)


class Memory(Observing, Changes, Context, Status, Access):
    def __init__(self, db: Database, home: Home, config: Config, agent: str, actor: str):
        self.db, self.home, self.agent, self.actor = db, home, agent, actor
        self.models = wiring.models(home, config, agent)
        self._configure(config)
        self._shared: dict[str, Memory] = {}

    def _configure(self, config: Config) -> None:
        """Every service, as the configuration builds it (each when first used)."""
        self.config = config
        self.layers = wiring.Layers(self.db, self.home, config, self.agent, self.actor, self.models,
                                    read_only=self.read_only)
        self.limits, self.params = self.layers.limits, self.layers.params

    # Facts: a key's value over time (strata_daemon/facts/api.py).
    set_fact = Through("facts", "set")
    get_fact = Through("facts", "get")
    retract_fact = Through("facts", "retract")
    cas_fact = Through("facts", "cas")
    fact_history = Through("facts", "history")
    list_facts = Through("facts", "list")
    fact_conflicts = Through("facts", "conflicts")
    acknowledge_conflict = Through("facts", "acknowledge")
    rejudge_facts = Through("facts", "rejudge")
    rekey_facts = Through("facts", "rekey")
    capsule_facts = Through("facts", "for_capsule")
    # The spiderweb: edges, links, the working set and spreading (strata_daemon/graph/api.py).
    spread = Through("web", "spread")
    related = Through("web", "related")
    neighbours = Through("web", "neighbours")
    entities = Through("web", "entities")
    node_texts = Through("web", "texts")
    activate = Through("web", "activate")
    working_set = Through("web", "context")
    commit_working_set = Through("web", "commit")
    decay_web = Through("web", "decay")
    # Dossiers: one synthesised page a topic, versioned (strata_daemon/dossier/api.py).
    list_dossiers = Through("dossiers", "list")
    show_dossier = Through("dossiers", "show")
    refresh_dossier = Through("dossiers", "refresh")
    dossier_history = Through("dossiers", "history")
    diff_dossier = Through("dossiers", "diff")
    add_topic = Through("dossiers", "add")
    remove_topic = Through("dossiers", "remove")
    dossier_topic = Through("dossiers", "topic")
    # The capsule: the markdown a person reads and edits (strata_daemon/capsule/api.py).
    show_capsule = Through("capsule", "show")
    render_capsule = Through("capsule", "render")
    check_capsule = Through("capsule", "check")
    capsule_stats = Through("capsule", "stats")
    capsule_text = Through("capsule", "read_text")
    capsule_path = Through("capsule", "path")
    capsule_changes = Through("capsule", "since_render")
    capsule_overrides = Through("capsule", "overrides")
    clear_capsule_override = Through("capsule", "clear_override")
    # Care: consolidation, the arena and what a purge leaves in backups.
    consolidate = Through("consolidation", "run")
    undo_consolidation = Through("consolidation", "undo")
    run_arena = Through("arena", "run")
    arena_status = Through("arena", "status")
    arena_history = Through("arena", "history")
    reset_arena = Through("arena", "reset")
    undo_arena = Through("arena", "undo")
    add_arena_questions = Through("arena", "add_questions")
    arena_arms = Through("arena", "arms")
    purge_plan = Through("forgetting", "plan")
    backups_holding = Through("forgetting", "backups_holding")

    async def link(self, src, dst, kind: str = "related", *, remove: bool = False) -> dict:
        """A typed link from one item to another (related, supports, contradicts, supersedes). A
        memory that supersedes another takes over the facts it gave (`facts` in the result);
        removing the link gives them back."""
        def body(conn):
            now = timeutil.now()
            out = self.layers.web.link_in(conn, src, dst, kind, now, remove=remove)
            newer, older = (episode_id(out[end]) for end in ("src", "dst"))
            if kind == "supersedes" and newer is not None and older is not None and out["status"] in ("created",
                                                                                                       "removed"):
                out["facts"] = self.layers.facts.linked_in(conn, newer, older, now, remove=remove)
            return out
        return await self.db.transact(body)

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
        for view in self._shared.values():  # the shared namespaces' views read by the same settings
            view._configure(config)
        return changed

    @classmethod
    async def open(cls, home: Home | str | None = None, *, agent: str | None = None,
                   actor: str = "api") -> "Memory":
        home = home if isinstance(home, Home) else resolve_home(home)
        home.require()
        config = wiring.configuration(home)
        home.ensure_layout()
        agent = check_namespace(config["agent.namespace"] if agent is None else agent)
        db = await engines.open_database(home.db_path, engines.url_of(config["store.url"]))
        await storing.pay_owed_stated_times(db)
        mem = cls(db, home, config, agent, actor)
        await mem.layers.facts.pay_owed_keys()
        return mem

    @staticmethod
    async def reach_store(url: str) -> str:
        """Reach the PostgreSQL database URL names and lay out its schema, before a home is made
        to use it (`strata init --store-url`); where it is, without the password."""
        db = await engines.open_database(Path(), url)
        try:
            return db.path
        finally:
            await db.close()

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
            db = await self.db.view(f"namespace {name!r} is read only through a scope (agent {self.agent!r}); "
                                    "nothing was changed")
            view = self._shared[name] = Memory(db, self.home, self.config, name, self.actor)
            view.models.share_embedder(self.models)
        return view

    async def __aenter__(self) -> "Memory":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- embeddings (maintenance: the backlog spans every namespace) -------------------------

    async def embedder(self):
        """The configured embedder, loaded on first use."""
        return await self.models.embedder()

    def release_models(self) -> None:
        """Unload the embedder, the in-memory vectors, the cross-encoder and the dossier LLM. A
        long-lived process that only uses them now and then (the daemon) stays small."""
        self.models.release()
        if self.layers.built("dossiers"):
            self.layers.dossiers.release()

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

    async def watch_capsule(self, stop: asyncio.Event, *,
                            on_handled: Callable[[dict], Awaitable[None] | None] | None = None) -> None:
        """Take a person's edits of the capsule in as each save lands, until `stop` is set
        (capsule/watch.py); `on_handled` hears what each save led to."""
        from strata_daemon.capsule.watch import watch

        await watch(self.layers.capsule, stop, on_handled=on_handled)

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
        arm, strategy = (None, {"arm": mode, "chosen_by": "mode"}) if mode else await self.layers.arena.strategy()
        return await self.layers.recall.recall(query, k=k, mode=mode, context=context, kinds=kinds,
                                         include_archived=include_archived, explain=explain, arm=arm,
                                         strategy=strategy, hop=hop, given=given)

    async def rank(self, query: str, k: int, *, mode: str | None = None, changes: Mapping[str, Any] | None = None,
                   arm: Arm | None = None, at: float | None = None) -> tuple[list[dict], float]:
        """Memories as a recall ranks them, nothing recorded: (hits, seconds). `changes` lays
        settings or tuned constants over the configuration, as an arena preset does (a
        benchmark's grid point); `arm` is one of the arena's; `at`, a past time to rank with the
        memories' use as it stood then."""
        return await self.layers.recall.for_arena(query, k, arm or self.arm_of(mode, changes), {}, at)

    def arm_of(self, mode: str | None, changes: Mapping[str, Any] | None) -> Arm:
        """A mode with settings laid over the configuration, as an arena arm (a benchmark's grid point)."""
        mode = mode or self.config["recall.mode"]
        name = mode + "".join(f"+{key}={value!r}" for key, value in sorted((changes or {}).items()))
        return Arm(name, mode, None, tuple(sorted((changes or {}).items())))

    async def get_many(self, ids: Iterable[int]) -> dict[int, dict]:
        """Several memories as stored (no scores or history), by id; ids not in this namespace
        are left out."""
        wanted = [whole(i, "an id") for i in ids]
        return await reads.get_episodes(self.db, self.agent, [i for i in wanted if 0 < i < 2**63])

    async def timeline(self, **filters) -> list[dict]:
        if "kinds" in filters:
            filters["kinds"] = self.limits.known_kinds(filters["kinds"])
        if unknown := [s for s in filters.get("states", ()) if s not in STATES]:  # it listed nothing, unsaid
            raise InvalidInput(f"unknown state {unknown[0]!r}", hint=f"use one of: {', '.join(STATES)}")
        return await reads.timeline(self.db, self.agent, **filters)

    def export(self) -> AsyncIterator[dict]:
        return reads.export_episodes(self.db, self.agent)

    async def data_version(self) -> int:
        """Changes whenever another process commits to the home: what an inspector polls to know
        its screen is out of date."""
        return await self.db.data_version()

