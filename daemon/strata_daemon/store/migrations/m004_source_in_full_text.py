"""Migration 4: source in full text."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "source in full text"


def up(conn) -> None:
    # The full-text index gains the memory's source (who said it), weighted at query time by
    # recall.source_weight; and a memory's neighbours in its session are found by id order.
    run_script(conn, """
DROP TRIGGER episodes_fts_insert;
DROP TRIGGER episodes_fts_delete;
DROP TRIGGER episodes_fts_update;
DROP TABLE episodes_vocab;
DROP TABLE episodes_fts;
CREATE VIRTUAL TABLE episodes_fts USING fts5(
    content, source, content='episodes', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, 'row');
CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts(rowid, content, source) VALUES (new.id, new.content, new.source);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content, source) VALUES ('delete', old.id, old.content, old.source);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF content, source ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content, source) VALUES ('delete', old.id, old.content, old.source);
    INSERT INTO episodes_fts(rowid, content, source) VALUES (new.id, new.content, new.source);
END;
INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
CREATE INDEX episodes_by_session ON episodes(agent, session, id) WHERE session IS NOT NULL;
""")
