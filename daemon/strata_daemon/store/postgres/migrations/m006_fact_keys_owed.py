"""Migration 6 (PostgreSQL): facts owe their canonical keys, as SQLite's migration 30 says."""

from __future__ import annotations

NAME = "facts owe their canonical keys"


def up(conn) -> None:
    conn.execute("INSERT INTO meta (key, value) SELECT 'fact_keys_owed', '1' WHERE EXISTS (SELECT 1 FROM facts)")
