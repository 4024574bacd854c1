"""Migration 10: phase runs."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "phase runs"


SQL = """
-- Every run of a daemon phase (or `strata phase run`): when, how it ended, what it did.
CREATE TABLE phase_runs (
    id INTEGER PRIMARY KEY,
    phase TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
    result TEXT CHECK (result IS NULL OR json_valid(result)),
    error TEXT,
    actor TEXT NOT NULL
);
CREATE INDEX phase_runs_by_phase ON phase_runs(phase, id);
"""


def up(conn) -> None:
    run_script(conn, SQL)
