"""Migration 3 (PostgreSQL): agent namespaces enforced by the server, with row-level security.

A login role bound to a namespace (`strata_roles`, written by `strata store grant`) reads and
changes only that namespace's rows, whatever SQL it sends; it also reads, and never changes,
the namespaces listed in `strata_shared` (agent.shared). The owner of the tables (the role
that ran these migrations) is not bound: it keeps the schema and grants the roles. Rows that
name no namespace of their own (access and feedback events, stated times) follow their
memory's. The vectors' table is made here too, without a dimension, so that the owner makes it
and its rules (SQLite makes its own on first use, for the embedder's dimension).
"""

from __future__ import annotations

NAME = "namespaces enforced by row-level security"

TABLES = ("namespaces", "episodes", "recalls", "audit", "facts", "fact_values", "fact_conflicts", "web_edges",
          "web_context", "web_links", "entities", "dossier_topics", "dossier_versions", "capsule_renders",
          "capsule_overrides", "consolidation_pairs", "strength_snapshots", "arena_arms", "arena_episodes",
          "arena_runs", "arena_choices", "imports", "episode_vectors")
BY_MEMORY = ("access_events", "feedback_events", "stated_times")

SQL = r"""
CREATE TABLE strata_roles (role TEXT PRIMARY KEY, agent TEXT NOT NULL);
CREATE TABLE strata_shared (agent TEXT PRIMARY KEY);

-- The namespace of the role that logged in; NULL for a role bound to none. (The login role:
-- inside a SECURITY DEFINER function current_user is the function's owner.)
CREATE FUNCTION strata_agent() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT agent FROM strata_roles WHERE role = session_user
$$;

CREATE TABLE episode_vectors (
    rowid BIGINT PRIMARY KEY REFERENCES episodes(id) ON DELETE CASCADE,
    agent TEXT NOT NULL,
    embedding vector NOT NULL
);
"""


# (SELECT strata_agent()) is computed once a statement, and compared as a value an index can use.
OWN = "agent = (SELECT strata_agent())"
SHARED = "agent IN (SELECT agent FROM strata_shared)"


def up(conn) -> None:
    conn.execute(SQL)
    for table in TABLES:  # changed only in its own namespace; read there and in the shared ones
        conn.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        conn.execute(f"CREATE POLICY own ON {table} USING ({OWN}) WITH CHECK ({OWN})")
        conn.execute(f"CREATE POLICY shared ON {table} FOR SELECT USING ({SHARED})")
    for table in BY_MEMORY:
        own = f"EXISTS (SELECT 1 FROM episodes e WHERE e.id = episode_id AND e.{OWN})"
        conn.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        conn.execute(f"CREATE POLICY own ON {table} USING ({own}) WITH CHECK ({own})")
        conn.execute(f"CREATE POLICY shared ON {table} FOR SELECT USING "
                     f"(EXISTS (SELECT 1 FROM episodes e WHERE e.id = episode_id AND e.{SHARED}))")
