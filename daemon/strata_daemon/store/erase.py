"""After a purge's transaction, its words leave the disk: SQLite's WAL folded into the file
(secure_delete already zeroed the rows), or, on PostgreSQL, the tables that held them rewritten."""

from __future__ import annotations

from strata_daemon.store.dialect import on_postgres

# The tables that hold words: those with a column whose statistics migration 5 turned off, so
# that the columns are named once. Their free space may keep the bytes of rows deleted or
# replaced before the purge (a capsule render pruned, a spiderweb edge decayed, a fact's label
# changed), which the purge cannot see: every purge rewrites them all. The others (vectors,
# events, stated times) are rewritten when the purge changed their rows.
_WORDS = ("SELECT DISTINCT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
          "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND a.attnum > 0 "
          "AND NOT a.attisdropped AND a.attstattarget = 0")


def rewritten(conn) -> list[str]:
    """On PostgreSQL, the tables a purge rewrites: those that hold words, those whose rows it deleted or
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
    return sorted(tables | {r[0] for r in conn.execute(_WORDS)})


def fold_wal(conn, tables: list[str]) -> tuple[bool, list[str]]:
    """(whether the WAL is cleared, the tables the role may not rewrite). SQLite: the WAL folded
    into the database file and truncated; not cleared when a reader in another process kept part
    of it (the next checkpoint removes the rest). Errors are the caller's to see, unlike
    Database.checkpoint.
    PostgreSQL: TABLES (`rewritten`) rewritten instead (VACUUM FULL, their indexes with them): a
    plain VACUUM frees a deleted row's space but leaves its bytes, and the full-text index keeps
    its words, until something overwrites them. A table the role may not rewrite the server
    would skip with a warning. Its WAL is the server's to recycle: never cleared here (what the
    server can promise of it and of replicas is in docs/forgetting.md)."""
    if not on_postgres(conn):
        rows = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return bool(rows) and rows[0][0] == 0, []
    present = {r[0]: r[1] for r in conn.execute(
        "SELECT relname, pg_has_role(relowner, 'USAGE') OR CASE WHEN current_setting('server_version_num')::int "
        ">= 170000 THEN has_table_privilege(oid, 'MAINTAIN') ELSE false END FROM pg_class "
        "WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' AND relname = ANY(?)", (tables,))}
    allowed = [t for t in tables if present.get(t)]
    # The statistics catalog, too, where the role may (the database's owner): since migration 5
    # it holds no words, but the rows of the statistics that did are removed, not erased.
    if conn.execute("SELECT pg_has_role(datdba, 'USAGE') FROM pg_database "
                    "WHERE datname = current_database()").fetchone()[0]:
        allowed.append("pg_catalog.pg_statistic")
    if allowed:
        conn.execute(f"VACUUM FULL {', '.join(allowed)}")
    return False, [t for t in tables if t in present and not present[t]]
