"""Migration 23: episode id floor."""

from __future__ import annotations

NAME = "episode id floor"

# A purge of a lower id after a higher one lowered the floor (the floor was compared as text),
# so a new memory could take a purged memory's id. The audit names every id ever given: the
# floor goes back above all of them.
SQL = """
INSERT INTO meta (key, value)
    SELECT 'episode_id_floor', max(item_id) FROM audit WHERE item_kind = 'episode' HAVING max(item_id) IS NOT NULL
ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
"""


def up(conn) -> None:
    conn.execute(SQL)
