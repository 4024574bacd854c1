"""Database files read as they are: opened read-only and never migrated, for the doctor, a
restore and the backups a purge asks about. Each opens its own connection and closes it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from strata_daemon.store import driver, purge


@contextlib.contextmanager
def read_only(path: Path) -> Iterator:
    """A connection that cannot change the file (driver errors pass to the caller)."""
    conn = driver.connect_read_only(path)
    try:
        yield conn
    finally:
        conn.close()


def integrity(path: Path) -> tuple[list[str], set[int]]:
    """SQLite's integrity check of the file (["ok"] when sound) and the migrations it records."""
    with read_only(path) as conn:
        return ([r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()],
                {r[0] for r in conn.execute("SELECT id FROM _migrations")})


def purge_records(path: Path) -> dict[tuple[int, float], tuple[str, dict]]:
    """(audit id, time) -> (agent, data) of every purge the file records."""
    with read_only(path) as conn:
        return purge.purge_records(conn)


def holds_hashes(path: Path, hashes: set[str]) -> bool:
    """Whether the file holds a memory of any of these text hashes; an unreadable file may hold
    anything, and counts as holding them."""
    try:
        with read_only(path) as conn:
            return conn.execute(f"SELECT 1 FROM episodes WHERE content_hash IN ({', '.join('?' * len(hashes))}) "
                                "LIMIT 1", tuple(hashes)).fetchone() is not None
    except driver.driver_errors():
        return True


def status_line_facts(path: Path, now: float) -> list[tuple[str, str, str, str | None]]:
    """(agent, key, value, label) of the current facts the status-line rule captured."""
    with read_only(path) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT f.agent, f.key, v.value, f.label FROM facts f JOIN fact_values v ON v.id = (SELECT id FROM "
            "fact_values WHERE fact_id = f.id AND valid_from <= ? ORDER BY valid_from DESC, id DESC LIMIT 1) "
            "WHERE v.value IS NOT NULL AND v.rule = 'status-line'", (now,)).fetchall()]
