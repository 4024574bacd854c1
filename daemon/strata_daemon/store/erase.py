"""After a purge's transaction, its words leave the disk: SQLite's WAL folded into the file
(secure_delete already zeroed the rows), or, on PostgreSQL, the tables that held them rewritten."""

from __future__ import annotations

from strata_daemon.store.dialect import on_postgres

# The tables that hold words. Their free space may keep the bytes of rows deleted or replaced
# before the purge (a capsule render pruned, a spiderweb edge decayed, a fact's label changed),
# which the purge cannot see: every purge rewrites them all. The others (vectors, events, stated
# times) are rewritten when the purge changed their rows.
WORDS = ("episodes", "audit", "fact_values", "facts", "dossier_versions", "dossier_topics", "capsule_renders",
         "capsule_overrides", "recalls", "arena_episodes", "web_edges", "web_links", "web_context", "entities")


def rewritten(conn) -> list[str]:
    """On PostgreSQL, the tables a purge rewrites: WORDS, the tables whose rows it deleted or
    replaced since `start_redacting`, and those their foreign keys delete from or set to null
    with them. Empty on SQLite, whose secure_delete zeroes a row's bytes when it goes."""
    if not on_postgres(conn):
        return []
    tables, new = set(conn.rewritten), set(conn.rewritten)
    while new:
        new = {r[0] for r in conn.execute(
            "SELECT DISTINCT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' "
            "AND confdeltype IN ('c', 'n', 'd') AND confrelid::regclass::text = ANY(?)", (sorted(new),))} - tables
        tables |= new
    return sorted(tables | set(WORDS))


def fold_wal(conn, tables: list[str]) -> list:
    """Fold the WAL into the database file and truncate it: the PRAGMA's row (busy, log pages,
    pages folded). Errors are the caller's to see, unlike Database.checkpoint.
    On PostgreSQL, TABLES (`rewritten`) are rewritten instead (VACUUM FULL, their indexes with
    them): a plain VACUUM frees a deleted row's space but leaves its bytes, and the full-text
    index keeps its words, until something overwrites them. Its row: the tables the role may not
    rewrite (the server would skip them with a warning). What the server can promise of its WAL
    and of replicas is in docs/forgetting.md."""
    if on_postgres(conn):
        present = {r[0]: r[1] for r in conn.execute(
            "SELECT relname, pg_has_role(relowner, 'USAGE') OR CASE WHEN current_setting('server_version_num')::int "
            ">= 170000 THEN has_table_privilege(oid, 'MAINTAIN') ELSE false END FROM pg_class "
            "WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' AND relname = ANY(?)", (tables,))}
        allowed = [t for t in tables if present.get(t)]
        # The statistics catalog, too, where the role may (the database's owner): since migration
        # 5 it holds no words, but the rows of the statistics that did are removed, not erased.
        if conn.execute("SELECT pg_has_role(datdba, 'USAGE') FROM pg_database "
                        "WHERE datname = current_database()").fetchone()[0]:
            allowed.append("pg_catalog.pg_statistic")
        if allowed:
            conn.execute(f"VACUUM FULL {', '.join(allowed)}")
        return [[t for t in tables if t in present and not present[t]]]
    return conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
