"""Backups made before a purge still hold what it removed. A backup is a snapshot of a
moment, so strata does not rewrite one into a state that never existed: `strata backup
--prune-containing ID` removes the backups that hold a purged memory, known by the hash of its
text that the purge's audit row keeps."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from strata_daemon.store import driver


def purged_hashes(conn, agent: str, episode_id: int) -> set[str]:
    """The text hashes the audit keeps for a purged memory (any purge that took it)."""
    out = set()
    for item_id, raw in conn.execute("SELECT item_id, data FROM audit WHERE agent = ? AND action = 'purge'",
                                     (agent,)):
        data = json.loads(raw)
        if item_id == episode_id and data.get("hash"):
            out.add(data["hash"])
        out.update(m["hash"] for m in data.get("memories", ()) if m.get("id") == episode_id)
    return out


def _holds(path: Path, hashes: set[str]) -> bool:
    with contextlib.closing(driver.sqlite_module().connect(f"file:{path}?mode=ro", uri=True)) as conn:
        marks = ", ".join("?" * len(hashes))
        try:
            return conn.execute(f"SELECT 1 FROM episodes WHERE content_hash IN ({marks}) LIMIT 1",
                                tuple(hashes)).fetchone() is not None
        except driver.driver_errors():
            return True  # unreadable: it may hold anything, and a person should look at it


def holding(folder: Path, hashes: set[str]) -> list[Path]:
    """The database copies in FOLDER (backups, databases a restore replaced) holding any of HASHES."""
    if not hashes or not folder.is_dir():
        return []
    return [p for p in sorted(folder.glob("*.db")) if _holds(p, hashes)]
