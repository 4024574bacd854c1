"""Migration 26: purge takes whole items."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "purge takes whole items"

SQL = """
-- A purge removes a whole dossier topic when its name or query holds the words it forgets:
-- its versions go with it, as a fact's history goes when its key holds them. Only a purge,
-- while it holds its row in `redacting`, may delete a version.
DROP TRIGGER dossier_versions_no_delete;
CREATE TRIGGER dossier_versions_no_delete BEFORE DELETE ON dossier_versions
WHEN NOT EXISTS (SELECT 1 FROM redacting)
BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never deleted');
END;
"""


def up(conn) -> None:
    run_script(conn, SQL)
