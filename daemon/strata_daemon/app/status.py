"""What a namespace holds and how its daemon is, for `strata status` and the inspector; and
one memory with every score as of now, for `strata show`."""

from __future__ import annotations

from strata_daemon.app.phases.runs import daemon_status
from strata_daemon.app.phases.snapshots import latest as latest_snapshot
from strata_daemon.base import timeutil
from strata_daemon.episodes.stated import with_times
from strata_daemon.store import (
    dossiers as dossier_store,
    episode_reads as reads,
    facts as facts_store,
    graph as web_store,
    vectors,
)


class Status:
    """The facade's summaries (memory.py assembles the facade)."""

    async def daemon_status(self) -> dict:
        """Whether a daemon runs on this home, its heartbeat and loop count, and each phase's
        last run and (from its interval) next one."""
        return await daemon_status(self)

    async def run_phase(self, name: str, *, by: str = "cli") -> dict:
        """Run one of the daemon's phases now and record it (app/phases/runs.py), as `by`."""
        from strata_daemon.app.phases.runs import actor, run_phase

        return await run_phase(self, name, actor=actor(self.db, by))

    async def status(self) -> dict:
        from strata_daemon.recall.stages.full_text import namespace_phase  # numpy: not for a store alone

        c = await reads.counts(self.db, self.agent)
        c["embedding_backlog"] = await self.embedding_backlog()
        c["facts"], c["web_edges"], c["dossiers"] = await self.db.run(lambda conn: (
            facts_store.current_count(conn, self.agent, timeutil.now()), web_store.edge_count(conn, self.agent),
            dossier_store.written_count(conn, self.agent)))
        spec = await self.db.run(vectors.indexed)
        c["embedding_model"] = None if spec is None else {"name": spec.model, "dimension": spec.dim,
                                                          "text": spec.text}
        c["phase"] = await namespace_phase(self.db, self.agent, self.params)
        c["recall_strategy"] = {k: v for k, v in (await self.layers.arena.strategy())[1].items() if k != "choice"}
        c["agent"] = self.agent
        c["home"] = str(self.home.root)
        c["database"] = str(self.db.path)  # a PostgreSQL store's URL without its password
        c["database_bytes"] = await self.db.size()
        c["daemon"] = await self.daemon_status()
        c["strength"] = await self.db.run(latest_snapshot, self.agent)
        checked = await self.layers.capsule.check()
        c["capsule"] = {"path": checked["path"], "ok": checked["ok"], "lines": checked["lines"],
                        "errors": sum(p["level"] == "error" for p in checked["problems"])}
        return c

    async def get(self, episode_id: int) -> dict:
        """Everything about one memory, with every score as of now."""
        from strata_daemon.app.changes import checked_id
        from strata_daemon.recall.ranking import features_of  # scores as recall would: numpy, which storing needs not
        from strata_daemon.recall.stages.full_text import namespace_phase
        from strata_daemon.scoring import score_episode

        episode_id = checked_id(episode_id, "memory", self.agent)
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
