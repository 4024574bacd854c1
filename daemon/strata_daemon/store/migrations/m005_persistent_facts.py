"""Migration 5: persistent facts."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "persistent facts"


SQL = """
-- One row per key in a namespace: its identity and settings. Values live in fact_values.
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL REFERENCES namespaces(agent),
    key TEXT NOT NULL,               -- normalised (strata_daemon/facts/keys.py)
    label TEXT NOT NULL,             -- the key as first written
    importance REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    ttl_seconds REAL CHECK (ttl_seconds IS NULL OR ttl_seconds > 0),
    confirmed_at REAL,               -- latest valid time at which the current value was asserted
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (agent, key)
);

-- Bitemporal history: each row one assertion, true in the world from valid_from until
-- valid_to (the next assertion's valid_from), learned at recorded_at. NULL value: retracted.
CREATE TABLE fact_values (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL REFERENCES facts(id),
    agent TEXT NOT NULL,
    value TEXT,
    valid_from REAL NOT NULL,
    valid_to REAL,
    recorded_at REAL NOT NULL,
    source_kind TEXT NOT NULL,
    source_ref TEXT,
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    rule TEXT,                       -- the capture rule that produced it, if any
    actor TEXT NOT NULL
);
CREATE INDEX fact_values_by_time ON fact_values(fact_id, valid_from, id);
CREATE TRIGGER fact_values_no_delete BEFORE DELETE ON fact_values BEGIN
    SELECT RAISE(ABORT, 'fact history is never deleted');
END;
CREATE TRIGGER fact_values_no_rewrite BEFORE UPDATE OF fact_id, agent, value, valid_from, recorded_at,
    source_kind, source_ref, confidence, rule, actor ON fact_values BEGIN
    SELECT RAISE(ABORT, 'fact history is never rewritten; only valid_to follows later assertions');
END;

-- Every change of a key's value, with the values either side in world time.
CREATE TABLE fact_conflicts (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    fact_id INTEGER NOT NULL REFERENCES facts(id),
    old_value_id INTEGER REFERENCES fact_values(id),
    new_value_id INTEGER NOT NULL REFERENCES fact_values(id),
    next_value_id INTEGER REFERENCES fact_values(id),
    flagged INTEGER NOT NULL DEFAULT 0,  -- another value within facts.conflict_window_seconds
    late INTEGER NOT NULL DEFAULT 0,     -- arrived with a valid time older than the current value's
    at REAL NOT NULL,
    acknowledged_at REAL
);
CREATE INDEX fact_conflicts_by_agent ON fact_conflicts(agent, id);
"""


def up(conn) -> None:
    run_script(conn, SQL)
