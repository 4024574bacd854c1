"""The `strata` command in real subprocesses, each test on its own temporary home.

Every error case also checks the contract of the CLI: the documented exit code, a message on
stderr that starts with "strata:", no Python traceback, and nothing stored.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import subprocess
import sys

import pytest

from conftest import write_config
from strata_daemon.errors import EXIT_CODES
from strata_daemon.faces.cli.main import build_parser

# -- helpers ---------------------------------------------------------------------------------

def assert_fails(proc, code: int) -> None:
    """The process failed the documented way: exit code, a 'strata:' message, no traceback."""
    assert proc.returncode == code, f"exit {proc.returncode}, wanted {code}; stderr: {proc.err}"
    assert proc.err.startswith("strata:"), proc.err
    assert "Traceback" not in proc.err, proc.err


def episode_count(cli, *args: str) -> int:
    return cli.json("status", *args)["episodes"]


def observe(cli, text: str, *args: str, **kw) -> int:
    proc = cli("observe", text, *args, check=True, **kw)
    return int(proc.out.strip())


def write_lines(path, lines) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def good_line(n: int) -> str:
    return json.dumps({"content": f"imported note number {n}", "kind": "note"})


# -- observe ---------------------------------------------------------------------------------

def test_observe_prints_the_new_id(cli):
    first = cli("observe", "The build of api v2 passed", check=True)
    second = cli("observe", "The nightly backup finished", check=True)
    assert first.out.strip().isdigit() and second.out.strip().isdigit()
    assert int(second.out) != int(first.out)
    assert cli.json("show", first.out.strip())["content"] == "The build of api v2 passed"


def test_observe_options_all_land(cli):
    eid = observe(cli, "Deploy of api v2 finished", "--kind", "event", "--importance", "0.8",
                  "--context", "environment=prod", "--context", "goal=ship", "--at", "2026-03-01T10:00:00Z",
                  "--source", "shell", "--session", "loop-7", "--factual")
    ep = cli.json("show", str(eid))
    assert ep["kind"] == "event"
    assert ep["importance"] == 0.8
    assert ep["context"] == {"environment": "prod", "goal": "ship"}
    assert ep["event_at_iso"] == "2026-03-01T10:00:00Z"
    assert ep["source"] == "shell"
    assert ep["session"] == "loop-7"
    assert ep["factual"] is True


def test_observe_reads_text_from_stdin(cli):
    eid = int(cli("observe", input="piped from another tool\nsecond line\n", check=True).out)
    assert cli.json("show", str(eid))["content"] == "piped from another tool\nsecond line"
    eid2 = int(cli("observe", "-", input="dash means stdin too", check=True).out)
    assert cli.json("show", str(eid2))["content"] == "dash means stdin too"


def test_repeat_within_attention_window_prints_same_id_and_a_note(cli):
    first = cli("observe", "Bridge: DOWN", check=True)
    again = cli("observe", "Bridge: DOWN", check=True)
    assert again.out.strip() == first.out.strip()
    assert first.err == "strata: fact bridge = DOWN (now)\n"  # what the status line set
    assert again.err.startswith("strata:") and "repeat" in again.err and "2 occurrences" in again.err
    assert "fact" not in again.err  # a repeat only confirms the fact
    assert cli.json("show", first.out.strip())["occurrences"] == 2
    assert episode_count(cli) == 1


BAD_OBSERVATIONS = {
    "empty text": (("observe", ""), None),
    "whitespace only": (("observe", " \t\n "), None),
    "over 64 KiB": (("observe", "a" * 65537), None),
    "over 64 KiB on stdin": (("observe",), b"a" * 65537),
    "invalid UTF-8 on stdin": (("observe",), b"\xff\xfe"),
    "NUL byte on stdin": (("observe",), b"before\x00after"),
    "empty stdin": (("observe",), b""),
    "unknown kind": (("observe", "text", "--kind", "nonsense"), None),
    "importance above 1": (("observe", "text", "--importance", "1.5"), None),
    "importance NaN": (("observe", "text", "--importance", "nan"), None),
    "unreadable time": (("observe", "text", "--at", "not a time"), None),
    "context without =": (("observe", "text", "--context", "novalue"), None),
}


@pytest.mark.parametrize("args,stdin", BAD_OBSERVATIONS.values(), ids=BAD_OBSERVATIONS.keys())
def test_bad_observation_is_refused_and_stores_nothing(cli, args, stdin):
    observe(cli, "an existing memory")
    proc = cli(*args, input=stdin)
    assert_fails(proc, 4)
    assert proc.out == ""
    assert episode_count(cli) == 1


NOT_UTF8 = {  # what Python makes of the byte 0xff in an argument: a lone surrogate, no text to store
    "source": ("--source", ("observe", "text", "--source", "src-\udcff")),
    "session": ("--session", ("observe", "text", "--session", "\udcff")),
    "context value": ("--context", ("observe", "text", "--context", "code=\udcff")),
    "context key": ("--context", ("observe", "text", "--context", "\udcff=v")),
    "fact source": ("--source", ("fact", "set", "k", "v", "--source", "person:\udcff")),
    "fact key": ("KEY", ("fact", "set", "k\udcff", "v")),
    "forget text": ("--matching", ("forget", "--matching", "sec\udcffret")),
    "dossier query": ("--query", ("dossier", "add", "topic", "--query", "\udcff")),
    "query": ("QUERY", ("recall", "\udcff")),
}


@pytest.mark.parametrize("named, args", NOT_UTF8.values(), ids=NOT_UTF8.keys())
def test_an_argument_that_is_not_utf8_is_refused_by_name(cli, named, args):
    observe(cli, "an existing memory")
    proc = cli(*args)  # each was a UnicodeEncodeError traceback, or a 'not a topic' of mojibake
    assert_fails(proc, 4)
    assert proc.err.startswith(f"strata: {named} is not valid UTF-8 text")
    assert episode_count(cli) == 1 and cli.json("fact", "list") == []


def test_a_number_with_a_digit_separator_or_too_many_digits_is_a_usage_error(cli):
    proc = cli("observe", "text", "--importance", "0_5")  # float() reads it as 5.0
    assert proc.returncode == 2 and "invalid number value: '0_5'" in proc.err
    proc = cli("recall", "--k", "9" * 5001, "disk")
    assert proc.returncode == 2 and "invalid integer value" in proc.err and len(proc.err) < 2000


def test_an_empty_home_is_refused_as_init_refuses_it(cli, tmp_path):
    for args in (("--home", "", "status"), ("init", "")):  # it used the per-user home, and made it
        proc = cli(*args, env={"HOME": str(tmp_path), "XDG_DATA_HOME": ""})
        assert proc.returncode == 7 and "empty path" in proc.err
    assert not (tmp_path / ".local").exists()


def test_the_per_user_home_made_on_first_use_is_named(cli, tmp_path):
    env = {"STRATA_HOME": "", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    first = cli("fact", "get", "bridge", env=env)
    made = tmp_path / "data" / "strata"
    assert first.returncode == 3 and first.err.startswith(f"strata: made a new home at {made}, the per-user default")
    again = cli("fact", "get", "bridge", env=env)
    assert again.returncode == 3 and "made a new home" not in again.err


def test_a_write_whose_answer_cannot_be_printed_says_it_was_done(cli, home):
    def to_full(*args):
        with open("/dev/full", "wb") as full:
            return subprocess.run([sys.executable, "-m", "strata_daemon", *args], stdout=full, stderr=subprocess.PIPE,
                                  env={**os.environ, "STRATA_HOME": str(home)}, timeout=120)
    stored = to_full("observe", "kept though its id was not printed")
    assert stored.returncode == 0 and b"done (what it stored is stored)" in stored.stderr
    assert b"Traceback" not in stored.stderr and episode_count(cli) == 1
    for args in (("recall", "kept"), ("timeline",)):  # a read that cannot print failed at its one job
        read = to_full(*args)
        assert read.returncode == 6 and read.stderr.startswith(b"strata: the answer could not be printed")
    proc = cli("export", "-o", "/dev/full")
    assert proc.returncode == 6 and proc.err.startswith("strata: cannot write the export to /dev/full")
    assert "free some space" in proc.err
    proc = cli("export", "-o", "/proc/strata-export.jsonl")  # a folder that takes no file: the path's problem
    assert proc.returncode == 4 and "choose a file in a folder you can write to" in proc.err


def test_exactly_64_kib_is_accepted(cli):
    eid = observe(cli, "b" * 65536)
    assert len(cli.json("show", str(eid))["content"]) == 65536


# -- import ----------------------------------------------------------------------------------

def test_import_good_file(cli, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [good_line(n) for n in range(5)])
    report = cli.json("import", path)
    assert report["created"] == 5 and report["skipped_bad"] == 0 and report["bad_lines"] == []
    assert episode_count(cli) == 5
    # The same input again (known by its hash) adds nothing: no new memory, no occurrence counted.
    again = cli.json("import", path)
    assert (again["created"], again["repeat"], again["duplicate"]) == (0, 0, 5)
    assert episode_count(cli) == 5
    assert {m["occurrences"] for m in cli.json("timeline")} == {1}


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_an_import_killed_and_run_again_stores_each_line_once(cli, home, tmp_path):
    import signal
    import time

    from conftest import strata_sqlite as sqlite3

    # Lines without a time, so neither a time nor the attention window tells a line seen again.
    path = write_lines(tmp_path / "big.jsonl", [good_line(n) for n in range(12_000)])
    db = home / "state" / "memory.db"

    def stored() -> int:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
                return conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
        except sqlite3.OperationalError:  # not made yet
            return 0

    killed = 0
    for _ in range(3):
        before = stored()
        proc = subprocess.Popen([sys.executable, "-m", "strata_daemon", "import", path, "--no-embed"],
                                env={**os.environ, "STRATA_HOME": str(home)}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and stored() == before and time.monotonic() < deadline:
            time.sleep(0.01)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait(timeout=60)
    report = cli.json("import", path, "--no-embed")
    assert report["created"] + report["duplicate"] == 12_000 and report["repeat"] == 0
    assert stored() == 12_000 and killed >= 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT max(occurrences) FROM episodes").fetchone()[0] == 1


def test_import_from_stdin(cli):
    data = "".join(good_line(n) + "\n" for n in range(3))
    report = cli.json("import", "-", input=data)
    assert report["created"] == 3


@pytest.mark.parametrize("args", [("observe",), ("import", "-"), ("import", "/dev/zero")])
def test_an_endless_input_is_refused_before_it_fills_memory(home, args):
    with open("/dev/zero", "rb") as endless:
        proc = subprocess.run([sys.executable, "-m", "strata_daemon", *args], stdin=endless, capture_output=True,
                              text=True, env={**os.environ, "STRATA_HOME": str(home)}, timeout=120)
    proc.err = proc.stderr
    assert_fails(proc, 4)
    assert ("more than the 64 KiB" if args == ("observe",) else "longer than 16 MiB") in proc.err


def test_import_with_a_bad_line_imports_nothing(cli, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [good_line(1), good_line(2), '{"content": "broken', good_line(4)])
    proc = cli("import", path)
    assert_fails(proc, 4)
    assert "line 3" in proc.err and "not valid JSON" in proc.err
    assert "--skip-bad" in proc.err  # the hint says how to go on
    assert episode_count(cli) == 0


def test_import_skip_bad_imports_the_good_lines(cli, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [good_line(1), good_line(2), '{"content": "broken', good_line(4)])
    report = cli.json("import", path, "--skip-bad")
    assert report["created"] == 3
    assert report["skipped_bad"] == 1 and report["bad_lines"] == [3]
    assert episode_count(cli) == 3


@pytest.mark.parametrize("field, value", [("id", 10**23), ("id", 1e23), ("occurrences", 2**63), ("access_count", -1)])
def test_an_id_or_count_out_of_range_is_a_bad_line(cli, tmp_path, field, value):
    line = json.dumps({"content": "a memory with a wild field", field: value})
    report = cli.json("import", write_lines(tmp_path / "in.jsonl", [good_line(1), line]), "--skip-bad")
    assert report["created"] == 1 and report["bad_lines"] == [2]


def test_import_deeply_nested_json_is_a_bad_line(cli, tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [good_line(1), good_line(2), "[" * 100_000, good_line(4)])
    proc = cli("import", path)
    assert_fails(proc, 4)
    assert "line 3" in proc.err and "nested too deeply" in proc.err
    assert episode_count(cli) == 0

    report = cli.json("import", path, "--skip-bad")
    assert report["created"] == 3 and report["bad_lines"] == [3]


def test_import_deeply_nested_context_is_a_bad_line(cli, tmp_path):
    depth = 600
    nested = '{"a": ' * depth + "1" + "}" * depth
    path = write_lines(tmp_path / "in.jsonl", [good_line(1), '{"content": "deep", "context": ' + nested + "}"])
    proc = cli("import", path)
    assert_fails(proc, 4)
    assert "line 2" in proc.err
    assert episode_count(cli) == 0


def test_import_refuses_a_line_of_another_agent(cli, tmp_path):
    path = write_lines(tmp_path / "in.jsonl",
                       [good_line(1), json.dumps({"content": "for someone else", "agent": "mallory"})])
    proc = cli("import", path)
    assert_fails(proc, 4)
    assert "line 2" in proc.err and "'mallory'" in proc.err
    assert episode_count(cli) == 0


@pytest.mark.parametrize("source", ["file", "stdin"])
@pytest.mark.sqlite_only
def test_a_large_import_is_checked_then_read_again_in_batches(cli, home, tmp_path, source):
    write_config(home, "[experimental]\n\"store.import_buffer_mb\" = 0\n")  # every input counts as large
    lines = [good_line(1), good_line(2), '{"content": "broken', good_line(4), "", good_line(5)]
    path = write_lines(tmp_path / "in.jsonl", lines)
    args, kw = ((path,), {}) if source == "file" else (("-",), {"input": "\n".join(lines) + "\n"})
    assert_fails(cli("import", *args, **kw), 4)
    assert episode_count(cli) == 0  # a bad line still stops everything before anything is stored
    report = cli.json("import", *args, "--skip-bad", "--no-embed", **kw)
    assert report["created"] == 4 and report["bad_lines"] == [3]
    assert sorted(m["content"] for m in _export_lines(cli)) == [f"imported note number {n}" for n in (1, 2, 4, 5)]
    # the copy of stdin had no name
    assert sorted(p.name for p in (home / "state").iterdir()) == ["memory.db", "memory.db.users"]


def test_a_stream_the_caller_closed_is_no_traceback(cli, home):
    """Python holds a closed stdin, stdout or stderr as None: each was an AttributeError
    traceback, exit 1 or 120, and a --json error to a full stdout lost its exit code."""
    env = {**os.environ, "STRATA_HOME": str(home)}
    observe(cli, "an existing memory")

    def run(*args, fd: int | None, out=subprocess.PIPE):
        return subprocess.run([sys.executable, "-m", "strata_daemon", *args], stdout=None if fd == 1 else out,
                              stderr=None if fd == 2 else subprocess.PIPE, env=env, timeout=120,
                              preexec_fn=None if fd is None else lambda: os.close(fd))
    for args in (("recall", "-"), ("context", "-")):  # a closed stdin reads as empty
        r = run(*args, fd=0)
        assert r.returncode == 4 and b"is empty" in r.stderr and b"Traceback" not in r.stderr, r.stderr
    r = run("status", fd=1)
    assert r.returncode == 6 and r.stderr.startswith(b"strata: the answer could not be printed"), r.stderr
    assert run("--json", "fact", "get", "never", fd=1).returncode == 3
    assert run("fact", "get", "never", fd=2).returncode == 3
    with open("/dev/full", "wb") as full:
        r = run("--json", "fact", "get", "never", fd=None, out=full)
        assert r.returncode == 3 and b"Traceback" not in r.stderr, r.stderr
        r = run("--json", "no-such-command", fd=None, out=full)
        assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
    assert episode_count(cli) == 1


def test_import_of_a_file_the_kernel_will_not_read_is_refused(cli):
    proc = cli("import", "/proc/self/mem")  # opened, then EIO at the first read: a traceback
    assert_fails(proc, 4)
    assert "cannot read line 1: Input/output error" in proc.err and episode_count(cli) == 0


def test_an_empty_path_names_no_backup_and_no_inspector_interval_is_nan(cli):
    proc = cli("backup", "--restore", "")  # it made a backup instead
    assert_fails(proc, 4)
    for value in ("nan", "-1", "inf"):  # the inspector started, and never looked for changes
        assert cli("tui", f"--refresh={value}").returncode == 2
    refused = cli("tui", "--json")
    assert refused.returncode == 4 and "--json has no meaning" in refused.err
    piped = cli("tui")  # its output a pipe: it would fill it with a screen's codes
    assert piped.returncode == 4 and "needs a terminal" in piped.err and "\x1b" not in piped.out


def test_import_empty_file(cli, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    report = cli.json("import", str(path))
    assert report["created"] == 0 and report["skipped_bad"] == 0


def test_import_missing_file(cli, tmp_path):
    proc = cli("import", str(tmp_path / "nope.jsonl"))
    assert_fails(proc, 4)
    assert "nope.jsonl" in proc.err


# -- export ----------------------------------------------------------------------------------

def _export_lines(cli, **kw) -> list[dict]:
    proc = cli("export", check=True, **kw)
    return [json.loads(line) for line in proc.out.splitlines()]


@pytest.mark.sqlite_only
def test_export_import_export_round_trip(cli, tmp_path):
    observe(cli, "Deploy of api v2 finished", "--kind", "event", "--importance", "0.9",
            "--context", "environment=prod", "--at", "2026-03-01T10:00:00Z", "--source", "shell",
            "--session", "s1")
    observe(cli, "Rollback after the failed deploy", "--factual", "--at", "2026-03-02T08:30:00Z")
    observe(cli, "Bridge: DOWN")
    observe(cli, "Bridge: DOWN")  # folded in: occurrences 2
    gone = observe(cli, "Temporary note to archive", "--kind", "note")
    noise = observe(cli, "Irrelevant chatter about lunch")
    cli("forget", str(gone), check=True)
    cli("mark", str(noise), "--irrelevant", check=True)
    recall = cli.json("recall", "deploy")
    cli("feedback", str(recall["recall_id"]), "success", check=True)
    cli("fold", check=True)

    first = _export_lines(cli)
    assert len(first) == 5
    assert not any(k.endswith("_iso") for line in first for k in line)
    exported = tmp_path / "a.jsonl"
    exported.write_text("".join(json.dumps(x) + "\n" for x in first), encoding="utf-8")

    cli("init", str(tmp_path / "other-home"), check=True)
    other = {"STRATA_HOME": str(tmp_path / "other-home")}
    report = cli.json("import", str(exported), env=other)
    assert report["created"] == 5
    second = _export_lines(cli, env=other)

    def without_updated(rows):
        return [{k: v for k, v in r.items() if k != "updated_at"} for r in rows]

    assert without_updated(second) == without_updated(first)
    # The sample really covered the interesting fields.
    by_content = {r["content"]: r for r in first}
    assert by_content["Bridge: DOWN"]["occurrences"] == 2
    assert by_content["Temporary note to archive"]["state"] == "archived"
    assert by_content["Irrelevant chatter about lunch"]["irrelevant"] is True
    assert by_content["Deploy of api v2 finished"]["success_count"] == 1
    assert by_content["Deploy of api v2 finished"]["access_count"] == 1


def test_export_round_trip_keeps_twin_memories(cli, tmp_path):
    first_id = observe(cli, "Bridge: DOWN")
    cli("forget", str(first_id), check=True)
    observe(cli, "Bridge: DOWN")  # the archived one does not absorb it: a second memory
    cli("restore", str(first_id), check=True)
    first = _export_lines(cli)
    assert len(first) == 2
    exported = tmp_path / "a.jsonl"
    exported.write_text("".join(json.dumps(x) + "\n" for x in first), encoding="utf-8")

    cli("init", str(tmp_path / "other-home"), check=True)
    other = {"STRATA_HOME": str(tmp_path / "other-home")}
    cli("import", str(exported), check=True, env=other)
    assert len(_export_lines(cli, env=other)) == 2


def test_export_to_a_private_file(cli, tmp_path):
    observe(cli, "something worth keeping")
    target = tmp_path / "out.jsonl"
    proc = cli("export", "-o", str(target), check=True)
    assert "exported 1" in proc.err
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text())["content"] == "something worth keeping"


@pytest.mark.sqlite_only
def test_failed_export_keeps_the_previous_export(cli, home, tmp_path):
    observe(cli, "something worth keeping")
    target = tmp_path / "backup.jsonl"
    cli("export", "-o", str(target), check=True)
    before = target.read_bytes()
    (home / "state" / "memory.db").write_bytes(b"this is not an SQLite database\n" * 200)
    assert_fails(cli("export", "-o", str(target)), 6)
    assert target.read_bytes() == before


@pytest.mark.sqlite_only
def test_export_never_replaces_the_homes_own_files(cli, home, tmp_path):
    observe(cli, "something worth keeping")
    db = home / "state" / "memory.db"
    before = db.read_bytes()
    for target in (db, home / "capsule" / "CAPSULE.md", home / "state" / "new.jsonl"):
        assert_fails(cli("export", "-o", str(target)), 4)
    link = tmp_path / "link.jsonl"
    link.symlink_to(db)
    assert_fails(cli("export", "-o", str(link)), 4)  # nor through a symlink
    assert db.read_bytes() == before
    assert "something worth keeping" in cli("recall", "worth keeping", "--mode", "fast", check=True).out


def test_export_writes_through_a_symlink_and_into_a_pipe(cli, tmp_path):
    observe(cli, "something worth keeping")
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    cli("export", "-o", str(link), check=True)
    assert link.is_symlink() and json.loads(real.read_text())["content"] == "something worth keeping"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    cli("export", "-o", str(fifo), check=True)
    assert json.loads(reader.communicate(timeout=30)[0])["content"] == "something worth keeping"
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_export_to_a_missing_folder_or_a_folder_says_so(cli, tmp_path):
    proc = cli("export", "-o", str(tmp_path / "nowhere" / "x.jsonl"))
    assert_fails(proc, 4)
    assert "does not exist" in proc.err
    assert_fails(cli("export", "-o", str(tmp_path)), 4)


def test_control_characters_in_memories_never_reach_the_terminal(cli):
    hostile = "red \x1b[31malert\x1b[0m bell\x07 csi\x9b2J del\x7f"
    a = cli.json("observe", hostile, "--source", "evil\x1b]0;pwned\x07")["id"]
    for args in (("timeline",), ("show", str(a)), ("recall", "red bell", "--mode", "fast")):
        out = cli(*args, check=True).out
        assert not any(c in out for c in "\x1b\x07\x9b\x7f"), (args, out)
        assert "\\x1b[31malert" in out  # shown, not obeyed
    shown = cli("--json", "show", str(a), check=True).out
    assert "\x7f" not in shown and "\x9b" not in shown and json.loads(shown)["content"] == hostile


# -- recall ----------------------------------------------------------------------------------

HOSTILE_QUERIES = [
    '"deploy" OR rollback',
    'deploy"',
    '"',
    "NEAR(deploy api)",
    "content:deploy",
    "*",
    "deploy*",
    "-deploy",
    "^deploy",
    "NOT",
    "AND OR NOT",
    "'; DROP TABLE episodes; --",
    "') OR 1=1 --",
    "\U0001F680\U0001F525",
    "?!.,;:()[]{}",
    "gw-02 ERR_CONN_RESET nginx.conf",
    "café naïve İstanbul",
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_recall_accepts_any_user_string_safely(cli, query):
    observe(cli, "Deploy of api v2 finished on gw-02")
    observe(cli, "Rollback after ERR_CONN_RESET in nginx.conf")
    observe(cli, "The café menu changed")
    proc = cli("recall", "--json", "--", query)  # "--": a query may start with "-"
    assert proc.returncode == 0, proc.err
    result = json.loads(proc.out)
    assert isinstance(result["recall_id"], int)
    assert isinstance(result["hits"], list)
    assert episode_count(cli) == 3
    assert cli.json("recall", "deploy")["hits"][0]["content"] == "Deploy of api v2 finished on gw-02"


def test_recall_finds_by_words_the_user_typed(cli):
    observe(cli, "Deploy of api v2 finished")
    observe(cli, "The printer is out of paper")
    # Full text only: balanced recall also hands back the nearest by meaning, however far.
    hits = cli.json("recall", "--mode", "fast", '"deploy" OR rollback')["hits"]
    assert [h["content"] for h in hits] == ["Deploy of api v2 finished"]


def test_recall_explain_carries_every_signal(cli):
    in_prod = observe(cli, "Deploy of api v2 finished", "--context", "environment=prod")
    observe(cli, "Deploy of the worker failed")
    result = cli.json("recall", "deploy", "--explain", "--context", "environment=prod")
    assert len(result["hits"]) == 2
    for hit in result["hits"]:
        signals = hit["explain"]["signals"]
        assert set(signals) == {"relevance", "recency", "strength", "priority", "wilson", "context", "trust", "tier",
                                "penalty"}
        assert all(0.0 <= v <= 1.0 for v in signals.values())
        assert (signals["tier"], signals["penalty"], hit["tier"]) == (1.0, 1.0, "hot")
        assert isinstance(hit["explain"]["retrievers"]["fts"]["rank"], int)
    context = {h["id"]: h["explain"]["signals"]["context"] for h in result["hits"]}
    assert context.pop(in_prod) > max(context.values())


def test_recall_without_explain_has_no_explain_key(cli):
    observe(cli, "Deploy of api v2 finished")
    hits = cli.json("recall", "deploy")["hits"]
    assert len(hits) == 1
    assert "explain" not in hits[0]


def test_recall_human_output(cli):
    observe(cli, "Deploy of api v2 finished")
    proc = cli("recall", "deploy", "--explain", check=True)
    assert "1 hit " in proc.out and "Deploy of api v2 finished" in proc.out and "relevance" in proc.out
    assert "no memories matched" in cli("recall", "zebra", check=True).out


def test_recall_balanced_mode_falls_back_to_fast_with_a_warning(cli, home):
    observe(cli, "Deploy of api v2 finished")
    (home / "strata.toml").write_text('[embedding]\nmodel = "/nowhere/model.gguf"\n')
    result = cli.json("recall", "deploy", "--mode", "balanced")
    assert result["mode"] == "balanced" and result["mode_used"] == "fast"
    assert any("does not exist" in w for w in result["warnings"]) and len(result["hits"]) == 1


def test_recall_balanced_mode_explains_both_retrievers(cli):
    observe(cli, "Deploy of api v2 finished")
    cli("embed", check=True)
    result = cli.json("recall", "deploy", "--mode", "balanced", "--explain")
    assert result["mode_used"] == "balanced" and result["warnings"] == []
    retrievers = result["hits"][0]["explain"]["retrievers"]
    assert retrievers["fts"]["rank"] == 1 and retrievers["vector"]["rank"] == 1 and retrievers["fused"]["score"] > 0
@pytest.mark.parametrize("args", [("--k", "0"), ("--k", "-1"), ("--k", "1001"), ("--kind", "nonsense")],
                         ids=["k=0", "k=-1", "k=1001", "unknown kind"])
def test_recall_bad_arguments(cli, args):
    observe(cli, "Deploy of api v2 finished")
    assert_fails(cli("recall", "deploy", *args), 4)
    assert cli.json("status")["recalls"] == 0


@pytest.mark.parametrize("query", ["", "   ", "deploy " * 10_000], ids=["empty", "blank", "over 64 KiB"])
def test_recall_empty_or_huge_query(cli, query):
    assert_fails(cli("recall", query), 4)


# -- feedback --------------------------------------------------------------------------------

def test_feedback_counts_once_for_every_hit(cli):
    a = observe(cli, "Deploy of api v2 finished")
    b = observe(cli, "Deploy of the worker failed")
    other = observe(cli, "The printer is out of paper")
    result = cli.json("recall", "deploy")
    assert sorted(h["id"] for h in result["hits"]) == sorted([a, b])

    fb = cli.json("feedback", str(result["recall_id"]), "success")
    assert sorted(fb["episodes"]) == sorted([a, b])
    for eid in (a, b):
        ep = cli.json("show", str(eid))
        assert ep["success_count"] == 1 and ep["failure_count"] == 0
    assert cli.json("show", str(other))["success_count"] == 0

    assert_fails(cli("feedback", str(result["recall_id"]), "failure"), 5)
    assert cli.json("show", str(a))["failure_count"] == 0


def test_feedback_on_unknown_recall(cli):
    assert_fails(cli("feedback", "4242", "success"), 3)


# -- show, forget, restore, mark -------------------------------------------------------------

def test_show_unknown_memory(cli):
    proc = cli("show", "999")
    assert_fails(proc, 3)
    assert "999" in proc.err


def test_show_json_error_is_machine_readable(cli):
    proc = cli("show", "999", "--json")
    assert proc.returncode == 3
    assert json.loads(proc.out)["error"] == "not_found"


def test_forget_restore_purge(cli):
    keep = observe(cli, "A memory that stays")
    eid = observe(cli, "A memory to forget")

    cli("forget", str(eid), "--reason", "outdated", check=True)
    assert [r["id"] for r in cli.json("timeline")] == [keep]
    archived = {r["id"]: r for r in cli.json("timeline", "--all-states")}
    assert archived[eid]["state"] == "archived"
    assert eid not in [h["id"] for h in cli.json("recall", "forget")["hits"]]

    assert cli("forget", str(eid), check=True).out.strip() == f"memory {eid} was already archived"
    restored = cli.json("restore", str(eid))
    assert restored["previous_state"] == "archived"
    assert cli("restore", str(eid), check=True).out.strip() == f"memory {eid} was already active"
    assert {r["id"]: r["state"] for r in cli.json("timeline")} == {keep: "active", eid: "active"}

    cli("forget", str(eid), "--purge", check=True)
    assert_fails(cli("show", str(eid)), 3)
    assert [r["id"] for r in cli.json("timeline", "--all-states")] == [keep]
    assert_fails(cli("forget", str(eid)), 3)
    assert_fails(cli("restore", str(eid)), 3)


def test_mark_factual_and_irrelevant(cli):
    eid = observe(cli, "Deploy of api v2 finished")
    assert cli.json("mark", str(eid), "--factual")["changed"] == {"factual": True}
    assert cli.json("show", str(eid))["factual"] is True
    cli("mark", str(eid), "--irrelevant", check=True)
    assert cli.json("recall", "deploy")["hits"] == []
    cli("mark", str(eid), "--relevant", check=True)
    assert len(cli.json("recall", "deploy")["hits"]) == 1
    assert_fails(cli("mark", str(eid)), 4)
    both = cli("mark", str(eid), "--factual", "--irrelevant")  # always eligible and never recalled
    assert both.returncode == 4 and "cannot be both factual" in both.err


# -- timeline --------------------------------------------------------------------------------

def test_timeline_filters_and_order(cli):
    ids = {
        "jan1": observe(cli, "first of january", "--kind", "event", "--at", "2026-01-01T09:00:00Z"),
        "jan2": observe(cli, "second of january", "--kind", "note", "--at", "2026-01-02T09:00:00Z"),
        "jan3": observe(cli, "third of january", "--kind", "event", "--at", "2026-01-03T09:00:00Z"),
        "jan4": observe(cli, "fourth of january", "--kind", "decision", "--at", "2026-01-04T09:00:00Z"),
    }

    def timeline(*args):
        return [r["id"] for r in cli.json("timeline", *args)]

    assert timeline() == [ids["jan4"], ids["jan3"], ids["jan2"], ids["jan1"]]
    assert timeline("--oldest-first") == [ids["jan1"], ids["jan2"], ids["jan3"], ids["jan4"]]
    assert timeline("--since", "2026-01-02", "--until", "2026-01-03T12:00Z") == [ids["jan3"], ids["jan2"]]
    assert timeline("--kind", "event") == [ids["jan3"], ids["jan1"]]
    assert timeline("--kind", "event", "--kind", "decision") == [ids["jan4"], ids["jan3"], ids["jan1"]]
    assert timeline("--limit", "2") == [ids["jan4"], ids["jan3"]]
    assert timeline("--limit", "2", "--offset", "2") == [ids["jan2"], ids["jan1"]]
    assert timeline("--since", "2027-01-01") == []
    rows = cli.json("timeline", "--until", "2026-01-01T23:59Z")
    assert [(r["kind"], r["content"]) for r in rows] == [("event", "first of january")]


def test_timeline_bad_time(cli):
    assert_fails(cli("timeline", "--since", "yesterday-ish"), 4)


# -- namespaces ------------------------------------------------------------------------------

def test_namespaces_are_isolated(cli):
    eid = observe(cli, "Alice deployed the api", "--agent", "alice")
    assert len(cli.json("recall", "deployed", "--agent", "alice")["hits"]) == 1
    assert cli.json("show", str(eid), "--agent", "alice")["agent"] == "alice"

    assert cli.json("recall", "deployed", "--agent", "bob")["hits"] == []
    assert_fails(cli("show", str(eid), "--agent", "bob"), 3)
    assert cli("export", "--agent", "bob", check=True).out == ""
    assert cli.json("timeline", "--agent", "bob") == []
    assert cli.json("recall", "deployed")["hits"] == []  # the default namespace is another one too
    assert episode_count(cli, "--agent", "bob") == 0


def test_feedback_of_another_namespace_is_not_found(cli):
    observe(cli, "Alice deployed the api", "--agent", "alice")
    recall_id = cli.json("recall", "deployed", "--agent", "alice")["recall_id"]
    assert_fails(cli("feedback", str(recall_id), "success", "--agent", "bob"), 3)


@pytest.mark.parametrize("name", ["../x", "a b", "x" * 65, "-lead"])
def test_bad_namespace_name(cli, name):
    proc = cli("observe", "text", f"--agent={name}")
    assert_fails(proc, 4)
    assert "namespace" in proc.err


# -- configuration ---------------------------------------------------------------------------

def test_config_show_lists_every_setting(cli):
    shown = cli.json("config", "show")
    settings = shown["settings"]
    assert len(settings) > 10
    for row in settings:
        assert set(row) >= {"key", "value", "default", "source", "doc"}, row
        assert row["doc"]
    k = next(r for r in settings if r["key"] == "recall.k")
    assert k["value"] == k["default"] == 10 and k["source"] == "default"


def test_config_file_overrides_a_setting(cli, home):
    write_config(home, "[recall]\nk = 3\n")
    settings = {r["key"]: r for r in cli.json("config", "show")["settings"]}
    assert settings["recall.k"]["value"] == 3
    assert settings["recall.k"]["default"] == 10
    assert settings["recall.k"]["source"] == str(home / "strata.toml")
    assert settings["recall.mode"]["source"] == "default"
    for n in range(5):
        observe(cli, f"deploy number {n}")
    assert len(cli.json("recall", "deploy")["hits"]) == 3


COMMANDS_READING_CONFIG = [
    ("config", "show"), ("status",), ("observe", "text"), ("recall", "text"), ("show", "1"),
    ("timeline",), ("export",), ("feedback", "1", "success"), ("forget", "1"), ("restore", "1"),
    ("mark", "1", "--factual"), ("fold",), ("run",),
]


@pytest.mark.parametrize("args", COMMANDS_READING_CONFIG, ids=[" ".join(a) for a in COMMANDS_READING_CONFIG])
def test_bad_config_value_is_named_by_every_command(cli, home, args):
    write_config(home, '[recall]\nk = "x"\n')
    proc = cli(*args)
    assert_fails(proc, 7)
    assert "recall.k" in proc.err


def test_bad_config_stops_import_too(cli, home, tmp_path):
    write_config(home, '[recall]\nk = "x"\n')
    proc = cli("import", write_lines(tmp_path / "in.jsonl", [good_line(1)]))
    assert_fails(proc, 7)
    assert "recall.k" in proc.err


@pytest.mark.parametrize("text,named", [
    ("[recall]\nk = 0\n", "recall.k"),
    ("[recall]\nnope = 1\n", "recall.nope"),
    ("[recall\nk = 3\n", "not valid TOML"),
], ids=["out of range", "unknown key", "not TOML"])
def test_other_bad_configs(cli, home, text, named):
    write_config(home, text)
    proc = cli("status")
    assert_fails(proc, 7)
    assert named in proc.err


# -- init and file modes ---------------------------------------------------------------------

@pytest.mark.sqlite_only
def test_init_lays_out_a_private_home(cli, tmp_path):
    target = tmp_path / "fresh"
    proc = cli("init", str(target), check=True)
    assert str(target) in proc.out
    for d in ("capsule", "templates", "state"):
        assert (target / d).is_dir()
    assert stat.S_IMODE((target / "strata.toml").stat().st_mode) == 0o600
    assert stat.S_IMODE((target / "state").stat().st_mode) == 0o700
    assert "# recall.k = 10" in (target / "strata.toml").read_text()

    cli("observe", "first memory", check=True, env={"STRATA_HOME": str(target)})
    db = target / "state" / "memory.db"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    for extra in target.joinpath("state").glob("memory.db-*"):
        assert stat.S_IMODE(extra.stat().st_mode) == 0o600, extra


@pytest.mark.parametrize("how", ["--home", "STRATA_HOME"])
def test_init_without_a_folder_lays_out_the_home_the_other_commands_use(cli, tmp_path, how):
    target = tmp_path / "named"
    args, env = (("--home", str(target)), None) if how == "--home" else ((), {"STRATA_HOME": str(target)})
    assert cli.json("init", *args, env=env)["home"] == str(target)
    assert (target / "strata.toml").is_file() and (target / "state").is_dir()
    assert cli.json(*args, "status", env=env)["episodes"] == 0


def test_init_of_an_empty_path_is_refused(cli, tmp_path):
    here = tmp_path / "cwd"
    here.mkdir()
    proc = cli("init", "", cwd=here)
    assert proc.returncode != 0 and "empty path" in proc.err
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("how", ["--home", "STRATA_HOME"])
@pytest.mark.sqlite_only
def test_a_mistyped_home_is_refused_not_made(cli, home, tmp_path, how):
    cli("observe", "kept in the real home", check=True)
    typo = tmp_path / "hoem"
    args, env = (("--home", str(typo)), None) if how == "--home" else ((), {"STRATA_HOME": str(typo)})
    for command in (("recall", "kept"), ("observe", "lost in a typo"), ("status",), ("run",)):
        proc = cli(*args, *command, env=env)
        assert_fails(proc, 7)
        assert f"no strata home at {typo}" in proc.err and f"strata init {typo}" in proc.err
    assert not typo.exists()
    assert f"STRATA_HOME={typo}" in cli("init", str(typo), check=True).out  # init says how to use it
    assert cli.json(*args, "status", env=env)["episodes"] == 0


def test_a_table_appended_to_the_file_init_writes_is_read(cli, tmp_path):
    target = tmp_path / "fresh"
    cli("init", str(target), check=True)
    with open(target / "strata.toml", "a", encoding="utf-8") as f:
        f.write("[http]\nport = 8765\n")
    settings = {r["key"]: r for r in cli.json("config", "show", env={"STRATA_HOME": str(target)})["settings"]}
    assert settings["http.port"]["value"] == 8765 and settings["http.port"]["source"] == str(target / "strata.toml")


def test_init_where_a_file_is_in_the_way_names_the_file(cli, tmp_path):
    """The OS says `File exists` or `Not a directory`; strata names the file that is in the way."""
    (tmp_path / "notes").write_text("x")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "capsule").write_text("x")
    for path, blocker in (("notes", "notes"), ("notes/home", "notes"), ("half", "half/capsule")):
        proc = cli("init", str(tmp_path / path))
        assert proc.returncode == 7, proc.err
        assert f"{tmp_path / blocker} is a file, not a folder" in proc.err and "File exists" not in proc.err


def test_init_keeps_an_existing_config(cli, home):
    write_config(home, "[recall]\nk = 3\n")
    result = cli.json("init", str(home))
    assert result["wrote_config"] is False
    assert (home / "strata.toml").read_text() == "[recall]\nk = 3\n"


# -- help ------------------------------------------------------------------------------------

SUBCOMMANDS = ["observe", "import", "export", "recall", "feedback", "show", "timeline", "forget", "restore",
               "mark", "init", "status", "fold", "run", "config show", "bench ingest", "bench recall",
               "bench locomo", "arena run", "arena status", "arena questions", "bench arena"]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(cli, command):
    proc = cli(*command.split(), "--help")
    assert proc.returncode == 0, proc.err
    assert proc.out.startswith(f"usage: strata {command}")
    assert "Traceback" not in proc.err


def _parsers(parser, name="strata"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child_name, child in action.choices.items():
                yield from _parsers(child, f"{name} {child_name}")


def test_no_help_says_a_python_value_is_the_default():
    """argparse's "(default: None)" tells a person nothing: a help says what leaving it out does."""
    for name, parser in _parsers(build_parser()):
        text = " ".join(parser.format_help().split())
        assert not re.search(r"\(default: (None|False|True|\[\])\)", text), name


def test_help_says_what_leaving_an_option_out_does(cli):
    text = " ".join(cli("fact", "get", "--help", check=True).out.split())
    assert "value as of this world time (default: now)" in text
    assert "ignoring what it learned later (default: everything it knows)" in text
    assert "(default: False)" not in text and "(default: None)" not in text  # --value-only, --at


def test_top_level_help_lists_commands_and_exit_codes(cli):
    proc = cli("--help")
    assert proc.returncode == 0
    assert "exit codes:" in proc.out
    said = " ".join(proc.out.split())  # each code's line is wrapped at 80 columns
    for code, meaning in EXIT_CODES.items():
        assert f"{code} {' '.join(meaning.split())}" in said, code
    for command in ("observe", "recall", "bench ingest"):
        assert command in proc.out


def test_unknown_command_is_a_usage_error(cli):
    proc = cli("frobnicate")
    assert proc.returncode == 2
    assert "Traceback" not in proc.err and proc.out == ""


def test_a_usage_error_with_json_answers_on_stdout_too(cli):
    proc = cli("recall", "x", "--mode", "sideways", "--json")
    assert proc.returncode == 2 and "--mode 'sideways' is not one strata knows" in proc.err
    answer = json.loads(proc.out)
    assert answer["error"] == "usage" and "sideways" in answer["message"] and "strata recall" in answer["hint"]


# -- status and fold -------------------------------------------------------------------------

def test_status_backlog_and_fold(cli):
    st = cli.json("status")
    assert {"episodes", "pending_access_events", "phase"} <= set(st)
    assert st["episodes"] == 0 and st["pending_access_events"] == 0 and st["phase"] == "passive"
    assert re.search(r"^by_state +—$", cli("status", check=True).out, re.M)  # an empty home: a dash, not a blank

    eid = observe(cli, "Deploy of api v2 finished")
    observe(cli, "Deploy of the worker failed")
    cli.json("recall", "deploy")
    assert cli.json("status")["pending_access_events"] == 2
    assert cli.json("show", str(eid))["pending_access_events"] == 1

    folded = cli.json("fold")
    assert folded == {"events": 2, "episodes": 2}
    assert cli.json("status")["pending_access_events"] == 0
    ep = cli.json("show", str(eid))
    assert ep["access_count"] == 1 and ep["last_access_at"] is not None
    assert cli.json("fold") == {"events": 0, "episodes": 0}


def test_human_output_of_read_commands(cli):
    eid = observe(cli, "Deploy of api v2 finished", "--kind", "event", "--at", "2026-03-01T10:00:00Z")
    cli.json("recall", "deploy")
    shown = cli("show", str(eid), check=True).out
    assert shown.startswith(f"memory #{eid} · event · active · namespace default")
    assert "Deploy of api v2 finished" in shown and "2026-03-01T10:00:00Z" in shown
    assert "2026-03-01 10:00" in cli("timeline", check=True).out
    assert "no memories in that range" in cli("timeline", "--since", "2027-01-01", check=True).out
    assert "pending_access_events  1" in cli("status", check=True).out
    assert cli("fold", check=True).out.strip() == "folded 1 access event into 1 memory"


def test_intervals_are_said_as_people_read_them_and_kept_in_seconds_in_json(cli, home):
    write_config(home, "[daemon]\nheartbeat_seconds = 5400\n")
    listing = cli("phase", "list", check=True).out
    assert re.search(r"^  heartbeat +every +90 min ", listing, re.M), listing
    assert re.search(r"^  decay +every +1 day ", listing, re.M), listing
    assert re.search(r"^  dossiers +every +4 h ", listing, re.M), listing
    assert " s " not in listing and "86400" not in listing
    assert "every  90 min" in cli("status", check=True).out
    phases = {p["phase"]: p for p in cli.json("phase", "list")["phases"]}
    assert phases["heartbeat"]["every_seconds"] == 5400 and phases["decay"]["every_seconds"] == 86400
    shown = cli("config", "show", check=True).out
    assert re.search(r"^daemon\.heartbeat_seconds +5400 \(90 min\) ", shown, re.M), shown
    assert re.search(r"^daemon\.decay_interval_hours +24\.0 \(1 day\) ", shown, re.M), shown
    assert re.search(r"^recall\.k +10 +default$", shown, re.M), shown  # not a length of time


PYTHON_WORDS = re.compile(r"\b(None|True|False)\b|\[\]|\{\}")


def test_human_output_says_yes_no_and_a_dash_not_python_values(cli):
    eid = observe(cli, "Deploy of api v2 finished", "--context", "environment=prod", "--context", "goal=ship")
    shown = cli("show", str(eid), check=True).out
    assert not PYTHON_WORDS.search(shown), shown
    for field, value in (("source", "—"), ("session", "—"), ("factual", "no"), ("last_access_at", "—"),
                         ("context", "environment=prod, goal=ship"), ("eligible", "yes"), ("reason", "—")):
        assert re.search(rf"^ +{field} +{value}$", shown, re.M), (field, shown)
    assert cli("mark", str(eid), "--factual", check=True).out.strip() == f"memory {eid}: factual = yes"
    ep = cli.json("show", str(eid))
    assert ep["factual"] is True and ep["source"] is None and ep["scores"]["reason"] is None

    settings = cli("config", "show", check=True, env={"COLUMNS": "160"}).out  # wide: a row a line
    assert not PYTHON_WORDS.search(settings), settings
    for key, value in (("recall.vector_cache", "yes"), ("arena.enabled", "yes"), ("agent.shared", "—"),
                       ("embedding.model", "unset \\(minilm\\)"), ("store.kinds", "observation, event, decision")):
        assert re.search(rf"^{re.escape(key)} +{value}", settings, re.M), (key, settings)
    assert not PYTHON_WORDS.search(cli("status", check=True).out)
    # a value longer than its column (the kinds) still stands apart from its source; an empty one is "—"
    for line in settings.splitlines()[2:]:
        assert re.search(r"\S  +(default|strata\.toml|environment|[\w.]+)( \(experimental\))?$", line), line
    assert re.search(r"^store\.kinds +observation, .* fact  +default$", settings, re.M), settings
    assert re.search(r"^store\.url +— +default$", settings, re.M), settings
    # At 80 columns the kinds wrap in their column, the source after their first part.
    narrow = cli("config", "show", check=True, env={"COLUMNS": "80"}).out
    assert re.search(r"^store\.kinds +observation, .*  default\n {20,}\S.* fact$", narrow, re.M), narrow



def test_a_memory_s_history_and_a_table_of_tables_read_as_words_not_json(cli, home):
    """The audit entries `strata show` lists, and a setting that is a table of tables, as the
    guide says text shows them: key=value, yes/no, "—" and times, never JSON."""
    eid = observe(cli, "Bridge: DOWN", "--kind", "event")
    cli("mark", str(eid), "--factual", check=True)
    cli("forget", str(eid), check=True)
    history = cli("show", str(eid), check=True).out.split("  history:", 1)[1]
    assert not re.search(r'[{}"]|\bnull\b|\btrue\b|\bfalse\b', history), history
    assert "kind=event, source=—, hash=" in history and "from=active, to=archived, reason=—" in history
    write_config(home, '[loop.steps.mail]\ncommand = ["check-mail", "--new"]\ntimeout_seconds = 30\n')
    shown = cli("config", "show", check=True).out  # at 80 columns: the value wraps in its column
    row = shown[shown.index("\nloop.steps"):].split("\n")[1:3]
    assert re.match(r"loop\.steps +mail=\(command=\(check-mail, +strata\.toml$", row[0]), row
    assert re.match(r" {30,}--new\), timeout_seconds=30\)$", row[1]), row

# -- storage failures ------------------------------------------------------------------------

@pytest.mark.sqlite_only
def test_corrupt_database(cli, home):
    (home / "state" / "memory.db").write_bytes(b"this is not an SQLite database\n" * 200)
    for args in (("status",), ("observe", "text"), ("recall", "text")):
        proc = cli(*args)
        assert_fails(proc, 6)
        assert "backup" in proc.err


@pytest.mark.sqlite_only
def test_read_only_home(cli, home):
    observe(cli, "written while the home was writable")
    state, db = home / "state", home / "state" / "memory.db"
    os.chmod(db, 0o400)
    os.chmod(state, 0o500)
    try:
        if os.access(db, os.W_OK) or os.access(state, os.W_OK):
            pytest.skip("running as root: permissions do not make the home read-only")
        proc = cli("observe", "cannot be stored")
        assert_fails(proc, 6)
        assert "read-only" in proc.err or "cannot open" in proc.err
    finally:
        os.chmod(state, 0o700)
        os.chmod(db, 0o600)
    assert episode_count(cli) == 1


def test_common_options_work_before_or_after_the_command(cli):
    first = cli("--agent", "alice", "--json", "observe", "alice's note about Lisbon")
    assert first.returncode == 0 and json.loads(first.out)["status"] == "created"
    assert cli("--agent", "alice", "recall", "Lisbon", "--json").returncode == 0
    after = json.loads(cli("recall", "Lisbon", "--agent", "alice", "--json").out)
    before = json.loads(cli("--json", "--agent", "alice", "recall", "Lisbon").out)
    default = json.loads(cli("recall", "Lisbon", "--json").out)
    assert len(after["hits"]) == len(before["hits"]) == 1 and default["hits"] == []


def test_the_parser_is_built_without_importing_any_command_s_code():
    # Each command imports what it needs when it runs: `strata --help` and the parsing of every
    # command line load no layer, no store and no facade.
    code = ("import sys; from strata_daemon.faces.cli.main import build_parser; build_parser(['status']); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('strata_daemon.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    heavy = [m for m in loaded if m.startswith(("strata_daemon.app.memory", "strata_daemon.store.db", "strata_daemon.recall",
                                               "strata_daemon.embedding", "strata_daemon.facts", "strata_daemon.graph"))]
    assert heavy == [] and "strata_daemon.faces.cli.io_cmds" in loaded


def test_storing_and_reading_a_fact_load_no_numpy_templates_or_models(home):
    # What starting a command costs is most of what an agent that shells out each turn waits:
    # numpy alone was a fifth of `strata observe` (`strata bench cli` has the figures).
    code = ("import sys; from strata_daemon.faces.cli.main import main; code = main(sys.argv[1:]); "
            "print(' '.join(sorted(m for m in ('numpy', 'jinja2', 'onnxruntime', 'sqlite_vec', 'textual', 'mcp', "
            "'starlette', 'strata_daemon.recall.api', 'strata_daemon.capsule.api') if m in sys.modules))); "
            "sys.exit(code)")
    for args in (("observe", "a note to keep"), ("fact", "set", "bridge", "UP"), ("fact", "get", "bridge")):
        proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "STRATA_HOME": str(home)})
        assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "", (args, proc.stdout, proc.stderr)


@pytest.mark.parametrize("args, said", [
    (("recal", "bridge"), "command 'recal' is not one strata knows; did you mean 'recall'?"),
    (("fact", "gett", "bridge"), "action 'gett' is not one strata knows; did you mean 'get'?"),
    (("recall", "--mode", "fsat", "bridge"), "--mode 'fsat' is not one strata knows; did you mean 'fast'?"),
    (("zzzz",), "command 'zzzz' is not one strata knows (--help lists them)"),
    (("phase", "run", "nope"), "phase 'nope' is not one strata knows (--help lists them)"),
    (("recall", "bridge", "--explian"), "unrecognized arguments: --explian; did you mean --explain?"),
    (("observe", "x", "--imortance", "0.5"), "did you mean --importance or --source?"),
    (("recall", "x", "--explain", "--explainn"), "unrecognized arguments: --explainn"),  # not what was given
])
def test_a_mistyped_command_or_choice_gets_the_nearest_ones(cli, args, said):
    proc = cli(*args)  # argparse listed all 33 commands and no suggestion
    assert proc.returncode == 2 and proc.err.splitlines()[-1].endswith(said), proc.err
    if "unrecognized" in said:  # the usage shown is the command's, not strata's
        assert proc.err.startswith(f"usage: strata {args[0]} "), proc.err


def test_what_a_person_types_the_way_people_do_is_taken_or_gets_the_nearest(cli, home):
    observe(cli, "Bridge: DOWN", "--kind", "Event")  # kinds are lower-case; a capital is no other kind
    r = cli.json("recall", "bridge", "-k", "1", "--kind", "EVENT", "--no-daemon")
    assert len(r["hits"]) == 1 and r["hits"][0]["kind"] == "event"
    (home / "strata.toml").write_text("[recal]\nk = 5\n")
    r = cli("status")
    assert r.returncode == 7 and "unknown setting 'recal.k'" in r.err and "did you mean recall.k?" in r.err


def test_a_hit_that_leads_for_the_fact_it_states_is_marked_so_order_and_scores_agree(cli):
    # "Backup: FAILED" states the fact `backup`, which the question names: it leads, with a lower
    # score than the exact match below it. Printed without a word, the order looked wrong.
    for text in ("Backup: FAILED", "TODO: migrate the nightly backup job to the new NAS before Friday"):
        observe(cli, text)
    r = cli.json("recall", "--no-daemon", "--mode", "fast", "migrate the nightly backup job")
    assert [(h["content"][:6], h.get("led", False)) for h in r["hits"]] == [("Backup", True), ("TODO: ", False)]
    assert r["hits"][0]["score"] < r["hits"][1]["score"]
    shown = cli("recall", "--no-daemon", "--mode", "fast", "migrate the nightly backup job", check=True).out
    assert "(the first states a fact the question names and leads, marked ^" in shown
    assert re.search(r"1\. #1 +\^0\.\d{3}", shown) and re.search(r"2\. #2 +0\.\d{3}", shown), shown


def test_a_slip_a_person_makes_is_named_and_nothing_wrong_is_kept(cli, home, tmp_path):
    r = cli("fact", "set", ":::", "value")
    assert r.returncode == 4 and "has no letters or digits" in r.err
    r = cli("observe", "Migrated the wiki", "--at", "2030-01-01")
    assert r.returncode == 0 and "dated 2030-01-01, in the future" in r.err
    line = tmp_path / "one.jsonl"
    line.write_text('{"text": "hello"}\n', encoding="utf-8")
    r = cli("import", str(line))
    assert r.returncode == 4 and "an observation has no `content` (it has `text`)" in r.err


def test_fact_retract_s_at_is_when_the_fact_stopped_being_true(cli):
    """`fact retract --at` ends the value; its help said when it `became true`, as `set`'s does."""
    said = " ".join(cli("fact", "retract", "--help", check=True).out.split())
    assert "when it stopped being true" in said and "became true" not in said
    assert "when it became true" in " ".join(cli("fact", "set", "--help", check=True).out.split())


def test_feedback_s_help_says_what_used_changes(cli):
    """The outcome is shared by every hit only without --used; the help said it always was."""
    said = " ".join(cli("feedback", "--help", check=True).out.split())
    assert "unless --used names the ones that mattered" in said and "a success goes to these alone" in said
    marked = " ".join(cli("mark", "--help", check=True).out.split())
    assert "undo --factual" in marked and "never recalled" in marked


def test_hints_name_commands_that_work_and_config_show_takes_a_key(cli):
    """What a new user met: each hint names a command that does what it says."""
    proc = cli("dossier", "show", "nosuch")
    assert proc.returncode == 3 and "strata dossier add nosuch` starts one" in proc.err
    proc = cli("feedback", "9999", "success")
    assert "recall_id" in proc.err
    cli("fact", "set", "bridge", "UP", check=True)
    proc = cli("fact", "get", "bridge", "--known-at", "30d ago")
    assert "as known at" in proc.err and "had no value" in proc.err
    assert [r["key"] for r in cli.json("config", "show", "recall.k")["settings"]] == ["recall.k"]
    proc = cli("config", "show", "recal.k")
    assert proc.returncode == 4 and "did you mean recall.k" in proc.err


# A Ctrl-C a few milliseconds in, while the command's modules are still loading (a thread sends
# it as the entry point starts): before entry.py, a traceback and death by the signal.
_EARLY_CTRL_C = """
import os, signal, sys, threading
from strata_daemon.faces.cli import entry
sys.argv = ["strata", "recall", "bridge", "--no-daemon"]
threading.Timer(%s, os.kill, (os.getpid(), signal.SIGINT)).start()
sys.exit(entry.main())
"""


@pytest.mark.parametrize("delay", [0.002, 0.01, 0.03])
def test_a_ctrl_c_while_the_command_loads_ends_it_without_a_traceback(home, delay):
    run = subprocess.run([sys.executable, "-c", _EARLY_CTRL_C % delay], capture_output=True, text=True,
                         env={**os.environ, "STRATA_HOME": str(home)}, timeout=120)
    assert "Traceback" not in run.stderr, run.stderr
    assert (run.returncode, run.stderr) == (130, "strata: interrupted\n")


def test_a_recall_in_a_namespace_that_holds_nothing_says_so(cli):
    cli("observe", "bridge is up", check=True)
    got = cli.json("--agent", "defualt", "recall", "bridge")
    assert got["hits"] == [] and got["warnings"][-1] == (
        "namespace 'defualt' holds no memories yet; this home's namespace is 'default' (agent.namespace)")
    assert not any("holds no memories" in w for w in cli.json("recall", "bridge")["warnings"])


def test_an_out_of_range_count_s_json_error_has_a_hint(cli):
    got = cli("recall", "bridge", "-k", "0", "--json")
    assert got.returncode == 4 and json.loads(got.out)["hint"].startswith("ask for 1 to 1000 memories")
