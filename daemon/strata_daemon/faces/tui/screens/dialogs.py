"""Small modal dialogs: confirm a change, ask for a value, show a record's details."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class Confirm(ModalScreen[bool]):
    """Yes or no before a change that is hard to take back."""
    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, id="question")  # a Label would not wrap: the end of it was cut
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", id="yes", variant="error")
                yield Button("No (n)", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class Ask(ModalScreen[dict | None]):
    """One or more text fields; Enter in the last one accepts, Escape cancels."""
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, fields: list[tuple[str, str, str]]) -> None:
        """fields: (name, label, initial value)."""
        super().__init__()
        self.title_text = title
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            for name, label, value in self.fields:
                yield Label(label)
                yield Input(value=value, id=f"field-{name}")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        if event.input is not inputs[-1]:
            inputs[inputs.index(event.input) + 1].focus()
            return
        self.dismiss({name: self.query_one(f"#field-{name}", Input).value for name, _, _ in self.fields})

    def action_cancel(self) -> None:
        self.dismiss(None)


def table(rows: list[tuple[str, str]]) -> Table:
    """Two columns, field and value; a long value wraps in its column."""
    out = Table(show_header=False, box=None, padding=(0, 1), expand=True)
    out.add_column("field", style="bold", no_wrap=True)
    out.add_column("value", ratio=1, overflow="fold")
    for field, value in rows:
        out.add_row(field, Text(value))  # Text: a memory's brackets are not markup
    return out


class Details(ModalScreen[None]):
    """A record as a table of fields and values (tui/fields.py); Escape closes it."""
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, title: str, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(self.title_text, classes="dialog-title")
            with VerticalScroll():
                yield Static(table(self.rows), id="details")

    def action_close(self) -> None:
        self.dismiss(None)
