"""Migration 17: feedback events."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "feedback events"


SQL = """
-- Each memory a feedback concerned, with its outcome and time, as access_events holds each
-- access: the usage of a memory as of any moment can be read back. The arena scores a strategy
-- on an evaluation episode with the memories as they were when its question was asked; with
-- today's counts, the feedback that made the episode would lift its own answers, and a strategy
-- weighting recent use would win on evidence it created.
CREATE TABLE feedback_events (
    id INTEGER PRIMARY KEY,
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    recall_id INTEGER REFERENCES recalls(id) ON DELETE CASCADE,
    outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
    at REAL NOT NULL
);
CREATE INDEX feedback_by_episode ON feedback_events(episode_id, at);
INSERT INTO feedback_events (episode_id, recall_id, outcome, at)
    SELECT j.value, a.item_id, json_extract(a.data, '$.outcome'), a.at
    FROM audit a, json_each(a.data, '$.episodes') j
    WHERE a.item_kind = 'recall' AND a.action = 'feedback' AND j.value IN (SELECT id FROM episodes);
"""


def up(conn) -> None:
    run_script(conn, SQL)
