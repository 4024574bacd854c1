"""Backups made before a purge still hold what it removed. A backup is a snapshot of a
moment, so strata does not rewrite one into a state that never existed: `strata backup
--prune-containing ID` removes the backups that hold a purged memory, known by the hash of its
text that the purge's audit row keeps."""

from __future__ import annotations

from pathlib import Path

from strata_daemon.store import files
from strata_daemon.store.postgres import dumps
from strata_daemon.store.purge import purge_audit


def purged_hashes(conn, agent: str, episode_id: int) -> set[str]:
    """The text hashes the audit keeps for a purged memory (any purge that took it)."""
    out = set()
    for item_id, data in purge_audit(conn, agent):
        if item_id == episode_id and data.get("hash"):
            out.add(data["hash"])
        out.update(m["hash"] for m in data.get("memories", ()) if m.get("id") == episode_id)
    return out


def holding(folder: Path, hashes: set[str]) -> list[Path]:
    """The database copies in FOLDER (backups, databases a restore replaced; a PostgreSQL store's
    dumps) holding any of HASHES."""
    if not hashes or not folder.is_dir():
        return []
    return ([p for p in sorted(folder.glob("*.db")) if files.holds_hashes(p, hashes)]
            + [p for p in sorted(folder.glob(f"*{dumps.SUFFIX}")) if dumps.holds_hashes(p, hashes)])

