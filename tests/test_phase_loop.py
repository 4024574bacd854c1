"""The phase schedule on a manual clock: due phases run without waiting, a failing phase is
retried with backoff while the others carry on."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from conftest import write_config
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.clock import ManualClock
from strata_daemon.app.phases.runs import run_phase
from strata_daemon.app.phases.scheduler import PhaseLoop


async def _settle(loop: PhaseLoop) -> list[str]:
    """Run what is due, and what follows it, until nothing is; the names of the phases run."""
    ran = []
    while tasks := loop.tick():
        await asyncio.gather(*tasks)
        ran += [t.get_name().removeprefix("phase-") for t in tasks]
    return sorted(ran)


async def _runs(mem, phase: str) -> list[str]:
    return [r[0] for r in await mem.db.fetchall("SELECT status FROM phase_runs WHERE phase = ? ORDER BY id", (phase,))]


def test_phases_fall_due_on_the_clock_not_the_wall(home):
    write_config(home, "[daemon]\nheartbeat_seconds = 300\ndecay_interval_hours = 24\n[experimental]\n"
                       "\"daemon.fold_interval_seconds\" = 60\n")

    async def go():
        clock = ManualClock()
        async with await Memory.open(home, actor="daemon") as mem:
            loop = PhaseLoop(mem, asyncio.Event(), clock)
            first = await _settle(loop)
            assert first == ["capsule", "dossiers", "embed", "fold", "heartbeat", "steps"]  # at start
            assert await _settle(loop) == []  # nothing is due until the clock moves
            clock.advance(61)
            assert await _settle(loop) == ["embed", "fold"]
            clock.advance(240)
            assert await _settle(loop) == ["embed", "fold", "heartbeat", "steps"]
            assert "decay" not in await _settle(loop)
            clock.advance(24 * 3600)
            assert "decay" in await _settle(loop)
            assert await _runs(mem, "heartbeat") == ["ok", "ok", "ok"]
            assert await _runs(mem, "decay") == ["ok"]

    asyncio.run(go())


@pytest.mark.sqlite_only
def test_a_failing_phase_backs_off_and_the_others_carry_on(home):
    write_config(home, "[daemon]\nbackup_interval_hours = 1\n[experimental]\n\"daemon.fold_interval_seconds\" = 60\n")

    async def go():
        clock = ManualClock()
        async with await Memory.open(home, actor="daemon") as mem:
            (mem.home.state_dir / "backups").write_text("a file where the backup folder belongs")
            loop = PhaseLoop(mem, asyncio.Event(), clock)
            await _settle(loop)
            clock.advance(3600)
            assert "backup" in await _settle(loop)
            assert await _runs(mem, "backup") == ["failed"]
            error = (await mem.db.fetchone("SELECT error FROM phase_runs WHERE phase = 'backup'"))[0]
            assert "backups" in error
            clock.advance(4)
            assert "backup" not in await _settle(loop)
            clock.advance(1.5)  # first retry after 5 s
            assert "backup" in await _settle(loop)
            clock.advance(9)
            assert "backup" not in await _settle(loop)
            clock.advance(1.5)  # then 10 s
            assert "backup" in await _settle(loop)
            assert await _runs(mem, "backup") == ["failed"] * 3
            assert loop.failures["backup"] == 3
            assert set(await _runs(mem, "fold")) == {"ok"} and len(await _runs(mem, "fold")) >= 2

            (mem.home.state_dir / "backups").unlink()
            clock.advance(21)
            assert "backup" in await _settle(loop)
            assert (await _runs(mem, "backup"))[-1] == "ok" and "backup" not in loop.failures

    asyncio.run(go())



def test_the_embed_phase_runs_again_at_once_while_memories_wait(home, monkeypatch):
    from strata_daemon.app.phases import jobs

    monkeypatch.setattr(jobs, "EMBED_PER_RUN", 2)
    loads = []

    async def go():
        clock = ManualClock()
        async with await Memory.open(home, actor="daemon") as mem:
            for i in range(5):
                await mem.observe(f"note {i} about the bridge on gw-0{i}")
            real = mem.models.embedder

            async def counted():
                if mem.models._embedder is None:
                    loads.append(1)
                return await real()
            mem.models.embedder = counted
            loop = PhaseLoop(mem, asyncio.Event(), clock)
            ran = await _settle(loop)  # the clock never moves
            results = [r[0] for r in await mem.db.fetchall(
                "SELECT result FROM phase_runs WHERE phase = 'embed' ORDER BY id")]
            return ran, results, await mem.embedding_backlog(), mem.models._embedder
    ran, results, backlog, kept = asyncio.run(go())
    assert ran.count("embed") == 3 and backlog == 0
    assert [json.loads(r)["embedded"] for r in results] == [2, 2, 1]
    assert len(loads) == 1 and kept is None  # loaded once, released after the last run


def test_an_embed_run_that_embeds_nothing_waits_for_the_next_interval():
    from strata_daemon.app.phases.jobs import more_to_embed

    assert more_to_embed({"embedded": 512, "backlog": 10})
    assert not more_to_embed({"embedded": 512, "backlog": 0})
    assert not more_to_embed({"embedded": 0, "skipped": "no model (…)"})
    assert not more_to_embed({"embedded": 0, "backlog": 0})


def test_decay_takes_a_strength_snapshot_that_status_shows(home):
    async def go():
        async with await Memory.open(home) as mem:
            await mem.observe("fresh today")
            await mem.observe("from last month", at="2026-10-20T10:00:00Z")
            assert (await mem.status())["strength"] is None
            r = await run_phase(mem, "decay", actor="test")
            return r, (await mem.status())["strength"]

    r, snap = asyncio.run(go())
    assert r["result"]["strength"]["episodes"] == 2 == snap["episodes"]
    assert snap["p90"] > 0.9 and snap["p10"] < 0.05 and snap["weak"] == 1 and snap["potentiated"] == 0


def test_decay_keeps_a_month_of_phase_runs_and_each_phases_last(home):
    from strata_daemon.base import timeutil

    async def go():
        async with await Memory.open(home) as mem:
            now = time.time()
            with timeutil.clock(lambda: now - 40 * 86400):  # a run of each, forty days ago
                for phase in ("heartbeat", "heartbeat", "fold"):
                    await run_phase(mem, phase, actor="test")
            with timeutil.clock(lambda: now - 2 * 86400):
                await run_phase(mem, "heartbeat", actor="test")
            r = await run_phase(mem, "decay", actor="test")
            return r, await mem.db.fetchall("SELECT phase, ended_at FROM phase_runs ORDER BY id")

    r, left = asyncio.run(go())
    # The old heartbeats go; the old fold run stays, as the last fold there is.
    assert r["result"]["phase_runs_pruned"] == 2
    assert [p for p, _ in left] == ["fold", "heartbeat", "decay"]


def test_the_schedule_carries_over_a_restart(home):
    write_config(home, "[daemon]\ndecay_interval_hours = 24\nbackup_interval_hours = 24\n")

    async def go():
        clock = ManualClock()
        async with await Memory.open(home, actor="daemon") as mem:
            now = time.time()
            # decay ran 20 h ago: due in 4 h; backup ran 25 h ago: overdue, so due at once.
            loop = PhaseLoop(mem, asyncio.Event(), clock, last_started={"decay": now - 20 * 3600,
                                                                         "backup": now - 25 * 3600})
            first = await _settle(loop)
            assert "backup" in first and "decay" not in first
            clock.advance(3.9 * 3600)
            assert "decay" not in await _settle(loop)
            clock.advance(0.2 * 3600)
            assert "decay" in await _settle(loop)

    asyncio.run(go())


def test_a_phase_result_reads_as_words_in_the_journal():
    from strata_daemon.app.phases.scheduler import _summary
    assert _summary({"loop": 3, "low_disk": False, "working_set_committed": True, "last": None, "skipped": []}) == \
        "loop 3, low disk no, working set committed yes, last —"
    assert _summary({"free_bytes": 67418943488, "wal_bytes": 0}) == "free bytes 67,418,943,488, wal bytes 0"


PHASES = ("heartbeat", "steps", "fold", "embed", "decay", "consolidate", "dossiers", "capsule", "arena", "backup")
REPR = r"\{'|'\s*:|\bNone\b|\bTrue\b|\bFalse\b"


@pytest.mark.parametrize("phase", PHASES)
def test_a_phase_run_by_hand_prints_words_not_a_python_repr(cli, phase):
    import re

    cli("observe", "Bridge: DOWN", check=True)
    r = cli("phase", "run", phase)
    assert r.returncode == 0 and r.out.startswith(f"{phase}: ok in ")
    assert not re.search(REPR, r.out), r.out
