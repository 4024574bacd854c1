"""Ids a purge removed are never given again: the audit trail, links and citations (`e12`,
`f34`) name them. SQLite hands out max(id) + 1, so after the newest row goes its id would come
back; each table keeps a floor in `meta` that new ids stay above."""

from __future__ import annotations

EPISODES = ("episodes", "episode_id_floor")
FACT_VALUES = ("fact_values", "fact_value_id_floor")


def highest_sql(table: tuple[str, str]) -> str:
    """SQL for the highest id TABLE has given: its largest id or its floor."""
    name, floor = table
    return (f"SELECT max(coalesce((SELECT max(id) FROM {name}), 0), coalesce((SELECT CAST(value AS INTEGER) "
            f"FROM meta WHERE key = '{floor}'), 0))")


def raise_floor(conn, table: tuple[str, str], removed: int) -> None:
    """After rows up to id REMOVED left TABLE: no new row takes an id at or below it. (`value`
    is TEXT: compared uncast, any text is above any number, and a later purge of a lower id
    lowered the floor.)"""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                 "SET value = max(CAST(meta.value AS INTEGER), CAST(excluded.value AS INTEGER))", (table[1], removed))
