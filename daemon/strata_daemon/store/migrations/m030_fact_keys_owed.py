"""Migration 30: facts owe their canonical keys."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "facts owe their canonical keys"

SQL = """
-- From this migration a fact is kept under one key per subject and attribute, whatever the
-- wording (`gateway port` and `the port of the gateway` are `gateway.port`). Facts captured
-- before it are moved to their keys by the facts layer when the home is next opened (the
-- reading is live code, which a migration never runs); the key goes when that is done.
INSERT INTO meta (key, value) SELECT 'fact_keys_owed', '1' WHERE EXISTS (SELECT 1 FROM facts);
"""


def up(conn) -> None:
    run_script(conn, SQL)
