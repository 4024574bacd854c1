"""Strength snapshots: the decay phase's nightly record of how strong a namespace's memories are."""

from __future__ import annotations

import asyncio

from strata_daemon.base import timeutil
from strata_daemon.scoring import strength_summary

_FIELDS = ("episodes", "mean", "p10", "p50", "p90", "weak", "potentiated", "edges")


def _inputs(conn, agent: str) -> tuple[list[tuple[float, int]], int]:
    rows = conn.execute("SELECT event_at, access_count FROM episodes WHERE agent = ? AND state = 'active'",
                        (agent,)).fetchall()
    edges = conn.execute("SELECT count(*) FROM web_edges WHERE agent = ?", (agent,)).fetchone()[0]
    return [(r[0], r[1]) for r in rows], edges


def _store(conn, agent: str, now: float, summary: dict) -> None:
    conn.execute(f"INSERT INTO strength_snapshots (agent, taken_at, {', '.join(_FIELDS)}) "
                 f"VALUES (?, ?, {', '.join('?' * len(_FIELDS))})", (agent, now, *(summary[f] for f in _FIELDS)))


def latest(conn, agent: str) -> dict | None:
    row = conn.execute(f"SELECT taken_at, {', '.join(_FIELDS)} FROM strength_snapshots WHERE agent = ? "
                       "ORDER BY id DESC LIMIT 1", (agent,)).fetchone()
    return None if row is None else {**dict(row), "taken_at_iso": timeutil.iso(row["taken_at"])}


async def take(mem) -> dict:
    now = timeutil.now()
    memories, edges = await mem.db.run(_inputs, mem.agent)
    ages = [((now - at) / 86400.0, count) for at, count in memories]
    summary = await asyncio.to_thread(strength_summary, ages,
                                      potentiation_accesses=mem.params.potentiation_accesses)
    summary["edges"] = edges
    await mem.db.transact(_store, mem.agent, now, summary)
    return summary
