"""The README is a short front door and docs/ holds the depth: keep both in step with the code.
(docs/reference/ is generated and checked by test_reference.py.)"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from strata_daemon.config.settings import SETTINGS
from strata_daemon.errors import EXIT_CODES

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
WRITTEN = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]  # not the generated reference


def section(text: str, heading: str) -> str:
    """The text under the first heading line that contains `heading`, up to the next heading of its level or above."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#") and heading in line:
            level = len(line) - len(line.lstrip("#"))
            body = []
            for following in lines[i + 1:]:
                hashes = len(following) - len(following.lstrip("#"))
                if following.startswith("#") and hashes <= level and following[hashes:hashes + 1] == " ":
                    break
                body.append(following)
            return "\n".join(body)
    raise AssertionError(f"no heading containing {heading!r}")


def fenced(text: str, lang: str) -> str:
    return text.split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def test_the_readme_is_a_front_door():
    assert len(README.splitlines()) <= 200


def test_every_exit_code_is_documented():
    operations = (DOCS / "operations.md").read_text(encoding="utf-8")
    for code in EXIT_CODES:
        assert f"| {code} |" in operations, code


def test_readme_names_the_two_commands_and_ci_calls_the_test_one():
    assert "make run" in README and "make test" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in ci


def run_example(block: str, home: Path, where: str) -> None:
    assert '"/path/to/home"' in block
    exec(compile(block.replace('"/path/to/home"', repr(str(home))), where, "exec"), {})


def test_the_python_api_example_runs(home, capsys):
    """The guide's example, run as written against a fresh home."""
    guide = (DOCS / "guide.md").read_text(encoding="utf-8")
    run_example(fenced(section(guide, "### Python API"), "python"), home, "docs/guide.md")
    printed = capsys.readouterr().out
    assert "Decided to move nightly backups to 03:00" in printed and printed.rstrip().endswith("03:00-04:00")


def test_the_guide_s_import_line_imports_as_written(cli, tmp_path):
    guide = (DOCS / "guide.md").read_text(encoding="utf-8")
    line = fenced(section(guide, "## Observing"), "json")
    (tmp_path / "notes.jsonl").write_text(line, encoding="utf-8")
    assert cli.json("import", str(tmp_path / "notes.jsonl"))["created"] == 1
    shown = cli.json("show", "1")
    assert (shown["kind"], shown["source"], shown["context"]) == ("event", "person:alice", {"environment": "prod"})


def test_the_readme_python_example_runs(home, capsys):
    run_example(fenced(section(README, "### Python"), "python"), home, "README.md")
    assert capsys.readouterr().out.strip() == "Decided to move nightly backups to 03:00"


def test_the_readme_http_example_names_the_default_socket():
    default = next(s.default for s in SETTINGS if s.key == "http.socket")
    assert f"$STRATA_HOME/{default}" in fenced(section(README, "### HTTP"), "sh")


@pytest.mark.slow
def test_the_readme_quickstart_runs_as_written(tmp_path):
    """Each command of the quickstart, with ~/agent in a temporary folder, exits 0."""
    agent = tmp_path / "agent"
    env = {k: v for k, v in os.environ.items() if k != "STRATA_HOME"}
    env["HOME"] = str(tmp_path)
    outputs = []
    for line in fenced(section(README, "## Quickstart"), "sh").splitlines():
        line = line.split("#", 1)[0].strip().replace("~/agent", str(agent))
        if line.startswith("export STRATA_HOME="):
            env["STRATA_HOME"] = line.split("=", 1)[1]
            continue
        for command in filter(None, (c.strip() for c in line.split("&&"))):
            args = shlex.split(command)
            assert args[0] == "strata", command
            proc = subprocess.run([sys.executable, "-m", "strata_daemon", *args[1:]], env=env, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, (command, proc.stderr)
            outputs.append(proc.stdout)
    assert f"export STRATA_HOME={agent}" in outputs[0]  # what the README says `strata init` prints
    assert "bridge = DOWN" in outputs[3] and "- Bridge: UP" in outputs[-1]


def anchors(path: Path) -> set[str]:
    """The heading anchors a code forge makes: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    for line in text.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_every_link_between_the_documents_resolves():
    broken = []
    for path in WRITTEN:
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            if not resolved.exists():
                broken.append(f"{path.name}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_documents_name_mechanisms_not_internal_design_notes():
    for path in WRITTEN:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bseeds? \d{3}", text, re.I), path.name
        # the code is in daemon/strata_daemon/ and the benchmark harness in daemon/strata_bench/
        assert not re.search(r"(?<!\w)daemon/(?!strata_daemon|strata_bench)\w+[/.]", text), path.name
