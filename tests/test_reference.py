"""docs/reference/ is generated from the code: each file equals what strata_bench.reference
writes, and the generators leave out no command, setting, operation or tool."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from strata_bench.reference import generate as reference
from strata_bench.reference.markdown import REGENERATE as COMMAND
from strata_daemon.config.load import render_default_toml
from strata_daemon.config.settings import SETTINGS
from strata_daemon.faces.cli.main import GROUPS, build_parser
from strata_daemon.faces.http.openapi import document

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "reference"
REGENERATE = f".venv/bin/{COMMAND}"


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return {name: generate() for name, generate in reference.FILES.items()}


@pytest.mark.parametrize("name", sorted(reference.FILES))
def test_reference_file_is_what_the_code_generates(name, generated):
    path = DOCS / name
    assert path.is_file(), f"docs/reference/{name} is missing: run `{REGENERATE}`"
    assert path.read_text(encoding="utf-8") == generated[name], (
        f"docs/reference/{name} is out of date with the code: run `{REGENERATE}` and commit the result")


def test_generation_is_repeatable(generated):
    assert {name: generate() for name, generate in reference.FILES.items()} == generated


def _command_paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                out.append(path + (name,))
                out += _command_paths(child, path + (name,))
    return out


def test_every_command_and_option_is_in_cli_md(generated):
    text = generated["cli.md"]
    headings = set(re.findall(r"^#{2,4} (strata .+)$", text, re.M))
    parser = build_parser()
    aliases = {"web neighbours"}  # documented under `strata web neighbors`, as "also spelled"
    for path in _command_paths(parser):
        name = " ".join(path)
        if name in aliases:
            assert f"`strata {name}`" in text
        else:
            assert f"strata {name}" in headings, name
    for _, mod in GROUPS:
        for name in mod.COMMANDS:
            assert f"strata {name}" in headings, name

    def options(p: argparse.ArgumentParser):
        for action in p._actions:
            if action.help != argparse.SUPPRESS:  # hidden options stay hidden
                yield from action.option_strings
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    yield from options(child)

    for option in set(options(parser)) - {"-h", "--help"}:
        assert f"`{option}" in text or f" {option}" in text, option


def test_every_setting_is_in_config_md(generated):
    text = generated["config.md"]
    for s in SETTINGS:
        assert f"\n### {s.key}\n" in text, s.key
        assert f"## [{s.section}]" in text, s.section


def test_every_http_operation_and_mcp_tool_is_documented(generated):
    for path, item in document()["paths"].items():
        for method, op in item.items():
            assert f"### {op['operationId']}\n\n`{method.upper()} {path}`" in generated["http.md"]
    tools = re.findall(r"^### (\w+)$", generated["mcp.md"], re.M)
    for expected in ("observe", "recall", "feedback", "forget", "fact_get", "fact_set", "capsule_get", "timeline"):
        assert expected in tools
    assert "strata://capsule" in generated["mcp.md"] and "strata://dossier/{topic}" in generated["mcp.md"]


def test_no_internal_design_document_is_cited(generated):
    """Users do not have the internal design documents: what they read names mechanisms, not them."""
    texts = {**generated, "strata.toml": render_default_toml(),
             "openapi.json": (ROOT / "daemon" / "strata_daemon" / "faces" / "http" / "openapi.json").read_text()}
    for name, text in texts.items():
        assert "seed 0" not in text.lower() and not re.search(r"seeds? ?-?\d{3}", text, re.I), name


def test_check_mode_reports_a_stale_file(tmp_path, capsys):
    assert reference.main([str(tmp_path)]) == 0
    assert reference.main([str(tmp_path), "--check"]) == 0
    (tmp_path / "cli.md").write_text("stale\n")
    assert reference.main([str(tmp_path), "--check"]) == 1
    assert "cli.md" in capsys.readouterr().err
