"""Where a benchmark's homes keep their memories: each its own SQLite file (the default), or,
with --store-url, each a database of its own on that PostgreSQL server, made for it and dropped
when the benchmark ends. A home copied (a lived copy of a fresh home) copies its database."""

from __future__ import annotations

import atexit
import os
import uuid

SERVER: str | None = None  # the server's URL while a benchmark keeps its homes there
_MADE: list[str] = []


def use(url: str | None) -> None:
    """Keep the homes made from now on on the server at URL (None: in their own files)."""
    global SERVER
    SERVER = url
    if url is not None:
        os.environ.pop("STRATA_DATABASE_URL", None)  # each home names its own database
        atexit.register(drop_all)


def database_url(server: str, name: str) -> str:
    """The URL of database NAME on the server SERVER's URL names."""
    base, _, query = server.partition("?")
    return base.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")


def _admin(statement: str) -> None:
    import psycopg

    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(statement)


def new_database(template: str | None = None) -> str | None:
    """A new database's URL (a copy of TEMPLATE's database when given), or None on SQLite."""
    if SERVER is None:
        return None
    name = f"strata_bench_{uuid.uuid4().hex[:12]}"
    _admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template.partition('?')[0].rsplit('/', 1)[1]}"
                                        if template else ""))
    _MADE.append(name)
    return database_url(SERVER, name)


def toml_line(url: str | None) -> str:
    return "" if url is None else f'store.url = "{url}"\n'


def drop_all() -> None:
    for name in _MADE:
        try:
            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        except Exception:  # the server went first: nothing is left to drop
            pass
    _MADE.clear()
