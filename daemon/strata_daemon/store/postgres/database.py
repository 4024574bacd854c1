"""A store on a PostgreSQL server: the store's Database, over one connection served by a thread
of its own as aiosqlite serves SQLite's, so that every store function runs as it does there.

What SQLite's file gave and the server gives otherwise: the write lock (BEGIN IMMEDIATE) is an
advisory lock (sql.py); a read-only view is a session whose transactions are read only; the
number that moves when another process commits is the server's WAL position; the WAL needs no
checkpoint from strata."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence

from strata_daemon.store.db import Database
from strata_daemon.store.postgres import connection, schema
from strata_daemon.store.postgres.sql import WRITE_LOCK

LEADER = WRITE_LOCK + 1  # the advisory lock the daemon that runs the store's once-only phases holds


class Worker:
    """An adapter connection and the one thread that uses it: the part of aiosqlite's
    Connection that Database and Writer use."""

    def __init__(self, conn: connection.Connection):
        self._conn = conn
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="strata-postgres")

    async def _execute(self, fn: Callable, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._thread, lambda: fn(*args))

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> connection.Cursor:
        return await self._execute(self._conn.execute, sql, params)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._execute(self._conn.executemany, sql, list(rows))

    async def execute_fetchall(self, sql: str, params: Sequence[Any] = ()) -> list:
        return await self._execute(lambda: self._conn.execute(sql, params).fetchall())

    @property
    def total_changes(self) -> int:
        return self._conn.total_changes

    async def close(self) -> None:
        try:
            await self._execute(self._conn.close)
        finally:
            self._thread.shutdown(wait=False)


def _open(url: str, read_only: str | None) -> connection.Connection:
    conn = connection.connect(url)
    try:
        if read_only:
            conn.execute("SET default_transaction_read_only = on")
        else:
            schema.apply(conn)
        connection.read_vectors(conn)
    except connection.driver_errors() as e:
        conn.close()
        raise connection.describe(e, url) from None
    return conn


class PostgresDatabase(Database):
    dialect = "postgres"
    driver = connection

    @classmethod
    async def open(cls, url: str, *, read_only: str | None = None) -> "PostgresDatabase":  # type: ignore[override]
        """Connect (and migrate, unless read only) to the database URL names."""
        conn = await asyncio.to_thread(_open, url, read_only)
        db = cls(Worker(conn), connection.shown(url), read_only)
        db.url = url
        return db

    async def view(self, read_only: str) -> "PostgresDatabase":
        return await PostgresDatabase.open(self.url, read_only=read_only)

    _leader: connection.Connection | None = None  # a connection of its own, kept to ask again
    _leading = False

    async def lead(self) -> bool:
        """Whether this process leads the store's daemons: holds the session advisory lock
        LEADER on a connection of its own. The server frees the lock when that connection ends,
        as when the process dies, and the next daemon to ask takes it."""
        return await asyncio.to_thread(self._lead)

    def _lead(self) -> bool:
        if self._leader is None:
            self._leader, self._leading = connection.connect(self.url), False
        try:
            if self._leading:
                self._leader.execute("SELECT 1")  # still connected, so still holding it
            else:
                self._leading = bool(self._leader.execute("SELECT pg_try_advisory_lock(?)", (LEADER,)).fetchone()[0])
        except connection.driver_errors():  # the server went away, and the lock with it: ask anew next time
            self._drop_leader()
            return False
        return self._leading

    def _drop_leader(self) -> None:
        if self._leader is not None:
            try:
                self._leader.close()
            except connection.driver_errors():
                pass
            self._leader, self._leading = None, False

    async def close(self) -> None:
        await asyncio.to_thread(self._drop_leader)
        await self._conn.close()

    async def size(self) -> int:
        return await self.scalar("SELECT pg_database_size(current_database())")

    async def checkpoint(self) -> None:
        """The server folds its own WAL."""

    async def analyze(self) -> None:
        """The planner's statistics of every table, after a load (a copy, a restore)."""
        await self.run(lambda c: c.execute("ANALYZE"))

    async def server_major(self) -> int:
        return await self.scalar("SELECT current_setting('server_version_num')::int / 10000")

    async def other_sessions(self) -> list[str]:
        """Who else is connected to this database: 'application (client address)' each."""
        rows = await self.run(lambda c: c.execute(
            "SELECT coalesce(nullif(application_name, ''), 'a client'), coalesce(host(client_addr), 'local socket') "
            "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'").fetchall())
        return [f"{name} ({addr})" for name, addr in rows]

    async def data_version(self) -> int:
        return await self.scalar("SELECT pg_current_wal_insert_lsn() - '0/0'")
