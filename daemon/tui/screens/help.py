"""The help screen (`?`): every key of the app and of the screen it was opened from."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown

ABOUT = """\
strata's inspector reads the same database as the daemon and changes it only through the
same API as the `strata` command. Screens reload by themselves when the daemon (or anyone)
writes; `ctrl+r` reloads now. `ctrl+p` opens the command palette.
"""


def keys_table(title: str, bindings: list[Binding]) -> str:
    rows = [f"| `{b.key}` | {b.description} |" for b in bindings if b.description]
    return f"### {title}\n\n| key | does |\n|---|---|\n" + "\n".join(rows) + "\n" if rows else ""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def __init__(self, screen_title: str, screen_bindings: list[Binding], app_bindings: list[Binding]) -> None:
        super().__init__()
        self.text = ABOUT + "\n" + keys_table(screen_title or "This screen", screen_bindings) + "\n" \
            + keys_table("Everywhere", app_bindings)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Help", classes="dialog-title")
            with VerticalScroll():
                yield Markdown(self.text, id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
