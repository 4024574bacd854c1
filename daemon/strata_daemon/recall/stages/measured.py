"""After ranking, for the hits shown: the times each states, its match to the question as measured,
and its reasons in a line (why.py)."""

from __future__ import annotations

from strata_daemon.episodes.stated import with_times
from strata_daemon.recall.candidates import query_vector
from strata_daemon.recall.request import Request, Sources
from strata_daemon.recall.why import why_line
from strata_daemon.store import episode_reads as reads
from strata_daemon.store.fulltext import word_shares


async def measured(req: Request, src: Sources, hits: list[dict]) -> None:
    """The times each hit states, and its `match` to the question as measured, not relative to
    the best candidate (which is what ranking weighs): the larger of its cosine to the question
    and the share of the question's words it holds. Also the hit's reasons in a line (`why`)."""
    def read(conn):  # one trip to the database thread for both
        with_times(hits, reads.stated_times_of(conn, [h["id"] for h in hits]))
        return word_shares(conn, req.scope.agent, req.query, [h["content"] for h in hits])

    shares = await src.db.run(read)
    cosine_of: dict[int, float] = {}
    for h in hits:
        if "vector" in h["explain"]["retrievers"]:
            cosine_of[h["id"]] = h["explain"]["retrievers"]["vector"]["cosine"]
    missing = [h["id"] for h in hits if h["id"] not in cosine_of]
    if src.vectors is not None and missing:
        query = await query_vector(src)
        if query is not None:
            cosine_of.update(src.vectors.cosines(missing, query))
    for h, share in zip(hits, shares):
        cosine = cosine_of.get(h["id"])
        h["match"] = round(max(share, cosine or 0.0), 3)
        h["explain"]["match"] = {"cosine": None if cosine is None else round(cosine, 4), "words": round(share, 4)}
        h["why"] = why_line(h["explain"], age=req.now - h["event_at"], tier=h["tier"], led=bool(h.get("led")),
                           above=h.get("moved_above", ()))
