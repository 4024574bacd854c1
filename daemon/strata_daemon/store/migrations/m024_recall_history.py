"""Migration 24: recall history."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "recall history"


SQL = """
-- Recalls older than daemon.recalls_keep_days are pruned (episodes/history.py): their folded
-- accesses become one row per memory and day, counting how many they were.
ALTER TABLE access_events ADD COLUMN n INTEGER NOT NULL DEFAULT 1;
-- An evaluation episode keeps when its question was asked, which its recall held: the arena
-- replays it with the memories' use as of then, after the recall is pruned too.
ALTER TABLE arena_episodes ADD COLUMN asked_at REAL;
UPDATE arena_episodes SET asked_at = (SELECT at FROM recalls WHERE recalls.id = arena_episodes.recall_id)
    WHERE recall_id IS NOT NULL;
"""


def up(conn) -> None:
    run_script(conn, SQL)
