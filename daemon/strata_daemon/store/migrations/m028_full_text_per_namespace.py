"""Migration 28: full text per namespace."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "full text per namespace"

# A copy of strata_daemon/store/fts_tables.py's DDL as it was written: a migration never
# imports live code.
TABLE = """
CREATE VIRTUAL TABLE {t} USING fts5(
    content, source, content='episodes', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE episodes_vocab_{n} USING fts5vocab({t}, 'row');
CREATE TRIGGER {t}_insert AFTER INSERT ON episodes WHEN new.agent = {who} BEGIN
    INSERT INTO {t}(rowid, content, source) VALUES (new.id, new.content, new.source);
END;
CREATE TRIGGER {t}_delete AFTER DELETE ON episodes WHEN old.agent = {who} BEGIN
    INSERT INTO {t}({t}, rowid, content, source) VALUES ('delete', old.id, old.content, old.source);
END;
CREATE TRIGGER {t}_update AFTER UPDATE OF content, source ON episodes WHEN new.agent = {who} BEGIN
    INSERT INTO {t}({t}, rowid, content, source) VALUES ('delete', old.id, old.content, old.source);
    INSERT INTO {t}(rowid, content, source) VALUES (new.id, new.content, new.source);
END;
INSERT INTO {t}({t}, rank) VALUES ('secure-delete', 1);
"""

SQL = """
-- FTS5 keeps its statistics per table, and bm25 weighs a word by them: one index for the home
-- let agent A's words move agent B's ranking. Each namespace gets its own index, numbered here.
CREATE TABLE fts_tables (
    agent TEXT PRIMARY KEY,
    n INTEGER NOT NULL UNIQUE
);
"""

DROP = """
DROP TRIGGER episodes_fts_insert;
DROP TRIGGER episodes_fts_delete;
DROP TRIGGER episodes_fts_update;
DROP TABLE episodes_vocab;
DROP TABLE episodes_fts;
"""


def up(conn) -> None:
    run_script(conn, SQL)
    agents = [r[0] for r in conn.execute("SELECT agent FROM namespaces UNION SELECT agent FROM episodes ORDER BY 1")]
    for n, agent in enumerate(agents, 1):
        t = f"episodes_fts_{n}"
        conn.execute("INSERT INTO fts_tables (agent, n) VALUES (?, ?)", (agent, n))
        run_script(conn, TABLE.format(t=t, n=n, who="'" + agent.replace("'", "''") + "'"))
        conn.execute(f"INSERT INTO {t}(rowid, content, source) SELECT id, content, source FROM episodes "
                     "WHERE agent = ?", (agent,))
    run_script(conn, DROP)
