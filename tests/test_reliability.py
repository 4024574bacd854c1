"""Crash and concurrency runs at a small size (the README's figures come from `strata bench
reliability` at full size), and no face listening on a network port."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import REPO
from http_helpers import listening_tcp_sockets

pytestmark = [pytest.mark.slow, pytest.mark.reliability]


def test_killed_writers_and_daemon_lose_nothing_and_concurrent_use_sees_no_error(cli):
    r = cli.json("bench", "reliability", "--parts", "crash,concurrency", "--cycles", "4", "--seconds", "6",
                 "--writers", "4", "--readers", "2")
    crash, busy = r["crash"], r["concurrency"]
    assert crash["cycles"] == 4 and crash["acknowledged_writes"] > 50, crash
    assert crash["missing_writes"] == 0 and crash["integrity"] == "ok" and crash["failures"] == []
    backlog = crash["backlog"]  # writes made with no daemon running, then a daemon after a SIGKILL
    assert backlog["embed_phase"] == "ok" and backlog["after"] < backlog["before"], backlog
    assert busy["writes"] > 50 and busy["reads"] > 50, busy
    assert 0 < busy["write_latency"]["p50_ms"] <= busy["write_latency"]["p95_ms"], busy
    assert busy["write_error_count"] == busy["read_error_count"] == busy["locked_errors"] == 0, busy
    assert busy["missing_writes"] == 0 and busy["integrity"] == "ok" and busy["daemon_exit"] == 0
    assert r["data_lost"] == 0 and r["ok"] is True


def test_the_adversarial_corpus_gets_answers_no_traceback_and_changes_nothing(cli):
    """bad_input.py's and damage.py's inputs whole, and a fixed, seeded 15 % of those hostile*.py
    add (at least one of each of their lists, so every face): the whole corpus (`strata bench
    reliability --parts adversarial`, 1,579 inputs) would add minutes to the suite."""
    r = cli.json("bench", "reliability", "--parts", "adversarial", "--share", "0.15", timeout=1800)
    found = r["adversarial"]
    assert found["inputs"] >= 750 and set(found["by_face"]) == {"python", "cli", "import", "capsule", "strata.toml",
                                                                 "http", "mcp", "hooks"}
    assert found["tracebacks"] == found["server_errors"] == found["unanswered"] == 0, found["problems"]
    assert found["by_face"]["hooks"]["unexpected"] == 0, found["problems"]  # every hook exits 0, whatever it got
    assert found["data_changed"] == []
    assert r["ok"] is True


def test_sigterm_mid_phase_and_consolidation_memory_on_near_identical_lines(cli):
    r = cli.json("bench", "reliability", "--parts", "shutdown", "--similar", "6000", "--stops", "1", timeout=1800)
    stopped = r["shutdown"]
    assert [s["phase"] for s in stopped["stops"]] == ["embed", "consolidate"] and stopped["clean"], stopped
    assert stopped["exit_seconds_max"] <= 10 and stopped["dry_run"]["exit_code"] == 0
    assert 0 < stopped["dry_run"]["peak_rss_mb"] <= 500


@pytest.mark.parametrize("command", [["run"], ["mcp"], ["tui"]])
def test_no_face_listens_on_a_network_port(home, command):
    import pty

    # The inspector needs a terminal: it gets one (the others, pipes).
    main, tty = pty.openpty() if command == ["tui"] else (None, None)
    streams = {"stdin": tty, "stdout": tty, "stderr": tty} if tty is not None else \
        {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen([sys.executable, "-m", "strata_daemon", "--home", str(home), *command], cwd=REPO,
                            **streams)
    try:
        time.sleep(4)  # started and idle
        assert proc.poll() is None, proc.communicate(timeout=10)
        assert listening_tcp_sockets(proc.pid) == set()
    finally:
        proc.kill()
        proc.communicate(timeout=30)
        for fd in (main, tty):
            if fd is not None:
                os.close(fd)


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_is_said_and_loses_nothing(small_disk):
    from conftest import CLI

    cli = CLI(small_disk / "home")
    cli("init", str(small_disk / "home"), check=True)
    kept = int(cli("observe", "written while there was room", check=True).out)
    filler = small_disk / "filler"
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    filler.write_bytes(b"\0" * max(0, free - 64 * 1024))
    failed = None
    for i in range(200):
        proc = cli("observe", f"note {i} " + "x" * 30_000)
        if proc.returncode != 0:
            failed = proc
            break
    assert failed is not None, "the disk never filled"
    assert failed.returncode == 6 and "full" in failed.err and "Traceback" not in failed.err, failed.err
    filler.unlink()
    assert cli.json("show", str(kept))["content"] == "written while there was room"
    assert cli("observe", "room again", check=True).returncode == 0


def test_a_backup_and_a_purge_on_a_full_disk_say_so_and_leave_nothing(small_disk):
    """A backup that runs out of room leaves no partial copy (it would hold every memory); a purge
    on a full disk, which SQLite reports as a disk I/O error, says the disk is full; run again
    once there is room, it leaves the word in no file."""
    from conftest import CLI
    from strata_bench.full_disk import _fill

    home = small_disk / "home"
    cli = CLI(home)
    cli("init", str(home), check=True)
    lines = "".join(json.dumps({"content": f"reading {i} of the relay on worker-{i % 5}"}) + "\n" for i in range(60))
    cli("import", "-", input=lines + json.dumps({"content": "the locker opens with WOMBAT-5521"}) + "\n", check=True)
    filler = small_disk / "filler"
    _fill(filler, leave=(home / "state" / "memory.db").stat().st_size // 2)
    backup = cli("backup")
    assert backup.returncode != 0 and "is full" in backup.err and "Error:" not in backup.err, backup.err
    assert [p.name for p in (home / "state" / "backups").iterdir()] == []
    _fill(filler, leave=0)
    purge = cli("forget", "--matching", "WOMBAT-5521", "--purge", "--yes")
    assert purge.returncode == 6 and "is full" in purge.err and "I/O" not in purge.err, purge.err
    filler.unlink()
    cli("forget", "--matching", "WOMBAT-5521", "--purge", "--yes", check=True)
    assert [p for p in home.rglob("*") if p.is_file() and b"wombat-5521" in p.read_bytes().lower()] == []
    assert cli.json("status")["episodes"] == 60


def test_a_home_on_a_read_only_filesystem_is_said_and_loses_nothing(small_disk):
    """Root writes through file modes, so a read-only mount is what makes a home read-only here."""
    from conftest import CLI

    home = small_disk / "home"
    cli = CLI(home)
    cli("init", str(home), check=True)
    kept = int(cli("observe", "written while the home was writable", check=True).out)
    cli("status", check=True)  # a clean close folds the WAL into the file
    if subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True).returncode != 0:
        pytest.skip("cannot remount the tmpfs read-only here")
    try:
        proc = cli("observe", "cannot be stored")
        assert proc.returncode == 6 and proc.err.startswith("strata:") and "Traceback" not in proc.err, proc.err
        assert "read-only" in proc.err or "cannot open" in proc.err or "writable" in proc.err, proc.err
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], capture_output=True)
    assert cli.json("show", str(kept))["content"] == "written while the home was writable"
    assert [e["id"] for e in cli.json("timeline")] == [kept]
