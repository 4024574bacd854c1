"""The async Python API: one agent namespace of one home.

The CLI, the daemon, the MCP server, the HTTP API and the TUI all go through this class;
it returns values and leaves presenting them to its caller.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any, AsyncIterator, Callable, Iterable, Mapping

from strata_daemon.base import timeutil
from strata_daemon.arena.api import Arena
from strata_daemon.arena.arms import Arm
from strata_daemon.config.load import Config, overlay
from strata_daemon.embedding import backlog
from strata_daemon.store import vectors
from strata_daemon.embedding.cache import VectorCache
from strata_daemon.embedding.loader import load_embedder
from strata_daemon.embedding.rerank import Loaded
from strata_daemon.store import episode_reads as reads, episodes as writes
from strata_daemon.episodes import storing
from strata_daemon.episodes.stated import with_times
from strata_daemon.recall import pipeline
from strata_daemon.recall.deep import DeepWeights
from strata_daemon.episodes.model import Limits, clean_context, normalize
from strata_daemon.store.fulltext import Scope
from strata_daemon.recall.candidates import fallback
from strata_daemon.recall.ranking import features_of
from strata_daemon.recall.request import Request, Sources, Tuning
from strata_daemon.recall.stages.full_text import namespace_phase
from strata_daemon.capsule.api import Capsule
from strata_daemon.consolidation.api import Consolidation
from strata_daemon.dossier.api import Dossiers
from strata_daemon.facts.api import Facts
from strata_daemon.forgetting.api import Forgetting
from strata_daemon.store import dossiers as dossier_store
from strata_daemon.store import facts as facts_store
from strata_daemon.store import graph as web_store
from strata_daemon.graph.api import Web
from strata_daemon.errors import EmbeddingUnavailable, InvalidInput, NotFound, NotPermitted
from strata_daemon.config.home import Home, resolve_home
from strata_daemon.base.namespace import check_namespace
from strata_daemon.app.phases.snapshots import latest as latest_snapshot
from strata_daemon.scoring import score_episode
from strata_daemon.config.settings import MODES
from strata_daemon.store.db import Database

IMPORT_BATCH = 2000
# Forgetting demotes, it never hides: recall reaches the cold tier (memories consolidation
# archived, and those a merge superseded) as well as the hot one. Only an explicit forget
# (state archived) takes a memory out, unless the recall includes archived memories.
RECALLED = ("active", "superseded")


def _id(value: Any, what: str, agent: str) -> int:
    """An id as SQLite stores it; anything else names nothing in the namespace."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise NotFound(f"no {what} {value!r} in namespace {agent!r}")
    return value


class Memory:
    def __init__(self, db: Database, home: Home, config: Config, agent: str, actor: str):
        self.db, self.home, self.agent, self.actor = db, home, agent, actor
        self._configure(config)
        self._embedder = None
        self._reranker = Loaded(int(config["embedding.threads"]))
        self._vectors = self._new_vector_cache()
        self._shared: dict[str, Memory] = {}

    def _configure(self, config: Config) -> None:
        """Everything built from the configuration."""
        db, agent, actor, home = self.db, self.agent, self.actor, self.home
        self.config = config
        self.limits = Limits.from_config(config)
        self.params = config.scoring_params()
        self.facts = Facts(db, agent, config, actor)
        self.web = Web(db, agent, config, actor)
        # The dossiers read their topics from the capsule, which is built after them (it renders them).
        self.dossiers = Dossiers(db, agent, config, actor, home, self._rank_for_dossier,
                                 lambda: self.capsule.read_text())
        self.capsule = Capsule(db, agent, config, actor, home, self.facts, self.dossiers)
        self.consolidation = Consolidation(db, agent, config, actor, self.web)
        self.forgetting = Forgetting(db, agent, actor, home, self.capsule, self.dossiers)
        self.arena = Arena(db, agent, config, actor, self._rank_for_arena)
        self._arm_settings: dict[str, tuple] = {}

    def _tuned(self, arm: Arm | None):
        """(scoring params, tuning, deep weights) of the configuration, or of an arena arm's preset
        laid over it."""
        key = arm.name if arm is not None and arm.overrides else ""
        if key not in self._arm_settings:
            cfg = overlay(self.config, dict(arm.overrides)) if key else self.config
            self._arm_settings[key] = (cfg.scoring_params() if key else self.params, Tuning.from_config(cfg),
                                       DeepWeights.from_config(cfg))
        return self._arm_settings[key]

    def _new_vector_cache(self) -> VectorCache | None:
        return VectorCache(self.agent, exact_below=int(self.config["recall.vector_exact_below"])) \
            if self.config["recall.vector_cache"] else None

    def reconfigure(self, config: Config) -> list[str]:
        """Take a reloaded configuration (the daemon's SIGHUP); returns the keys whose values
        changed. The loaded embedder and the in-memory vectors are kept unless their own
        settings changed; the namespace stays the one the process opened."""
        changed = [k for k, v in config.values.items() if v != self.config.values.get(k)]
        self._configure(config)
        if any(k.startswith("embedding.") for k in changed):
            self._embedder = None
        if any(k in ("recall.vector_cache", "recall.vector_exact_below") for k in changed):
            self._vectors = self._new_vector_cache()
        return changed

    @classmethod
    async def open(cls, home: Home | str | None = None, *, agent: str | None = None,
                   actor: str = "api") -> "Memory":
        home = home if isinstance(home, Home) else resolve_home(home)
        home.require()
        config = home.config()
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
        if name == self.agent:
            return self
        if name not in self.config["agent.shared"]:
            raise NotPermitted(f"namespace {name!r} is not shared with agent {self.agent!r}",
                               hint="a person can list it in agent.shared in strata.toml")
        view = self._shared.get(name)
        if view is None:
            db = await Database.open(self.db.path, read_only=f"namespace {name!r} is shared read-only with "
                                                               f"agent {self.agent!r}; nothing was changed")
            view = self._shared[name] = Memory(db, self.home, self.config, name, self.actor)
            view.embedder = self.embedder  # one model in memory, whichever namespace asks
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
        now = timeutil.now()
        row = self.validate({"content": content, "kind": kind, "importance": importance, "context": context,
                             "event_at": at, "source": source, "session": session, "factual": factual}, now=now)
        async with self.db.write() as w:
            results = await storing.insert(
                w, self.agent, [row], window=float(self.config["store.attention_window_seconds"]),
                actor=self.actor, now=now)
            facts = await w.run(self.facts.capture_in, [row], results, now)
            await w.run(self.web.mentions_in, [row], results, facts, now)
        return {**results[0], "facts": facts}

    async def observe_many(self, rows: Iterable[dict], *, validated: bool = False,
                           progress: Callable[[int], None] | None = None,
                           input_sha256: str | None = None, skip_purged: bool = False) -> dict:
        """Store many observations in short transactions of IMPORT_BATCH rows.

        Rows are validated before the first write, so a bad row stores nothing. With
        `input_sha256` (the hash of the input the rows come from, in the same order each time)
        the rows an earlier run of that input stored are skipped and counted as duplicates: an
        import cut short and run again, or run twice, adds nothing. With `skip_purged` (an
        import) rows holding the words of a purged memory are counted as `purged`, not stored.
        `ids` are the ids of the rows this call stored, repeated and found already present.
        """
        now = timeutil.now()
        # Validated rows may come from a generator (a large import read a second time): taken a
        # batch at a time, never all at once.
        source = iter(rows) if validated else iter([self.validate(r, now=now) for r in rows])
        # `purged` only where it can happen: the API's batch answer keeps its documented shape.
        totals = {"created": 0, "repeat": 0, "duplicate": 0, **({"purged": 0} if skip_purged else {})}
        if input_sha256 is not None:
            done = await self.db.run(reads.import_progress, self.agent, input_sha256)
            skipped = sum(1 for _ in itertools.islice(source, done))
            totals["duplicate"] = skipped
            if progress and skipped:
                progress(skipped)
        ids: list[int] = []
        captured = 0
        window = float(self.config["store.attention_window_seconds"])
        while part := list(itertools.islice(source, IMPORT_BATCH)):
            async with self.db.write() as w:
                results = await storing.insert(w, self.agent, part, window=window,
                                              actor=self.actor, now=now, skip_purged=skip_purged)
                facts = await w.run(self.facts.capture_in, part, results, now)
                await w.run(self.web.mentions_in, part, results, facts, now)
                if input_sha256 is not None:
                    await writes.record_import(w, self.agent, input_sha256, len(part), now=now)
                captured += len(facts)
            for r in results:
                totals[r["status"]] += 1
                if r["id"] is not None:
                    ids.append(r["id"])
            if progress:
                progress(len(part))
        if input_sha256 is not None:
            async with self.db.write() as w:
                await writes.record_import(w, self.agent, input_sha256, 0, now=now, finished=True)
        return {**totals, "ids": ids, "facts_captured": captured}

    async def forget(self, episode_id: int, *, purge: bool = False, reason: str | None = None) -> dict:
        """Archive a memory (undone by `restore`), or purge it: its words leave every layer and
        the file, for good (strata_daemon/forgetting/)."""
        episode_id = _id(episode_id, "memory", self.agent)
        if purge:
            return {"id": episode_id, "purged": True, **await self.forgetting.purge(ids=[episode_id])}
        now = timeutil.now()
        async with self.db.write() as w:
            before = await writes.set_state(w, self.agent, episode_id, "archived", actor=self.actor, now=now,
                                            reason=reason)
        return {"id": episode_id, "state": "archived", "previous_state": before}

    async def forget_matching(self, text: str, *, purge: bool = False, apply: bool = False) -> dict:
        """What holds TEXT (memories, facts) and what goes with it; with APPLY, the memories are
        archived and the facts retracted (both undoable), or with PURGE all of it is purged."""
        found = await self.forgetting.matching(text)
        texts = sorted({found["text"], *found["spellings"]})  # "MÜLLER" asked, "Müller" stored
        plan = await self.forgetting.plan(ids=found["ids"], keys=found["keys"], texts=texts)
        out = {"text": found["text"], "spellings": found["spellings"], "purge": purge, "applied": apply, **plan}
        if not apply:
            return out
        if purge:
            out["result"] = await self.forgetting.purge(ids=found["ids"], keys=found["keys"], texts=texts)
            return out
        archived = [(await self.forget(i))["id"] for i in found["ids"]]
        retracted = []
        for key in found["keys"]:
            try:
                retracted.append((await self.facts.retract(key))["key"])
            except NotFound:
                pass  # retracted already: its history holds the text until a purge
        out["result"] = {"archived": archived, "retracted": retracted}
        return out

    async def forget_fact(self, key: str, *, apply: bool = False) -> dict:
        """A fact's values leave its history, the audit, dossiers and the capsule; the fact is
        left retracted. Without APPLY, what would go."""
        plan = await self.forgetting.plan(keys=[key])
        if not apply:
            return {"key": key, "applied": False, **plan}
        return {"key": key, "applied": True, **plan, "result": await self.forgetting.purge(keys=[key])}

    async def restore(self, episode_id: int) -> dict:
        episode_id = _id(episode_id, "memory", self.agent)
        now = timeutil.now()
        async with self.db.write() as w:
            before = await writes.set_state(w, self.agent, episode_id, "active", actor=self.actor, now=now)
        return {"id": episode_id, "state": "active", "previous_state": before}

    async def mark(self, episode_id: int, *, factual: bool | None = None, irrelevant: bool | None = None) -> dict:
        episode_id = _id(episode_id, "memory", self.agent)
        now = timeutil.now()
        async with self.db.write() as w:
            changed = await writes.set_flags(w, self.agent, episode_id, actor=self.actor, now=now,
                                             factual=factual, irrelevant=irrelevant)
        return {"id": episode_id, "changed": {k: bool(v) for k, v in changed.items()}}

    async def feedback(self, recall_id: int, outcome: str, *, used: Iterable[int] | None = None) -> dict:
        """Feedback on a recall. `used` names the memories the agent actually used (found by the
        recall or not): a success goes to them alone, a failure to the hits offered in their
        place; without it, every memory the recall returned shares the outcome. With
        `used`, or with memories the agent put in the working set since the recall, or
        (arena.shared_feedback) with a success alone, the recall becomes an evaluation episode
        for the arena."""
        recall_id = _id(recall_id, "recall", self.agent)
        used_ids = None if used is None else list(dict.fromkeys(_id(i, "memory", self.agent) for i in used))
        if used_ids is not None and len(used_ids) > 1000:
            raise InvalidInput("used names more than 1000 memories")
        now = timeutil.now()
        async with self.db.write() as w:
            if used_ids:
                known = await w.run(lambda c: reads.existing_ids(c, self.agent, used_ids))
                missing = [i for i in used_ids if i not in known]
                if missing:
                    raise NotFound(f"no memory {missing[0]} in namespace {self.agent!r}")
            ids = await writes.feedback(w, self.agent, recall_id, outcome, actor=self.actor, now=now, used=used_ids)
            episode = await w.run(lambda c: self.arena.episode_from_feedback(c, recall_id, outcome, used_ids, ids,
                                                                             now))
        return {"recall_id": recall_id, "outcome": outcome, "episodes": ids, "used": used_ids,
                "arena_episode": episode}

    async def fold(self) -> dict:
        """Fold pending access events into features. Maintenance: covers every namespace."""
        async with self.db.write() as w:
            return await writes.fold_access_events(w)

    # -- embeddings (maintenance: the backlog spans every namespace) -------------------------

    async def embedder(self):
        """The configured embedder, loaded on first use (in a thread: it reads a model file)."""
        if self._embedder is None:
            self._embedder = await asyncio.to_thread(
                load_embedder, self.config["embedding.model"], self.config["embedding.runtime"],
                self.home.state_dir / "models", threads=int(self.config["embedding.threads"]))
        return self._embedder

    def release_models(self) -> None:
        """Unload the embedder, the in-memory vectors and the dossier LLM. A long-lived process
        that only uses them now and then (the daemon) stays small; the next use loads them again."""
        self._embedder = None
        self._reranker.release()
        self._vectors = self._new_vector_cache()
        self.dossiers.release()

    async def _spec(self) -> vectors.Spec:
        return self._spec_of(await self.embedder())

    def _spec_of(self, emb) -> vectors.Spec:
        return vectors.Spec(emb.name, emb.dim, self.embedded_text())

    def embedded_text(self) -> str:
        """What of a memory is embedded: one of `vectors.TEXTS` (`embedding.with_source`)."""
        return vectors.TEXTS[1] if self.config["embedding.with_source"] else vectors.TEXTS[0]

    async def embed_pending(self, *, batch: int = backlog.EMBED_BATCH, limit: int | None = None, own: bool = False,
                            progress: Callable[[int], None] | None = None) -> dict:
        """Embed memories that have no vector yet (this namespace's only, with `own`)."""
        if limit is not None and not await self.db.run(vectors.backlog):
            # Nothing waits: don't load the model just to find that out (the daemon asks every minute).
            return {"embedded": 0, "backlog": 0}
        emb, spec = await self.embedder(), await self._spec()
        await self.db.transact(vectors.prepare, spec)
        done = await backlog.embed_waiting(self.db, emb, spec, agent=self.agent if own else None, batch=batch,
                                           limit=limit, progress=progress)
        return {"embedded": done, "backlog": await self.db.run(vectors.backlog), "model": emb.name,
                "dimension": emb.dim}

    async def reindex(self, *, force: bool = False, progress: Callable[[int], None] | None = None) -> dict:
        """Embed everything as configured. Resets the index only when it was built otherwise (another
        model or embedded text) or when forced, so an interrupted reindex resumes where it stopped."""
        current = await self.db.run(vectors.indexed)
        reset = force or (current is not None and current != await self._spec())
        if reset:
            await self.db.transact(vectors.reset)
        result = await self.embed_pending(progress=progress)
        return {**result, "reset": reset}

    async def _embed_query(self, query: str, warnings: list[str]) -> tuple[Any, asyncio.Future] | None:
        """Start embedding the query on its own thread; (embedder, future vector), or None with a
        warning saying why when recall must fall back to fast."""
        try:
            emb = await self.embedder()
        except EmbeddingUnavailable as e:
            warnings.append(fallback(e))
            return None
        return emb, asyncio.get_running_loop().run_in_executor(None, emb.embed_queries, [query])

    async def embedding_backlog(self) -> int:
        return await self.db.run(vectors.backlog, self.agent)

    async def _catch_up(self, mode: str, warnings: list[str]) -> None:
        """Recall by meaning finds what was just observed even with no daemon running: a small
        backlog of the namespace is embedded first; a large one is left to the daemon and said."""
        if mode == "fast":
            return
        waiting = await self.embedding_backlog()
        if not waiting:
            return
        if self.read_only or waiting > int(self.config["recall.embed_waiting"]):
            many = "memory waits" if waiting == 1 else "memories wait"
            warnings.append(f"{waiting} {many} for a vector, found by words only until the daemon embeds them "
                            "(`strata run`) or `strata embed` does")
            return
        try:
            await self.embed_pending(limit=waiting, own=True)
        except EmbeddingUnavailable:
            pass  # the query cannot be embedded either: the fallback to fast says why

    # -- reading -----------------------------------------------------------------------------

    async def _ranked(self, query: str, *, k: int | None, mode: str | None, context: Mapping | None,
                      kinds: Iterable[str], include_archived: bool, now: float, arm: Arm | None = None,
                      hot_only: bool = False, as_of: bool = False) -> dict:
        """Recall's reading half: candidates, scores and order, without recording anything. With
        `as_of`, each candidate is scored with its use (accesses, feedback) as it stood at `now`."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("the query is empty", hint="say what to look for")
        try:
            size = len(query.encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidInput("the query is not valid UTF-8 text (it holds a lone surrogate)") from None
        if "\x00" in query or size > self.limits.max_content_bytes:
            raise InvalidInput("the query holds a NUL byte or is longer than store.max_content_bytes")
        mode = mode or self.config["recall.mode"]
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
        k = int(self.config["recall.k"] if k is None else k)
        if not 1 <= k <= 1000:
            raise InvalidInput(f"k must be between 1 and 1000, not {k}")
        kinds = self._known_kinds(kinds)
        query_context = {str(a): str(b) for a, b in clean_context(context).items()}
        warnings: list[str] = []
        states = (*RECALLED, "archived") if include_archived else RECALLED
        params, tuning, deep = self._tuned(arm)
        request = Request(query, mode, k, Scope(self.agent, states, kinds, hot_only), query_context, now,
                                   params, tuning, deep, bool(self.config["facts.in_recall"]),
                                   bool(self.config["recall.overlap_embedding"]), as_of)
        embedding = await self._embed_query(query, warnings) if mode != "fast" else None
        r = await pipeline.run(request, Sources(self.db, embedding, self._spec_of, self._vectors, self.web,
                                                         self._reranker))
        r["warnings"][:0] = warnings
        return r

    async def recall(self, query: str, *, k: int | None = None, mode: str | None = None,
                     context: Mapping | None = None, kinds: Iterable[str] = (),
                     include_archived: bool = False, explain: bool = True) -> dict:
        """Ranked memories for a query, logged as a recall (its id takes feedback). Without a
        mode, the strategy is the arena's choice for the namespace (or recall.mode). Without
        `explain`, hits leave out why they ranked (what the faces print unless asked)."""
        now = timeutil.now()
        started = time.perf_counter()
        arm, strategy = (None, {"arm": mode, "chosen_by": "mode"}) if mode else await self.arena.strategy()
        caught_up: list[str] = []
        await self._catch_up(mode or arm.mode, caught_up)
        r = await self._ranked(query, k=k, mode=mode or arm.mode, context=context, kinds=kinds,
                               include_archived=include_archived, now=now, arm=arm)
        hits, query_context = r["hits"], r.pop("query_context")
        r["warnings"][:0] = caught_up
        if "warning" in strategy:
            r["warnings"].append(strategy.pop("warning"))

        def record(conn):
            rid = writes.record_recall(conn, self.agent, query, r["mode_used"], r["k"],
                                       json.dumps(query_context, sort_keys=True),
                                       [(h["id"], h["rank"], h["score"]) for h in hits], now, strategy["arm"])
            return rid, self.web.feed_in(conn, hits, rid, now)

        recall_id, fed = (None, None) if self.read_only else await self.db.transact(record)
        if not explain:
            r.pop("stages")
            for hit in hits:
                hit.pop("explain", None)
        return {"recall_id": recall_id, "agent": self.agent, **r, "strategy": strategy, "hits": hits,
                "weights": dict(vars(self._tuned(arm)[0].weights)),
                "working_set": None if fed is None else {"activated": fed["activated"], "evicted": fed["evicted"]},
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 3)}

    async def _rank_for_arena(self, query: str, k: int, arm: Arm, context: dict,
                              at: float | None = None) -> tuple[list[dict], float]:
        started = time.perf_counter()
        r = await self._ranked(query, k=k, mode=arm.mode, context=context, kinds=(), include_archived=False,
                               now=timeutil.now() if at is None else at, arm=arm, as_of=at is not None)
        return r["hits"], time.perf_counter() - started

    async def _rank_for_dossier(self, query: str, k: int, mode: str) -> tuple[list[dict], str, list[str]]:
        r = await self._ranked(query, k=k, mode=mode, context=None, kinds=(), include_archived=False,
                               now=timeutil.now(), hot_only=True)
        return r["hits"], r["mode_used"], r["warnings"]

    async def get(self, episode_id: int) -> dict:
        """Everything about one memory, with every score as of now."""
        episode_id = _id(episode_id, "memory", self.agent)
        ep = await reads.get_episode(self.db, self.agent, episode_id)
        with_times([ep], await self.db.run(reads.stated_times_of, [episode_id]))
        pending = await reads.pending_accesses(self.db, self.agent, episode_id)
        phase = await namespace_phase(self.db, self.agent, self.params)
        b = score_episode(features_of(ep, ep["context"]), 0.0, {}, timeutil.now(), self.params, phase)
        scores = {k: round(v, 6) if isinstance(v, float) else v for k, v in b.as_dict().items()
                  if k not in ("relevance", "context", "composite")}
        ep["scores"] = {**scores, "phase": phase}
        ep["pending_access_events"] = pending["count"]
        ep["history"] = await reads.audit_of(self.db, self.agent, "episode", episode_id)
        ep["supersession"] = await self.db.run(web_store.supersession_of, self.agent, episode_id)
        return ep

    async def get_many(self, ids: Iterable[int]) -> dict[int, dict]:
        """Several memories as stored (no scores or history), by id; ids not in this namespace
        are left out."""
        return await reads.get_episodes(self.db, self.agent, [i for i in map(int, ids) if 0 < i < 2**63])

    def _known_kinds(self, kinds) -> tuple[str, ...]:
        kinds = tuple(kinds)
        unknown = [x for x in kinds if x not in self.limits.kinds]
        if unknown:
            raise InvalidInput(f"unknown kind {unknown[0]!r}", hint=f"use one of: {', '.join(self.limits.kinds)}")
        return kinds

    async def timeline(self, **filters) -> list[dict]:
        if "kinds" in filters:
            filters["kinds"] = self._known_kinds(filters["kinds"])
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
        from strata_daemon.app.phases.runs import daemon_status

        return await daemon_status(self)

    async def status(self) -> dict:
        c = await reads.counts(self.db, self.agent)
        c["embedding_backlog"] = await self.embedding_backlog()
        c["facts"], c["web_edges"], c["dossiers"] = await self.db.run(lambda conn: (
            facts_store.current_count(conn, self.agent, timeutil.now()), web_store.edge_count(conn, self.agent),
            dossier_store.written_count(conn, self.agent)))
        spec = await self.db.run(vectors.indexed)
        c["embedding_model"] = None if spec is None else {"name": spec.model, "dimension": spec.dim,
                                                          "text": spec.text}
        c["phase"] = await namespace_phase(self.db, self.agent, self.params)
        c["recall_strategy"] = {k: v for k, v in (await self.arena.strategy())[1].items() if k != "choice"}
        c["agent"] = self.agent
        c["home"] = str(self.home.root)
        c["database"] = str(self.home.db_path)
        c["database_bytes"] = sum(p.stat().st_size for p in self.home.state_dir.glob("memory.db*") if p.is_file())
        c["daemon"] = await self.daemon_status()
        c["strength"] = await self.db.run(latest_snapshot, self.agent)
        checked = await self.capsule.check()
        c["capsule"] = {"path": checked["path"], "ok": checked["ok"], "lines": checked["lines"],
                        "errors": sum(p["level"] == "error" for p in checked["problems"])}
        return c
