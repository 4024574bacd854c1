"""`strata store copy`: a home's store copied from its SQLite file into PostgreSQL and back,
losslessly (every table counted and hashed on both sides, vectors included), and a copy cut
short run again without a row written twice. On a real PostgreSQL the session starts."""

from __future__ import annotations

import asyncio

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.errors import Conflict
from strata_daemon.store import copying
from strata_daemon.store.postgres import connection

pytestmark = pytest.mark.postgres


async def _lived_home(home) -> list[int]:
    """A home with a little of everything: memories and their vectors, a superseded one,
    recalls with feedback, facts with history, links, a dossier, an archived memory."""
    async with await Memory.open(home) as mem:
        ids = [(await mem.observe(f"note {i}: the relay on gw-0{i % 3} restarted at 0{i}:00"))["id"] for i in range(12)]
        await mem.observe("Bridge: DOWN")
        await mem.observe("Bridge: UP")
        await mem.set_fact("backup window", "03:00", source="person:ines")
        await mem.set_fact("backup window", "04:00", source="person:ines")
        await mem.embed_pending()
        r = await mem.recall("relay restarted", mode="balanced")
        await mem.feedback(r["recall_id"], "success", used=[r["hits"][0]["id"]])
        await mem.link(f"episode:{ids[0]}", f"episode:{ids[1]}", "supports")
        await mem.forget(ids[2])
        await mem.add_topic("relay")
        await mem.refresh_dossier("relay")
        return ids


async def _answers(home) -> list[list[int]]:
    async with await Memory.open(home) as mem:
        return [[h["id"] for h in (await mem.recall(q, mode="balanced", k=5))["hits"]]
                for q in ("relay restarted", "bridge status", "backup window")]


def test_a_home_goes_to_postgresql_and_back_whole(home, pg_url, monkeypatch):
    asyncio.run(_lived_home(home))
    before = asyncio.run(_answers(home))

    async def to(target):
        async with await Memory.open(home) as mem:
            return await mem.copy_store(target)

    there = asyncio.run(to(pg_url))
    assert there["same"] and there["memories"] == 14
    admin = connection.connect(pg_url)
    try:  # the planner has statistics of what was loaded (none of the columns that hold words)
        assert admin.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'episodes' AND attname IN "
                             "('importance', 'content')").fetchone()[0] == 1
    finally:
        admin.close()
    assert {t for t, c in there["tables"].items() if c["rows"]} >= {
        "episodes", "episode_vectors", "audit", "facts", "fact_values", "recalls", "access_events",
        "feedback_events", "web_links", "dossier_versions", "namespaces"}
    # The home on PostgreSQL answers as it did; its own file is then left behind and refilled.
    write_config(home, f'store.url = "{pg_url}"\n')
    assert asyncio.run(_answers(home))[0] == before[0]
    (home / "state" / "memory.db").unlink()
    back = asyncio.run(to("sqlite"))
    assert back["same"] and back["memories"] == 14
    write_config(home, "")
    assert asyncio.run(_answers(home))[0] == before[0]


def test_a_copy_cut_short_is_finished_by_running_it_again(home, pg_url, monkeypatch):
    asyncio.run(_lived_home(home))
    monkeypatch.setattr(copying, "BATCH", 3)
    seen = []

    def cut(table, n):
        seen.append(table)
        if table == "audit":
            raise KeyboardInterrupt  # the process stopped halfway through the audit

    async def copy(progress=None):
        async with await Memory.open(home) as mem:
            return await mem.copy_store(pg_url, progress)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(copy(cut))
    assert "episodes" in seen and "facts" not in seen
    again = asyncio.run(copy())
    assert again["same"] and all(c["same"] for c in again["tables"].values())
    with pytest.raises(Conflict, match="memories of its own"):  # finished: a third run would mix two homes
        asyncio.run(copy())
