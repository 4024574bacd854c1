"""A PostgreSQL connection with the surface the store's functions use of an SQLite one: `execute`
and `executemany` with `?` parameters, rows read by index or by name, a cursor's `lastrowid` and
`rowcount`, and `total_changes`. Each statement is spelled for PostgreSQL by sql.py. psycopg (the
`postgres` extra) is imported only when a PostgreSQL store is opened."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

from strata_daemon.errors import InvalidInput, NotPermitted, StorageError
from strata_daemon.store.postgres.sql import translate

INSTALL = "pip install 'psycopg[binary]>=3.2' into strata's environment (from a checkout: pip install '.[postgres]')"
_CHANGES = re.compile(r"^\s*(INSERT|UPDATE|DELETE)\b", re.I)
_REWRITES = re.compile(r"^\s*(?:UPDATE|DELETE\s+FROM|INSERT\s+OR\s+REPLACE\s+INTO)\s+(\w+)"
                       r"|^\s*INSERT\s+INTO\s+(\w+).*\bDO\s+UPDATE\b", re.I | re.S)


def shown(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise StorageError("a PostgreSQL store needs psycopg, which is not installed", hint=INSTALL) from None
    return psycopg


def driver_errors() -> tuple[type[BaseException], ...]:
    return (_psycopg().Error,)


def describe(exc: BaseException, url: str) -> StorageError | InvalidInput | NotPermitted:
    """A driver exception as a message a person can act on."""
    where, text = shown(url), str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = text.lower()
    if "out of range" in low:
        return InvalidInput("a number in the request is too large (ids and counts stay below 2^63)")
    # The server's own reason first: libpq words a refused login or a missing database as a
    # failed connection too.
    if "password authentication failed" in low or "role" in low and "does not exist" in low:
        return StorageError(f"the PostgreSQL server at {where} refused the login ({text})",
                            hint="check the user and password in store.url")
    if "does not exist" in low and "database" in low:
        return StorageError(f"no database at {where} ({text})", hint="create it: createdb NAME")
    if "connection" in low and ("refused" in low or "failed" in low or "no such file" in low):
        return StorageError(f"cannot reach the PostgreSQL server at {where} ({text})",
                            hint="check that the server runs and that store.url names it")
    if "row-level security" in low:  # a role `strata store grant` bound to another namespace
        return NotPermitted(f"the role in {where} is bound to another namespace; the server refused this "
                            f"namespace's rows ({text})",
                            hint="use the namespace `strata store grant` bound the role to (agent.namespace, "
                                 "--agent), or the owner's URL; `strata store roles` (as the owner) lists them")
    if "permission denied" in low:
        return StorageError(f"the role in {where} may not do this ({text})",
                            hint="`strata doctor` lists what the role needs")
    return StorageError(f"database error on {where}: {text}")


class Row:
    """A row read by position or by column name, as sqlite3.Row is."""

    __slots__ = ("_values", "_names")

    def __init__(self, values: Sequence[Any], names: dict[str, int]):
        self._values, self._names = tuple(values), names

    def __getitem__(self, key):
        return self._values[key] if not isinstance(key, str) else self._values[self._names[key]]

    def keys(self) -> list[str]:
        return list(self._names)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other) -> bool:
        return self._values == (other._values if isinstance(other, Row) else other)

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._names, self._values))!r})"


def _value(v: Any) -> Any:
    # sum() and avg() of integers are numeric in PostgreSQL; SQLite gives an int or a float.
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def _row_factory(cursor):
    names = {d.name: i for i, d in enumerate(cursor.description or ())}
    return lambda values: Row([_value(v) for v in values], names)


class Cursor:
    """What a statement left: its rows, `rowcount`, and `lastrowid` after an INSERT."""

    def __init__(self, cursor, returns_id: bool):
        self.rowcount = cursor.rowcount
        self.lastrowid = None
        rows = cursor.fetchall() if cursor.description is not None else []
        if returns_id:
            self.lastrowid = rows[-1][0] if rows else None
            rows = []
        self._rows = rows

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self):
        return iter(self.fetchall())


class Connection:
    """One psycopg connection in autocommit mode: strata issues BEGIN and COMMIT itself."""

    dialect = "postgres"

    def __init__(self, pg, url: str):
        self._pg, self.url = pg, url
        self.total_changes = 0
        # Tables whose rows an UPDATE or DELETE replaced: their old versions stay in the heap
        # until the table is rewritten (a purge rewrites these).
        self.rewritten: set[str] = set()

    def _count(self, sql: str, rowcount: int) -> None:
        if rowcount > 0 and _CHANGES.match(sql):
            self.total_changes += rowcount
            m = _REWRITES.match(sql)
            if m:
                self.rewritten.add((m.group(1) or m.group(2)).lower())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        text, returns_id = translate(sql, bool(params))
        with self._pg.cursor(row_factory=_row_factory) as cur:
            cur.execute(text, tuple(params) if params else None)
            self._count(sql, cur.rowcount)
            return Cursor(cur, returns_id)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        text, returns_id = translate(sql, True)
        if returns_id:
            text = text[: text.rindex(" RETURNING id")]
        with self._pg.cursor() as cur:
            cur.executemany(text, [tuple(r) for r in rows])
            self._count(sql, cur.rowcount)

    def close(self) -> None:
        self._pg.close()


def _dumpers(adapters) -> None:
    """Every Python int as a bigint (psycopg picks the smallest type that holds it, and a recursive
    query's two terms must agree), and a bool as SQLite stores it: 0 or 1."""
    from psycopg.types.numeric import Int8Dumper

    class FlagDumper(Int8Dumper):
        def dump(self, obj):
            return b"1" if obj else b"0"

    adapters.register_dumper(int, Int8Dumper)
    adapters.register_dumper(bool, FlagDumper)


def read_vectors(conn: Connection) -> None:
    """pgvector's `vector` read as sqlite-vec's are: the float32 bytes of the vector, so that the
    store's readers of vectors serve both stores. (Its type exists once migration 1 has run.)"""
    from psycopg.adapt import Loader
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn._pg, "vector")
    if info is None:
        return

    class VectorLoader(Loader):
        def load(self, data) -> bytes:
            import numpy as np  # only when a vector is read: storing a memory loads no numpy

            return np.array(bytes(data)[1:-1].split(b","), dtype=np.float32).tobytes()

    conn._pg.adapters.register_loader(info.oid, VectorLoader)


def vector_text(blob: bytes) -> str:
    """float32 bytes as pgvector's text form."""
    import numpy as np

    return "[" + ",".join(f"{x:.9g}" for x in np.frombuffer(blob, dtype=np.float32)) + "]"


def connect(url: str) -> Connection:
    """A connection to the server URL names."""
    psycopg = _psycopg()
    try:
        pg = psycopg.connect(url, autocommit=True)
    except psycopg.Error as e:
        raise describe(e, url) from None
    _dumpers(pg.adapters)
    return Connection(pg, url)
