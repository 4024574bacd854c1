"""After a purge's transaction, its words leave the disk: SQLite's WAL folded into the file
(secure_delete already zeroed the rows), or, on PostgreSQL, the tables that held them rewritten."""

from __future__ import annotations

from strata_daemon.store.dialect import on_postgres


def rewritten(conn) -> list[str]:
    """On PostgreSQL, the tables whose rows the open purge deleted or replaced since
    `start_redacting`, with those their foreign keys delete from or set to null with them: the
    tables that hold its words' old row versions. Empty on SQLite, whose secure_delete zeroes them."""
    if not on_postgres(conn):
        return []
    tables, new = set(conn.rewritten), set(conn.rewritten)
    while new:
        new = {r[0] for r in conn.execute(
            "SELECT DISTINCT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f' "
            "AND confdeltype IN ('c', 'n', 'd') AND confrelid::regclass::text = ANY(?)", (sorted(new),))} - tables
        tables |= new
    return sorted(tables)


def fold_wal(conn, tables: list[str]) -> list:
    """Fold the WAL into the database file and truncate it: the PRAGMA's row (busy, log pages,
    pages folded). Errors are the caller's to see, unlike Database.checkpoint.
    On PostgreSQL, TABLES (`rewritten`) are rewritten instead (VACUUM FULL, their indexes with
    them): a plain VACUUM frees a deleted row's space but leaves its bytes, and the full-text
    index keeps its words, until something overwrites them. Its row: the tables the role may not
    rewrite (the server skips them with a warning). What the server can promise of its WAL and
    of replicas is in docs/forgetting.md."""
    if on_postgres(conn):
        if not tables:
            return [[]]
        barred = [r[0] for r in conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relname = ANY(?) AND NOT (pg_has_role(relowner, 'USAGE') OR CASE WHEN "
            "current_setting('server_version_num')::int >= 170000 THEN has_table_privilege(oid, 'MAINTAIN') "
            "ELSE false END)", (tables,))]
        allowed = [t for t in tables if t not in barred]
        if allowed:
            conn.execute(f"VACUUM FULL {', '.join(allowed)}")
        return [barred]
    return conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
