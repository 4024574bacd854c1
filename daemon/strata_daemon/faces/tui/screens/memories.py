"""Memories: search in any mode, see why each hit ranked where it did, and act on it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, DataTable, Input, Label, Select, Static

from strata_daemon.base import timeutil
from strata_daemon.base.wording import counted
from strata_daemon.config.settings import MODES
from strata_daemon.faces.tui.fields import rows as field_rows
from strata_daemon.faces.tui.format import one_line, when
from strata_daemon.faces.tui.screens.base import LayerScreen, cursor_key, left_for, refill, room
from strata_daemon.faces.tui.screens.dialogs import Confirm, Details
from strata_daemon.faces.tui.widgets.bars import KeyBar, TitleBar
from strata_daemon.faces.tui.widgets.explain import ExplainPanel


def summary(result: dict) -> str:
    used = result["mode_used"] + ("" if result["mode_used"] == result["mode"] else f" (asked {result['mode']})")
    text = f"recall {result['recall_id']} · {used} · {counted(len(result['hits']), 'hit')} of {counted(result['candidates'], 'candidate')}"
    return text + "".join(f"\n⚠ {w}" for w in result["warnings"])


def purge_question(episode_id: int, plan: dict) -> str:
    """The confirmation of a purge: it is final, and what goes with the memory."""
    lines = [f"Purge memory {episode_id} for good? Its words leave every layer and the file; nothing can undo it."]
    merged = [m["id"] for m in plan["memories"] if m["id"] != episode_id]
    if merged:
        lines.append(f"Merged into it, purged too: {', '.join(map(str, merged))}")
    lines += [f"Fact {f['key']}: " + ("the value it gave goes" if len(f["values"]) == 1 else
                                       f"the {len(f['values'])} values it gave go") for f in plan["facts"]]
    lines += [f"Dossier {d['topic']} v{d['version']}: {one_line(d['line'], 70)}" for d in plan["dossier_lines"][:5]]
    lines += [f"Capsule: {one_line(line, 70)}" for line in plan["capsule_lines"][:5]]
    return "\n".join(lines)


FIRST = ("content", "kind", "state", "tier", "event_at", "recorded_at", "source", "session", "context")  # details


class MemoriesScreen(LayerScreen):
    TITLE = "Memories"
    AUTO_FOCUS = "#hits"
    BINDINGS = [
        Binding("slash", "focus_search", "Search"),
        Binding("f", "factual", "Pin factual"),
        Binding("x", "irrelevant", "Irrelevant"),
        Binding("plus", "feedback('success')", "Recall helped"),
        Binding("minus", "feedback('failure')", "Recall failed"),
        Binding("a", "archive", "Archive/restore"),
        Binding("P", "purge", "Purge for good"),
        Binding("d", "details", "Details"),
        Binding("w", "web", "In spiderweb"),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.result: dict | None = None  # the recall shown, None while the newest memories are shown
        self.rows: dict[int, dict] = {}
        self.shown: list[dict] | None = None  # the memories listed, in order

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="searchbar"):
            yield Input(placeholder="search memories (Enter)", id="query")
            yield Select([(m, m) for m in MODES], allow_blank=False, id="mode")
            yield Checkbox("archived too", id="archived")
        with Horizontal(classes="panes"):
            yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
            with Vertical(id="side"):
                # The list cuts a memory to one line; the one selected is shown whole here.
                with VerticalScroll(id="fulltext"):
                    yield Static(id="text", markup=False)
                yield Static(id="why", markup=False)
                yield Label("Why", classes="section")
                yield ExplainPanel(id="explain")
        yield Static(id="summary")
        yield KeyBar()

    def on_mount(self) -> None:
        # What a memory says first; its match, day and id after it, as far as the width goes.
        self.query_one("#hits", DataTable).add_columns("content", "match", "when", "id", "state")
        self.query_one("#mode", Select).value = self.memory.config["recall.mode"]

    @property
    def selected(self) -> dict | None:
        key = cursor_key(self.query_one("#hits", DataTable))
        return None if key is None else self.rows.get(int(key))

    # -- loading -----------------------------------------------------------------------------

    async def load(self) -> None:
        """The newest memories, or (after a search) the shown hits' current state: reloading
        never recalls again, since a recall is recorded and feeds the spiderweb."""
        if self.result is None:
            states = ("active", "archived") if self.query_one("#archived", Checkbox).value else ("active",)
            rows = await self.memory.timeline(limit=100, states=states)
            self._show(rows)
            self.query_one("#summary", Static).update(f"the {len(rows)} newest memories; / to search")
            return
        current = await self.memory.get_many(h["id"] for h in self.result["hits"])
        for hit in self.result["hits"]:
            if hit["id"] in current:  # a purged memory keeps what was shown
                now = current[hit["id"]]
                hit.update(state=now["state"], factual=now["factual"], irrelevant=now["irrelevant"])
        self._show(self.result["hits"])

    def _show(self, memories: list[dict]) -> None:
        """Memories or recall hits; a hit's `match` is as measured, not relative to the best."""
        self.rows, self.shown = {r["id"]: r for r in memories}, memories
        table = self.query_one("#hits", DataTable)
        states = [r.get("state", "active") + (" factual" if r.get("factual") else "")
                  + (" irrelevant" if r.get("irrelevant") else "") for r in memories]
        # The text takes what match, day, id and state leave, measured on what is shown.
        ids = max((len(str(r["id"])) for r in memories), default=2)
        width = max(20, left_for(room(self, 0.6), 5, 16, max(ids, 2), max(map(len, states), default=5)))
        refill(table, [(str(r["id"]), (
            one_line(r["content"], width), f"{r['match']:.2f}" if "match" in r else "-", when(r["event_at"]),
            str(r["id"]), state)) for r, state in zip(memories, states)])
        if not table.row_count:
            self.query_one("#explain", ExplainPanel).clear()
            self.query_one("#text", Static).update("")
            self.query_one("#why", Static).update("")

    def on_resize(self) -> None:
        if getattr(self, "shown", None) is not None:
            self._show(self.shown)

    def search(self, query: str) -> None:
        if not query.strip():
            self.result = None
            self.reload()
            self.query_one("#hits", DataTable).focus()  # keys act on the list again, not typed into the search
            return
        mode = self.query_one("#mode", Select).value
        archived = self.query_one("#archived", Checkbox).value

        async def run() -> dict:
            return await self.memory.recall(query, mode=mode, include_archived=archived)

        def shown(result: dict) -> str:
            self.result = result
            self._show(result["hits"])
            self.query_one("#summary", Static).update(summary(result))
            self.query_one("#hits", DataTable).focus()
            return counted(len(result['hits']), 'hit')

        self.act(run, shown, reload=False)

    # -- events ------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.search(event.value)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if self.result is None:
            self.reload()
        else:
            self.search(self.result["query"])

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "hits" or event.row_key is None:
            return
        panel = self.query_one("#explain", ExplainPanel)
        row = self.rows.get(int(event.row_key.value))
        if row is None:
            return
        self.query_one("#text", Static).update(row["content"])
        self.query_one("#why", Static).update(f"why: {row['why']}" if "why" in row else "")
        if self.result is not None and "explain" in row:
            panel.show_hit(row, self.result["weights"])
            return

        async def scores() -> None:
            panel.show_scores(await self.memory.get(row["id"]))

        self.run_worker(scores, group="explain", exclusive=True)

    # -- actions -----------------------------------------------------------------------------

    def action_focus_search(self) -> None:
        self.query_one("#query", Input).focus()

    def _with_selected(self, then) -> None:
        row = self.selected
        if row is None:
            self.notify("nothing selected", severity="warning")
        else:
            then(row)

    def action_factual(self) -> None:
        def go(row):
            pin = not row.get("factual")
            self.act(lambda: self.memory.mark(row["id"], factual=pin),
                     f"memory {row['id']} {'pinned as factual' if pin else 'no longer factual'}")
        self._with_selected(go)

    def action_irrelevant(self) -> None:
        def go(row):
            flag = not row.get("irrelevant")
            self.act(lambda: self.memory.mark(row["id"], irrelevant=flag),
                     f"memory {row['id']} {'marked irrelevant' if flag else 'relevant again'}")
        self._with_selected(go)

    def action_feedback(self, outcome: str) -> None:
        if self.result is None:
            self.notify("feedback is given on a recall: search first", severity="warning")
            return
        rid = self.result["recall_id"]
        self.act(lambda: self.memory.feedback(rid, outcome),
                 lambda r: f"recall {rid}: {outcome} shared by {counted(len(r['episodes']), 'memory')}")

    def action_archive(self) -> None:
        def go(row):
            if row.get("state") == "archived":
                self.act(lambda: self.memory.restore(row["id"]), f"memory {row['id']} restored")
                return

            def answered(yes: bool | None) -> None:
                if yes:
                    self.act(lambda: self.memory.forget(row["id"], reason="archived in the inspector"),
                             f"memory {row['id']} archived")
            self.app.push_screen(Confirm(f"Archive memory {row['id']}? It leaves recall until restored."),
                                 answered)
        self._with_selected(go)

    def action_purge(self) -> None:
        def go(row):
            async def ask() -> None:
                plan = await self.memory.purge_plan(ids=[row["id"]])

                def answered(yes: bool | None) -> None:
                    if yes:
                        self.act(lambda: self.memory.forget(row["id"], purge=True),
                                 lambda r: f"memory {row['id']} purged with what was derived from it")
                self.app.push_screen(Confirm(purge_question(row["id"], plan)), answered)
            self.run_worker(ask, group="purge")
        self._with_selected(go)

    def action_details(self) -> None:
        def go(row):
            async def show() -> None:
                full = await self.memory.get(row["id"])
                self.app.push_screen(Details(f"memory {row['id']}", field_rows(full, timeutil.now(), first=FIRST)))
            self.run_worker(show, group="details")
        self._with_selected(go)

    def action_web(self) -> None:
        self._with_selected(lambda row: self.app.open_in_web(f"episode:{row['id']}"))
