"""Migration 12: consolidation."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "consolidation"


SQL = """
-- What nightly consolidation changes on a memory, besides its state (archived, superseded).
-- Every change is also an audit row holding the values before it, so each can be undone.
ALTER TABLE episodes ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1);
ALTER TABLE episodes ADD COLUMN quality TEXT NOT NULL DEFAULT 'unknown' CHECK (quality IN ('unknown', 'good'));
ALTER TABLE episodes ADD COLUMN strength_factor REAL NOT NULL DEFAULT 1.0
    CHECK (strength_factor > 0 AND strength_factor <= 1);
ALTER TABLE episodes ADD COLUMN potentiated_at REAL;
ALTER TABLE episodes ADD COLUMN stale_at REAL;     -- the latest stale-decay step
ALTER TABLE episodes ADD COLUMN replayed_at REAL;  -- the latest replay
-- Pairs a rule has acted on once and for all (interference: older weakened by newer;
-- associate: an edge added), so running consolidation again changes nothing.
CREATE TABLE consolidation_pairs (
    agent TEXT NOT NULL,
    rule TEXT NOT NULL,
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (agent, rule, a, b)
) WITHOUT ROWID;
"""


def up(conn) -> None:
    run_script(conn, SQL)
