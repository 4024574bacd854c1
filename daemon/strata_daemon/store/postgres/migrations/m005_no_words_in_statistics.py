"""Migration 5 (PostgreSQL): the server keeps no statistics of the columns that hold words.

ANALYZE (the server's autovacuum runs it on its own) copies sample values of each column into
the catalog pg_statistic: its most common values, a histogram's bounds, a tsvector's most
common lexemes. A purge cannot reach them there, so a purged memory's words stayed in the
database's files (found by `strata bench forget --store-url`). Statistics are off for these
columns (a target of 0): the planner estimates their conditions with its defaults. Those pick
the same indexes but in one lookup: the supersession links of a recall's candidates, which the
defaults sent to a sequential scan of every link once a recall asked about some hundred nodes
(11 ms at 100,000 memories); a partial index of those links keeps it an index scan (0.8 ms).
These targets also name the tables that hold words, which every purge rewrites
(store/erase.py). Statistics the server already holds of these columns are removed where the migrating role may
(a superuser); otherwise `strata doctor` names them and the statement a superuser runs.
"""

from __future__ import annotations

NAME = "no statistics of the columns that hold words"

WORDS = {
    "episodes": ("content", "source", "session", "context", "search"),
    "audit": ("data",),
    "facts": ("key", "label"),
    "fact_values": ("value", "source_ref"),
    "dossier_topics": ("topic", "query", "fact_prefixes"),
    "dossier_versions": ("topic", "text", "sources", "notes"),
    "capsule_renders": ("blocks",),
    "capsule_overrides": ("line",),
    "recalls": ("query", "context"),
    "arena_episodes": ("query", "context", "useful"),
    "entities": ("value",),
    "web_context": ("node", "source"),
    "web_edges": ("a", "b"),
    "web_links": ("src", "dst"),
}


def up(conn) -> None:
    conn.execute("CREATE INDEX web_links_supersedes ON web_links (agent, dst) WHERE type = 'supersedes'")
    for table, columns in WORDS.items():
        conn.execute(f"ALTER TABLE {table} " + ", ".join(f"ALTER COLUMN {c} SET STATISTICS 0" for c in columns))
    if conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        for table, columns in WORDS.items():
            conn.execute("DELETE FROM pg_statistic WHERE starelid = ?::regclass AND staattnum IN "
                         "(SELECT attnum FROM pg_attribute WHERE attrelid = ?::regclass AND attname = ANY(?))",
                         (table, table, list(columns)))
