"""Supersession: a memory a newer one supersedes (a `supersedes` link) brings that newer one in,
and ranks below it (ranking.py)."""

from __future__ import annotations

from strata_daemon.recall.fusion import Candidate
from strata_daemon.recall.request import Request, Sources, State
from strata_daemon.store import graph as web_store, recall as store
from strata_daemon.store.db import Database
from strata_daemon.store.fulltext import Scope
from strata_daemon.store.nodes import episode_id


async def with_superseders(db: Database, scope: Scope, candidates: list[Candidate]
                           ) -> tuple[list[Candidate], dict[int, set[int]]]:
    """The candidates plus the in-scope memories that directly supersede one of them (a newer
    statement of the same fact: brought in with the relevance of what it replaces), and for
    each superseded candidate the ids of its superseders among them, in one hop. Only direct
    superseders come in: a status that changed a hundred times brings one newer line, not a
    hundred."""
    by_id = {c.row["id"]: c for c in candidates}

    def read(conn):
        newer: dict[int, set[int]] = {}
        for dst, src in web_store.superseders(conn, scope.agent, [f"episode:{i}" for i in by_id]):
            old, new = episode_id(dst), episode_id(src)
            if old is not None and new is not None:
                newer.setdefault(old, set()).add(new)
        wanted = {i for news in newer.values() for i in news} - by_id.keys()
        return newer, store.rows_in_scope(conn, scope, wanted)

    newer, rows = await db.run(read)
    if not newer:
        return candidates, {}
    out = list(candidates)
    for old in list(newer):
        for i in sorted(newer[old]):
            if i in by_id or i not in rows:
                continue
            n = by_id[i] = Candidate(rows[i])
            n.relevance = by_id[old].relevance
            n.retrievers["supersedes"] = {"memory": old}
            out.append(n)
    return out, {old: {i for i in news if i in by_id} for old, news in newer.items()}


async def supersession(req: Request, src: Sources, st: State) -> dict:
    st.candidates, st.superseded = await with_superseders(src.db, req.scope, st.candidates)
    return {"superseded": len(st.superseded)}
