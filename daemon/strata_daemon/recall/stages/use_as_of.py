"""For a replay at a past time (the arena's): each candidate's use as it stood then."""

from __future__ import annotations

from strata_daemon.recall.request import Request, Sources, State
from strata_daemon.store import episode_reads as reads


async def use_as_of(req: Request, src: Sources, st: State) -> dict | None:
    """For a replay at a past time: each candidate's use (accesses, feedback) as it stood then."""
    if not req.as_of:
        return None
    usage = await src.db.run(reads.usage_before, [c.row["id"] for c in st.candidates], req.now)
    for c in st.candidates:
        c.row = {**c.row, **usage.get(c.row["id"], reads.NO_USE)}
    return {}
