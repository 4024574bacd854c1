"""The README documents every setting and exit code with its real default; keep them in step."""

import json
from pathlib import Path

from strata_daemon.errors import EXIT_CODES
from strata_daemon.settings import SETTINGS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented_with_its_default():
    for s in SETTINGS:
        if s.default is None:
            default = "(preset)" if s.kind is float else "(unset)"
        else:
            default = json.dumps(s.default).replace("|", "\\|")  # a pipe would end the table cell
        assert f"| `{s.key}` | `{default}` |" in README, s.key


def test_every_exit_code_is_documented():
    for code in EXIT_CODES:
        assert f"| {code} |" in README, code


def test_readme_names_the_two_commands_and_ci_calls_the_test_one():
    assert "make run" in README and "make test" in README
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def test_the_python_api_example_runs(home, capsys):
    """The README's example, run as written against a fresh home."""
    block = README.split("### Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    assert '"/path/to/home"' in block
    exec(compile(block.replace('"/path/to/home"', repr(str(home))), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "Decided to move nightly backups to 03:00" in printed and printed.rstrip().endswith("03:00-04:00")
