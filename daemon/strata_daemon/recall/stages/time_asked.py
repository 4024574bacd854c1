"""A question that asks when lifts the memories that say a time (episodes/when.py says which)."""

from __future__ import annotations

from strata_daemon.episodes.when import asks_when, says_when
from strata_daemon.recall.candidates import lift
from strata_daemon.recall.request import Request, Sources, State


async def time_asked(req: Request, src: Sources, st: State) -> dict | None:
    """A question that asks when lifts the memories that say a time (when.py says which)."""
    if req.tuning.when_weight <= 0 or not st.candidates or not asks_when(req.query):
        return None
    return {"lifted": lift(st.candidates, lambda c: says_when(c.row["content"]), req.tuning.when_weight, "when")}
