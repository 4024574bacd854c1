"""Storing observations: the rows, then the times each states, in the caller's transaction; and
the times owed to memories stored before the store read them (migration 21)."""

from __future__ import annotations

from strata_daemon.episodes.stated import stated_rows
from strata_daemon.store import episodes as store
from strata_daemon.store.db import Database, Writer

OWED_BATCH = 5000  # memories read a transaction when a home pays its owed stated times


async def insert(w: Writer, agent: str, rows: list[dict], *, window: float, actor: str, now: float,
                 skip_purged: bool = False) -> list[dict]:
    """Validated rows stored (store.insert_episodes says how repeats and duplicates fold), with
    the times the new ones state."""
    results = await store.insert_episodes(w, agent, rows, window=window, actor=actor, now=now,
                                          skip_purged=skip_purged)
    await store.add_stated_times(w, list(stated_rows(
        (done["id"], row["content"], row["event_at"]) for row, done in zip(rows, results)
        if done["status"] == "created")))
    return results


async def pay_owed_stated_times(db: Database) -> int:
    """Read the times stated by memories stored before stated times were kept, a batch a
    transaction (a home of a million stays small here); returns how many memories were read."""
    read = 0
    while True:
        async with db.write() as w:
            after, batch = await store.owing_stated_times(w, OWED_BATCH)
            if after is None:
                return read
            await store.add_stated_times(w, list(stated_rows(batch)))
            await store.owe_stated_times_after(w, batch[-1][0] if batch else None)
            read += len(batch)
