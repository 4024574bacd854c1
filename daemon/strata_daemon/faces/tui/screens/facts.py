"""Facts: the current values, which are stale, the history of the selected key, and the
conflicts; edit, add and retract through the same store API as `strata fact`."""

from __future__ import annotations

from functools import partial

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Checkbox, DataTable, Input, Label

from strata_daemon.base import timeutil
from strata_daemon.faces.tui.fields import rows as field_rows
from strata_daemon.faces.tui.format import age, fact_value, one_line, when
from strata_daemon.faces.tui.screens.base import LayerScreen, cursor_key, left_for, refill, room
from strata_daemon.faces.tui.screens.dialogs import Ask, Confirm, Details
from strata_daemon.faces.tui.widgets.bars import KeyBar, TitleBar

SOURCE = "person:tui"


KEY_CHARS = 34  # a longer key is cut in the list; the history's title names it whole


class FactsScreen(LayerScreen):
    # A key and its value need more room than a memory's line: side by side from 160 columns.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (160, "-wide")]
    TITLE = "Facts"
    AUTO_FOCUS = "#facts"
    BINDINGS = [
        Binding("e", "edit", "Edit value"),
        Binding("n", "new", "New fact"),
        Binding("r", "retract", "Retract"),
        Binding("k", "acknowledge", "Acknowledge conflict"),
        Binding("d", "details", "Details"),
        Binding("slash", "focus_filter", "Filter"),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.facts: dict[str, dict] = {}
        self.history: dict[str, dict] = {}  # value id -> the value as its history gives it

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="searchbar"):
            yield Input(placeholder="key prefix (Enter)", id="prefix")
            yield Checkbox("stale only", id="stale")
        with Horizontal(classes="panes"):
            with Vertical(id="left"):
                yield DataTable(id="facts", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                yield Label("History", classes="section", id="history-title")
                yield DataTable(id="history", cursor_type="row")
                yield Label("Conflicts", classes="section")
                yield DataTable(id="conflicts", cursor_type="row")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#facts", DataTable).add_columns("key", "value", "source", "confirmed")
        self.query_one("#history", DataTable).add_columns("value", "from", "to", "source", "")
        self.query_one("#conflicts", DataTable).add_columns("id", "key", "was", "became", "when", "state")

    @property
    def selected(self) -> dict | None:
        key = cursor_key(self.query_one("#facts", DataTable))
        return None if key is None else self.facts.get(key)

    async def load(self) -> None:
        prefix = self.query_one("#prefix", Input).value.strip() or None
        facts = await self.memory.list_facts(stale=self.query_one("#stale", Checkbox).value, prefix=prefix)
        conflicts = await self.memory.fact_conflicts(limit=100)
        self.facts = {f["key"]: f for f in facts}
        now = timeutil.now()
        confirmed = [("stale · " if f["stale"] else "") + (age(now - f["confirmed_at"]) + " ago" if f["confirmed_at"]
                                                            else "-") for f in facts]
        sources = [one_line(f["source"], 14) for f in facts]
        # Measured on what is shown: the value (what a person reads) whole where it can be, the
        # key what it leaves but never under 16 columns (the history's title names it whole).
        total = room(self, 0.6)
        side = (max(map(len, sources), default=6), max(map(len, confirmed), default=9))
        values = max((len(one_line(f["value"], 200)) for f in facts), default=5)
        key = min(KEY_CHARS, max((len(f["label"]) for f in facts), default=3),
                  max(16, left_for(total, min(values, total), *side)))
        width = max(12, left_for(total, key, *side))
        refill(self.query_one("#facts", DataTable), [(f["key"], (
            one_line(f["label"], key), one_line(f["value"], width), source, shown))
            for f, source, shown in zip(facts, sources, confirmed)])
        await self._history(cursor_key(self.query_one("#facts", DataTable)))
        # Cut to fit 80 columns whole (the when and state columns fell off the pane's edge); the
        # fact's own history shows its values at length, `strata fact conflicts` whole.
        refill(self.query_one("#conflicts", DataTable), [(str(c["id"]), (
            str(c["id"]), one_line(c["key"], 16), one_line(fact_value((c["old"] or {}).get("value")), 12),
            one_line(fact_value(c["new"]["value"]), 12), when(c["at"])[5:],
            "acknowledged" if c["acknowledged_at"] else c["reason"]))
            for c in conflicts])

    def on_resize(self) -> None:
        self.reload()  # the value column takes the width there is

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.reload()
        self.query_one("#facts", DataTable).focus()  # keys act on the list again, not typed into the filter

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self.reload()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "facts" or event.row_key is None:
            return
        self.run_worker(partial(self._history, event.row_key.value), group="history", exclusive=True)

    async def _history(self, key: str | None) -> None:
        """The selected key's values over time (none when no fact is selected)."""
        h = None if key is None else await self.memory.fact_history(key)
        self.history = {str(v["value_id"]): v for v in (h["history"] if h else [])}
        self.query_one("#history-title", Label).update("History" + (f" of {h['label']}" if h else ""))
        refill(self.query_one("#history", DataTable), [(str(v["value_id"]), (
            one_line(fact_value(v["value"]), 40), when(v["valid_from"]), when(v["valid_to"]), v["source"],
            "current" if v["current"] else "")) for v in (h["history"] if h else [])])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a value of the history: the whole of it, where the narrow pane cuts its cells."""
        value = self.history.get(event.row_key.value) if event.data_table.id == "history" else None
        if value is not None:
            self.app.push_screen(Details(f"a value of {value.get('label') or value.get('key', 'the fact')}",
                                         field_rows(value, timeutil.now())))

    def action_focus_filter(self) -> None:
        self.query_one("#prefix", Input).focus()

    def action_edit(self) -> None:
        fact = self.selected
        if fact is None:
            self.notify("no fact selected", severity="warning")
            return

        def answered(values: dict | None) -> None:
            if values is None or values["value"] == fact["value"]:
                return

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self.act(lambda: self.memory.set_fact(fact["key"], values["value"], source=SOURCE),
                             f"{fact['label']} = {values['value']}")
            self.app.push_screen(Confirm(f"Set {fact['label']} from {fact['value']!r} to {values['value']!r}? "
                                         "The old value stays in its history."), confirmed)
        self.app.push_screen(Ask(f"New value of {fact['label']}", [("value", "value", fact["value"])]), answered)

    def action_new(self) -> None:
        def answered(values: dict | None) -> None:
            if values:
                self.act(lambda: self.memory.set_fact(values["key"], values["value"], source=SOURCE),
                         lambda r: f"{r['label']} = {r['value']}")
        self.app.push_screen(Ask("A new fact", [("key", "key (e.g. user.timezone)", ""), ("value", "value", "")]),
                             answered)

    def action_retract(self) -> None:
        fact = self.selected
        if fact is None:
            self.notify("no fact selected", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.act(lambda: self.memory.retract_fact(fact["key"], source=SOURCE),
                         f"{fact['label']} retracted")
        self.app.push_screen(Confirm(f"Retract {fact['label']} (now {fact['value']!r})? "
                                     "Its history is kept."), confirmed)

    def action_details(self) -> None:
        fact = self.selected
        if fact is None:
            self.notify("no fact selected", severity="warning")
            return
        self.app.push_screen(Details(f"fact {fact['label']}",
                                     field_rows(fact, timeutil.now(), first=("label", "value", "source"))))

    def action_acknowledge(self) -> None:
        key = cursor_key(self.query_one("#conflicts", DataTable))
        if key is None:
            self.notify("no conflicts", severity="warning")
            return
        cid = int(key)
        self.act(lambda: self.memory.acknowledge_conflict(cid), f"conflict {cid} acknowledged")
