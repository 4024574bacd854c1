"""The picture of a spiderweb node's neighbourhood (tui/webpicture.py), drawn again to the
widget's width when it is resized."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from strata_daemon.faces.tui.webpicture import draw


class WebPicture(Static):
    DEFAULT_CSS = "WebPicture { height: auto; max-height: 16; padding: 0 1; }"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.shown: tuple[str, list[tuple[str, str]]] | None = None
        self.lines: list[str] = []

    def show(self, centre: str, neighbours: list[tuple[str, str]]) -> None:
        """Centre on `centre` (its text), with its neighbours as (text, weight or link type)."""
        self.shown = (centre, neighbours)
        self._draw()

    def _draw(self) -> None:
        if self.shown is None:
            return
        # Before the first layout the width is unknown; the resize that follows draws it again.
        width = self.content_size.width if self.content_size.width >= 40 else 100
        self.lines = draw(*self.shown, width=width)
        self.update(Text("\n".join(self.lines), no_wrap=True, overflow="crop"))

    def on_resize(self) -> None:
        self._draw()
