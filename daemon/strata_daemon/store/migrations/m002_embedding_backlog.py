"""Migration 2: embedding backlog."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "embedding backlog"


def up(conn) -> None:
    # The vector table itself is created for the configured model's dimension on first use
    # (strata_daemon/store/vectors.py); this records which episodes still wait for a vector.
    run_script(conn, """
ALTER TABLE episodes ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0;
CREATE INDEX episodes_unembedded ON episodes(id) WHERE embedded = 0;
""")
