"""A question that names a time: the memories said then or stating a time then gain relevance
by their closeness to the question, and the closest of those no retriever found join."""

from __future__ import annotations

from strata_daemon.episodes.when import Window, named_time
from strata_daemon.recall.candidates import cosines, query_vector, within_one
from strata_daemon.recall.fusion import Candidate
from strata_daemon.recall.request import Request, Sources, State
from strata_daemon.store import recall as store
from strata_daemon.store.fulltext import Scope, word_shares

WINDOW_MOST = 2000  # memories of a named time that recall weighs, the latest said


WINDOW_JOINS = 100  # of those no retriever found, the closest that join the candidates


def window_members(conn, scope: Scope, window: Window, limit: int) -> list[int]:
    """The ids of the memories in scope said within the window or stating a time within it,
    at most `limit` of each (the latest first; for "in June", the latest Junes first)."""
    if window.month is None:
        spans = [(window.start, window.end)]
    else:
        first, last = store.said_between(conn, scope.agent)
        spans = window.spans(first, last)[::-1] if first is not None else []
    return store.window_members(conn, scope, spans, limit)


async def time_named(req: Request, src: Sources, st: State) -> dict | None:
    """A question that names a time ("on 3 May 2023", "the week before ...", "last summer"):
    the memories from then, said then or saying a time that falls then ("yesterday" said the
    day after), gain `date_weight` of relevance times their closeness to the question against
    the closest of them (cosine; the share of its words for one without a vector). The closest
    `WINDOW_JOINS` that no retriever found join: "What did Nate do on 25 May 2022?" shares no
    word and little meaning with "I got this new pup for you!", said that day. One less alike
    than `min_similarity` is no match, whenever it was said."""
    if req.tuning.date_weight <= 0 or not st.candidates:
        return None
    window = named_time(req.query, req.now)
    if window is None:
        return None
    query = await query_vector(src)
    known = {c.row["id"]: c for c in st.candidates}

    def read(conn):
        members = window_members(conn, req.scope, window, WINDOW_MOST)
        close: dict[int, float] = {}
        if query is not None and members:
            close = cosines(conn, src.vectors, members, query)
        rest = [i for i in members if i not in close]
        if rest:
            text = {i: r["content"] for i, r in store.rows_in_scope(conn, req.scope, rest).items()}
            shares = word_shares(conn, req.scope.agent, req.query, [text.get(i, "") for i in rest])  # gone: no match
            close.update(zip(rest, shares))
        floor = req.tuning.min_similarity
        joining = sorted((i for i in members if i not in known and close[i] >= floor), key=lambda i: -close[i])
        return members, close, store.rows_in_scope(conn, req.scope, joining[:WINDOW_JOINS])

    members, close, joining = await src.db.run(read)
    if not members:
        return {"window": str(window), "members": 0, "added": 0}
    high = max(close.values())
    for i, row in joining.items():
        known[i] = Candidate(row)
        st.candidates.append(known[i])
    for i in members:
        c = known.get(i)
        if c is None:
            continue
        share = max(close[i], 0.0) / high if high > 0 else 1.0
        c.relevance += req.tuning.date_weight * share
        c.retrievers["date"] = {"window": str(window), "closeness": round(close[i], 4), "share": round(share, 3)}
    within_one(st.candidates)
    return {"window": str(window), "members": len(members), "added": len(joining)}
