"""Migration 27: capsule renders know their file."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "capsule renders know their file"

SQL = """
-- The capsule file a render wrote (its name in capsule/). The home's own namespace renders
-- CAPSULE.md, so when agent.namespace changes, another namespace renders the same file: a
-- render compares the file with the renders of that file too, whichever namespace wrote
-- them, so the lines another namespace rendered are never taken in as a person's edits.
ALTER TABLE capsule_renders ADD COLUMN file TEXT;
CREATE INDEX capsule_renders_by_file ON capsule_renders(file, id);
"""


def up(conn) -> None:
    run_script(conn, SQL)
