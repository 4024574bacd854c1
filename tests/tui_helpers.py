"""Driving the inspector in tests: a real app on a real home, headless."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Awaitable, Callable

from textual.worker import WorkerCancelled

from strata_daemon.faces.tui.app import StrataApp


async def settle(pilot, pause: float = 0.05) -> None:
    """Let every load, action and the notifications after them finish."""
    for _ in range(3):
        await pilot.pause(pause)
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:  # a reload replaced an older one
            pass
    await pilot.pause()


def drive(home: Path, body: Callable[[StrataApp, object], Awaitable[None]], *, size=(130, 40),
          refresh: float = 0, agent: str | None = None) -> None:
    async def go() -> None:
        app = StrataApp(home=home, agent=agent, refresh_seconds=refresh)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await body(app, pilot)
    asyncio.run(go())


def rows(app, selector: str) -> list[list[str]]:
    table = app.screen.query_one(selector)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


async def switch(pilot, key: str) -> None:
    await pilot.press(key)
    await settle(pilot)


async def type_in(pilot, selector: str, text: str) -> None:
    pilot.app.screen.query_one(selector).focus()
    pilot.app.screen.query_one(selector).value = ""
    await pilot.press(*text, "enter")
    await settle(pilot)
