"""Migration 6: spiderweb."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "spiderweb"


SQL = """
-- The sum of ln(decay factor) over the namespace's decay runs (strata_daemon/graph/hebbian.py).
ALTER TABLE namespaces ADD COLUMN web_clock REAL NOT NULL DEFAULT 0;
ALTER TABLE namespaces ADD COLUMN web_decay_runs INTEGER NOT NULL DEFAULT 0;

-- Undirected Hebbian edges between nodes named kind:id (strata_daemon/graph/nodes.py), a < b.
-- weight = exp(level + web_clock of the namespace).
CREATE TABLE web_edges (
    agent TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    level REAL NOT NULL,
    activations INTEGER NOT NULL,
    created_at REAL NOT NULL,
    last_at REAL NOT NULL,
    PRIMARY KEY (agent, a, b),
    CHECK (a < b)
) WITHOUT ROWID;
-- Both ends ordered by weight, so a spread reads a hub's heaviest edges only; covering, so
-- the planner never prefers web_edges_by_level for a lookup by node.
CREATE INDEX web_edges_by_a ON web_edges(agent, a, level);
CREATE INDEX web_edges_by_b ON web_edges(agent, b, level);
CREATE INDEX web_edges_by_level ON web_edges(agent, level);

-- The working set: items active together, co-activated when the context is committed.
CREATE TABLE web_context (
    agent TEXT NOT NULL,
    node TEXT NOT NULL,
    activated_at REAL NOT NULL,
    source TEXT NOT NULL,            -- "recall:ID" or the actor who marked it
    PRIMARY KEY (agent, node)
) WITHOUT ROWID;
"""


def up(conn) -> None:
    run_script(conn, SQL)
