"""Migration 21: stated times."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "stated times"

SQL = """
-- The times a memory states ("yesterday", "last May"), resolved when it is stored
-- (strata_daemon/episodes/stated.py). Offsets into the text, never its words: a purge deletes
-- the memory and these go with it.
CREATE TABLE stated_times (
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    at INTEGER NOT NULL,        -- where the phrase starts in the text (characters)
    length INTEGER NOT NULL,
    start_at REAL NOT NULL,     -- the span it means, UTC, end exclusive
    end_at REAL NOT NULL
);
CREATE INDEX stated_times_by_episode ON stated_times(episode_id);
-- The memories stored before this migration have their times read by the episodes layer when
-- a home is next opened (the reading is live code, which a migration never runs), in batches
-- after the id this key holds; the key goes when they are all read.
INSERT INTO meta (key, value) SELECT 'stated_times_after', '0' WHERE EXISTS (SELECT 1 FROM episodes);
"""


def up(conn) -> None:
    run_script(conn, SQL)
