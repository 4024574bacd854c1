"""The help screen (`?`): every key of the app and of the screen it was opened from."""

from __future__ import annotations

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

ABOUT = """\
strata's inspector reads the same database as the daemon and changes it only through the
same API as the `strata` command. Screens reload by themselves when the daemon (or anyone)
writes; `ctrl+r` reloads now. `ctrl+p` opens the command palette.
"""


def keys_table(title: str, keys: list[tuple[str, str]]) -> str:
    rows = [f"| `{key}` | {description} |" for key, description in keys if description]
    return f"### {title}\n\n| key | does |\n|---|---|\n" + "\n".join(rows) + "\n" if rows else ""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def __init__(self, screen_title: str, screen_keys: list[tuple[str, str]], app_keys: list[tuple[str, str]]) -> None:
        """keys: (key as shown, what it does)."""
        super().__init__()
        self.text = ABOUT + "\n" + keys_table(screen_title, screen_keys) + "\n" + keys_table("Everywhere", app_keys)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Help", classes="dialog-title")
            with VerticalScroll():
                yield Static(Markdown(self.text), id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)
