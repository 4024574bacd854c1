"""Dossiers: each topic's current document rendered, its sources, its versions and what
changed between them; refresh a topic now."""

from __future__ import annotations

from functools import partial

from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from strata_daemon.base import timeutil
from strata_daemon.faces.tui.fields import rows as field_rows
from strata_daemon.faces.tui.format import one_line, when
from strata_daemon.faces.tui.screens.base import LayerScreen, cursor_key, refill
from strata_daemon.faces.tui.screens.dialogs import Ask, Details
from strata_daemon.faces.tui.widgets.bars import KeyBar, TitleBar


class DossiersScreen(LayerScreen):
    TITLE = "Dossiers"
    AUTO_FOCUS = "#topics"
    document: str | None = None  # the markdown shown
    BINDINGS = [
        Binding("r", "refresh_topic", "Refresh now"),
        Binding("n", "add_topic", "New topic"),
        Binding("d", "details", "Details"),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.topic: str | None = None
        self.topics: dict[str, dict] = {}  # topic -> its line in the listing

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(classes="panes"):
            with Vertical(id="left"):
                yield DataTable(id="topics", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                with TabbedContent(id="tabs"):
                    with TabPane("Dossier", id="tab-text"):
                        with VerticalScroll():
                            yield Static(id="text")
                    with TabPane("Sources", id="tab-sources"):
                        yield DataTable(id="sources", cursor_type="row")
                    with TabPane("Versions", id="tab-versions"):
                        yield DataTable(id="versions", cursor_type="row")
                    with TabPane("Diff", id="tab-diff"):
                        with VerticalScroll():
                            yield Static(id="diff", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#topics", DataTable).add_columns("topic", "version", "refreshed", "due", "origin")
        self.query_one("#sources", DataTable).add_columns("source", "salience", "says")
        self.query_one("#versions", DataTable).add_columns("version", "made", "generator", "sources", "lines")

    async def load(self) -> None:
        listing = await self.memory.list_dossiers()
        self.topics = {t["topic"]: t for t in listing["topics"]}
        table = self.query_one("#topics", DataTable)
        refill(table, [(t["topic"], (t["topic"], str(t["version"] or "-"), when(t["refreshed_at"]),
                                     "due" if t["due"] else "", t["origin"] + ("" if t["enabled"] else " (off)")))
                       for t in listing["topics"]])
        if table.row_count:
            await self._show_topic(cursor_key(table))

    async def _show_topic(self, topic: str) -> None:
        self.topic = topic
        history = await self.memory.dossier_history(topic)
        refill(self.query_one("#versions", DataTable), [(str(v["version"]), (
            str(v["version"]), when(v["created_at"]), v["generator"], str(v["sources"]), str(v["lines"])))
            for v in history["versions"]])
        text, sources, diff = "_No version yet: press r to write one._", [], ""
        if history["versions"]:
            current = await self.memory.show_dossier(topic)
            text, sources = current["text"], current["sources"]
            diff = (await self.memory.diff_dossier(topic))["diff"] or "(only one version, or no change)"
        if text != self.document:
            self.document = text
            self.query_one("#text", Static).update(RichMarkdown(text))
        episodes = {s["id"]: int(s["id"][1:]) for s in sources if s["id"][:1] == "e" and s["id"][1:].isdigit()}
        cited = await self.memory.get_many(episodes.values())
        refill(self.query_one("#sources", DataTable), [(s["id"], (
            s["id"], "-" if s.get("salience") is None else f"{s['salience']:.3f}",
            one_line(cited[episodes[s["id"]]]["content"], 90) if episodes.get(s["id"]) in cited
            else one_line(s["line"], 90) if s.get("line") else "-"))
            for s in sources])
        self.query_one("#diff", Static).update(diff)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None:
            return
        if event.data_table.id == "topics" and event.row_key.value != self.topic:
            self.run_worker(partial(self._show_topic, event.row_key.value), group="topic", exclusive=True)
        elif event.data_table.id == "versions" and self.topic:
            topic, version = self.topic, int(event.row_key.value)

            async def diff() -> None:
                r = await self.memory.diff_dossier(topic, new=version)
                self.query_one("#diff", Static).update(r["diff"] or f"v{version}: no earlier version to compare")

            self.run_worker(diff, group="diff", exclusive=True)

    def action_refresh_topic(self) -> None:
        if self.topic is None:
            self.notify("no topic selected", severity="warning")
            return
        topic = self.topic
        self.notify(f"refreshing {topic}…")
        self.act(lambda: self.memory.refresh_dossier(topic, force=True),
                 lambda r: f"{topic}: {r['status']}" + (f" (version {r['version']}, {r['generator']})"
                                                        if r.get("version") else ""))

    def action_details(self) -> None:
        if self.topic not in self.topics:
            self.notify("no topic selected", severity="warning")
            return
        self.app.push_screen(Details(f"dossier {self.topic}", field_rows(self.topics[self.topic], timeutil.now())))

    def action_add_topic(self) -> None:
        def answered(values: dict | None) -> None:
            if values and values["topic"].strip():
                self.act(lambda: self.memory.add_topic(values["topic"].strip()),
                         lambda r: f"keeping a dossier on {r['topic']}")
        self.app.push_screen(Ask("Keep a dossier on", [("topic", "topic", "")]), answered)
