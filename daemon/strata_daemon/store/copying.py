"""Copying a store into another, either way between a home's SQLite file and a PostgreSQL
database: every table's rows in key order, a batch a transaction, each row written once
however often a copy cut short is run again (a key that is there already is left as it is),
then every table counted and hashed on both sides, on one thread (`Memory.copy_store` runs it)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Iterator

from strata_daemon.base.wording import counted
from strata_daemon.errors import Conflict, InvalidInput
from strata_daemon.store import driver, engines, fts_tables, migrate, vectors
from strata_daemon.store.dialect import on_postgres

# Parents before children; each table with the columns that order and key its rows. A table
# keyed by nothing of its own (stated_times, redacting) is copied whole for each batch of the
# memories it belongs to, after those memories' rows of it are deleted.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("meta", ("key",)), ("namespaces", ("agent",)), ("episodes", ("id",)), ("recalls", ("id",)),
    ("access_events", ("id",)), ("feedback_events", ("id",)), ("stated_times", ()),
    ("imports", ("agent", "input_sha256")), ("audit", ("id",)), ("facts", ("id",)), ("fact_values", ("id",)),
    ("fact_conflicts", ("id",)), ("web_edges", ("agent", "a", "b")), ("web_context", ("agent", "node")),
    ("web_links", ("agent", "src", "dst", "type")), ("entities", ("agent", "type", "value")),
    ("dossier_topics", ("agent", "topic")), ("dossier_versions", ("id",)), ("capsule_renders", ("id",)),
    ("capsule_overrides", ("id",)), ("consolidation_pairs", ("agent", "rule", "a", "b")),
    ("strength_snapshots", ("id",)), ("phase_runs", ("id",)), ("arena_arms", ("agent", "arm")),
    ("arena_episodes", ("id",)), ("arena_runs", ("id",)), ("arena_choices", ("id",)), (vectors.TABLE, ("rowid",)),
)
BATCH = 2000
GENERATED = {"search", "search_tokens"}  # PostgreSQL computes these from the text


def columns(conn, table: str) -> list[str]:
    if on_postgres(conn):
        rows = conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                            "AND table_schema = current_schema() ORDER BY ordinal_position", (table,)).fetchall()
        return [r[0] for r in rows if r[0] not in GENERATED]
    if table == vectors.TABLE:
        return ["rowid", "agent", "embedding"] if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() else []
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _rows(conn, table: str, cols: list[str], key: tuple[str, ...]) -> Iterator[list[tuple]]:
    """The table's rows in key order, BATCH at a time (keyset pagination); stated_times, keyed
    by nothing of its own, whole memories at a time."""
    select = f"SELECT {', '.join(cols)} FROM {table}"
    if not key:
        yield from _by_memory(conn, select)
        return
    after = f" WHERE ({', '.join(key)}) > ({', '.join('?' * len(key))})"
    last: tuple = ()
    while rows := [tuple(r) for r in conn.execute(f"{select}{after if last else ''} ORDER BY {', '.join(key)} "
                                                 "LIMIT ?", (*last, BATCH)).fetchall()]:
        last = tuple(rows[-1][cols.index(k)] for k in key)
        yield rows


def _by_memory(conn, select: str) -> Iterator[list[tuple]]:
    start = -1
    while ids := [r[0] for r in conn.execute("SELECT DISTINCT episode_id FROM stated_times WHERE episode_id > ? "
                                             "ORDER BY episode_id LIMIT ?", (start, BATCH)).fetchall()]:
        start = ids[-1]
        yield [tuple(r) for r in conn.execute(
            f"{select} WHERE episode_id IN ({', '.join('?' * len(ids))}) ORDER BY episode_id, at", ids).fetchall()]


def _write(target, table: str, cols: list[str], key: tuple[str, ...], rows: list[tuple]) -> None:
    values = rows
    if table == vectors.TABLE and on_postgres(target):
        from strata_daemon.store.postgres.connection import vector_text

        marks = ", ".join("?::vector" if c == "embedding" else "?" for c in cols)
        values = [tuple(vector_text(v) if c == "embedding" else v for c, v in zip(cols, r)) for r in rows]
    else:
        marks = ", ".join("?" * len(cols))
    if table == "episodes":  # a memory's successor comes later in id order: linked once all are in
        values = [tuple(None if c == "superseded_by" else v for c, v in zip(cols, r)) for r in values]
    if not key:  # stated_times: the batch's memories' rows replace any a cut-short copy left
        ids = sorted({r[cols.index("episode_id")] for r in rows})
        target.execute(f"DELETE FROM {table} WHERE episode_id IN ({', '.join('?' * len(ids))})", ids)
        target.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", values)
        return
    conflict = "ON CONFLICT DO NOTHING" if on_postgres(target) else ""
    verb = "INSERT INTO" if on_postgres(target) else "INSERT OR IGNORE INTO"
    target.executemany(f"{verb} {table} ({', '.join(cols)}) VALUES ({marks}) {conflict}", values)


def _prepare(source, target) -> None:
    """What the target needs before rows arrive: on SQLite each namespace's full-text index
    and the vector table of the source's model (made on first use there)."""
    if on_postgres(target):
        return
    for (agent,) in source.execute("SELECT agent FROM namespaces").fetchall():
        fts_tables.ensure(target, agent)
    spec = vectors.indexed(source)
    if spec is not None:
        target.execute("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim', 'embedding_text')")
        vectors.prepare(target, spec)


def _finish(source, target) -> None:
    """Links between memories, and (PostgreSQL) each id sequence past the ids copied."""
    for rows in _rows(source, "episodes", ["id", "superseded_by"], ("id",)):
        linked = [(s, i) for i, s in rows if s is not None]
        if linked:
            target.executemany("UPDATE episodes SET superseded_by = ? WHERE id = ?", linked)
    if on_postgres(target):
        for table, key in TABLES:
            if key == ("id",):
                target.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                               f"greatest((SELECT max(id) FROM {table}), 1))")


def _transaction(target, fn: Callable[[], None]) -> None:
    target.execute("BEGIN IMMEDIATE")
    try:
        fn()
        target.execute("COMMIT")
    except BaseException:
        target.execute("ROLLBACK")
        raise


def _batch(target, table: str, cols: list[str], key: tuple[str, ...], rows: list[tuple]) -> None:
    if table == "meta":  # the source's marks (floors, sequences, the model) are the copy's
        target.executemany("DELETE FROM meta WHERE key = ?", [(r[0],) for r in rows])
    _write(target, table, cols, key, rows)


def copy(source, target, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Every row of SOURCE's tables into TARGET, a batch a transaction; returns the rows written a table."""
    written: dict[str, int] = {}
    _transaction(target, lambda: _prepare(source, target))
    for table, key in TABLES:
        cols = [c for c in columns(source, table) if c in set(columns(target, table))]
        if not cols:
            continue
        for rows in _rows(source, table, cols, key):
            _transaction(target, lambda: _batch(target, table, cols, key, rows))
            written[table] = written.get(table, 0) + len(rows)
            if progress:
                progress(table, len(rows))
    _transaction(target, lambda: _finish(source, target))
    return written


def _value(v) -> str:
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, float) and v.is_integer():
        v = int(v) if abs(v) < 2**53 else v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    return json.dumps(v)


def digest(conn, table: str, cols: list[str], key: tuple[str, ...]) -> tuple[int, str]:
    """(rows, SHA-256 of the rows' own hashes, sorted): equal on both sides of a lossless copy,
    whatever order each side's collation reads text keys in."""
    hashes = sorted(hashlib.sha256("\x1f".join(map(_value, r)).encode()).digest()
                    for rows in _rows(conn, table, cols, key) for r in rows)
    return len(hashes), hashlib.sha256(b"".join(hashes)).hexdigest()


def check(source, target) -> dict[str, dict]:
    """Each table's count and hash on both sides, and whether they agree."""
    out = {}
    for table, key in TABLES:
        cols = [c for c in columns(source, table) if c in set(columns(target, table))]
        if not cols or table == "meta":
            continue
        a, b = digest(source, table, cols, key), digest(target, table, cols, key)
        out[table] = {"rows": a[0], "same": a == b, **({} if a == b else {"target_rows": b[0]})}
    return out


def _open(db_path: Path, target: str):
    """The target's connection, migrated: `sqlite` (the home's own file) or a PostgreSQL URL."""
    if target == "sqlite":
        conn = driver.connect(db_path)
        migrate.migrate(conn)
        return conn
    if not target.startswith(engines.SCHEMES):
        raise InvalidInput(f"{target!r} names no store", hint="copy to `sqlite` (this home's own file) or to a "
                                                               "postgresql://USER:PASSWORD@HOST/DB URL")
    from strata_daemon.store.postgres import connection, schema

    conn = connection.connect(target)
    schema.apply(conn)
    connection.read_vectors(conn)
    return conn


def _source(db_path: Path, url: str | None):
    if url is None:
        return driver.connect(db_path)
    from strata_daemon.store.postgres import connection

    conn = connection.connect(url)
    connection.read_vectors(conn)
    return conn


def copy_home(db_path: Path, root: str, url: str | None, target: str,
              progress: Callable[[str, int], None] | None) -> dict:
    """The home's store (its file at DB_PATH, or the database at URL) copied into TARGET, and checked."""
    if (url is None) == (target == "sqlite") or target == url:
        raise InvalidInput("that is the store this home uses", hint="copy to the other one: `sqlite` or a URL")
    source, dest = _source(db_path, url), _open(db_path, target)
    # One snapshot of the source for the copy and its check, while its daemons go on writing.
    source.execute("BEGIN" if url is None else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        theirs = dest.execute("SELECT count(*) FROM episodes").fetchone()[0]
        mine = source.execute("SELECT count(*) FROM episodes").fetchone()[0]
        mark = dest.execute("SELECT value FROM meta WHERE key = 'copy_of'").fetchone()
        if theirs and mark is None:
            raise Conflict(f"the target holds {counted(theirs, 'memory')} of its own",
                           hint="copy into an empty database, or move those memories away first")
        dest.execute("INSERT INTO meta (key, value) VALUES ('copy_of', ?) ON CONFLICT (key) DO NOTHING",
                     (root,))
        written = copy(source, dest, progress)
        checked = check(source, dest)
        same = all(t["same"] for t in checked.values())
        if same:
            dest.execute("DELETE FROM meta WHERE key = 'copy_of'")
            if on_postgres(dest):
                # The planner's statistics of what was just loaded: without them, until autovacuum
                # came by, a recall at 100,000 memories took 182 ms at p50 against 23 with them.
                dest.execute("ANALYZE")
        return {"from": "sqlite" if url is None else "postgresql",
                "to": "sqlite" if target == "sqlite" else "postgresql",
                "memories": mine, "written": written, "tables": checked, "same": same}
    finally:
        source.execute("ROLLBACK")
        source.close()
        dest.close()
