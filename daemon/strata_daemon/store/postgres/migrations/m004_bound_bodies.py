"""Migration 4 (PostgreSQL): the SQL functions that name the store's own objects get bodies the
server parses when they are made (SQL-standard `RETURN`), so they name those objects by
identity rather than by a text looked up at each call. pg_restore runs with an empty
search_path, and `strata_words`, written as a text body, could not find the `strata` text
search configuration there: a dump could not be restored. Parsed bodies also make pg_dump
create the configuration and the table first. The words and their stems are unchanged.
"""

from __future__ import annotations

NAME = "function bodies bound to the store's objects"

SQL = r"""
CREATE OR REPLACE FUNCTION strata_words(text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_tsvector('strata'::regconfig, regexp_replace(coalesce($1, ''), '[^[:alnum:]]+', ' ', 'g'));
CREATE OR REPLACE FUNCTION strata_redacting() RETURNS boolean LANGUAGE sql STABLE
    RETURN EXISTS (SELECT 1 FROM redacting);
"""


def up(conn) -> None:
    conn.execute(SQL)
