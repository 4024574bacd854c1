"""Migration 20: redaction."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "redaction"


SQL = """
-- A purge (strata_daemon/forgetting/) must take a memory's words out of what was derived from it,
-- including the append-only history. It holds a row here for the length of its transaction,
-- so no other writer ever sees one: the guards below give way to it alone, and only as far as
-- replacing words (the audit's data, a dossier version's text); rows are never deleted from
-- the audit, and the when, who and what of each row stay as they were.
CREATE TABLE redacting (purge INTEGER NOT NULL);
DROP TRIGGER audit_no_update;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
WHEN NOT EXISTS (SELECT 1 FROM redacting) OR new.id IS NOT old.id OR new.at IS NOT old.at
    OR new.agent IS NOT old.agent OR new.item_kind IS NOT old.item_kind OR new.item_id IS NOT old.item_id
    OR new.action IS NOT old.action OR new.actor IS NOT old.actor
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
DROP TRIGGER fact_values_no_delete;
CREATE TRIGGER fact_values_no_delete BEFORE DELETE ON fact_values WHEN NOT EXISTS (SELECT 1 FROM redacting) BEGIN
    SELECT RAISE(ABORT, 'fact history is never deleted');
END;
DROP TRIGGER dossier_versions_no_rewrite;
CREATE TRIGGER dossier_versions_no_rewrite BEFORE UPDATE ON dossier_versions
WHEN NOT EXISTS (SELECT 1 FROM redacting) OR new.id IS NOT old.id OR new.agent IS NOT old.agent
    OR new.topic IS NOT old.topic OR new.version IS NOT old.version OR new.generator IS NOT old.generator
    OR new.created_at IS NOT old.created_at OR new.actor IS NOT old.actor
BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never rewritten');
END;
-- A deleted memory's entries leave the full-text index itself, not only its results.
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 1);
"""


def up(conn) -> None:
    run_script(conn, SQL)
