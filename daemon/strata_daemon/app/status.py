"""What a namespace holds and how its daemon is, for `strata status` and the inspector; and
one memory with every score as of now, for `strata show`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from strata_daemon.app.phases.runs import daemon_status
from strata_daemon.app.phases.snapshots import latest as latest_snapshot
from strata_daemon.base import timeutil
from strata_daemon.episodes.stated import with_times
from strata_daemon.recall.ranking import features_of
from strata_daemon.recall.stages.full_text import namespace_phase
from strata_daemon.scoring import score_episode
from strata_daemon.store import (
    dossiers as dossier_store,
    episode_reads as reads,
    facts as facts_store,
    graph as web_store,
    vectors,
)

if TYPE_CHECKING:
    from strata_daemon.app.memory import Memory


async def status(mem: Memory) -> dict:
    c = await reads.counts(mem.db, mem.agent)
    c["embedding_backlog"] = await mem.embedding_backlog()
    c["facts"], c["web_edges"], c["dossiers"] = await mem.db.run(lambda conn: (
        facts_store.current_count(conn, mem.agent, timeutil.now()), web_store.edge_count(conn, mem.agent),
        dossier_store.written_count(conn, mem.agent)))
    spec = await mem.db.run(vectors.indexed)
    c["embedding_model"] = None if spec is None else {"name": spec.model, "dimension": spec.dim,
                                                      "text": spec.text}
    c["phase"] = await namespace_phase(mem.db, mem.agent, mem.params)
    c["recall_strategy"] = {k: v for k, v in (await mem.arena.strategy())[1].items() if k != "choice"}
    c["agent"] = mem.agent
    c["home"] = str(mem.home.root)
    c["database"] = str(mem.home.db_path)
    c["database_bytes"] = sum(p.stat().st_size for p in mem.home.state_dir.glob("memory.db*") if p.is_file())
    c["daemon"] = await daemon_status(mem)
    c["strength"] = await mem.db.run(latest_snapshot, mem.agent)
    checked = await mem.capsule.check()
    c["capsule"] = {"path": checked["path"], "ok": checked["ok"], "lines": checked["lines"],
                    "errors": sum(p["level"] == "error" for p in checked["problems"])}
    return c


async def get(mem: Memory, episode_id: int) -> dict:
    """Everything about one memory, with every score as of now."""
    ep = await reads.get_episode(mem.db, mem.agent, episode_id)
    with_times([ep], await mem.db.run(reads.stated_times_of, [episode_id]))
    pending = await reads.pending_accesses(mem.db, mem.agent, episode_id)
    phase = await namespace_phase(mem.db, mem.agent, mem.params)
    b = score_episode(features_of(ep, ep["context"]), 0.0, {}, timeutil.now(), mem.params, phase)
    scores = {k: round(v, 6) if isinstance(v, float) else v for k, v in b.as_dict().items()
              if k not in ("relevance", "context", "composite")}
    ep["scores"] = {**scores, "phase": phase}
    ep["pending_access_events"] = pending["count"]
    ep["history"] = await reads.audit_of(mem.db, mem.agent, "episode", episode_id)
    ep["supersession"] = await mem.db.run(web_store.supersession_of, mem.agent, episode_id)
    return ep
