"""One full-text index per namespace. FTS5 keeps its statistics (how many memories, how long,
how many hold each word) per table, and bm25 weighs a word by them: with one table for the
home, agent B's ranking of a word moved when agent A stored it, a signal about what another
agent holds. Each namespace's index is `episodes_fts_N` (N from `fts_tables`), kept by its own
triggers on `episodes`; the first memory of a namespace creates it (migration 28 made those
of the namespaces before it). The DDL is migration 28's, which keeps its own copy."""

from __future__ import annotations

from strata_daemon.store.dialect import on_postgres
from strata_daemon.store.migrations.script import statements

TOKENIZER = "porter unicode61 remove_diacritics 2"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def ddl(n: int, agent: str) -> str:
    """The index of namespace AGENT as table number N, its vocabulary and its triggers."""
    t, who = f"episodes_fts_{n}", _literal(agent)
    return f"""
CREATE VIRTUAL TABLE {t} USING fts5(
    content, source, content='episodes', content_rowid='id', tokenize='{TOKENIZER}'
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


def table_of(conn, agent: str) -> str | None:
    """The namespace's full-text table, or None before its first memory."""
    row = conn.execute("SELECT n FROM fts_tables WHERE agent = ?", (agent,)).fetchone()
    return None if row is None else f"episodes_fts_{row[0]}"


def vocab_of(table: str) -> str:
    return table.replace("episodes_fts_", "episodes_vocab_", 1)


def ensure(conn, agent: str) -> str:
    """The namespace's full-text table, made now if it has none (inside the caller's
    transaction, before its first memory is stored). PostgreSQL has one index for every
    namespace (store/postgres/fulltext.py)."""
    if on_postgres(conn):
        return agent
    found = table_of(conn, agent)
    if found is not None:
        return found
    n = conn.execute("SELECT coalesce(max(n), 0) + 1 FROM fts_tables").fetchone()[0]
    conn.execute("INSERT INTO fts_tables (agent, n) VALUES (?, ?)", (agent, n))
    for statement in statements(ddl(n, agent)):
        conn.execute(statement)
    return f"episodes_fts_{n}"
