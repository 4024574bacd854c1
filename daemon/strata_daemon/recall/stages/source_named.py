"""A question that names where memories came from lifts the candidates from that source."""

from __future__ import annotations

from strata_daemon.recall.candidates import lift
from strata_daemon.recall.named import named_sources
from strata_daemon.recall.request import Request, Sources, State


async def source_named(req: Request, src: Sources, st: State) -> dict | None:
    """A question that names where memories came from ("What has Melanie bought?", "what did the
    user ask about backups?") lifts the candidates from that source by `source_named_weight`:
    what a person did is mostly in what they said, while "Yep, Melanie!" is someone else
    speaking to them."""
    if req.tuning.source_named_weight <= 0 or not st.candidates:
        return None
    named = named_sources(req.query, {c.row["source"] for c in st.candidates})
    if not named:
        return None
    lifted = lift(st.candidates, lambda c: c.row["source"] in named, req.tuning.source_named_weight,
                   "source_named", named=sorted(named))
    return {"sources": sorted(named), "lifted": lifted}
