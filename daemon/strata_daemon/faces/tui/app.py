"""The inspector app: one mode per layer screen, a help screen, a command palette, and a
poll that reloads the shown screen when the database changes."""

from __future__ import annotations

import asyncio
import gc
import time
from functools import partial
from typing import Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from strata_daemon.app.memory import Memory
from strata_daemon.faces.tui.screens.base import LayerScreen
from strata_daemon.faces.tui.screens.capsule import CapsuleScreen
from strata_daemon.faces.tui.screens.dossiers import DossiersScreen
from strata_daemon.faces.tui.screens.facts import FactsScreen
from strata_daemon.faces.tui.screens.help import HelpScreen
from strata_daemon.faces.tui.screens.memories import MemoriesScreen
from strata_daemon.faces.tui.screens.overview import OverviewScreen
from strata_daemon.faces.tui.screens.web import WebScreen

SCREENS = {"overview": OverviewScreen, "memories": MemoriesScreen, "facts": FactsScreen,
           "spiderweb": WebScreen, "dossiers": DossiersScreen, "capsule": CapsuleScreen}

NARROW_BELOW = 130  # columns: below it (80 or 120 columns) a screen shows its panes stacked, one above the other

CSS = """
.section { text-style: bold; color: $accent; margin: 1 0 0 1; }
#daemon, #summary, #capsule-state, #spread-note { padding: 0 1; color: $text-muted; }
#spread-note { height: auto; }
#summary { height: auto; max-height: 4; }
#searchbar { height: auto; }
#searchbar Input { width: 1fr; }
#searchbar Select { width: 16; }
#searchbar Checkbox { width: auto; }
#left { width: 3fr; }
#hits { width: 3fr; }
#side { width: 2fr; min-width: 50; }
#fulltext { height: auto; max-height: 10; padding: 0 1; }
#why { height: auto; padding: 0 1; color: $text-muted; }
#right { width: 2fr; }
#errors { height: auto; max-height: 8; }
DataTable { height: 1fr; }
#problem-text { height: auto; max-height: 6; padding: 0 1; }
/* Below NARROW_BELOW columns the panes of a screen stack: the list first, full width, its detail below. */
Screen.-narrow .panes { layout: vertical; }
/* !important: a pane's own width (#right { width: 2fr }) would win, and 2fr of a stacked pane is 160 columns. */
Screen.-narrow .panes > * { width: 100% !important; min-width: 0 !important; height: 1fr; }
Screen.-narrow #fulltext { max-height: 4; }
OverviewScreen.-narrow #left { height: 2fr; }
#question { width: 100%; height: auto; }
.dialog { width: 70; height: auto; max-height: 80%; border: thick $accent; background: $surface; padding: 1 2; }
.dialog.wide { width: 90%; height: 80%; }
.dialog-title { text-style: bold; margin-bottom: 1; }
.buttons { height: auto; margin-top: 1; }
ModalScreen { align: center middle; }
"""


class StrataApp(App):
    TITLE = "strata"
    CSS = CSS
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
    MODES = SCREENS
    BINDINGS = [
        *(Binding(str(n), f"switch_mode('{mode}')", cls.TITLE) for n, (mode, cls) in enumerate(SCREENS.items(), 1)),
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+r", "reload", "Reload"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, memory: Memory | None = None, *, home=None, agent: str | None = None,
                 refresh_seconds: float | None = None) -> None:
        """Give an open Memory (the caller closes it), or a home to open (closed on exit)."""
        super().__init__()
        self.memory = memory
        self._open = (home, agent) if memory is None else None
        self.refresh_seconds = refresh_seconds
        self.pending_web_node: str | None = None
        self.loaded_at: dict[str, float] = {}  # screen title -> when its newest load finished (tests, bench)
        self._seen: int | None = None
        self._polling = False
        self._prebuilt = False

    async def on_mount(self) -> None:
        if self.memory is None:
            self.memory = await Memory.open(self._open[0], agent=self._open[1], actor="tui")
        if self.refresh_seconds is None:
            self.refresh_seconds = float(self.memory.config["tui.refresh_seconds"])
        self.sub_title = f"{self.memory.agent} · {self.memory.home.root.name}"
        await self.switch_mode("overview")
        if self.refresh_seconds > 0:
            self.set_interval(self.refresh_seconds, self._poll)

    async def on_unmount(self) -> None:
        if self._open is not None and self.memory is not None:
            await self.memory.close()

    def on_layer_screen_loaded(self, message: LayerScreen.Loaded) -> None:
        # Textual keeps a few hundred thousand small render-cache objects alive; a full garbage
        # collection walking them took 40-130 ms and landed in the middle of screen switches.
        # Freezing what exists after each load takes them out of those walks (they are still
        # freed by reference counting when dropped).
        gc.freeze()
        self.loaded_at[message.screen_title] = time.perf_counter()
        if not self._prebuilt:
            self._prebuilt = True
            # Only a head start: should it fail (another Textual), screens are built on first visit.
            self.run_worker(self._prebuild, group="prebuild", exit_on_error=False)

    async def _prebuild(self) -> None:
        """Once the first screen shows, build the others one at a time (widgets made, data
        loaded), so that a first visit only has to draw. Textual builds a mode's screen on its
        first visit and offers no public way to build it ahead; its private `_init_mode` does
        exactly that, so a Textual without it simply builds on first visit as before."""
        init = getattr(self, "_init_mode", None)
        if init is None:
            return
        for mode, cls in SCREENS.items():
            if not self.is_running:
                return
            if mode == self.current_mode:
                continue
            started = time.perf_counter()
            await init(mode)
            # The screen got its styles from the current stylesheet when it was mounted; without
            # saying so, Textual would parse the whole stylesheet again on the first visit and
            # restyle every widget (70 ms, and every table cell drawn anew).
            for screen in getattr(self, "_screen_stacks", {}).get(mode, ()):
                screen._css_update_count = self._css_update_count
            while self.loaded_at.get(cls.TITLE, 0) < started and time.perf_counter() < started + 5:
                await asyncio.sleep(0.01)  # one screen's load at a time

    async def _poll(self) -> None:
        """Reload the shown screen when the database changed since the last look (the
        overview also ages by itself, so it reloads on every tick)."""
        if self._polling:
            return
        self._polling = True
        try:
            version = await self.memory.data_version()
        finally:
            self._polling = False
        changed, self._seen = version != self._seen and self._seen is not None, version
        if not self.is_running:  # shutting down: the screens are being closed
            return
        screen = self.screen
        if isinstance(screen, LayerScreen) and (changed or isinstance(screen, OverviewScreen)):
            screen.reload()

    def open_in_web(self, node: str) -> None:
        self.pending_web_node = node
        self.switch_mode("spiderweb")

    def action_reload(self) -> None:
        if isinstance(self.screen, LayerScreen):
            self.screen.reload()

    def action_help(self) -> None:
        screen = self.screen
        if isinstance(screen, LayerScreen):
            def keys(bindings) -> list[tuple[str, str]]:
                return [(self.get_key_display(b), b.description) for b in bindings]
            self.push_screen(HelpScreen(screen.TITLE, keys(screen.BINDINGS), keys(self.BINDINGS)))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for mode, cls in SCREENS.items():
            yield SystemCommand(f"Go to {cls.TITLE}", f"show the {cls.TITLE.lower()} screen",
                                partial(self.switch_mode, mode))
        if isinstance(screen, LayerScreen):
            for b in screen.BINDINGS:
                if b.description:
                    yield SystemCommand(f"{screen.TITLE}: {b.description}", f"key {b.key}",
                                        partial(screen.run_action, b.action))
            yield SystemCommand("Reload", "read this screen's data again", screen.reload)
