"""Full text: the question's words through the store's full-text plan, read in one hop with
everything else that does not need the question's vector (session neighbours, the facts it names)."""

from __future__ import annotations

from strata_daemon.config.tuning import Recall
from strata_daemon.facts.named import named_in
from strata_daemon.recall.candidates import fact_source_ids
from strata_daemon.recall.fusion import Candidate
from strata_daemon.recall.request import Lexical, Request, Sources, State
from strata_daemon.scoring import ScoringParams, learning_phase
from strata_daemon.store import recall as store
from strata_daemon.store.db import Database
from strata_daemon.store.fulltext import Scope, search

# Spreading's second step starts from this many of the best full-text matches: what the rest
# would pass two memories on moves no rank (LoCoMo: 0.7134 / 0.8021 against 0.7138 / 0.8025
# from every match), and reading their neighbours' neighbours cost 7 ms a recall at 100,000.
FURTHER_FROM = 10


async def fts_candidates(db: Database, scope: Scope, query: str, tuning: Recall, params: ScoringParams, *,
                         neighbours: bool = False, facts_at: float | None = None) -> Lexical:
    """Full-text candidates, read in one hop with everything else that does not need the query's
    vector, so that this hop can run while the query is embedded (recall.overlap_embedding)."""
    spreading = neighbours and (tuning.spread_to_next > 0 or tuning.spread_to_previous > 0)

    def read(conn):
        found, plan = search(conn, query, scope, store.CANDIDATE_COLUMNS, limit=tuning.candidates,
                             budget=tuning.fts_budget, source_weight=tuning.source_weight)
        counts = store.namespace_counts(conn, scope.agent)
        around, rows = {}, {}
        if spreading and found:
            ids = [r["id"] for r, _ in found]
            around = store.session_neighbours(conn, scope.agent, ids)
            if tuning.spread_further > 0:  # the second step, from the best matches' neighbours
                around.update(store.session_neighbours(conn, scope.agent, list(
                    {n for i in ids[:FURTHER_FROM] for n in around.get(i, ()) if n is not None} - around.keys())))
            rows = store.rows_in_scope(conn, scope, {n for pair in around.values() for n in pair if n is not None})
        facts = [] if facts_at is None else named_in(conn, scope.agent, query, facts_at)
        return found, plan, counts, around, rows, facts, store.rows_in_scope(conn, scope, fact_source_ids(facts))

    found, plan, counts, around, rows, facts, fact_rows = await db.run(read)
    phase = learning_phase(*counts, params)
    best = found[0][1] if found else 0.0
    out = []
    for rank, (r, score) in enumerate(found, 1):
        c = Candidate(r, raw={"fts": score})
        c.retrievers["fts"] = {"rank": rank, plan["scorer"]: score}
        # In a tiny corpus every word is in every memory and BM25 is ~0: treat hits as equally relevant.
        c.relevance = score / best if best > 1e-6 else 1.0
        out.append(c)
    rows.update((c.row["id"], c.row) for c in out)  # a full-text hit is in scope
    return Lexical(out, plan, phase, around, rows, facts, fact_rows)


async def namespace_phase(db: Database, agent: str, params: ScoringParams) -> str:
    return learning_phase(*await db.run(store.namespace_counts, agent), params)


async def full_text(req: Request, src: Sources, st: State) -> dict:
    st.lexical = await fts_candidates(src.db, req.scope, req.query, req.tuning, req.params,
                                      neighbours=src.embedding is not None,
                                      facts_at=req.now if req.facts_in_recall else None)
    st.candidates = st.lexical.candidates
    return {"plan": st.lexical.plan.get("strategy")}
