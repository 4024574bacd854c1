"""Migration 19: phase runs interrupted."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "phase runs interrupted"


SQL = """
-- A run a stop request ended is 'interrupted' (its work rolled back), and each run names the
-- process that ran it: a row a killed process left 'running' is marked interrupted when the
-- daemon next starts, instead of showing as running forever beside "daemon not running".
CREATE TABLE phase_runs_new (
    id INTEGER PRIMARY KEY,
    phase TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
    result TEXT CHECK (result IS NULL OR json_valid(result)),
    error TEXT,
    actor TEXT NOT NULL,
    pid INTEGER
);
INSERT INTO phase_runs_new (id, phase, started_at, ended_at, status, result, error, actor)
    SELECT id, phase, started_at, ended_at, status, result, error, actor FROM phase_runs;
DROP TABLE phase_runs;
ALTER TABLE phase_runs_new RENAME TO phase_runs;
CREATE INDEX phase_runs_by_phase ON phase_runs(phase, id);
"""


def up(conn) -> None:
    run_script(conn, SQL)
