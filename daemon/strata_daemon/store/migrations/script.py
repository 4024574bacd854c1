"""Running a migration's SQL: one statement at a time, inside the migration's transaction
(executescript would COMMIT first). Like every migration, this imports nothing of strata."""

from __future__ import annotations

import sqlite3


def statements(script: str) -> list[str]:
    """The script's statements (trigger bodies hold semicolons, so SQLite says where each ends)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete statement in migration: {buf[:80]!r}")
    return out


def run_script(conn, script: str) -> None:
    for stmt in statements(script):
        conn.execute(stmt)
