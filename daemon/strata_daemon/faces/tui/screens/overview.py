"""Overview: is the daemon alive, what did each phase do last and when is it next, how much
each layer holds, and what went wrong lately."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Static

from strata_daemon.app import listeners
from strata_daemon.base import timeutil
from strata_daemon.base.wording import counted
from strata_daemon.faces.tui.format import age, one_line, size, when
from strata_daemon.faces.tui.screens.base import LayerScreen, refill
from strata_daemon.faces.tui.widgets.bars import KeyBar, TitleBar


def daemon_line(d: dict) -> str:
    running = d["running"]
    head = "daemon: not running" if running is None else f"daemon: running (pid {running})"
    beat = d["heartbeat_age_seconds"]
    line = f"{head} · heartbeat {'never' if beat is None else age(beat) + ' ago'} · loop {d['loop_count']}"
    return line + (f" · api {listeners.line(d['listeners'])}" if d.get("listeners") else "")


def layer_rows(s: dict) -> list[tuple[str, str]]:
    states = s["by_state"]
    cap = s["capsule"]
    return [
        ("memories", f"{s['episodes']:,} ({s['by_tier']['hot']:,} hot, {s['by_tier']['cold']:,} cold, "
                     f"{states.get('archived', 0):,} forgotten)"),
        ("embedding backlog", f"{s['embedding_backlog']:,}"),
        ("access events to fold", f"{s['pending_access_events']:,}"),
        ("recalls / feedback", f"{s['recalls']:,} / {s['feedback']:,}"),
        ("current facts", f"{s['facts']:,}"),
        ("spiderweb edges", f"{s['web_edges']:,}"),
        ("dossiers", f"{s['dossiers']:,}"),
        ("capsule", f"{counted(cap['lines'], 'line')}, " + ("valid" if cap["ok"] else counted(cap["errors"], "error"))),
        ("database", size(s["database_bytes"])),
        ("home", s["home"]),
        ("learning phase", s["phase"]),
    ]


class OverviewScreen(LayerScreen):
    TITLE = "Overview"
    AUTO_FOCUS = "#phases"

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="daemon")
        with Horizontal(classes="panes"):
            with Vertical(id="left"):
                yield Label("Phases", classes="section")
                yield DataTable(id="phases", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                yield Label("Layers", classes="section")
                yield DataTable(id="layers", cursor_type="none", show_header=False)
        yield Label("Recent errors", classes="section", id="errors-title")
        yield DataTable(id="errors", cursor_type="row")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#phases", DataTable).add_columns("phase", "every", "last run", "status", "took", "next")
        self.query_one("#layers", DataTable).add_columns("layer", "holds")
        self.query_one("#errors", DataTable).add_columns("when", "phase", "error")

    async def load(self) -> None:
        s = await self.memory.status()
        now = timeutil.now()
        d = s["daemon"]
        self.query_one("#daemon", Static).update(daemon_line(d) + f" · agent {s['agent']}")
        rows = []
        for p in d["phases"]:
            last = p["last"] or {}
            took = None if not last.get("ended_at") else last["ended_at"] - last["started_at"]
            nxt = p["next_at"]
            rows.append((p["phase"], (
                p["phase"], age(p["every_seconds"]), "never" if not last else age(now - last["started_at"]) + " ago",
                last.get("status", "-"), "-" if took is None else f"{took:.2f} s",
                f"after {p['after']}" if p["after"] else "-" if nxt is None else
                ("due" if nxt <= now else "in " + age(nxt - now)))))
        refill(self.query_one("#phases", DataTable), rows)
        refill(self.query_one("#layers", DataTable), [(name, (name, value)) for name, value in layer_rows(s)])
        refill(self.query_one("#errors", DataTable), [(str(n), (when(e["started_at"]), e["phase"],
                                                                one_line(e["error"] or "", 100)))
                                                       for n, e in enumerate(d["recent_errors"])])
        # No errors, no section: at 80x24 its rows let every phase show.
        for part in ("#errors", "#errors-title"):
            self.query_one(part).display = bool(d["recent_errors"])
