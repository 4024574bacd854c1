"""Migration 9: capsule."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "capsule"


SQL = """
-- Each render of a capsule: what strata wrote in each block, the base for telling a person's
-- edits from its own. The file itself keeps the last capsule.keep_versions copies in state/.
CREATE TABLE capsule_renders (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    blocks TEXT NOT NULL CHECK (json_valid(blocks)),  -- {"facts": ["- bridge: UP", ...], ...}
    sha256 TEXT NOT NULL,                             -- of the whole file as written
    lines INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX capsule_renders_by_agent ON capsule_renders(agent, id);

-- A person's edits inside rendered blocks: lines they added (pin) stay; lines they removed
-- (hide) stay out, until cleared with `strata capsule overrides --clear ID`.
CREATE TABLE capsule_overrides (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    block TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('pin', 'hide')),
    line TEXT NOT NULL,
    created_at REAL NOT NULL,
    cleared_at REAL
);
CREATE INDEX capsule_overrides_by_agent ON capsule_overrides(agent, block, cleared_at);
"""


def up(conn) -> None:
    run_script(conn, SQL)
