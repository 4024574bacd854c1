"""The first hour: what a newcomer meets before knowing how strata works inside. A memory just
observed is found by meaning with no daemon running, an agent's first `capsule_get` answers,
and a home is only ever the one the user named."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from conftest import REPO, write_config
from mcp_helpers import mcp_client
from strata_daemon import Memory


def test_recall_finds_what_was_just_observed_by_meaning_without_a_daemon(memory):
    memory.observe("Ines likes green tea in the morning")
    assert memory.embedding_backlog() == 1
    r = memory.recall("beverage preference")
    assert r["mode_used"] == "balanced" and r["warnings"] == []
    assert [h["content"] for h in r["hits"]] == ["Ines likes green tea in the morning"]
    assert memory.embedding_backlog() == 0


def test_a_large_backlog_is_left_to_the_daemon_and_said(home):
    write_config(home, "[recall]\nembed_waiting = 1\n")

    async def go():
        async with await Memory.open(home) as mem:
            for text in ("Ines likes green tea in the morning", "The printer on floor two jams"):
                await mem.observe(text)
            r = await mem.recall("beverage preference")
            return r, await mem.embedding_backlog()

    r, backlog = asyncio.run(go())
    assert backlog == 2 and r["hits"] == []  # no word in common: only meaning would find it
    assert any("2 memories wait for a vector" in w and "strata embed" in w for w in r["warnings"])


def test_recall_embeds_only_its_own_namespace(home):
    async def go():
        async with await Memory.open(home, agent="other") as other:
            await other.observe("someone else's note about the garden")
        async with await Memory.open(home) as mem:
            await mem.observe("Ines likes green tea in the morning")
            await mem.recall("beverage preference")
            own = await mem.embedding_backlog()
        async with await Memory.open(home, agent="other") as other:
            return own, await other.embedding_backlog()

    assert asyncio.run(go()) == (0, 1)


def test_an_agents_first_capsule_get_renders_its_capsule(home):
    async def go():
        async with mcp_client(home, "meridian") as tools:
            shown = await tools.call("capsule_get")
            return shown, (home / "capsule" / "meridian.md").is_file()

    shown, written = asyncio.run(go())
    assert written and shown["ok"] and shown["path"].endswith("meridian.md")
    assert "<!-- strata:begin facts -->" in shown["text"]


def test_a_mistyped_home_is_refused_and_nothing_is_created(tmp_path):
    wrong = tmp_path / "agnet-home"
    proc = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(wrong), "recall", "anything"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 7 and "there is no strata home" in proc.stderr and "strata init" in proc.stderr
    assert not wrong.exists()


def test_init_says_how_to_select_the_new_home(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "strata_daemon", "init", str(tmp_path / "agent")],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"export STRATA_HOME={tmp_path / 'agent'}" in proc.stdout


def test_a_query_about_nothing_stored_gets_no_hits_instead_of_the_least_unlike(home):
    async def go(min_similarity):
        write_config(home, f"[experimental]\n\"recall.min_similarity\" = {min_similarity}\n")
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                await mem.observe("Deploy of api v2 finished")
            return [h["content"] for h in (await mem.recall("zebra", mode="balanced"))["hits"]]

    assert asyncio.run(go(0.1)) == []  # the default
    assert asyncio.run(go(-1)) == ["Deploy of api v2 finished"]  # cosine -0.02: only by meaning, and barely
