"""Why a memory was recalled: every signal with its weight, each retriever's rank and score,
the graph path, and the features behind them."""

from __future__ import annotations

from textual.widgets import DataTable

from strata_daemon.base.wording import plain
from strata_daemon.faces.tui.format import explain


class ExplainPanel(DataTable):
    """The explanation as a table; Enter shows it whole, where a narrow panel cuts its values."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns("", "signal", "value")
        self.title = "why"

    def show_hit(self, hit: dict, weights: dict[str, float]) -> None:
        self.clear()
        self.title = f"why memory {hit['id']} ranked {hit.get('rank', '')}".strip()
        for group, name, value in explain(hit, weights):
            self.add_row(group, name, value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        from strata_daemon.faces.tui.screens.dialogs import Details

        event.stop()
        rows = [self.get_row_at(i) for i in range(self.row_count)]
        self.app.push_screen(Details(self.title, [(f"{group} · {name}", str(value)) for group, name, value in rows]))

    def show_scores(self, memory: dict) -> None:
        """A memory outside a recall: its standing scores as of now (no query, so no relevance)."""
        self.clear()
        self.title = f"standing scores of memory {memory['id']}"
        for name, value in memory["scores"].items():
            self.add_row("standing", name, f"{value:.4g}" if isinstance(value, float) else plain(value))
        for name in ("access_count", "success_count", "failure_count", "importance", "factual", "irrelevant",
                     "state"):
            self.add_row("memory", name, plain(memory.get(name)))
