"""Migration 7: entities and links."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "entities and links"


SQL = """
-- Things memories mention (strata_daemon/graph/entities.py), as spiderweb nodes entity:TYPE:VALUE.
CREATE TABLE entities (
    agent TEXT NOT NULL,
    type TEXT NOT NULL,
    value TEXT NOT NULL,
    mentions INTEGER NOT NULL DEFAULT 0,
    first_at REAL NOT NULL,
    last_at REAL NOT NULL,
    PRIMARY KEY (agent, type, value)
) WITHOUT ROWID;

-- Typed, directed links between nodes: "mentions" from extraction, the others from people
-- and later phases. They do not decay; spreading follows them at web.link_weight.
CREATE TABLE web_links (
    agent TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('mentions', 'related', 'supports', 'contradicts', 'supersedes')),
    created_at REAL NOT NULL,
    actor TEXT NOT NULL,
    PRIMARY KEY (agent, src, dst, type),
    CHECK (src <> dst)
) WITHOUT ROWID;
CREATE INDEX web_links_by_dst ON web_links(agent, dst, created_at);
"""


def up(conn) -> None:
    run_script(conn, SQL)
