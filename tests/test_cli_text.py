"""Every command's text form speaks words: no Python repr (`{'key': ...}`, `None`, `True`,
`PosixPath(...)`) reaches a person, on either stream, whether the command worked or refused.
The command list is read from the parser, so a new command is run here or named below with
the reason it is not."""

from __future__ import annotations

import argparse
import json
import re

from strata_daemon.faces.cli.main import build_parser

# Long-running or process-bound commands, each run for real by its own tests.
NOT_HERE = {
    "run": "the daemon (test_daemon)", "serve": "the HTTP server (test_http)", "mcp": "the MCP server (test_mcp)",
    "tui": "the TUI (test_tui)", "capsule watch": "a watcher (test_capsule)",
    "reindex": "re-embeds everything (test_embedding)",
}
REPR = re.compile(r"\{'[\w ]+': |\['[^']*'(?:, |\])|(?<![\w\"'.-])(?:None|True|False)(?![\w\"'-])|"
                  r"\b(?:PosixPath|datetime\.datetime|Decimal|namespace|Namespace)\(|object at 0x|<strata_daemon\.")


def _leaves(parser: argparse.ArgumentParser, path: list[str]):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path)
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, [*path, name])


def _commands(tmp) -> list[list[str]]:
    questions = tmp / "questions.json"
    questions.write_text(json.dumps([{"question": "Why did the backup fail?", "evidence": [2]}]))
    lines = tmp / "in.jsonl"
    lines.write_text('{"content": "Imported: the printer is on floor 3"}\n')
    return [
        ["observe", "Bridge: UP"], ["import", str(lines)], ["export"], ["recall", "backup"],
        ["recall", "backup", "--explain"], ["feedback", "1", "success"], ["show", "2"], ["timeline"],
        ["forget", "3"], ["restore", "3"], ["mark", "2", "--factual"],
        ["fact", "set", "printer", "floor 3"], ["fact", "get", "bridge"], ["fact", "retract", "printer"],
        ["fact", "cas", "bridge", "UP", "DOWN"], ["fact", "list"], ["fact", "list", "--stale"],
        ["fact", "history", "bridge"], ["fact", "forget", "printer"], ["fact", "rejudge"], ["fact", "rekey"],
        ["fact", "conflicts"], ["web", "activate", "1", "2"], ["web", "commit"], ["web", "context"],
        ["web", "decay"], ["web", "neighbors", "episode:2"], ["web", "neighbours", "episode:2"],
        ["web", "spread", "episode:2"], ["web", "entities"], ["link", "2", "1"], ["related", "2"],
        ["dossier", "add", "backups"], ["dossier", "list"], ["dossier", "refresh", "backups"],
        ["dossier", "show", "backups"], ["dossier", "history", "backups"], ["dossier", "diff", "backups"],
        ["dossier", "remove", "backups"], ["capsule", "render"], ["capsule", "check"], ["capsule", "show"],
        ["capsule", "stats"], ["capsule", "overrides"], ["consolidate"], ["arena", "status"], ["arena", "run"],
        ["arena", "history"], ["arena", "questions", str(questions)], ["arena", "undo"], ["arena", "reset"],
        ["context", "why did the backup fail"], ["hook", "prompt"], ["hook", "session-start"], ["hook", "reply"],
        ["hook", "compact"], ["hook", "stop"], ["hook", "claude-code"], ["init", str(tmp / "other")],
        ["config", "show"], ["status"], ["fold"], ["embed"], ["phase", "list"], ["phase", "run", "heartbeat"],
        ["doctor"], ["backup"], ["backup", "--list"], ["store", "grant", "someone"], ["store", "revoke", "someone"],
        ["store", "roles"], ["store", "copy", str(tmp / "copy.db")], ["systemd", "print-unit", "--user"],
        ["show", "999"], ["fact", "get", "nothing-here"], ["recall", ""], ["context", "x", "--budget", "5"],
        ["encrypt", "--key-file", str(tmp / "keys" / "home.key")], ["rekey", "--key-file", str(tmp / "keys" / "new.key")],
        ["decrypt"],
    ]


def test_every_command_s_text_form_is_words_not_a_python_repr(cli, tmp_path):
    for text in ("Bridge: DOWN", "The nightly backup job failed on nas-1 at 03:00 after the disk filled up",
                 "TODO: migrate the nightly backup job to nas-2"):
        cli("observe", text, check=True)
    commands = _commands(tmp_path)
    leaves = set(_leaves(build_parser(), []))
    covered = {" ".join(argv[:n]) for argv in commands for n in (1, 2) if " ".join(argv[:n]) in leaves}
    missing = {leaf for leaf in leaves - covered - NOT_HERE.keys() if not leaf.startswith("bench ")}
    assert not missing, f"run these commands' text form here, or say why not: {sorted(missing)}"
    for argv in commands:
        stdin = json.dumps({"prompt": "the backup", "session_id": "s1"}) if argv[0] == "hook" else None
        proc = cli(*argv, input=stdin)
        for stream in (proc.out, proc.err):
            assert "Traceback" not in stream and "Error:" not in stream, (argv, stream)
            found = REPR.search(stream)
            assert found is None, f"strata {' '.join(argv)} printed {found.group(0)!r}: {stream[:600]}"


ONE_MANY = re.compile(r"(?<![\d.,])1 (?:[a-z]+ )?(?:memories|facts|hits|candidates|lines|edges|links|items|versions|"
                      r"sources|topics|values|entries|errors|events|questions|pulls|arms|changes|repeats|tables)\b"
                      r"|\w\(s\)")


def test_a_count_of_one_reads_as_one_thing(cli, tmp_path):
    """`1 hit of 1 candidate`, not `1 hits of 1 candidates`: each count agrees with its noun."""
    lines = tmp_path / "one.jsonl"
    lines.write_text('{"content": "Imported: the printer is on floor 3"}\n{"kind": "note"}\n')
    cli("observe", "Bridge: DOWN", check=True)
    cli("capsule", "render", check=True)
    assert "1 memory in `default`" in cli("capsule", "show", check=True).out
    runs = [["recall", "bridge"], ["feedback", "1", "success"], ["import", str(lines)],
            ["import", str(lines), "--skip-bad"], ["export", "-o", str(tmp_path / "out.jsonl")],
            ["capsule", "render"], ["capsule", "check"], ["capsule", "stats"], ["status"], ["fold"],
            ["web", "activate", "1"], ["web", "commit"], ["web", "neighbors", "episode:1"],
            ["dossier", "add", "bridge"], ["dossier", "refresh", "bridge"], ["dossier", "history", "bridge"],
            ["dossier", "list"], ["fact", "set", "gate code", "1234"], ["fact", "forget", "gate code"],
            ["forget", "--matching", "printer"], ["forget", "--matching", "printer", "--yes"]]
    for argv in runs:
        proc = cli(*argv)
        for stream in (proc.out, proc.err):
            found = ONE_MANY.search(stream)
            assert found is None, f"strata {' '.join(argv)} printed {found.group(0)!r}: {stream[:600]}"
    assert "1 hit of 1 candidate ·" in cli("recall", "bridge", "--mode", "fast", check=True).out


def test_nothing_reads_as_one_dash_in_every_text_form(cli):
    """`—` is nothing in `show` and `status`; a fact's open end, a time never reached and an arm
    without a bound say it the same way, not `-`."""
    cli("fact", "set", "bridge", "UP", check=True)
    history = cli("fact", "history", "bridge", check=True).out.splitlines()
    current = next(line for line in history if line.startswith("*"))
    assert current.split()[3] == "—", current
    assert " - " not in current
    arms = cli("arena", "status", check=True).out
    assert " — " in arms or "—\n" in arms, arms


def test_listings_fit_an_80_column_terminal(cli):
    """Tables keep their columns at 80 columns: a long text is cut or set on a line of its own, a
    long value wraps in its column, a source moves under its row."""
    long = ("The nightly backup job failed on nas-1 at 03:00 after the disk filled up and the operator on call "
            "was paged twice before anyone noticed the snapshot schedule had doubled")
    cli("observe", long, check=True)
    cli("observe", "Bridge: DOWN", check=True)
    cli("observe", "Bridge: UP", check=True)
    cli("fact", "set", "gateway port", "8080", "--source", "person:ops", check=True)
    cli("fact", "set", "gateway port", "8443", "--source", "person:bob", check=True)
    cli("dossier", "add", "backups", check=True)
    cli("dossier", "refresh", "backups", check=True)
    runs = [["timeline"], ["timeline", "--all-states"], ["recall", "backup"], ["recall", "backup", "--explain"],
            ["config", "show"], ["capsule", "stats"], ["fact", "conflicts"], ["fact", "history", "bridge"],
            ["fact", "list"], ["dossier", "history", "backups"]]
    for argv in runs:
        out = cli(*argv, check=True, env={"COLUMNS": "80"}).out
        wide = [line for line in out.splitlines() if len(line) > 80 and str(cli.home) not in line]
        assert not wide, f"strata {' '.join(argv)}: {wide}"
    assert "The nightly backup job failed" in cli("timeline", check=True, env={"COLUMNS": "80"}).out
    assert "was paged twice before anyone" in cli("timeline", check=True, env={"COLUMNS": "200"}).out


def test_a_hint_fits_the_case_it_is_given_for(cli, tmp_path):
    """What a new user's walk found: hints that sent them to a command that fails, or answered
    another question than the one asked."""
    bare = cli("fact")  # no action: which there are
    assert bare.returncode == 2 and "required: ACTION (one of: set, get" in bare.err, bare.err
    early = cli("--allow-purge", "mcp", input="")  # a command's own option, before its name
    assert early.returncode == 2 and "it goes after `strata mcp` (`strata mcp --allow-purge`)" in early.err
    typo = tmp_path / "typo.jsonl"  # a misspelt field would drop its value: refused, with the field it is near
    typo.write_text('{"content": "imported with a typo", "knd": "event"}\n{"content": "x", "old_field": 1}\n')
    bad = cli("import", str(typo))
    assert bad.returncode == 4 and "line 1: no field `knd`; did you mean `kind`?" in bad.err and "line 2" not in bad.err
    afile = tmp_path / "notes.jsonl"
    afile.write_text("{}\n")
    wrong = cli("--home", str(afile), "status")
    assert wrong.returncode == 7 and "is a file, not a strata home" in wrong.err and f"init {afile}" not in wrong.err
    both = cli("forget", "1", "--matching", "hi")
    assert both.returncode == 4 and "not both" in both.err
    folder = cli("backup", "--restore", str(tmp_path))
    assert folder.returncode == 4 and "is a folder, not a backup" in folder.err and "backup --list" in folder.err
    assert "`strata timeline` lists" in cli("forget", "42").err
    assert cli("timeline", check=True).out.startswith("no memories (active; --all-states")
    assert cli("timeline", "--since", "1 day ago", check=True).out.startswith("no memories in that range")
    first = cli.json("observe", "The spare key is under the blue pot")["id"]
    cli("forget", str(first), check=True)
    found = cli("recall", "spare key blue pot", "--include-archived", check=True).out
    assert re.search(rf"#{first} .* archived$", found, re.M), found
    status = cli("status", check=True).out
    assert re.search(r"^database_bytes +\d{1,3}(,\d{3})+$", status, re.M), status
    stats = cli("capsule", "stats", check=True).out
    assert ":1" not in stats and "0." not in stats.split("from", 1)[1], stats


def test_related_shows_each_memory_by_its_words(cli):
    for text in ("Bridge: DOWN on gw-02 after the storm", "Restarted the bridge service on gw-02, it came back"):
        cli("observe", text, check=True)
    out = cli("related", "1", "--threshold", "0.01", check=True).out
    assert re.search(r"^  0\.\d{3}  #2 Restarted the bridge service on gw-02, it came back\n +via episode:1 → ", out,
                     re.M), out


def test_a_line_longer_than_the_terminal_wraps_between_words_with_its_indent():
    from strata_daemon.faces.cli.output import fit

    said = "  fix: start it: `strata run`, or as a service (`strata systemd print-unit --user` prints its unit)"
    lines = fit(f"ok    short line\n{said}", 60).splitlines()
    assert lines[0] == "ok    short line" and all(len(line) <= 60 for line in lines)
    assert lines[1].startswith("  fix: start it:") and lines[2].startswith("    ") and " ".join(
        part.strip() for part in lines[1:]) == said.strip()
    assert fit("a-very-long-identifier-with-no-spaces-at-all-" * 3, 40).count("\n") == 0  # never cut inside a word


def test_every_command_s_help_fits_80_columns(cli):
    leaves = sorted(leaf for leaf in _leaves(build_parser(), []) if not leaf.startswith("bench"))
    wide = []
    for leaf in ["", *leaves]:
        out = cli(*leaf.split(), "--help", env={"COLUMNS": "80"}, process=False).out
        wide += [f"{leaf}: {line}" for line in out.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide[:10])


def test_a_command_s_help_leaves_out_the_options_it_refuses(cli):
    assert "--scope" not in cli("init", "--help", process=False).out
    assert "--scope" not in cli("systemd", "print-unit", "--help", process=False).out
    assert "--json" not in cli("tui", "--help", process=False).out
    recall = cli("recall", "--help", process=False).out
    assert "--scope" in recall and "--json" in recall  # the options shared by every command stay shown
    refused = cli("init", "--scope", "team", process=False)
    assert refused.returncode == 2 and "--scope does not apply to `strata init`" in refused.err
