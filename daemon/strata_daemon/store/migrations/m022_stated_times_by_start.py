"""Migration 22: stated times by start."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "stated times by start"


SQL = """
-- A question naming a time finds the memories stating a time then (episodes/recall.py,
-- window_members): by where their spans start. IF NOT EXISTS: a development version of
-- migration 21 made this index, and homes made then have it.
CREATE INDEX IF NOT EXISTS stated_times_by_start ON stated_times(start_at);
"""


def up(conn) -> None:
    run_script(conn, SQL)
