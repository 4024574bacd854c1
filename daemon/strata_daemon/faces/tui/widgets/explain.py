"""Why a memory was recalled: every signal with its weight, each retriever's rank and score,
the graph path, and the features behind them."""

from __future__ import annotations

from textual.widgets import DataTable

from strata_daemon.base.wording import plain
from strata_daemon.faces.tui.format import explain


class ExplainPanel(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns("", "signal", "value")

    def show_hit(self, hit: dict, weights: dict[str, float]) -> None:
        self.clear()
        for group, name, value in explain(hit, weights):
            self.add_row(group, name, value)

    def show_scores(self, memory: dict) -> None:
        """A memory outside a recall: its standing scores as of now (no query, so no relevance)."""
        self.clear()
        for name, value in memory["scores"].items():
            self.add_row("standing", name, f"{value:.4g}" if isinstance(value, float) else plain(value))
        for name in ("access_count", "success_count", "failure_count", "importance", "factual", "irrelevant",
                     "state"):
            self.add_row("memory", name, plain(memory.get(name)))
