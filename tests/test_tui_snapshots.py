"""Snapshots of the main screens (pytest-textual-snapshot). The clock is fixed so ages and
scores are the same on every run; after an intended change of look, review the new pictures
and accept them with `pytest tests/test_tui_snapshots.py --snapshot-update`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from strata_daemon import Memory
from strata_daemon.base import timeutil
from strata_daemon.faces.tui.app import StrataApp
from tests.tui_helpers import settle, switch, type_in

pytestmark = pytest.mark.slow

NOW = 1_795_000_000.0
SIZE = (120, 40)
# An 80x24 terminal first: what a person reaches over SSH; and a large one, where panes sit side by side.
SIZES = {"80x24": (80, 24), "120x40": SIZE, "160x45": (160, 45)}


@pytest.fixture
def still(tmp_path_factory, monkeypatch):
    """A home filled at a fixed time, read at that time, at a path of the same name on every
    run (the overview shows it)."""
    import shutil

    from strata_daemon.config.home import init_home

    home = Path("/tmp/strata-snapshots/home")  # not $TMPDIR: the pictures hold the path
    shutil.rmtree(home.parent, ignore_errors=True)
    init_home(home)
    monkeypatch.setattr(timeutil, "now", lambda: NOW)

    async def fill():
        async with await Memory.open(home) as mem:
            for i, text in enumerate(("deployed web-01 with nginx 1.25 after error E502",
                                      "Alice prefers tea over coffee in the morning",
                                      "the backup job on the home server runs at night",
                                      "nginx on web-02 restarted cleanly after the config change")):
                await mem.observe(text, at=NOW - 3600 * (4 - i))
            await mem.set_fact("user.drink", "tea", at=NOW - 300, source="person:alice")
            await mem.set_fact("user.drink", "coffee")  # another source, 5 min later: a conflict
            await mem.set_fact("host.web-01.role", "reverse proxy")
            await mem.add_topic("nginx")
            await mem.refresh_dossier("nginx", force=True)
            await mem.render_capsule()
    asyncio.run(fill())
    return home


def app(home) -> StrataApp:
    return StrataApp(home=home, refresh_seconds=0)


@pytest.mark.parametrize("size", SIZES)
def test_memories_screen(still, snap_compare, size):
    async def search(pilot):
        await settle(pilot)
        await switch(pilot, "2")
        pilot.app.screen.query_one("#mode").value = "fast"
        await type_in(pilot, "#query", "nginx")
    assert snap_compare(app(still), run_before=search, terminal_size=SIZES[size])


@pytest.mark.parametrize("size", ["80x24", "120x40"])
@pytest.mark.parametrize("key", ["1", "3", "5", "6"], ids=["overview", "facts", "dossiers", "capsule"])
def test_layer_screen(still, snap_compare, key, size):
    async def go(pilot):
        await settle(pilot)
        await switch(pilot, key)
    assert snap_compare(app(still), run_before=go, terminal_size=SIZES[size])


def test_help_screen(still, snap_compare):
    async def go(pilot):
        await settle(pilot)
        await switch(pilot, "2")
        await pilot.press("question_mark")
        await settle(pilot)
    assert snap_compare(app(still), run_before=go, terminal_size=SIZE)


def test_spiderweb_screen(still, snap_compare):
    async def link():
        async with await Memory.open(still) as mem:
            for _ in range(3):
                await mem.activate(["episode:1", "episode:4"])
                await mem.commit_working_set()
            await mem.activate(["episode:1", "episode:3"])
            await mem.commit_working_set()
    asyncio.run(link())

    async def go(pilot):
        await settle(pilot)
        await switch(pilot, "4")
        await type_in(pilot, "#node", "episode:1")
        pilot.app.screen.query_one("#web").focus()
        await pilot.press("s")
        await settle(pilot)
    assert snap_compare(app(still), run_before=go, terminal_size=SIZE)
