"""Migration 11: strength snapshots."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "strength snapshots"


SQL = """
-- The nightly decay phase's picture of each namespace: how strong its memories are, and how
-- many associations the spiderweb keeps. One row a run; trends are read across rows.
CREATE TABLE strength_snapshots (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    taken_at REAL NOT NULL,
    episodes INTEGER NOT NULL,
    mean REAL,
    p10 REAL,
    p50 REAL,
    p90 REAL,
    weak INTEGER NOT NULL,
    potentiated INTEGER NOT NULL,
    edges INTEGER NOT NULL
);
CREATE INDEX strength_snapshots_by_agent ON strength_snapshots(agent, taken_at);
"""


def up(conn) -> None:
    run_script(conn, SQL)
