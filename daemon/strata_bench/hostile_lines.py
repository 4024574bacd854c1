"""More of the adversarial corpus for the faces a person or a loop drives: command lines (every
command and its options: wrong types and ranges, options where values go, paths that are not
what they should be, wrong namespaces), commands run with a standard stream closed or full,
hook calls (every event, broken JSON, wrong types, huge fields, special files as the
transcript), strata.toml, the capsule file and import files. Each must be refused or answered
as the face says (a hook: exit 0) without a traceback, and none may change what the home holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from strata_bench.damage import _edit, _write
from strata_bench.procs import child_env

N23 = "9" * 23  # past 2^63

# Command lines that must be refused: an exit code of 2 or more, never 0 or 1.
CLI_MORE: list[list[str]] = [
    ["dossier", "show", "nope", "--version", "-1"], ["dossier", "add", "ok topic", "--facts", ",,,"],
    ["dossier", "remove", "x", "--matching", "yy"], ["dossier", "diff", "never", "--from", "2", "--to", "1"],
    ["dossier", "refresh"], ["capsule", "overrides", "--clear", "0"], ["capsule", "overrides", "--clear", N23],
    ["capsule", "render", "--bogus"], ["capsule", "nope"],
    ["backup", "--prune-containing", "0"], ["backup", "--prune-containing", N23], ["backup", "--restore", "/"],
    ["backup", "--restore", ""], ["backup", "--restore", "/proc/self/mem"], ["backup", "--list", "--restore", "x"],
    ["phase", "run", ""], ["phase", "run", "embed", "extra"],
    ["export", "-o", "/"], ["export", "-o", "/nonexistent/dir/x.jsonl"], ["export", "-o", ""],
    ["import", "-", "--bogus"], ["import", ""], ["import", "/etc/passwd"], ["import", "/proc/self/mem"],
    *(["hook", "claude-code", "--write", p] for p in ("/", "/dev/full", "/dev/zero", "/etc/passwd", "")),
    ["serve", "--port", N23], ["serve", "--socket", "/"], ["serve", "--socket", "/proc/x/y"],
    ["serve", "--socket", "x" * 200], ["systemd", "print-unit", "--run-as", "root\nExecStart=/bin/sh"],
    ["systemd", "nope"], ["mcp", "--bogus"], ["run", "--bogus"],
    *(["tui", "--refresh", v] for v in ("nan", "-1", "inf")),
    ["init", "/proc/nope"], ["init", "/dev/null"], ["config", "nope"],
    ["store", "grant", "x"], ["store", "copy", "nonsense"], ["arena", "questions", "/"],
    ["arena", "questions", "/proc/self/mem"], ["arena", "history", "--limit", "0"],
    ["consolidate", "--undo", "-1"], ["consolidate", "--undo", N23], ["consolidate", "--rule", ""],
    ["fact", "rejudge", "--apply", "--undo"], [], ["--", "status"],
    ["--agent", "../../etc", "status"], ["--agent", "a" * 500, "status"], ["--agent", "default\u200b", "status"],
    ["--scope", "../x", "timeline"], ["--scope", "default", "fact", "set", "k", "v"], ["--home", "/proc", "status"],
    ["recall", "--k", "0x10", "disk"], ["recall", "--k", "-0", "disk"], ["recall", "--since", "2h ago", "disk"],
    ["observe", "x", "--at", "+inf"], ["observe", "x", "--at", "0x10"], ["timeline", "--offset", "9" * 20],
    ["show", "0x1"], ["forget", "1", "--matching", "disk"], ["forget", "1", "--reason", "\udcff"],
    ["mark", "1", "--factual", "--not-factual"], ["link", "episode:abc", "episode:1"], ["web", "activate", "nope"],
    ["fact", "set", "k", "v", "--ttl", "-5d"], ["fact", "get", "canary", "--known-at", "nan"],
    ["fact", "cas", "--absent", "canary", "x"], ["context", "disk", "--budget", "1e3"],
]

# (name, command line, stdin, stream closed or "full" stdout, the exit codes it may end with).
CLOSED = {"stdin": 0, "stdout": 1, "stderr": 2}
CLI_STREAMS: list[tuple[str, list[str], bytes | None, str, tuple[int, ...]]] = [
    ("status, stdout closed", ["status"], None, "stdout", (6,)),
    ("timeline --json, stdout full", ["--json", "timeline"], None, "full", (6,)),
    ("fact get --json, stdout closed", ["--json", "fact", "get", "never"], None, "stdout", (3,)),
    ("fact get --json, stdout full", ["--json", "fact", "get", "never"], None, "full", (3,)),
    ("a usage error --json, stdout full", ["--json", "no-such-command"], None, "full", (2,)),
    ("recall -, stdin closed", ["recall", "-"], None, "stdin", (4,)),
    ("context -, stdin closed", ["context", "-"], None, "stdin", (4,)),
    ("status, stderr closed", ["status"], None, "stderr", (0,)),
    ("fact get, stderr closed", ["fact", "get", "never"], None, "stderr", (3,)),
    ("config show, stdout closed", ["config", "show"], None, "stdout", (6,)),
]
# The same for hooks, which exit 0 whatever happens.
HOOK_STREAMS: list[tuple[str, list[str], bytes | None, str, tuple[int, ...]]] = [
    (f"{event}, {stream} {'full' if stream == 'full' else 'closed'}", ["hook", event], b"the disk", stream, (0,))
    for event, stream in (("prompt", "stdout"), ("prompt", "full"), ("prompt", "stderr"), ("prompt", "stdin"),
                          ("session-start", "stdout"), ("reply", "stdin"), ("stop", "stderr"), ("compact", "stdin"))]


def run_with(home: Path, argv: list[str], stdin: bytes | None, stream: str, timeout: float) -> tuple[int | None, str]:
    """`strata ARGV` with one standard stream closed (`<&-`, `>&-`, `2>&-`) or stdout full: its exit code
    (None: no end within TIMEOUT) and its stderr (empty when stderr is the one closed)."""
    closed = CLOSED.get(stream)
    with open("/dev/full", "wb") as full:
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "strata_daemon", *argv], input=None if closed == 0 else stdin or b"",
                stdout=full if stream == "full" else subprocess.DEVNULL if closed != 1 else None,
                stderr=None if closed == 2 else subprocess.PIPE, env=child_env(home), timeout=timeout,
                preexec_fn=None if closed is None else lambda: os.close(closed))
        except subprocess.TimeoutExpired:
            return None, ""
    return proc.returncode, (proc.stderr or b"").decode("utf-8", "replace")


J = b'{"session_id": "s", "transcript_path": "%s"}'
# (name, event and arguments, stdin), as damage.HOOK_CASES; "FIFO", "ZERO" (a link to /dev/zero),
# "LINKED" (a link to the FIFO) and "DIR" stand for paths the run makes.
HOOK_MORE: list[tuple[str, list[str], bytes]] = [
    ("an event strata does not know", ["nope"], b"x"),  # a hook exits 0 whatever it is given
    *((f"prompt --session {s[:20]!r}", ["prompt", "--session", s], b"the disk") for s in (
        "../../../etc/passwd", "x" * 10_000, "\udcff", "--budget")),
    *((f"prompt {' '.join(a)[:30]}", ["prompt", *a], b"the disk") for a in (
        ["--budget", "9" * 5000], ["--agent", "CAPSULE"], ["--home", "/dev/null"], ["--scope", "team"],
        ["--", "--budget"])),
    *((f"prompt, {name}", ["prompt"], stdin) for name, stdin in (
        ("session a number", b'{"prompt": "disk", "session_id": 5}'),
        ("session null", b'{"prompt": "disk", "session_id": null}'),
        ("session an object", b'{"prompt": "disk", "session_id": {"a": 1}}'),
        ("session a lone surrogate", b'{"prompt": "disk", "session_id": "\\ud800"}'),
        ("session of 100 KB", b'{"prompt": "disk", "session_id": "' + b"s" * 100_000 + b'"}'),
        ("prompt a list", b'{"prompt": ["a"]}'),
        ("a NUL escape", b'{"prompt": "a\\u0000b"}'), ("FTS syntax", b'{"prompt": "NEAR(disk OR \\"x* -y ^z"}'),
        ("direction marks", b'{"prompt": "\\u202e\\u200b\\u0301"}'),
        ("80 KB of escapes", b'{"prompt": "' + b"\\u00e9" * 40_000 + b'"}'),
        ("JSON 100,000 deep", b"[" * 100_000 + b"]" * 100_000), ("a key twice", b'{"prompt": "disk", "prompt": 5}'),
        ("a number of 5,000 digits", b'{"prompt": 1' + b"0" * 5000 + b"}"), ("NUL bytes", b"\x00" * 1000))),
    ("reply --session ../x", ["reply", "--session", "../x"], b"#1 was used"),
    *((f"reply, {name}", ["reply"], stdin) for name, stdin in (
        ("ids past 2^63", b"#99999999999999999999999 #-1 #0"), ("an id of 5,000 digits", b"#" + b"9" * 5000),
        ("5 MB", b"x" * (5 << 20)))),
    ("session-start --agent ../x", ["session-start", "--agent", "../x"], b""),
    ("session-start --session 0xff", ["session-start", "--session", "\udcff"], b""),
    ("session-start, 5 MB", ["session-start"], b"x" * (5 << 20)),
    *((f"{e}, transcript {name}", [e], J % t) for e, name, t in (
        ("stop", "a folder", b"DIR"), ("stop", "a link to /dev/zero", b"ZERO"),
        ("compact", "a link to a FIFO", b"LINKED"),
        ("stop", "/proc/self/mem", b"/proc/self/mem"), ("compact", "/dev/stdin", b"/dev/stdin"),
        ("stop", "/dev/tty", b"/dev/tty"), ("compact", "/proc/self/fd/0", b"/proc/self/fd/0"),
        ("stop", "with a NUL", b"a\\u0000b"), ("compact", "a lone surrogate", b"\\ud800"),
        ("stop", "of 5,000 letters", b"x" * 5000), ("compact", "/sys/kernel", b"/sys/kernel"))),
    ("stop, transcript a list", ["stop"], b'{"session_id": "s", "transcript_path": ["a"]}'),
    ("compact, session a climb", ["compact"], b'{"session_id": "../../x", "transcript_path": "/nonexistent"}'),
]


def hook_paths(work: Path) -> dict[bytes, bytes]:
    """The special files HOOK_MORE names, made under WORK."""
    fifo, zero, linked = work / "transcript.fifo", work / "zero.link", work / "fifo.link"
    if not fifo.exists():
        os.mkfifo(fifo)
    for link, target in ((zero, "/dev/zero"), (linked, fifo)):
        if not link.is_symlink():
            link.symlink_to(target)
    return {b'"DIR"': b'"%s"' % str(work).encode(), b'"ZERO"': b'"%s"' % str(zero).encode(),
            b'"LINKED"': b'"%s"' % str(linked).encode()}


CONFIGS_MORE: list[tuple[str, bytes]] = [
    ("a rule of an unclosed group", b"[facts.rules.bad]\npattern = '(unclosed'\nkey = 'x'\n"),
    ("a rule that backtracks for ever", b"[facts.rules.bad]\npattern = '(a+)+$'\nkey = 'x'\n"),
    ("a rule of an unknown field", b"[facts.rules.bad]\nnope = 1\n"),
    ("attributes of numbers", b"[facts.attributes]\nx = [1, 2]\n"),
    ("a topic named as a path", b"[dossier.topics.'../../etc']\nquery = 'x'\n"),
    ("a topic of an empty query", b"[dossier.topics.ok]\nquery = ''\n"),
    ("a loop step of no command", b"[loop.steps.x]\ncommand = ''\n"),
    ("an arm nobody knows", b"[arena]\narms = ['nope']\n"),
    ("a preset of a word", b"[arena.presets.x]\n'recall.k' = 'many'\n"),
    ("a scoring preset nobody knows", b"[scoring]\npreset = 'nope'\n"),
    ("a GPU runtime", b"[embedding]\nruntime = 'gpu'\n"),
    ("a log level nobody knows", b"[daemon]\nlog_level = 'loud'\n"),
    ("a heartbeat of NaN", b"[daemon]\nheartbeat_seconds = nan\n"),
    ("recalls kept -inf days", b"[daemon]\nrecalls_keep_days"
                                                                                                    b" = -inf\n"),
    ("a budget of 1e9", b"[context]\nbudget = 1e9\n"), ("-1 recent lines", b"[capsule]\nrecent_lines = -1\n"),
    ("http enabled as a word", b"[http]\nenabled = 'yes'\n"),
    ("a MySQL store", b"[store]\nurl = 'mysql://x'\n"), ("a kind with a space", b"[store]\nkinds = ['a b']\n"),
    ("a default kind not kept", b"[store]\ndefault_kind = 'nope'\n"),
    ("an empty namespace", b"[agent]\nnamespace = ''\n"),
    ("a shared climb", b"[agent]\nshared = ['../x']\n"),
    ("a constant of a word", b"[experimental]\n'scoring.cold_factor' = 'x'\n"),
    ("a consolidation rule as a string", b"[consolidation]\nrules = 'merge'\n"),
    ("an escape sequence as a key", b"[recall]\nk = 3\n\x1b[31m = 1\n"),
    ("UTF-16", "[recall]\nk = 3\n".encode("utf-16")),
    ("CR line ends", b"[recall]\rk = 3\r"), ("a mode of a NUL escape", b'[recall]\nmode = "fast\\u0000"\n'),
    ("a mode behind a direction mark", b'[recall]\nmode = "\\u202efast"\n'), ("k a list", b"[recall]\nk = [3]\n"),
    ("a dotted k of 0", b"recall.k = 0\n"),
]

CAPSULES_MORE: list[tuple[str, object]] = [
    ("a link to itself", lambda p: (p.unlink(), p.symlink_to(p))),
    ("a link of a 4,000-letter name", lambda p: (p.unlink(), p.symlink_to("x" * 4000))),
    ("UTF-16", lambda p: p.write_bytes(p.read_text(encoding="utf-8").encode("utf-16"))),
    ("mode 000", lambda p: os.chmod(p, 0)), ("only CR", _write(b"\r\r\r")),
    ("a begin without an end", _edit(lambda t: t + "\n<!-- strata:begin facts -->\n")),
    ("an end before its begin", _edit(lambda t: t.replace("<!-- strata:begin recent -->", "<!-- strata:end recent -->",
                                                          1))),
    ("a block nobody knows", _edit(lambda t: t + "\n<!-- strata:begin nope -->\n<!-- strata:end nope -->\n")),
    ("a marker of em dashes", _edit(lambda t: t.replace("<!-- strata:end recent -->",
                                                        "<!\u2014 strata:end recent \u2014>"))),
    ("direction marks in a heading", _edit(lambda t: t.replace("## Identity", "## Iden\u200btity\u202e"))),
    ("a marker of 100 KB", _edit(lambda t: t + "\n<!-- strata:begin " + "x" * 100_000 + " -->\n")),
    ("10,000 sections", _edit(lambda t: t + "".join(f"\n## S{n}\n" for n in range(10_000)))),
    ("terminal escapes", _write(b"# Capsule\n\x1b[2J\x07\x08\n")),
]


def import_more() -> list[tuple[str, bytes]]:
    """More files `strata import` must refuse whole."""
    good = b'{"content": "an imported line that must not be stored, since the file is bad"}\n'
    lines = {
        "importance NaN": b'{"content": "x", "importance": NaN}',
        "importance Infinity": b'{"content": "x", "importance": '
                                                                                         b'Infinity}',
        "time NaN": b'{"content": "x", "at": NaN}', "time -Infinity": b'{"content": "x", "at": -Infinity}',
        "event_at a word": b'{"content": "x", "event_at": "soon"}',
        "kind a list": b'{"content": "x", "kind": ["event"]}',
        "factual a word": b'{"content": "x", "factual": "yes"}',
        "occurrences -1": b'{"content": "x", "occurrences": -1}',
        "occurrences 2^70": b'{"content": "x", "occurrences": 1180591620717411303424}',
        "a tier nobody knows": b'{"content": "x", "tier": "lukewarm"}',
        "id 2^63": b'{"content": "x", "id": 9223372036854775808}',
        "only zero-width spaces": b'{"content": "\\u200b\\u200b"}',
        "a context of 10,000 keys": b'{"content": "x", "context": {'
                                    + b",".join(b'"k%d": "v"' % i for i in range(10_000))
                                    + b"}}",
        "a context of 100 KB": b'{"content": "x", "context": {"k": "' + b"v" * 100_000 + b'"}}',
        "a NUL after the object": b'{"content": "x"}\x00', "a line separator inside": b'{"content": "x"}\xe2\x80\xa8{}',
        "content twice, the last empty": b'{"content": "x", "content": ""}',
        "session an object": b'{"content": "x", "session": {"a": 1}}',
        "importance true": b'{"content": "x", "importance": true}',
        "the year 99999": b'{"content": "x", "at": "99999-01-01"}',
        "only a NUL escape": b'{"content": "\\u0000"}', "an agent as a list": b'{"content": "x", "agent": ["default"]}',
        "a BOM mid-file": b'\xef\xbb\xbf{"content": "x"}',
    }
    return [*((name, good + line + b"\n") for name, line in lines.items()),
            ("gzip bytes", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(200))),
            ("100,000 blank lines, then a bad one", good + b"\n" * 100_000 + b"{bad\n"),
            ("UTF-16", '{"content": "x"}\n'.encode("utf-16")), ("CR line ends", b'{"content": "a"}\r{"content": ""}\r')]
