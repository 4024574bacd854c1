"""Migration 16: arena newest episode."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "arena newest episode"


SQL = """
-- The newest evaluation episode each arena run saw: a night with none newer has nothing new to
-- learn from, and the daemon's arena phase skips it (its cost follows new feedback, not the
-- home's age).
ALTER TABLE arena_runs ADD COLUMN newest_episode INTEGER;
"""


def up(conn) -> None:
    run_script(conn, SQL)
