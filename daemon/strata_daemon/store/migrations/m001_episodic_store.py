"""Migration 1: episodic store."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "episodic store"


SQL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE namespaces (
    agent TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    episode_count INTEGER NOT NULL DEFAULT 0,   -- maintained by the write path, read by the passive-phase check
    feedback_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL REFERENCES namespaces(agent),
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    event_at REAL NOT NULL,          -- when it happened in the world
    recorded_at REAL NOT NULL,       -- when strata learned it
    last_seen_at REAL NOT NULL,      -- latest repeat folded in by the attention filter
    occurrences INTEGER NOT NULL DEFAULT 1,
    source TEXT,
    session TEXT,
    importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    factual INTEGER NOT NULL DEFAULT 0 CHECK (factual IN (0, 1)),
    irrelevant INTEGER NOT NULL DEFAULT 0 CHECK (irrelevant IN (0, 1)),
    context TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(context)),
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access_at REAL,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'active'
        CHECK (state IN ('active', 'superseded', 'archived', 'quarantined')),
    superseded_by INTEGER REFERENCES episodes(id) ON DELETE SET NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX episodes_by_time ON episodes(agent, event_at);
CREATE INDEX episodes_by_hash ON episodes(agent, content_hash);
CREATE INDEX episodes_superseded_by ON episodes(superseded_by) WHERE superseded_by IS NOT NULL;

CREATE VIRTUAL TABLE episodes_fts USING fts5(
    content, content='episodes', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
-- Document frequencies per term, read by recall to plan bounded-cost full-text queries.
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, 'row');
CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF content ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO episodes_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE recalls (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL REFERENCES namespaces(agent),
    query TEXT NOT NULL,
    mode TEXT NOT NULL,
    k INTEGER NOT NULL,
    context TEXT NOT NULL DEFAULT '{}',
    at REAL NOT NULL,
    outcome TEXT CHECK (outcome IN ('success', 'failure')),
    outcome_at REAL
);
CREATE INDEX recalls_by_agent ON recalls(agent, at);

-- The queue of deferred access updates, kept in SQLite so a crash loses nothing:
-- a recall appends here; the fold phase turns pending rows into episode features.
CREATE TABLE access_events (
    id INTEGER PRIMARY KEY,
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    recall_id INTEGER REFERENCES recalls(id) ON DELETE CASCADE,
    rank INTEGER,
    score REAL,
    at REAL NOT NULL,
    folded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX access_by_recall ON access_events(recall_id);
CREATE INDEX access_by_episode ON access_events(episode_id);
CREATE INDEX access_pending ON access_events(id) WHERE folded = 0;

-- Immutable history of every change; no foreign keys so it outlives what it describes.
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    agent TEXT NOT NULL,
    item_kind TEXT NOT NULL,
    item_id INTEGER,
    action TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    actor TEXT NOT NULL
);
CREATE INDEX audit_by_item ON audit(item_kind, item_id);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
"""


def up(conn) -> None:
    run_script(conn, SQL)
