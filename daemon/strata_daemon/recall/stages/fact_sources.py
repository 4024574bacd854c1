"""The memories behind the current facts the question names lead the hits, the most specific
fact's first."""

from __future__ import annotations

from strata_daemon.recall.candidates import fact_source_ids
from strata_daemon.recall.fusion import Candidate
from strata_daemon.recall.request import Lexical, Request, Sources, State


def with_fact_sources(candidates: list[Candidate], lexical: Lexical) -> tuple[list[Candidate], dict[int, int]]:
    """The candidates plus the memories behind the current facts the query names (which lead
    the hits, the most specific fact's first), each marked with the fact it supports."""
    by_id = {c.row["id"]: c for c in candidates}
    first: dict[int, int] = {}
    for f in lexical.facts:
        for i in fact_source_ids([f]):
            if i not in lexical.fact_rows:
                continue  # outside the recall's scope (archived, another kind)
            c = by_id.get(i)
            if c is None:
                c = by_id[i] = Candidate(lexical.fact_rows[i])
                c.relevance = 1.0
                candidates = [*candidates, c]
            c.retrievers["fact"] = {"key": f["key"], "value": f["value"]}
            first.setdefault(i, len(first))
    return candidates, first


async def fact_sources(req: Request, src: Sources, st: State) -> dict | None:
    st.candidates, st.first = with_fact_sources(st.candidates, st.lexical)
    return {"facts": len(st.lexical.facts)} if st.lexical.facts else None
