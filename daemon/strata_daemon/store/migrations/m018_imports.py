"""Migration 18: imports."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "imports"


SQL = """
-- Each input strata import has stored from, known by the SHA-256 of its bytes, and how many of
-- its rows are stored: counted in the transaction that stores them, so a run cut short and run
-- again goes on after the last stored row instead of folding the same lines in a second time.
CREATE TABLE imports (
    agent TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    rows_stored INTEGER NOT NULL,
    rows_total INTEGER NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    PRIMARY KEY (agent, input_sha256)
);
"""


def up(conn) -> None:
    run_script(conn, SQL)
