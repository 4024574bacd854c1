"""Applying the numbered migrations (store/migrations/, and store/postgres/migrations/ for a
PostgreSQL store): each once, in its own transaction, recorded in _migrations. A database that
a newer strata migrated is refused."""

from __future__ import annotations

import importlib
import pkgutil
import time
from types import ModuleType
from typing import Callable, Sequence

from strata_daemon.errors import StorageError
from strata_daemon.store import migrations as _package
from strata_daemon.store.dialect import on_postgres


def found(package: ModuleType) -> tuple[tuple[int, str, Callable], ...]:
    """(number, name, up) of every mNNN_*.py module of `package`, in order."""
    out = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name[:1] == "m" and info.name[1:4].isdigit():
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            out.append((int(info.name[1:4]), module.NAME, module.up))
    out.sort()
    if [n for n, _, _ in out] != list(range(1, len(out) + 1)):
        raise RuntimeError(f"migrations are not numbered 1 to {len(out)} without a gap")
    return tuple(out)


MIGRATIONS: tuple[tuple[int, str, Callable], ...] = found(_package)


_CREATE = ("CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
           "applied_at REAL NOT NULL)")


def _made(conn) -> None:
    """_migrations, made when missing. On PostgreSQL only when missing (a role bound to a
    namespace may not create, even what exists), and under the write lock: two daemons' first
    CREATE TABLE IF NOT EXISTS can both try to make it."""
    if not on_postgres(conn):
        conn.execute(_CREATE)
        return
    if conn.execute("SELECT to_regclass('_migrations') IS NOT NULL").fetchone()[0]:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_CREATE)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def applied(conn) -> set[int]:
    _made(conn)
    return {row[0] for row in conn.execute("SELECT id FROM _migrations")}


def migrate(conn, migrations: Sequence[tuple[int, str, Callable]] = MIGRATIONS,
            every: Sequence[tuple[int, str, Callable]] = MIGRATIONS) -> list[int]:
    """Apply what is missing of `migrations` (all of them unless a test asks for a database of an
    older strata) of the store's `every`; safe when several processes start at once (BEGIN
    IMMEDIATE serialises them: on PostgreSQL, an advisory lock)."""
    known = {n for n, _, _ in every}
    done = applied(conn)
    newer = done - known
    if newer:
        raise StorageError(f"the database was written by a newer strata (migration {max(newer)})",
                           hint="upgrade strata, or point --home at another home")
    ran = []
    for number, name, step in migrations:
        if number in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM _migrations WHERE id = ?", (number,)).fetchone():
                conn.execute("ROLLBACK")
                continue
            step(conn)
            conn.execute("INSERT INTO _migrations (id, name, applied_at) VALUES (?, ?, ?)",
                         (number, name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        ran.append(number)
    return ran
