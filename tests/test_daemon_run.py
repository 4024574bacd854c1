"""`strata run`: the real daemon in a subprocess, driven by signals, with the CLI working beside it."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, write_config
from strata_bench.reliability import routine_file

pytestmark = pytest.mark.slow

# Generous: a wait returns at its first match, and a loaded CI machine can stall for seconds.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


class Daemon:
    """`python -m daemon run` with its stderr read line by line on a thread, so waits have deadlines."""

    def __init__(self, home, extra_env: dict | None = None, args: tuple[str, ...] = ()):
        env = {**os.environ, "STRATA_HOME": str(home), **(extra_env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "strata_daemon", "run", *args], cwd=REPO, env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, encoding="utf-8", errors="replace")
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)  # end of stream

    def wait_for(self, text: str, timeout: float, *, new: bool = False) -> str:
        """The first line (seen so far, unless `new`, or arriving before the deadline) that contains text."""
        for line in [] if new else self.lines:
            if text in line:
                return line
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line containing {text!r} within {timeout} s; "
                             f"exit code {self.proc.poll()}; stderr so far:\n" + "\n".join(self.lines))

    def stop(self, sig: int) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=STOP_TIMEOUT)
        self._reader.join(timeout=STOP_TIMEOUT)
        while not self._queue.empty():
            line = self._queue.get()
            if line is not None:
                self.lines.append(line)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=STOP_TIMEOUT)
        self.proc.stderr.close()


@pytest.fixture
def fast_home(home):
    write_config(home, "[daemon]\nheartbeat_seconds = 1\n[experimental]\n\"daemon.fold_interval_seconds\" = 1\n\"daemon.embed_interval_seconds\" = 1\n")
    return home


@pytest.fixture
def start_daemon(fast_home):
    started: list[Daemon] = []

    def start(extra_env: dict | None = None) -> Daemon:
        d = Daemon(fast_home, extra_env)
        started.append(d)
        return d

    yield start
    for d in started:
        d.kill()


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s (last value {value!r})")
        time.sleep(0.2)


def test_daemon_folds_access_events_and_stops_on_sigterm(start_daemon, cli):
    daemon = start_daemon()
    started = daemon.wait_for("strata started", START_TIMEOUT)
    assert "namespace default" in started and "0 memories" in started
    daemon.wait_for("phases: heartbeat every 1 s, steps after heartbeat, fold every 1 s, embed every 1 s", START_TIMEOUT)

    # The CLI writes and reads the same database while the daemon holds it open.
    eid = int(cli("observe", "Deploy of api v2 finished", check=True).out)
    cli("observe", "Deploy of the worker failed", check=True)
    recall = cli.json("recall", "deploy")
    assert len(recall["hits"]) == 2

    fold_line = daemon.wait_for("phase fold: events 2", START_TIMEOUT)
    assert "episodes 2" in fold_line
    wait_until(lambda: cli.json("status")["pending_access_events"] == 0, START_TIMEOUT, "the backlog emptying")
    assert cli.json("show", str(eid))["access_count"] == 1

    assert daemon.stop(signal.SIGTERM) == 0
    assert any("strata stopped" in line for line in daemon.lines), daemon.lines
    assert not any("Traceback" in line for line in daemon.lines), daemon.lines


def test_daemon_stops_on_sigint(start_daemon):
    daemon = start_daemon()
    daemon.wait_for("strata started", START_TIMEOUT)
    assert daemon.stop(signal.SIGINT) == 0
    assert any("strata stopped" in line for line in daemon.lines), daemon.lines
    assert not any("Traceback" in line for line in daemon.lines), daemon.lines


def test_daemon_logs_with_syslog_priorities_under_systemd(start_daemon):
    daemon = start_daemon({"JOURNAL_STREAM": "1:1"})
    started = daemon.wait_for("strata started", START_TIMEOUT)
    assert started.startswith("<6>strata started")  # info, and no timestamp: journald adds its own
    assert daemon.stop(signal.SIGTERM) == 0
    assert daemon.lines and all(line.startswith("<6>") for line in daemon.lines), daemon.lines


def test_daemon_logs_timestamps_outside_systemd(start_daemon):
    daemon = start_daemon()
    started = daemon.wait_for("strata started", START_TIMEOUT)
    assert not started.startswith("<")
    assert " INFO strata started" in started and started[:4].isdigit()
    assert daemon.stop(signal.SIGTERM) == 0


def test_verbose_logs_idle_phases_at_debug(home):
    write_config(home, "[experimental]\n\"daemon.fold_interval_seconds\" = 1\n")
    d = Daemon(home, args=("-v",))
    try:
        assert " DEBUG phase fold: events 0" in d.wait_for("phase fold: events 0", START_TIMEOUT)
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()


def test_daemon_with_bad_config_exits_7(home, cli):
    write_config(home, "[daemon]\nheartbeat_seconds = 0\n")
    proc = cli("run")
    assert proc.returncode == 7
    assert "daemon.heartbeat_seconds" in proc.err
    assert "Traceback" not in proc.err


def test_daemon_embeds_new_memories_and_keeps_running_without_a_model(start_daemon, cli, home):
    daemon = start_daemon()
    daemon.wait_for("strata started", START_TIMEOUT)
    cli("observe", "The bridge went down on gw-02", check=True)
    line = daemon.wait_for("phase embed: embedded 1", 20.0)
    assert "backlog 0" in line
    wait_until(lambda: cli.json("status")["embedding_backlog"] == 0, START_TIMEOUT, "the embedding backlog emptying")
    assert daemon.stop(signal.SIGTERM) == 0

    (home / "strata.toml").write_text('[experimental]\n"daemon.fold_interval_seconds" = 1\n"daemon.embed_interval_seconds" = 1\n'
                                      '[embedding]\nmodel = "/nowhere.gguf"\n')
    daemon = start_daemon()
    daemon.wait_for("strata started", START_TIMEOUT)
    cli("observe", "a note that cannot be embedded", check=True)
    warning = daemon.wait_for("phase embed: embedded 0, skipped", START_TIMEOUT)
    assert "does not exist" in warning
    recall = cli.json("recall", "note")  # full-text recall keeps working
    assert len(recall["hits"]) == 1
    assert daemon.stop(signal.SIGTERM) == 0


def test_daemon_commits_an_idle_working_set(home, cli):
    write_config(home, "[daemon]\nheartbeat_seconds = 1\n[experimental]\n\"graph.context_ttl_seconds\" = 1\n")
    a, b = (int(cli("observe", text, check=True).out) for text in ("bridge down on gw-02", "paged Ines"))
    cli("web", "activate", str(a), str(b), check=True)
    daemon = Daemon(home)
    try:
        daemon.wait_for("working set committed yes", START_TIMEOUT)
        assert cli.json("web", "context")["items"] == []
        assert cli.json("web", "neighbors", str(a))["neighbours"][0]["node"] == f"episode:{b}"
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        daemon.kill()


def test_the_daemon_refreshes_due_dossiers_at_start(home, cli):
    write_config(home, '[experimental]\n"daemon.fold_interval_seconds" = 1\n"dossier.recall_mode" = "fast"\n\n'
                       '[dossier.topics.bridge]\n')
    cli("observe", "Bridge: DOWN", check=True)
    cli("observe", "Bridge: UP", check=True)
    d = Daemon(home)
    try:
        d.wait_for("phase dossiers: due 1, refreshed 1", START_TIMEOUT)
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()
    shown = cli.json("dossier", "show", "bridge")
    assert shown["actor"] == "daemon" and '"UP"' in shown["text"]


def test_the_daemon_renders_the_capsule_and_takes_in_a_hand_edit(home, cli):
    write_config(home, "[experimental]\n\"daemon.fold_interval_seconds\" = 1\n")
    cli("fact", "set", "bridge", "UP", check=True)
    d = Daemon(home)
    try:
        d.wait_for("watching", START_TIMEOUT)
        d.wait_for("phase capsule: status rendered", START_TIMEOUT)
        path = home / "capsule" / "CAPSULE.md"
        text = path.read_text(encoding="utf-8")
        assert "- bridge: UP" in text
        path.write_text(text.replace("- bridge: UP", "- bridge: DOWN"), encoding="utf-8")
        d.wait_for("capsule edited by hand: 1 fact taken in", START_TIMEOUT)
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()
    assert cli.json("fact", "get", "bridge")["source"] == "capsule"


def test_the_notify_protocol_ready_watchdog_status_stopping(home, tmp_path):
    import socket

    write_config(home, "[daemon]\nheartbeat_seconds = 1\n")
    address = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(START_TIMEOUT)
    d = Daemon(home, {"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "1000000"})
    got: list[str] = []
    try:
        while not ("READY=1" in got and got.count("WATCHDOG=1") >= 3 and any(m.startswith("STATUS=loop") for m in got)):
            got.append(sock.recv(4096).decode())
        assert d.stop(signal.SIGTERM) == 0
        sock.settimeout(1.0)
        with contextlib.suppress(TimeoutError, socket.timeout):
            while True:
                got.append(sock.recv(4096).decode())
    finally:
        d.kill()
        sock.close()
    assert got.index("READY=1") < len(got) - 1 and "STOPPING=1" in got
    assert got.index("STOPPING=1") > got.index("READY=1")


def test_one_daemon_per_home_and_a_killed_one_leaves_no_stale_lock(home, cli):
    write_config(home, "[experimental]\n\"daemon.fold_interval_seconds\" = 1\n")
    first = Daemon(home)
    try:
        first.wait_for("strata started", START_TIMEOUT)
        listing = cli.json("phase", "list")
        assert listing["running"] == first.proc.pid
        # a phase it has not run yet is due a period after the daemon started, not "some time"
        waiting = [p for p in listing["phases"] if p["last"] is None and not (p["at_start"] or p["after"])]
        assert waiting and all(p["next_at"] > time.time() for p in waiting)
        assert "one interval after start" not in cli("phase", "list", check=True).out
        second = cli("run")
        assert second.returncode == 5 and f"already runs on this home (pid {first.proc.pid})" in second.err
        eid = int(cli("observe", "written while the daemon ran", check=True).out)
        first.proc.kill()  # kill -9: no cleanup at all
        first.proc.wait(STOP_TIMEOUT)
    finally:
        first.kill()
    assert cli.json("phase", "list")["running"] is None
    again = Daemon(home)
    try:
        again.wait_for("strata started", START_TIMEOUT)
        again.wait_for("phase embed: embedded 1", START_TIMEOUT)  # resumes the backlog
        assert again.stop(signal.SIGTERM) == 0
    finally:
        again.kill()
    assert cli.json("show", str(eid))["content"] == "written while the daemon ran"


def test_a_failing_phase_is_recorded_and_does_not_stop_the_others(home, cli):
    # A capsule with an error makes the capsule phase fail; the others carry on.
    (home / "capsule" / "CAPSULE.md").write_text("no title, no sections\n", encoding="utf-8")
    write_config(home, "[daemon]\nheartbeat_seconds = 1\n[experimental]\n\"daemon.fold_interval_seconds\" = 1\n")
    d = Daemon(home)
    try:
        d.wait_for("phase capsule failed", START_TIMEOUT)
        d.wait_for("phase capsule: retrying in", START_TIMEOUT)
        assert "phase heartbeat: loop 3" in d.wait_for("loop 3", START_TIMEOUT)
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()
    listing = cli.json("phase", "list")
    capsule = next(p for p in listing["phases"] if p["phase"] == "capsule")
    assert capsule["last"]["status"] == "failed" and "problem" in capsule["last"]["error"]
    assert listing["loop_count"] >= 3


@pytest.mark.sqlite_only
def test_phase_run(cli, home):
    r = cli.json("phase", "run", "backup")
    assert r["status"] == "ok" and Path(r["result"]["path"]).stat().st_mode & 0o777 == 0o600
    assert cli.json("phase", "list")["phases"][-1]["last"]["status"] == "ok"
    assert cli("phase", "run", "nonsense").returncode == 2


def test_cli_observations_are_folded_embedded_and_reach_the_capsule(home, cli):
    write_config(home, "[experimental]\n\"daemon.fold_interval_seconds\" = 1\n\"daemon.embed_interval_seconds\" = 1\n"
                       "\"daemon.capsule_interval_seconds\" = 1\n")
    d = Daemon(home)
    try:
        d.wait_for("phase capsule: status rendered", START_TIMEOUT)
        eid = int(cli("observe", "Bridge: DOWN since the storm", check=True).out)
        d.wait_for("phase embed: embedded 1", START_TIMEOUT)
        cli.json("recall", "bridge storm")  # after the daemon's embed: a recall would embed a small backlog itself
        d.wait_for("phase fold: events 1", START_TIMEOUT)  # the recall's access event
        capsule = home / "capsule" / "CAPSULE.md"
        wait_until(lambda: "- Bridge: DOWN since the storm" in capsule.read_text(encoding="utf-8"), START_TIMEOUT,
                   "the captured fact reaching the capsule")
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()
    shown = cli.json("show", str(eid))
    assert shown["access_count"] == 1 and cli.json("status")["embedding_backlog"] == 0


def test_sighup_reloads_the_config_and_a_broken_one_is_ignored(home, cli):
    write_config(home, "[daemon]\nheartbeat_seconds = 1\n")
    d = Daemon(home)
    try:
        d.wait_for("phase heartbeat: loop 1", START_TIMEOUT)
        write_config(home, '[daemon]\nheartbeat_seconds = 1\n\n[loop.steps.uptime]\ncommand = "echo machine is up"\n')
        d.proc.send_signal(signal.SIGHUP)
        assert "changed loop.steps" in d.wait_for("configuration reloaded", START_TIMEOUT)
        d.wait_for("phase steps: ran 1, failed 0, stored 1", START_TIMEOUT)
        hits = cli.json("recall", "machine up", "--mode", "fast")["hits"]
        assert hits and hits[0]["source"] == "step:uptime"

        # A setting read at start is named, with what it takes for it to apply.
        write_config(home, '[daemon]\nheartbeat_seconds = 1\n\n[loop.steps.uptime]\ncommand = "echo machine is up"\n'
                     '\n[http]\nport = 8931\n')
        d.proc.send_signal(signal.SIGHUP)
        assert "http.port changed: read when the daemon starts" in d.wait_for("read when the daemon starts",
                                                                              START_TIMEOUT)

        write_config(home, "[daemon\nheartbeat_seconds = 1\n")
        d.proc.send_signal(signal.SIGHUP)
        assert "is not valid TOML" in d.wait_for("configuration not reloaded", START_TIMEOUT)
        d.wait_for("phase steps: ran 1, failed 0, stored 1", START_TIMEOUT, new=True)  # the kept config runs on
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()


def test_a_share_given_or_taken_back_by_a_reload_holds_in_the_daemon_s_api(home, cli):
    cli("--agent", "team", "observe", "Runbook: restart gw-02 with systemctl restart bridge", check=True)
    d = Daemon(home)
    try:
        d.wait_for("http: serving", START_TIMEOUT)
        assert cli("--scope", "team", "recall", "runbook").returncode == 11  # not shared
        assert "changed since the daemon read it" not in cli("recall", "runbook", check=True).err
        write_config(home, '[agent]\nshared = ["team"]\n')
        stale = cli("recall", "runbook", check=True)  # an edit the daemon has not read yet is said
        assert "changed since the daemon read it; this answer used the daemon's settings" in stale.err, stale.err
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for("configuration reloaded", START_TIMEOUT)
        assert "changed since the daemon read it" not in cli("recall", "runbook", check=True).err
        hits = cli.json("--scope", "team", "recall", "runbook")["hits"]
        assert hits and hits[0]["content"].startswith("Runbook")
        write_config(home, "")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for("configuration reloaded", START_TIMEOUT, new=True)
        refused = cli("--scope", "team", "recall", "runbook")
        assert refused.returncode == 11 and "not shared" in refused.err, refused.err
        assert d.stop(signal.SIGTERM) == 0
    finally:
        d.kill()


@pytest.mark.sqlite_only
def test_sigterm_stops_a_long_consolidation_promptly_and_leaves_it_whole(home, cli, tmp_path):
    cli("import", str(routine_file(tmp_path / "routine.jsonl", 4000, seed=0)), check=True)
    write_config(home, "[daemon]\nconsolidation_interval_hours = 0.0003\n")  # due a second after start
    d = Daemon(home)
    db = home / "state" / "memory.db"
    try:
        d.wait_for("strata started", START_TIMEOUT)
        wait_until(lambda: _phase_status(db, "consolidate") == "running", START_TIMEOUT, "consolidation starting")
        time.sleep(0.3)  # into the pass (about 1.3 s on a quiet machine): its plan or its writing
        asked = time.monotonic()
        assert d.stop(signal.SIGTERM) == 0
        assert time.monotonic() - asked < 10
    finally:
        d.kill()
    assert _phase_status(db, "consolidate") == "interrupted"
    # What it wrote before the stop is whole (each merge with all it absorbs); the rest is still to do.
    assert _merges_whole(db)
    assert cli.json("consolidate", "--dry-run")["counts"]["merge"] > 0
    cli.json("consolidate")
    assert cli.json("consolidate", "--dry-run")["counts"]["merge"] == 0 and _merges_whole(db)


def _merges_whole(db) -> bool:
    """Every superseded memory points at an active survivor."""
    from conftest import strata_sqlite as sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute("SELECT count(*) FROM episodes e LEFT JOIN episodes s ON s.id = e.superseded_by "
                            "WHERE e.state = 'superseded' AND (s.id IS NULL OR s.state != 'active')").fetchone()[0] == 0


@pytest.mark.sqlite_only
def test_a_phase_left_running_by_a_killed_daemon_is_marked_interrupted(home, cli, tmp_path):
    cli("import", str(routine_file(tmp_path / "routine.jsonl", 4000, seed=0)), check=True)
    write_config(home, "[daemon]\nconsolidation_interval_hours = 0.0003\n")
    db = home / "state" / "memory.db"
    d = Daemon(home)
    try:
        wait_until(lambda: _phase_status(db, "consolidate") == "running", START_TIMEOUT, "consolidation starting")
        d.proc.kill()
        d.proc.wait(timeout=STOP_TIMEOUT)
    finally:
        d.kill()
    assert _phase_status(db, "consolidate") == "running"  # what the killed process left behind
    shown = next(p for p in cli.json("phase", "list")["phases"] if p["phase"] == "consolidate")
    assert shown["last"]["status"] == "interrupted"  # a dead process runs nothing
    d = Daemon(home)
    try:
        d.wait_for("marked interrupted", START_TIMEOUT)
    finally:
        d.kill()
    assert _phase_status(db, "consolidate", first=True) == "interrupted"


def _phase_status(db, phase: str, first: bool = False) -> str | None:
    from conftest import strata_sqlite as sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        row = conn.execute(f"SELECT status FROM phase_runs WHERE phase = ? ORDER BY id {'ASC' if first else 'DESC'} "
                           "LIMIT 1", (phase,)).fetchone()
    return row and row[0]


def test_recall_asks_the_running_daemon_and_finds_what_it_finds_in_process(home, cli):
    lines = [f"Disk on db-0{i % 3} is {80 + i}% full after the nightly backup {i}" for i in range(12)]
    lines += ["The bridge on gw-02 went DOWN at 09:12", "Rolled gw-02 back to firmware 4.1; the bridge is UP"]
    cli("import", "-", input="".join(json.dumps({"content": t}) + "\n" for t in lines), check=True)
    cli("embed", check=True)
    # A command whose own process cannot load the embedding model (as if onnxruntime were gone):
    # balanced recall in it is possible only through the daemon.
    blind = ("import sys; sys.modules['onnxruntime'] = None\n"
             "from strata_daemon.faces.cli.main import main\nsys.exit(main(sys.argv[1:]))")

    def recall(*args, model=True):
        argv = [sys.executable, "-m", "strata_daemon"] if model else [sys.executable, "-c", blind]
        proc = subprocess.run([*argv, "--json", "recall", *args, "is the bridge down on gw-02?"], cwd=REPO,
                              env={**os.environ, "STRATA_HOME": str(home)}, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    assert recall(model=False)["mode_used"] == "fast"  # no daemon: this process has no model
    here = recall("--no-daemon")
    daemon = Daemon(home)
    try:
        wait_until(lambda: (home / "state" / "http-listeners.json").exists(), START_TIMEOUT, "the API's record")
        asked = recall(model=False)
        assert asked["mode_used"] == "balanced" and asked["warnings"] == []  # the daemon's model answered
        assert [h["id"] for h in asked["hits"]] == [h["id"] for h in here["hits"]]
        assert [h["score"] for h in asked["hits"]] == pytest.approx([h["score"] for h in here["hits"]], abs=0.02)
        assert recall("--no-daemon", model=False)["mode_used"] == "fast"  # --no-daemon: this process answers
        refused = subprocess.run([sys.executable, "-m", "strata_daemon", "recall", "--k", "5000", "bridge"],
                                 cwd=REPO, env={**os.environ, "STRATA_HOME": str(home)}, capture_output=True,
                                 text=True, timeout=120)
        assert refused.returncode == 4 and refused.stderr.startswith("strata: ")  # the daemon's error, as the CLI's
    finally:
        assert daemon.stop(signal.SIGTERM) == 0
    assert recall(model=False)["mode_used"] == "fast"  # the daemon gone: in process again


@pytest.mark.sqlite_only
def test_the_daemon_runs_a_sealed_home_with_its_key_as_a_credential(start_daemon, cli, home, tmp_path):
    key = tmp_path / "keys" / "home.key"
    cli("encrypt", "--key-file", str(key), check=True)
    key.rename(tmp_path / "credential")  # store.key_file now names nothing: only the credential opens it
    creds = tmp_path / "creds"
    creds.mkdir()
    (tmp_path / "credential").rename(creds / "strata-key")
    daemon = start_daemon({"CREDENTIALS_DIRECTORY": str(creds)})
    daemon.wait_for("strata started", START_TIMEOUT)
    env = {"CREDENTIALS_DIRECTORY": str(creds)}
    cli("observe", "The greenhouse heater trips at minus four.", env=env, check=True)
    daemon.wait_for("phase embed", START_TIMEOUT)
    assert cli.json("recall", "greenhouse heater", env=env)["hits"]
    assert daemon.stop(signal.SIGTERM) == 0
    assert not any("Traceback" in line for line in daemon.lines), daemon.lines
    assert b"greenhouse" not in b"".join(p.read_bytes() for p in (home / "state").glob("memory.db*"))
