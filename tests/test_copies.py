"""Copies of the database in state/backups/ (backups, the database a restore replaced), in
process: each gets a name of its own, and a copy cut short leaves nothing that looks whole."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

from strata_daemon import Memory
from strata_daemon.app.phases.jobs import _backup
from strata_daemon.app.restore import restore
from strata_daemon.config.home import resolve_home
from strata_daemon.store import driver


def bridge(home, value: str | None = None) -> str:
    async def go():
        mem = await Memory.open(home)
        try:
            if value is not None:
                await mem.set_fact("bridge", value)
            return (await mem.get_fact("bridge"))["value"]
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
    conn = driver.connect_read_only(db)
    try:
        return conn.execute("SELECT value FROM fact_values JOIN facts ON facts.id = fact_id "
                            "WHERE facts.key = 'bridge' AND valid_to IS NULL").fetchone()[0]
    finally:
        conn.close()


def test_backups_made_in_one_second_are_all_kept_newest_last(home, monkeypatch):
    h = resolve_home(home)
    folder = h.state_dir / "backups"
    stopped = time.gmtime(1_700_000_000)
    monkeypatch.setattr(time, "gmtime", lambda *a: stopped)
    made = []
    for value in ("UP", "DOWN", "FLAPPING"):
        bridge(home, value)
        made.append(_backup(h.db_path, folder, keep=2))
    names = [Path(m["path"]).name for m in made]
    assert names == ["memory-20231114T221320Z.db", "memory-20231114T221320Z-2.db", "memory-20231114T221320Z-3.db"]
    # the oldest went, not one of the two newest
    assert sorted(p.name for p in folder.glob("memory-*.db")) == sorted(names[1:])
    assert [current_value(Path(m["path"])) for m in made[1:]] == ["DOWN", "FLAPPING"]
    assert made[-1]["kept"] == 2


def test_a_copy_cut_short_is_swept_only_once_its_process_is_gone(home):
    h = resolve_home(home)
    bridge(home, "UP")
    folder = h.state_dir / "backups"
    folder.mkdir(mode=0o700)
    gone = _finished_pid()
    dead = folder / f".memory-20231114T221320Z.{gone}.abcd1234.partial"
    alive = folder / f".memory-20231114T221320Z.{os.getpid()}.abcd1234.partial"
    for p in (dead, alive):
        p.write_bytes(b"half a database")
    r = _backup(h.db_path, folder, keep=5)
    assert not dead.exists() and alive.exists()
    assert [p.name for p in folder.glob("*.db")] == [Path(r["path"]).name]  # a partial never lists


def _finished_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_tenth_backup_in_one_second_is_the_newest_and_is_kept(home, monkeypatch):
    h = resolve_home(home)
    folder = h.state_dir / "backups"
    stopped = time.gmtime(1_700_000_000)
    monkeypatch.setattr(time, "gmtime", lambda *a: stopped)
    for i in range(11):
        bridge(home, f"state {i}")
        last = _backup(h.db_path, folder, keep=3)
    assert Path(last["path"]).name == "memory-20231114T221320Z-11.db"
    kept = sorted(p.name for p in folder.glob("memory-*.db"))
    assert kept == ["memory-20231114T221320Z-10.db", "memory-20231114T221320Z-11.db", "memory-20231114T221320Z-9.db"]
    assert current_value(Path(last["path"])) == "state 10"
