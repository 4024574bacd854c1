"""Async access to the database over aiosqlite, with the one write path."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterable, Sequence, TypeVar

import aiosqlite

from strata_daemon.base import text
from strata_daemon.errors import InvalidInput, NotPermitted, StorageError, StrataError
from strata_daemon.store import driver, users
from strata_daemon.store.migrate import migrate

T = TypeVar("T")


def _open_and_migrate(path: Path) -> None:
    conn = driver.connect(path)
    try:
        migrate(conn)
    except driver.driver_errors() as e:
        raise driver.describe(e, path) from None
    finally:
        conn.close()


def too_large() -> InvalidInput:
    # A number past SQLite's 64-bit integers can only come from input (an id nothing has).
    return InvalidInput("a number in the request is too large (ids and counts stay below 2^63)")


def not_text() -> InvalidInput:
    # SQLite takes UTF-8 only; a field that did not check its own input fails here, not as a traceback.
    return InvalidInput("a value is not valid UTF-8 text", hint=text.HINT)


def _reads_only(conn):
    """Deny every statement that would change the database; the temp schema stays writable
    because the full-text planner keeps a scratch table there (PRAGMA query_only would stop it)."""
    m = driver.sqlite_module()
    changes = {getattr(m, f"SQLITE_{a}") for a in (
        "INSERT", "UPDATE", "DELETE", "ALTER_TABLE", "CREATE_TABLE", "CREATE_INDEX", "CREATE_VIEW",
        "CREATE_TRIGGER", "CREATE_VTABLE", "DROP_TABLE", "DROP_INDEX", "DROP_VIEW", "DROP_TRIGGER", "DROP_VTABLE")}

    def authorize(action, arg1, arg2, database, trigger):
        return m.SQLITE_DENY if action in changes and database != "temp" else m.SQLITE_OK

    conn.set_authorizer(authorize)
    return conn


def _opened(path: Path, read_only: str | None):
    conn = driver.connect(path)
    conn.row_factory = driver.row_class(conn)
    return _reads_only(conn) if read_only else conn


def changes() -> int:
    """Write transactions this process committed, but upkeep (Database.changes)."""
    return Database.changes


class Database:
    """One aiosqlite connection. Writes go through `write()`: a short BEGIN IMMEDIATE transaction.
    A PostgreSQL store is the same class over a connection served the same way
    (store/postgres/database.py); `dialect` says which a store function is handed."""

    dialect = "sqlite"
    driver = driver  # driver_errors() and describe(exc, where) of the connection's engine

    # Write transactions committed in this process that changed a row, but upkeep: a face that
    # cannot print its answer still tells the user that what they asked to store was stored.
    changes = 0

    def __init__(self, conn: aiosqlite.Connection, path: Path, read_only: str | None = None):
        self._conn = conn
        self.path = path
        self._write_lock = asyncio.Lock()
        # Why writing is refused (names the scope), or None on a connection that may write.
        self.read_only = read_only
        self._users_fd: int | None = None  # the shared lock of storage.users

    @classmethod
    async def open(cls, path: Path | str, *, read_only: str | None = None) -> "Database":
        """Open (and migrate) the database. With `read_only` (the reason, for the error a write
        gets) SQLite itself refuses every change to the database on this connection."""
        path = Path(path)
        if not path.parent.is_dir():
            raise StorageError(f"the folder {path.parent} does not exist",
                               hint="create a home with `strata init DIR`")
        users_fd = await asyncio.to_thread(users.share, path)
        try:
            if not read_only:
                await asyncio.to_thread(_open_and_migrate, path)
            db = await cls._connect(path, read_only)
        except BaseException:
            if users_fd is not None:
                os.close(users_fd)
            raise
        db._users_fd = users_fd
        return db

    @classmethod
    async def _connect(cls, path: Path, read_only: str | None) -> "Database":
        conn = aiosqlite.Connection(lambda: _opened(path, read_only), iter_chunk_size=256)
        # A connection someone forgot to close must not keep the process alive at exit; SQLite
        # rolls back whatever was in flight, and committed data is safe either way.
        worker = getattr(conn, "_thread", None)
        if worker is not None:
            worker.daemon = True
        try:
            await conn
        except StorageError:
            raise
        except driver.driver_errors() as e:
            raise driver.describe(e, path) from None
        return cls(conn, path, read_only)

    async def size(self) -> int:
        """Bytes the store takes: the database file with its WAL."""
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())

    async def lead(self) -> bool:
        """Whether this process runs the phases that must run once for the store: always, on a
        home's own file (one daemon a home, by its lock file)."""
        return True

    async def view(self, read_only: str) -> "Database":
        """Another connection to the same store, on which every change is refused (READ_ONLY says why)."""
        return await Database.open(self.path, read_only=read_only)

    def _describe(self, exc: BaseException) -> StrataError:
        low = str(exc).lower()
        if self.read_only and ("not authorized" in low or "read-only transaction" in low):
            return NotPermitted(self.read_only)
        return self.driver.describe(exc, self.path)

    def _refuse_writes(self) -> None:
        if self.read_only:
            raise NotPermitted(self.read_only)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._conn.close()
        if self._users_fd is not None:
            os.close(self._users_fd)
            self._users_fd = None

    async def checkpoint(self) -> None:
        """Fold the WAL into the database file (at a clean stop: the next start reads less)."""
        with contextlib.suppress(Exception):  # another process reading blocks TRUNCATE: harmless
            await self.run(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    async def data_version(self) -> int:
        """A number that changes whenever another connection (the daemon, the CLI) commits."""
        return (await self.fetchone("PRAGMA data_version"))[0]

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list:
        try:
            return list(await self._conn.execute_fetchall(sql, params))
        except self.driver.driver_errors() as e:
            raise self._describe(e) from None
        except OverflowError:
            raise too_large() from None
        except UnicodeEncodeError:
            raise not_text() from None

    async def fetchone(self, sql: str, params: Sequence[Any] = ()):
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(connection, *args) on the connection's own thread: one hop for a read made of
        many small statements (recall planning issues up to a dozen, each a hop otherwise).
        fn must only read; writes go through write()."""
        try:
            # aiosqlite has no public form of this; _execute queues a callable on its worker thread.
            return await self._conn._execute(fn, self._conn._conn, *args)
        except self.driver.driver_errors() as e:
            raise self._describe(e) from None
        except OverflowError:
            raise too_large() from None
        except UnicodeEncodeError:
            raise not_text() from None

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]

    async def transact(self, fn: Callable[..., T], *args: Any, upkeep: bool = False) -> T:
        """The write path in a single hop: BEGIN IMMEDIATE, fn(connection, *args), COMMIT (ROLLBACK on
        any error), all on the connection's thread. For short writes on hot paths (each recall).
        UPKEEP: what strata writes for itself while answering (a recall's log, vectors), not a
        change anyone asked for; it is not counted in `changes`."""
        def body(conn, *a):
            conn.execute("BEGIN IMMEDIATE")
            before = conn.total_changes
            try:
                out = fn(conn, *a)
                conn.execute("COMMIT")
                if not upkeep and conn.total_changes != before:
                    Database.changes += 1
                return out
            except BaseException:
                # SQLite has already rolled back after some errors (a full disk): a ROLLBACK then
                # fails with "no transaction is active", which must not hide the error itself.
                with contextlib.suppress(Exception):
                    conn.execute("ROLLBACK")
                raise

        self._refuse_writes()
        async with self._write_lock:
            return await self.run(body, *args)

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator["Writer"]:
        self._refuse_writes()
        async with self._write_lock:
            try:
                await self._conn.execute("BEGIN IMMEDIATE")
            except self.driver.driver_errors() as e:
                raise self._describe(e) from None
            before = self._conn.total_changes
            try:
                yield Writer(self._conn, self.path, self.dialect)
                await self._conn.execute("COMMIT")
                if self._conn.total_changes != before:
                    Database.changes += 1
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await self._conn.execute("ROLLBACK")
                if isinstance(exc, self.driver.driver_errors()):
                    raise self._describe(exc) from None
                if isinstance(exc, OverflowError):
                    raise too_large() from None
                if isinstance(exc, UnicodeEncodeError):
                    raise not_text() from None
                raise


class Writer:
    """The connection inside a write transaction; only `Database.write()` hands one out."""

    def __init__(self, conn: aiosqlite.Connection, path: Path, dialect: str = "sqlite"):
        self._conn = conn
        self.path = path
        self.dialect = dialect

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> aiosqlite.Cursor:
        return await self._conn.execute(sql, params)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list:
        return list(await self._conn.execute_fetchall(sql, params))

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(connection, *args) on the connection's thread, inside this transaction."""
        return await self._conn._execute(fn, self._conn._conn, *args)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()):
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def audit(self, agent: str, item_kind: str, item_id: int | None, action: str, data: str,
                    actor: str, at: float) -> None:
        await self._conn.execute(
            "INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (at, agent, item_kind, item_id, action, data, actor))
