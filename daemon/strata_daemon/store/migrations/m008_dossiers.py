"""Migration 8: dossiers."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "dossiers"


SQL = """
-- A topic's settings as a person chose them (`strata dossier add|remove`) and its refresh state.
-- Topics from the config and the capsule need no row until they are refreshed or changed.
CREATE TABLE dossier_topics (
    agent TEXT NOT NULL,
    topic TEXT NOT NULL,             -- normalised (strata_daemon/dossier/topics.py)
    query TEXT,                      -- NULL: from the config or capsule, else the topic's words
    fact_prefixes TEXT CHECK (fact_prefixes IS NULL OR json_valid(fact_prefixes)),
    enabled INTEGER CHECK (enabled IS NULL OR enabled IN (0, 1)),  -- NULL: as its origin says
    added_at REAL,                   -- set by `strata dossier add`
    changed_at REAL NOT NULL,
    current_version INTEGER,
    refreshed_at REAL,               -- latest stored version
    checked_at REAL,                 -- latest refresh, including those that found nothing new
    PRIMARY KEY (agent, topic)
) WITHOUT ROWID;

-- Every refresh that changed something: append-only.
CREATE TABLE dossier_versions (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    topic TEXT NOT NULL,
    version INTEGER NOT NULL,
    text TEXT NOT NULL,
    sources TEXT NOT NULL CHECK (json_valid(sources)),   -- [{"id", "salience", ...}] in salience order
    generator TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    notes TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(notes)),  -- why a generator fell back, lines dropped
    created_at REAL NOT NULL,
    actor TEXT NOT NULL,
    UNIQUE (agent, topic, version)
);
CREATE TRIGGER dossier_versions_no_delete BEFORE DELETE ON dossier_versions BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never deleted');
END;
CREATE TRIGGER dossier_versions_no_rewrite BEFORE UPDATE ON dossier_versions BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never rewritten');
END;
"""


def up(conn) -> None:
    run_script(conn, SQL)
