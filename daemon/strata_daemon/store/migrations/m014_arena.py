"""Migration 14: arena."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "arena"


SQL = """
-- The retrieval arena (strata_daemon/arena/). Evaluation episodes: a query and the memories that
-- served it, from feedback naming what the agent used (or a rated recall's hits) or from a
-- question set a person added.
CREATE TABLE arena_episodes (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    query TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '{}',
    useful TEXT NOT NULL,            -- JSON list of memory ids
    origin TEXT NOT NULL CHECK (origin IN ('used', 'shared', 'questions')),
    recall_id INTEGER UNIQUE REFERENCES recalls(id) ON DELETE SET NULL,
    created_at REAL NOT NULL
);
CREATE INDEX arena_episodes_by_agent ON arena_episodes(agent, id);

-- Pulls and summed rewards per arm: the bandit's state, kept across runs until a reset.
CREATE TABLE arena_arms (
    agent TEXT NOT NULL,
    arm TEXT NOT NULL,
    pulls INTEGER NOT NULL,
    reward_sum REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (agent, arm)
) WITHOUT ROWID;

CREATE TABLE arena_runs (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    at REAL NOT NULL,
    episodes INTEGER NOT NULL,
    pulls TEXT NOT NULL,             -- JSON [[arm, reward], ...] in pull order
    leader TEXT,
    confirm TEXT,                    -- JSON {arm: mean reward on the confirmation episodes}
    decision TEXT NOT NULL CHECK (decision IN ('adopt', 'keep', 'too_few')),
    reason TEXT NOT NULL,
    seconds REAL NOT NULL
);
CREATE INDEX arena_runs_by_agent ON arena_runs(agent, id);

-- Every change of a namespace's default strategy, so each can be explained and undone.
-- agent '*' is the home-wide choice that namespaces without their own inherit.
-- kind: adopt (arm), keep (the configured default, decided), clear (no choice: inherit).
CREATE TABLE arena_choices (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('adopt', 'keep', 'clear')),
    arm TEXT,
    reason TEXT NOT NULL,
    run_id INTEGER,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    CHECK ((kind = 'adopt') = (arm IS NOT NULL))
);
CREATE INDEX arena_choices_by_agent ON arena_choices(agent, id);

-- The strategy each recall used, so feedback can be traced to it.
ALTER TABLE recalls ADD COLUMN arm TEXT;
"""


def up(conn) -> None:
    run_script(conn, SQL)
