"""What `strata doctor` reads of a PostgreSQL store: the server, the extensions strata needs,
what its role may do and how far the schema is migrated. It only reads."""

from __future__ import annotations

from strata_daemon.store.postgres import connection

EXTENSIONS = ("vector", "btree_gin")  # pgvector for vectors; btree_gin for the (namespace, words) index
MIN_VERSION = 160000  # pg_input_is_valid, which the schema's checks of JSON use


def read(url: str) -> dict:
    """The server's version, the extensions (installed, and available to install), whether the
    role may create what a first migration makes, and the migrations applied. Raises the
    driver's error when the server cannot be reached."""
    conn = connection.connect(url)
    try:
        version = conn.execute("SELECT current_setting('server_version_num')::int, version()").fetchone()
        ext = {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT name, installed_version, default_version FROM pg_available_extensions WHERE name = ANY(?)",
            (list(EXTENSIONS),)).fetchall()}
        role = conn.execute("SELECT rolname, rolsuper, has_database_privilege(current_database(), 'CREATE'), "
                            "has_schema_privilege(current_schema(), 'CREATE') FROM pg_roles "
                            "WHERE rolname = current_user").fetchone()
        migrated = conn.execute("SELECT to_regclass('_migrations') IS NOT NULL").fetchone()[0]
        applied = [r[0] for r in conn.execute("SELECT id FROM _migrations").fetchall()] if migrated else []
        # Statistics of columns whose statistics are off (migration 5): kept from before it.
        kept = conn.execute("SELECT count(*) FROM pg_stats s JOIN pg_attribute a ON a.attrelid = "
                            "(quote_ident(s.schemaname) || '.' || quote_ident(s.tablename))::regclass "
                            "AND a.attname = s.attname WHERE s.schemaname = current_schema() AND a.attstattarget = 0"
                            ).fetchone()[0] if migrated else 0
    finally:
        conn.close()
    return {"version": version[0], "version_text": version[1].split(",")[0],
            "extensions": {n: {"installed": ext.get(n, (None, None))[0], "available": ext.get(n, (None, None))[1]}
                           for n in EXTENSIONS},
            "role": role[0], "superuser": bool(role[1]), "may_create": bool(role[2] and role[3]),
            "applied": applied, "word_statistics": kept}
