"""Which engine's connection a store function was handed: SQLite's (sqlite3's, which names no
dialect) or PostgreSQL's (store/postgres/connection.py). Where the two differ in meaning, the
store module asks this and says both."""

from __future__ import annotations


def on_postgres(conn) -> bool:
    return getattr(conn, "dialect", "sqlite") == "postgres"
