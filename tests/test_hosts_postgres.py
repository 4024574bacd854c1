"""Several hosts, one memory: three real daemons on one PostgreSQL database and writers beside
them (`strata bench hosts`, at a small size). Nothing acknowledged is lost, the shared phases
run once a period by one daemon, and when that daemon is killed another takes them over."""

from __future__ import annotations

import asyncio

import pytest

from strata_bench.hosts import bench_hosts

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_three_daemons_share_one_store_and_one_takes_over_from_a_killed_one(pg_server):
    r = asyncio.run(bench_hosts(pg_server.url(), daemons=3, writers=3, seconds=8, interval=3))
    assert r["writes_acknowledged"] > 50 and r["writes_lost"] == 0 and r["errors"] == 0, r
    assert r["daemons_that_ran_shared_phases"] == 1 and r["phases_run_twice_in_a_period"] == 0, r
    assert all(1 <= n <= r["periods"] + 1 for n in r["shared_phase_runs"].values()), r
    assert r["takeover_seconds"] is not None and r["takeover_seconds"] <= 60, r
    assert r["daemons_alive_at_end"] == 2
