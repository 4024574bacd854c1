"""Capsule: the file rendered as markdown, its validation problems with line numbers, and
what changed since strata last rendered it; render now."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from strata_daemon.base.wording import counted
from strata_daemon.errors import InvalidInput
from strata_daemon.faces.tui.screens.base import LayerScreen, cursor_key, refill
from strata_daemon.faces.tui.widgets.bars import KeyBar, TitleBar


class CapsuleScreen(LayerScreen):
    TITLE = "Capsule"
    document: str | None = None  # the markdown shown
    problems: dict[str, dict] = {}  # the problems listed, by row key
    BINDINGS = [Binding("r", "render", "Render now")]

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="capsule-state")
        with TabbedContent(id="tabs"):
            with TabPane("Capsule", id="tab-text"):
                with VerticalScroll():
                    yield Static(id="text")
            with TabPane("Problems", id="tab-problems"):
                yield DataTable(id="problems", cursor_type="row")
                yield Static(id="problem-text", markup=False)  # the row's message whole: a cell is one line
            with TabPane("Since last render", id="tab-diff"):
                with VerticalScroll():
                    yield Static(id="diff", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#problems", DataTable).add_columns("line", "level", "problem", "message")

    async def load(self) -> None:
        mem = self.memory
        checked = await mem.check_capsule()
        try:
            text = (await mem.show_capsule())["text"]
        except InvalidInput as e:
            text = f"_{e.message}_"
        changes = await mem.capsule_changes()
        errors = sum(p["level"] == "error" for p in checked["problems"])
        self.query_one("#capsule-state", Static).update(
            f"{mem.capsule_path.name}: {counted(checked['lines'], 'line')} · "
            + ("valid" if checked["ok"] else counted(errors, "error"))
            + f" · {counted(len(checked['problems']), 'problem')} · "
            + ("edited since the last render" if changes["changed"] else "as last rendered"))
        if text != self.document:
            self.document = text
            self.query_one("#text", Static).update(RichMarkdown(text))
        self.problems = {str(n): p for n, p in enumerate(checked["problems"])}
        refill(self.query_one("#problems", DataTable), [(n, (str(p["line"] or "-"), p["level"], p["code"], p["message"]))
                                                        for n, p in self.problems.items()])
        self._show_problem(cursor_key(self.query_one("#problems", DataTable)))
        self.query_one("#diff", Static).update(
            changes["diff"] or ("no render kept yet" if changes["render"] is None else "no change since the last render"))

    def _show_problem(self, key: str | None) -> None:
        p = self.problems.get(key) if key is not None else None
        self.query_one("#problem-text", Static).update(
            "" if p is None else f"line {p['line'] or '-'}, {p['level']} {p['code']}: {p['message']}")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "problems" and event.row_key is not None:
            self._show_problem(event.row_key.value)

    def action_render(self) -> None:
        self.act(self.memory.render_capsule,
                 lambda r: f"{r['status']}: {counted(r['lines'], 'line')}" + (f", {counted(len(r['absorbed']), 'edit')} taken in"
                                                              if r.get("absorbed") else ""))
