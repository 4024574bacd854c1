"""Damaged homes, through the Python API, the CLI and the MCP server: a broken strata.toml, a
database that is not one or was cut short, a missing or corrupt model, a broken capsule,
malformed import files. Each face says what is wrong with the documented kind and exit code
and keeps what was stored; where strata can go on (a model, a capsule), it goes on."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from conftest import CLI, REPO, write_config
from mcp_helpers import mcp_client
from strata_bench.damage import device, folder
from strata_daemon import Memory
from strata_daemon.config.home import init_home
from strata_daemon.errors import StrataError

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

KEPT = "Stored before the damage: the bridge relay is on gw-02"


def _config(text):
    return lambda home: write_config(home, text)


def _garbage_db(home):
    (home / "state" / "memory.db").write_bytes(b"this is not a database at all " * 200)
    for extra in ("memory.db-wal", "memory.db-shm"):
        (home / "state" / extra).unlink(missing_ok=True)


def _truncated_db(home):
    db = home / "state" / "memory.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    for extra in ("memory.db-wal", "memory.db-shm"):
        (home / "state" / extra).unlink(missing_ok=True)


def _missing_model(home):
    write_config(home, f'[embedding]\nmodel = "{home / "models" / "gone.gguf"}"\n')


def _corrupt_model(home):
    bad = home / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 4096)
    write_config(home, f'[embedding]\nmodel = "{bad}"\n')


# name, damage, what opening the home gives (an error kind, or "ok": strata goes on)
HOMES = [
    ("malformed toml", _config("[recall\nk = 3\n"), "config"),
    ("wrong type", _config("[recall]\nk = 'many'\n"), "config"),
    ("out of range", _config("[recall]\nk = 0\n"), "config"),
    ("unknown choice", _config("[recall]\nmode = 'turbo'\n"), "config"),
    ("unknown setting", _config("[recall]\nspeed = 11\n"), "config"),
    ("bad namespace list", _config("[agent]\nshared = ['no spaces allowed']\n"), "config"),
    ("binary config", lambda home: (home / "strata.toml").write_bytes(b"\xff\xfe\x00\x01"), "config"),
    ("config is a device", lambda home: device(home / "strata.toml"), "config"),
    ("config nested 5000 deep", _config("a = " + "[" * 5000 + "]" * 5000 + "\n"), "config"),
    ("config of 2 MiB", _config("# padding\n" * 210_000), "config"),
    ("not a database", _garbage_db, "storage"),
    ("truncated database", _truncated_db, "storage"),
    ("missing model", _missing_model, "ok"),
    ("corrupt model", _corrupt_model, "ok"),
]
EXIT = {"config": 7, "storage": 6, "ok": 0}


@pytest.fixture
def damaged(tmp_path, request):
    home = init_home(tmp_path / "home")[0].root

    async def keep():
        async with await Memory.open(home) as mem:
            await mem.observe(KEPT, kind="event")
    asyncio.run(keep())
    name, damage, expected = request.param
    damage(home)
    return home, expected


@pytest.mark.parametrize("damaged", HOMES, ids=[h[0] for h in HOMES], indirect=True)
def test_python_api(damaged):
    home, expected = damaged

    async def go():
        try:
            async with await Memory.open(home) as mem:
                found = await mem.recall("bridge relay gw-02")
        except StrataError as e:
            assert e.kind == expected and e.message, e.as_dict()
            return
        assert expected == "ok"
        assert found["hits"][0]["content"] == KEPT and found["mode_used"] == "fast"
        assert "semantic recall unavailable" in found["warnings"][0]  # said, not silent
    asyncio.run(go())


@pytest.mark.parametrize("damaged", HOMES, ids=[h[0] for h in HOMES], indirect=True)
def test_cli(damaged):
    home, expected = damaged
    proc = CLI(home)("recall", "bridge relay gw-02", "--json")
    assert proc.returncode == EXIT[expected], proc.err
    assert "Traceback" not in proc.err
    if expected == "ok":
        assert KEPT in proc.out and "semantic recall unavailable" in proc.err + proc.out
    else:
        assert proc.err.startswith("strata:") and "hint:" in proc.err


@pytest.mark.parametrize("damaged", HOMES, ids=[h[0] for h in HOMES], indirect=True)
def test_mcp(damaged):
    home, expected = damaged
    if expected != "ok":  # the server cannot start: it says why and exits with the code
        proc = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(home), "mcp"], input="",
                              capture_output=True, text=True, timeout=60, cwd=REPO)
        assert proc.returncode == EXIT[expected] and proc.stderr.startswith("strata:"), proc.stderr
        assert proc.stdout == "" and "Traceback" not in proc.stderr
        return

    async def go():
        async with mcp_client(home) as t:
            found = await t.call("recall", query="bridge relay gw-02")
            assert found["hits"][0]["text"] == KEPT and found["warnings"]
    asyncio.run(go())


def test_a_broken_capsule_is_said_by_every_face_and_the_last_good_render_stays(home):
    cli = CLI(home)
    cli("capsule", "render", check=True)
    path = home / "capsule" / "CAPSULE.md"
    good = path.read_text()
    path.write_bytes(good.replace("<!-- strata:end recent -->", "<!-- strata:ned recent -->").encode())
    proc = cli("capsule", "render")
    assert proc.returncode == 4 and "line" in proc.err and "capsule check" in proc.err
    assert cli.json("capsule", "show", "--last-good")["text"] == good

    async def python_face():
        async with await Memory.open(home) as mem:
            with pytest.raises(StrataError) as caught:
                await mem.render_capsule()
            assert caught.value.kind == "invalid_input"
            assert not (await mem.check_capsule())["ok"]
    asyncio.run(python_face())

    async def mcp_face():
        async with mcp_client(home) as t:
            shown = await t.call("capsule_get")
            assert shown["ok"] is False and shown["problems"][0]["line"] > 0
            assert (await t.call("capsule_get", last_good=True))["text"] == good
    asyncio.run(mcp_face())
    assert path.read_text() != good  # strata never overwrote the person's broken file


CAPSULES = [
    ("a folder", folder, "is a folder"),
    ("not UTF-8", lambda path: path.write_bytes(b"# Capsule\n\xff\xfe broken\n"), "not UTF-8"),
    ("a device", device, "not a regular file"),
    ("2 MiB", lambda path: path.write_text("- line\n" * 300_000), "more than the 1 MiB"),
]


@pytest.mark.parametrize("damage, said", [c[1:] for c in CAPSULES], ids=[c[0] for c in CAPSULES])
def test_an_unreadable_capsule_is_said_and_the_daemon_starts_anyway(home, damage, said):
    from test_daemon_run import START_TIMEOUT, Daemon

    cli = CLI(home)
    cli("capsule", "render", check=True)
    path = home / "capsule" / "CAPSULE.md"
    good = path.read_text()
    damage(path)
    for args, code in ((("capsule", "render"), 4), (("capsule", "show"), 4), (("capsule", "check"), 4),
                       (("doctor",), 12), (("status",), 0)):
        proc = cli(*args)
        assert proc.returncode == code and "Traceback" not in proc.err, (args, proc.err)
    assert said in cli("capsule", "check").out and said in cli("doctor").out
    assert cli.json("status")["capsule"]["ok"] is False
    assert cli.json("capsule", "show", "--last-good")["text"] == good
    write_config(home, "[daemon]\nheartbeat_seconds = 1\n")
    d = Daemon(home)
    try:
        d.wait_for("phase capsule failed", START_TIMEOUT)
        d.wait_for("phase heartbeat", START_TIMEOUT, new=True)  # still beating
        assert cli("observe", "noted while the capsule is broken").returncode == 0
    finally:
        d.kill()
