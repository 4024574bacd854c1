"""The second hop: the words the best first hits say that the question does not (hop.py),
searched again; what they find gains a share of relevance."""

from __future__ import annotations

from strata_daemon.recall.candidates import within_one
from strata_daemon.recall.fusion import Candidate
from strata_daemon.recall.hop import expansion
from strata_daemon.recall.request import Request, Sources, State
from strata_daemon.store.fulltext import rarest_within, search
from strata_daemon.store.recall import CANDIDATE_COLUMNS

HOP_JOINS = 0.1  # a memory the second hop alone finds joins when its words weigh this share of the question's
SEEDS_WITHIN = 0.1  # a first hit seeds the hop when its relevance is at least this share of the best's


async def second_hop(req: Request, src: Sources, st: State) -> dict | None:
    """Search again with what the best first hits say that the question does not (hop.py);
    what that finds, the seeds aside, gains `hop_weight` of its relevance there; a memory only
    the hop finds joins unless the request keeps to the question's words (`fast`). A seed found
    again by its own words would only rise for being a seed, above memories that feedback
    raised."""
    t = req.tuning
    if t.hop_weight <= 0 or not st.candidates:
        return None
    # A candidate far below the best seeds nothing: in a home of a few memories every one is a
    # candidate, and the words of one unrelated to the question would bring in its neighbours.
    top = max(c.relevance for c in st.candidates)
    seeds = sorted((c for c in st.candidates if c.relevance >= SEEDS_WITHIN * top),
                   key=lambda c: -c.relevance)[:t.hop_seeds]
    words = expansion(req.query, [c.row["content"] for c in seeds], t.hop_words,
                      [c.row["content"] for c in st.candidates])
    if not words:
        return None

    def read(conn):
        # Only words rare enough to rank exactly: a common word would weigh next to nothing
        # against the question's best match, and reading its memories costs the most.
        rare = rarest_within(conn, req.scope.agent, words, t.fts_budget)
        return rare, search(conn, " ".join(rare), req.scope, CANDIDATE_COLUMNS, limit=t.candidates,
                            budget=t.fts_budget, source_weight=t.source_weight)[0] if rare else []

    words, found = await src.db.run(read)
    if not words:
        return {"words": "", "found": 0, "added": 0}
    seed_ids = {c.row["id"] for c in seeds}
    found = [(row, score) for row, score in found if row["id"] not in seed_ids]
    # Weighed against the question's own best match, so that words every memory holds (a tiny
    # IDF) lift nothing; in a home so small that the question's words weigh nothing either,
    # against the hop's best.
    first = max((c.raw.get("fts", 0.0) for c in st.lexical.candidates), default=0.0)
    best = first if first > 1e-6 else (found[0][1] if found else 0.0)
    known = {c.row["id"]: c for c in st.candidates}
    added = 0
    for rank, (row, score) in enumerate(found, 1):
        share = min(1.0, score / best) if best > 1e-6 else 1.0
        c = known.get(row["id"])
        if c is None:
            if not req.hop_joins or share < HOP_JOINS:
                continue
            c = known[row["id"]] = Candidate(row)
            st.candidates.append(c)
            added += 1
        c.relevance += t.hop_weight * share
        c.retrievers["second_hop"] = {"rank": rank, "share": round(share, 3)}
    within_one(st.candidates)
    return {"words": " ".join(words), "found": len(found), "added": added}
