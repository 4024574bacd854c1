"""The top and bottom lines of every screen: each is one widget drawing one line of text,
since Textual's Header and Footer build a widget per key and per part, which made switching
screens take most of a second on two cores."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class TitleBar(Static):
    DEFAULT_CSS = "TitleBar { dock: top; height: 1; background: $panel; color: $text; padding: 0 1; }"

    def on_mount(self) -> None:
        self.update(Text.assemble(("strata", "bold"), f" · {self.screen.TITLE} · {self.app.sub_title}"))


class KeyBar(Static):
    DEFAULT_CSS = "KeyBar { dock: bottom; height: 1; background: $panel; padding: 0 1; }"

    def on_mount(self) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        bindings = [*self.screen.BINDINGS, *self.app.BINDINGS]
        for b in bindings:
            if b.show and b.description:
                text.append(f" {self.app.get_key_display(b)} ", "bold reverse")
                text.append(f" {b.description}  ")
        text.append(" ^p ", "bold reverse")
        text.append(" palette")
        self.update(text)
