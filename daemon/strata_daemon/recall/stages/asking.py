"""A memory made of questions tells little: each candidate loses a share of relevance by how much
of it asks (recall/asking.py)."""

from __future__ import annotations

from strata_daemon.recall.asking import told_share
from strata_daemon.recall.request import Request, Sources, State


async def asking(req: Request, src: Sources, st: State) -> dict | None:
    """A memory made of questions tells little, whatever words it shares with the question
    (asking.py): each candidate loses `asking_discount` times the share of its words that ask.
    After every stage that brings candidates in, so that each is weighed alike."""
    discount = req.tuning.asking_discount
    if discount <= 0 or not st.candidates:
        return None
    lowered = 0
    for c in st.candidates:
        told = told_share(c.row["content"])
        if told < 1.0:
            c.relevance *= 1.0 - discount * (1.0 - told)
            c.retrievers["asks"] = {"told_share": round(told, 3)}
            lowered += 1
    return {"lowered": lowered}
