"""Strength snapshots: the decay phase's nightly record of how strong a namespace's memories are."""

from __future__ import annotations

import asyncio

from strata_daemon.base import timeutil
from strata_daemon.scoring import strength_summary
from strata_daemon.store import phases as store


def latest(conn, agent: str) -> dict | None:
    row = store.latest_snapshot(conn, agent)
    return None if row is None else {**row, "taken_at_iso": timeutil.iso(row["taken_at"])}


async def take(mem) -> dict:
    now = timeutil.now()
    memories, edges = await mem.db.run(store.strength_inputs, mem.agent)
    ages = [((now - at) / 86400.0, count) for at, count in memories]
    summary = await asyncio.to_thread(strength_summary, ages,
                                      potentiation_accesses=mem.params.potentiation_accesses)
    summary["edges"] = edges
    await mem.db.transact(store.add_snapshot, mem.agent, now, summary)
    return summary
