"""`strata bench tui`: the inspector at scale, headless: time from start to the first screen
with its data, and from a screen key to that screen showing its data (the first visit, which
builds the screen's widgets, and later ones), against a bare Textual app doing the same with
no data."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable

from strata_bench.dossier import TOPICS
from strata_bench.ingest import populate
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home

SIZE = (160, 48)
KEYS = ("2", "3", "4", "5", "6", "1")  # every screen once, ending where it started


async def _until(pilot, done: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError("the inspector did not show its data in time")
        await pilot.pause(0.001)


async def _visit(pilot, app, titles: dict[str, str], into: dict[str, list[float]]) -> None:
    for key in KEYS:
        title = titles[key]
        pressed = time.perf_counter()
        await pilot.press(key)
        await _until(pilot, lambda: app.loaded_at.get(title, 0) > pressed)
        into[title].append(app.loaded_at[title] - pressed)


async def _inspector(mem: Memory, rounds: int, think: float, progress) -> tuple[list[float], dict, dict]:
    """Per round: a fresh app to its first screen, `think` seconds to read it (while the app
    builds the other screens), every screen a first time, then every screen twice more."""
    from strata_daemon.faces.tui.app import SCREENS, StrataApp

    titles = {str(n): cls.TITLE for n, cls in enumerate(SCREENS.values(), 1)}
    first, first_visit, again = [], {titles[k]: [] for k in KEYS}, {titles[k]: [] for k in KEYS}
    for _ in range(rounds):
        app = StrataApp(mem, refresh_seconds=0)
        started = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: "Overview" in app.loaded_at)
            first.append(app.loaded_at["Overview"] - started)
            await pilot.pause(think)
            await _visit(pilot, app, titles, first_visit)
            await _visit(pilot, app, titles, again)
            await _visit(pilot, app, titles, again)
            await app.workers.wait_for_complete()
        if progress:
            progress(1)
    return first, first_visit, again


async def _bare(rounds: int) -> tuple[list[float], list[float]]:
    """The floor: a Textual app whose two screens show one line of text each."""
    from textual.app import App
    from textual.screen import Screen
    from textual.widgets import Static

    class One(Screen):
        def compose(self):
            yield Static(type(self).__name__)

        def on_screen_resume(self) -> None:
            self.app.shown = (type(self).__name__, time.perf_counter())

    class Two(One):
        pass

    class Bare(App):
        MODES = {"one": One, "two": Two}
        BINDINGS = [("1", "switch_mode('one')"), ("2", "switch_mode('two')")]
        shown = ("", 0.0)

        async def on_mount(self) -> None:
            await self.switch_mode("one")

    first, switch = [], []
    for _ in range(rounds):
        app = Bare()
        started = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, lambda: app.shown[0] == "One")
            first.append(app.shown[1] - started)
            for key, name in (("2", "Two"), ("1", "One")) * 3:
                pressed = time.perf_counter()
                await pilot.press(key)
                await _until(pilot, lambda: app.shown[0] == name and app.shown[1] > pressed)
                switch.append(app.shown[1] - pressed)
    return first, switch


async def bench_tui(n: int, *, rounds: int = 10, seed: int = 0, think: float = 0.0,
                    progress: Callable[[int], None] | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        home.config_path.write_text('[experimental]\n"dossier.recall_mode" = "fast"\n', encoding="utf-8")
        async with await Memory.open(home, actor="bench") as mem:
            await populate(mem, n, seed)
            for t in TOPICS[:5]:  # dossiers for its screen, and so the capsule has priorities
                await mem.refresh_dossier((await mem.add_topic(t))["topic"])
            await mem.render_capsule()
            status = await mem.status()
            first, first_visit, again = await _inspector(mem, rounds, think, progress)
    base_first, base_switch = await _bare(rounds)
    ours_first, ours_switch = summary_ms(first), summary_ms([s for t in again.values() for s in t])
    ours_first_visit = summary_ms([s for t in first_visit.values() for s in t])
    floor_first, floor_switch = summary_ms(base_first), summary_ms(base_switch)
    return {
        "benchmark": "tui", "n": n, "rounds": rounds, "seed": seed, "terminal": list(SIZE), "think_seconds": think,
        "facts": status["facts"], "web_edges": status["web_edges"], "dossiers": status["dossiers"],
        "first_screen_ms": ours_first, "switch_ms": ours_switch, "switch_first_visit_ms": ours_first_visit,
        "switch_by_screen_ms": {title: summary_ms(times) for title, times in again.items()},
        "switch_first_visit_by_screen_ms": {title: summary_ms(times) for title, times in first_visit.items()},
        "baseline": {"name": "bare Textual app, two one-line screens", "first_screen_ms": floor_first,
                     "switch_ms": floor_switch},
        "ratio_first_screen_p50": ratio(ours_first["p50_ms"], floor_first["p50_ms"]),
        "ratio_switch_p50": ratio(ours_switch["p50_ms"], floor_switch["p50_ms"]),
    }
