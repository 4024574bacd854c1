"""The recall history a home keeps: the decay phase prunes recalls older than
daemon.recalls_keep_days, and what a memory's use was at any moment reads the same after."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from conftest import write_config
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.runs import run_phase
from strata_daemon.base import timeutil
from strata_daemon.errors import NotFound
from strata_daemon.forgetting.redaction import REDACTED
from strata_daemon.store import arena as arena_store, episode_reads as reads

DAY = 86400.0


def _age(memory, recall_ids: list[int], days: float) -> None:
    """Move these recalls, and everything they left, `days` into the past: as if made then."""
    marks = ", ".join("?" * len(recall_ids))
    shift = days * DAY

    def move(conn):
        for table, column in (("recalls", "at"), ("access_events", "at"), ("feedback_events", "at"),
                              ("arena_episodes", "asked_at")):
            key = "id" if table == "recalls" else "recall_id"
            conn.execute(f"UPDATE {table} SET {column} = {column} - ? WHERE {key} IN ({marks})", (shift, *recall_ids))

    memory.wait(memory.raw.db.transact(move))


def _use(memory, ids: list[int], at: float) -> dict:
    return memory.wait(memory.raw.db.run(reads.usage_before, ids, at))


def _decay(memory) -> dict:
    r = memory.wait(run_phase(memory.raw, "decay", actor="test"))
    assert r["status"] == "ok", r
    return r["result"]["recalls_pruned"]


def test_old_recalls_are_pruned_and_each_memorys_use_reads_the_same(memory):
    ids = [memory.observe(f"the relay on gw-0{i} restarted after the config moved")["id"] for i in range(6)]
    old = [memory.recall("relay restarted", mode="fast", k=4)["recall_id"] for _ in range(2)]
    memory.feedback(old[0], "success", used=ids[:2])  # the other hits of old[0] are passed over
    recent = memory.recall("config moved", mode="fast", k=4)["recall_id"]
    memory.fold()
    # 100 days back, to an evening: a day counted by rounding (as CAST does in PostgreSQL) would
    # be the next one.
    back = 100 + (timeutil.now() % DAY - 0.75 * DAY) / DAY
    _age(memory, old, back)
    unfolded = memory.recall("relay gw-03", mode="fast", k=4)["recall_id"]
    _age(memory, [unfolded], back)  # old, but its accesses wait for the fold phase
    now = timeutil.now()
    asked = memory.sql("SELECT at FROM recalls WHERE id = ?", (old[0],))[0]["at"]
    moments = (now + 1, now - 50 * DAY, asked + 1)
    before = [_use(memory, ids, t) for t in moments]
    assert before[0][ids[0]]["access_count"] == 3 and before[0][ids[0]]["success_count"] == 1
    counted = memory.sql("SELECT count(*) AS n FROM access_events WHERE recall_id IN (?, ?) AND folded = 1",
                         tuple(old))[0]["n"]

    pruned = _decay(memory)

    assert pruned["recalls"] == 2
    left = {r["id"] for r in memory.sql("SELECT id FROM recalls")}
    assert left == {recent, unfolded}
    assert memory.sql("SELECT count(*) AS n FROM access_events WHERE recall_id IN (?, ?)", tuple(old))[0]["n"] == 0
    days = memory.sql("SELECT episode_id, n FROM access_events WHERE recall_id IS NULL ORDER BY episode_id")
    assert len(days) == pruned["day_rows"] and sum(d["n"] for d in days) == counted > 0
    assert [_use(memory, ids, t) for t in moments] == before
    # Feedback stays, no longer pointing at its recall; so does the evaluation episode, with its time.
    assert memory.sql("SELECT episode_id, recall_id FROM feedback_events ORDER BY episode_id") == [
        {"episode_id": i, "recall_id": None} for i in ids[:2]]
    episodes = memory.wait(memory.raw.db.run(arena_store.episodes, memory.raw.agent, 10))
    assert [e["at"] for e in episodes] == [asked]
    with pytest.raises(NotFound) as e:
        memory.feedback(old[1], "success")
    assert "recalls_keep_days" in e.value.hint

    assert _decay(memory)["recalls"] == 0  # nothing more until the fold
    memory.fold()
    assert _decay(memory)["recalls"] == 1
    assert {r["id"] for r in memory.sql("SELECT id FROM recalls")} == {recent}
    # Its accesses, on the same day as the others, joined their rows: one per memory and day.
    rows = Counter((r["episode_id"], r["at"] // DAY) for r in memory.sql(
        "SELECT episode_id, at FROM access_events WHERE recall_id IS NULL"))
    assert rows and set(rows.values()) == {1}
    assert _use(memory, ids, now + 1) == before[0]
    # The episode's question served a memory that is purged: its words go, with no recall to tell.
    memory.forget(ids[0], purge=True)
    assert memory.sql("SELECT query, useful FROM arena_episodes") == [{"query": REDACTED, "useful": f"[{ids[1]}]"}]


def test_zero_keeps_every_recall(home):
    write_config(home, "[daemon]\nrecalls_keep_days = 0\n")

    async def go():
        async with await Memory.open(home, actor="test") as mem:
            await mem.observe("the backup finished at 03:00")
            r = await mem.recall("backup finished", mode="fast")
            await mem.fold()
            await mem.db.transact(lambda c: c.execute("UPDATE recalls SET at = at - 3650 * 86400"))
            result = await run_phase(mem, "decay", actor="test")
            kept = await mem.db.fetchall("SELECT id FROM recalls")
            return result, r["recall_id"], [k[0] for k in kept]

    result, recall_id, kept = asyncio.run(go())
    assert result["result"]["recalls_pruned"]["recalls"] == 0
    assert kept == [recall_id]


def test_a_negative_keep_is_refused(home, cli):
    write_config(home, "[daemon]\nrecalls_keep_days = -1\n")
    proc = cli("status")
    assert proc.returncode != 0 and "recalls_keep_days" in proc.err
