"""Migration 13: counts by state."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "counts by state"


SQL = """
-- `strata status` and the inspector's overview count memories by state on every look: from
-- this index rather than from every row (94 ms at 100,000 memories before, a few after).
CREATE INDEX episodes_by_state ON episodes(agent, state);
"""


def up(conn) -> None:
    run_script(conn, SQL)
