"""Loop steps: real commands run by the steps phase, their outcomes stored as observations."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from conftest import write_config
from strata_daemon.app import wiring
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.runs import run_phase
from strata_daemon.config.load import load_config
from strata_daemon.errors import ConfigError


def _steps(home) -> tuple[dict, list[dict]]:
    async def go():
        async with await Memory.open(home, actor="daemon") as mem:
            r = await run_phase(mem, "steps", actor="daemon")
            rows = await mem.db.fetchall("SELECT content, source, kind, importance, context FROM episodes "
                                         "WHERE source LIKE 'step:%' ORDER BY id")
            return r, [dict(x) | {"context": json.loads(x["context"])} for x in rows]

    return asyncio.run(go())


def test_steps_store_output_failures_timeouts_and_missing_commands(home):
    write_config(home, """
[loop]
max_output_bytes = 300

[loop.steps.mail]
command = "echo 2 new messages from Ines; echo checked >&2"

[loop.steps.disk]
command = ["sh", "-c", "echo disk almost full >&2; exit 3"]
importance = 0.9
kind = "event"

[loop.steps.slow]
command = "echo started; sleep 60"
timeout_seconds = 3

[loop.steps.gone]
command = ["/nonexistent/check-things"]

[loop.steps.quiet]
command = "true"

[loop.steps.off]
command = "echo never"
enabled = false

[loop.steps.chatty]
command = "yes line | head -n 500"

[loop.steps.where]
command = "echo $PWD $STRATA_STEP $STRATA_LOOP $GREETING"
cwd = "/tmp"
env = { GREETING = "hello" }
""")
    started = time.monotonic()
    r, rows = _steps(home)
    assert time.monotonic() - started < 30  # the slow step was cut off, not waited for
    assert r["status"] == "ok"
    assert r["result"] == {"ran": 7, "failed": 3, "stored": 6}
    by = {row["source"]: row for row in rows}
    assert set(by) == {"step:mail", "step:disk", "step:slow", "step:gone", "step:chatty", "step:where"}

    assert by["step:mail"]["content"] == "2 new messages from Ines\nchecked"
    assert by["step:mail"]["context"]["status"] == "ok" and by["step:mail"]["importance"] == 0.5

    disk = by["step:disk"]
    assert disk["content"] == "loop step disk exited with 3:\ndisk almost full"
    assert disk["kind"] == "event" and disk["importance"] == 0.9 and disk["context"]["exit_code"] == 3

    assert by["step:slow"]["content"].startswith("loop step slow timed out after 3 s:\nstarted")
    assert by["step:slow"]["context"]["status"] == "timeout"
    assert "could not start" in by["step:gone"]["content"] and "/nonexistent/check-things" in by["step:gone"]["content"]

    chatty = by["step:chatty"]["content"]
    assert chatty.startswith("[... ") and len(chatty.encode()) <= 300 + 40 and chatty.endswith("line")
    assert by["step:where"]["content"] == "/tmp where 0 hello"


def test_the_wake_step_reads_the_capsule_and_dossiers_on_stdin(home, cli):
    out = home / "woke.txt"
    write_config(home, f"""
[experimental]
"dossier.recall_mode" = "fast"

[dossier.topics.bridge]

[loop.wake]
command = "cat > {out}; echo woke"
""")
    cli("fact", "set", "bridge", "UP", check=True)
    cli("observe", "Bridge: UP after the reboot", check=True)
    cli("dossier", "refresh", "bridge", check=True)
    cli("capsule", "render", check=True)
    r, rows = _steps(home)
    assert r["result"] == {"ran": 1, "failed": 0, "stored": 1}
    assert rows[0]["content"] == "woke" and rows[0]["source"] == "step:wake"
    text = out.read_text(encoding="utf-8")
    capsule = (home / "capsule" / "CAPSULE.md").read_text(encoding="utf-8")
    assert text.startswith(capsule.rstrip("\n"))
    assert "# Dossier: bridge (version 1," in text and "UP" in text.split("# Dossier: bridge", 1)[1]


@pytest.mark.parametrize("table, complaint", [
    ('[loop.steps.x]\ntimeout_seconds = 5\n', "x.command must be"),
    ('[loop.steps.x]\ncommand = ""\n', "x.command must be"),
    ('[loop.steps.x]\ncommand = "ls"\ntimeout_seconds = 0\n', "x.timeout_seconds"),
    ('[loop.steps.x]\ncommand = "ls"\nenv = { A = 1 }\n', "x.env"),
    ('[loop.steps.x]\ncommand = "ls"\nshell = true\n', "unknown key 'shell'"),
    ('[loop.steps.x]\ncommand = "ls"\nkind = "gossip"\n', "kind 'gossip' is not in store.kinds"),
    ('[loop.wake]\ncommand = "ls"\nmax_dossiers = "all"\n', "wake.max_dossiers"),
])
def test_a_broken_step_is_named_when_the_config_loads(tmp_path, table, complaint):
    path = tmp_path / "strata.toml"
    path.write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        wiring.check(load_config(path))  # the loop checks the steps it is handed
    assert complaint in e.value.message
