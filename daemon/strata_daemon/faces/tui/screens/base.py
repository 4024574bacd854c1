"""What every layer screen shares: its data is loaded in a worker (the interface never waits
on the database or a model), it reloads when the database changes, and actions report their
outcome as a notification."""

from __future__ import annotations

from typing import Awaitable, Callable

from rich.text import Text
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable

from strata_daemon.errors import StrataError


def cursor_key(table: DataTable) -> str | None:
    """The key of the row under the cursor, None for an empty table."""
    if not table.row_count:
        return None
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


def _cell(value):
    # A cell is one line: without wrapping, Rich draws a cell in about two thirds of the time,
    # and drawing cells is most of what showing a screen costs.
    return Text(value, no_wrap=True, overflow="ellipsis") if isinstance(value, str) else value


def refill(table: DataTable, rows: list[tuple[str, tuple]]) -> None:
    """Replace the rows (key, cells), keeping the cursor where it was. Rows equal to those shown
    are left alone: a DataTable measures every cell again when refilled, the bulk of a reload."""
    if getattr(table, "shown_rows", None) == rows:
        return
    table.shown_rows = rows
    keep = table.cursor_row
    # Columns are laid anew: a cleared table keeps each column's widest width, so a column whose
    # cells got shorter (a narrower text beside a longer state) would still push the row past the edge.
    labels = [c.label for c in table.columns.values()]
    table.clear(columns=True)
    table.add_columns(*labels)
    for key, cells in rows:
        table.add_row(*map(_cell, cells), key=key)
    if table.row_count:
        table.move_cursor(row=min(keep, table.row_count - 1))


def room(screen: Screen, share: float) -> int:
    """The columns a screen's list has: all of them on a narrow terminal, where the panes stack
    (app.NARROW_BELOW), else its SHARE of the width."""
    width = screen.app.size.width
    return width if screen.has_class("-narrow") else int(width * share)


def left_for(total: int, *fixed: int) -> int:
    """The columns one cell may take beside cells of widths FIXED in a table TOTAL wide: a cell's
    padding (one each side) and the scrollbar counted, so a row never runs past the edge."""
    return total - sum(fixed) - 2 * (len(fixed) + 1) - 2


def problem(e: StrataError) -> str:
    return e.message + (f"\n{e.hint}" if e.hint else "")


class LayerScreen(Screen):
    TITLE = ""

    class Loaded(Message):
        """Posted after each load; bubbles to the app."""

        def __init__(self, screen: "LayerScreen") -> None:
            super().__init__()
            self.screen_title = screen.TITLE

    @property
    def memory(self):
        return self.app.memory

    async def load(self) -> None:
        """Read this screen's data and show it."""

    def reload(self) -> None:
        self.run_worker(self._load, group="load", exclusive=True)

    async def _load(self) -> None:
        try:
            await self.load()
        except StrataError as e:
            self.notify(problem(e), title="could not load", severity="error")
        self.post_message(self.Loaded(self))

    def on_screen_resume(self) -> None:
        self.reload()

    def act(self, work: Callable[[], Awaitable[object]], done: Callable[[object], str] | str,
            *, reload: bool = True) -> None:
        """Run a change in a worker; say what it did (or what went wrong), then show the new state."""
        async def run() -> None:
            try:
                result = await work()
            except StrataError as e:
                self.notify(problem(e), title="not done", severity="error")
                return
            self.notify(done(result) if callable(done) else done)
            if reload:
                await self._load()

        self.run_worker(run, group="action")
