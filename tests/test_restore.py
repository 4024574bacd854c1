"""`restore()` in-process: the database it replaces is always kept under a name of its own."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from daemon import Memory
from daemon.home import resolve_home
from daemon.restore import restore
from daemon.storage import driver


def bridge(home, value: str | None = None) -> str:
    async def go():
        mem = await Memory.open(home)
        try:
            if value is not None:
                await mem.facts.set("bridge", value)
            return (await mem.facts.get("bridge"))["value"]
        finally:
            await mem.close()
    return asyncio.run(go())


def test_two_restores_in_one_second_keep_both_databases(home, monkeypatch):
    h = resolve_home(home)
    bridge(home, "UP")
    backup = h.state_dir / "backups" / "memory-test.db"
    backup.parent.mkdir(mode=0o700)
    driver.copy(h.db_path, backup)
    bridge(home, "DOWN")

    stopped = time.gmtime(1_700_000_000)  # both restores see the same second
    monkeypatch.setattr(time, "gmtime", lambda *a: stopped)
    first = restore(h, backup)
    assert bridge(home) == "UP"
    # restoring the copy the first restore kept must not overwrite that copy first
    second = restore(h, Path(first["previous_kept_as"]))
    assert second["previous_kept_as"] != first["previous_kept_as"]
    assert Path(second["previous_kept_as"]).name == "before-restore-20231114T221320Z-2.db"
    assert bridge(home) == "DOWN"
    kept = Path(second["previous_kept_as"])
    assert oct(os.stat(kept).st_mode & 0o777) == "0o600"
    assert current_value(kept) == "UP"  # the database the second restore replaced


def current_value(db: Path) -> str:
    conn = driver.sqlite_module().connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT value FROM fact_values JOIN facts ON facts.id = fact_id "
                            "WHERE facts.key = 'bridge' AND valid_to IS NULL").fetchone()[0]
    finally:
        conn.close()
