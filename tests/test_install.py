"""strata installed as a package, the way a newcomer does it: a clean clone, a wheel built from
it, a fresh virtual environment with nothing of the checkout in sight, then the first commands
and an agent's recall over MCP with the README's client configuration as pasted.

Slow (a venv with every dependency, from pip's cache when there is one); CI runs it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import REPO

pytestmark = pytest.mark.slow

# The newcomer's path, command by command (the figure: at most ten from a clean clone to an
# agent's recall over MCP; the last step is the agent's, through the README's configuration).
PATH = [
    "git clone --quiet {repo} strata",
    "{python} -m pip wheel --quiet --no-deps --wheel-dir dist ./strata",
    "{python} -m venv venv",
    "venv/bin/pip install --quiet dist/strata_daemon-0.1.0-py3-none-any.whl",
    "venv/bin/strata init agent",
    "export STRATA_HOME=$PWD/agent",
    "venv/bin/strata observe 'Ines likes green tea in the morning'",
]


def run(cmd: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The newcomer's path up to the MCP step, in a shell whose exports carry over."""
    root = tmp_path_factory.mktemp("newcomer")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STRATA_", "PYTHON", "VIRTUAL_ENV")) and k != "JOURNAL_STREAM"}
    env["XDG_DATA_HOME"] = str(root / "xdg")
    outputs = []
    for cmd in PATH:
        cmd = cmd.format(repo=REPO, python=sys.executable)
        if cmd.startswith("export "):
            name, value = cmd.removeprefix("export ").split("=", 1)
            env[name] = value.replace("$PWD", str(root))
            continue
        outputs.append(run(cmd, root, env).stdout)
    return root, env, outputs


def test_the_wheel_holds_the_shipped_files_and_nothing_of_the_checkout(installed):
    root, env, _ = installed
    with zipfile.ZipFile(next((root / "dist").glob("*.whl"))) as wheel:
        listing = wheel.namelist()
    for shipped in ("templates/capsule.md.j2", "templates/dossier.md.j2", "templates/dossier-prompt.j2",
                    "capsule/CAPSULE.md", "capsule/CAPSULE-SPEC.md", "systemd/strata.service",
                    "systemd/strata-user.service"):
        assert f"strata_daemon/shipped/{shipped}" in listing
    assert not any(name.startswith(("daemon/", "tests/", "state/")) for name in listing)
    # The benchmark harness and the reference generator are a checkout's tools, not the product.
    assert not any("strata_bench" in name or "/bench" in name or "reference" in name for name in listing)


def test_the_first_commands_work_from_the_installed_package(installed):
    root, env, outputs = installed
    assert f"export STRATA_HOME={root / 'agent'}" in outputs[-2]  # init says how to select the home
    strata = str(root / "venv" / "bin" / "strata")
    where = run(f"{strata} --json status", root / "venv", env)  # run away from the clone
    assert json.loads(where.stdout)["episodes"] == 1
    found = json.loads(run(f"{strata} --json recall 'beverage preference'", root, env).stdout)
    assert [h["content"] for h in found["hits"]] == ["Ines likes green tea in the morning"]
    run(f"{strata} fact set tea green", root, env)
    run(f"{strata} dossier add Ines", root, env)
    assert json.loads(run(f"{strata} --json dossier refresh Ines", root, env).stdout)["version"] == 1
    assert "green tea" in json.loads(run(f"{strata} --json dossier show Ines", root, env).stdout)["text"]
    rendered = json.loads(run(f"{strata} --json capsule render", root, env).stdout)
    capsule = (root / "agent" / "capsule" / "CAPSULE.md").read_text()
    assert rendered["path"].endswith("CAPSULE.md") and "tea" in capsule and "## Identity" in capsule
    no_bench = subprocess.run([strata, "bench", "--help"], cwd=root, env=env, capture_output=True, text=True)
    assert no_bench.returncode == 2 and "command 'bench' is not one strata knows" in no_bench.stderr
    unit = run(f"{strata} systemd print-unit --user", root, env).stdout  # --user: run as root, the system unit is refused
    assert f"ExecStart={strata} --home {root / 'agent'} run" in unit


def test_an_agent_recalls_over_mcp_with_the_readme_configuration(installed):
    root, env, _ = installed
    readme = (root / "strata" / "README.md").read_text(encoding="utf-8")
    heading = next(line for line in readme.splitlines() if line.startswith("#") and "MCP" in line)
    block = readme.split(heading, 1)[1].split("```json", 1)[1].split("```", 1)[0]
    entry = json.loads(block)["mcpServers"]["strata"]
    command = str(root / "venv" / "bin" / "strata")
    args = [str(root / "agent") if a == "/path/to/home" else a for a in entry["args"]]
    clean = {k: v for k, v in env.items() if k != "STRATA_HOME"}  # a client passes only what it is given

    async def agent():
        params = StdioServerParameters(command=command, args=args, env=clean, cwd=str(root))
        async with Client(params, cache=None, read_timeout_seconds=300) as client:
            capsule = await client.call_tool("capsule_get", {})
            recalled = await client.call_tool("recall", {"query": "beverage preference"})
            return capsule, recalled

    capsule, recalled = asyncio.run(agent())
    assert not capsule.is_error and "## Identity" in capsule.structured_content["text"]
    assert not recalled.is_error
    assert [h["text"] for h in recalled.structured_content["hits"]] == ["Ines likes green tea in the morning"]
