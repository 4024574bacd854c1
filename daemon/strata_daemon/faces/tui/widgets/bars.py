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
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        """The screen's keys, then the app's. Where they do not fit, the keys that switch screens
        are said as one (`1-6 Screens`): the title names the screen, and Help, Quit stay in view;
        a key that does not fit whole is left to Help (a bare `-` said nothing)."""
        keys = [(self.app.get_key_display(b), b.description)
                for b in [*self.screen.BINDINGS, *self.app.BINDINGS] if b.show and b.description]
        keys.append(("^p", "palette"))
        numbered = [k for k, _ in keys if k.isdigit()]
        width = self.size.width or self.app.size.width

        def too_long(keys: list[tuple[str, str]]) -> bool:
            return sum(len(k) + len(d) + 5 for k, d in keys) + 2 > width

        if numbered and too_long(keys):
            at = next(i for i, (k, _) in enumerate(keys) if k.isdigit())
            keys = [*keys[:at], (f"{numbered[0]}-{numbered[-1]}", "Screens"),
                    *(kd for kd in keys[at:] if not kd[0].isdigit())]
        for spare in ("^p", "^r"):  # then the palette and Reload go, so that Help and Quit stay
            if too_long(keys):
                keys = [kd for kd in keys if kd[0] != spare]
        if too_long(keys):  # still too long: Help (which lists them all) first, and keys whole or not at all
            kept = [kd for kd in keys if kd[0] in ("?", "q")]
            for kd in keys:
                if kd not in kept and not too_long([*kept, kd]):
                    kept.append(kd)
            keys = [kd for kd in keys if kd[0] == "?"] + [kd for kd in keys if kd in kept and kd[0] != "?"]
        text = Text(no_wrap=True, overflow="ellipsis")
        for key, description in keys:
            text.append(f" {key} ", "bold reverse")
            text.append(f" {description}  ")
        self.update(text)
