"""Spiderweb: the selected item's neighbours as a tree with edge weights (each branch opens
the next hop), a spread from any node, and a jump to any node by name."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Label, Tree

from ..format import one_line
from ..widgets.bars import KeyBar, TitleBar
from .base import LayerScreen

class WebScreen(LayerScreen):
    TITLE = "Spiderweb"
    AUTO_FOCUS = "#web"
    BINDINGS = [
        Binding("slash", "focus_node", "Jump to node"),
        Binding("s", "spread", "Spread from selected"),
        Binding("enter", "centre", "Centre on selected", show=False),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.node: str | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="searchbar"):
            yield Input(placeholder="node: episode:12, fact:user.timezone, entity:host:web-01 (Enter)", id="node")
        with Horizontal():
            with Vertical(id="left"):
                yield Tree("(no node)", id="web")
            with Vertical(id="right"):
                yield Label("Spread", classes="section", id="spread-title")
                yield DataTable(id="reached", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#reached", DataTable).add_columns("node", "activation", "state", "path")
        self.query_one("#web", Tree).root.expand()

    def show(self, node: str) -> None:
        """Centre the tree on `node` (from another screen or the jump box)."""
        self.node = node
        self.query_one("#node", Input).value = node
        if self.is_attached:
            self.reload()

    async def load(self) -> None:
        if self.app.pending_web_node:  # sent here from another screen
            self.node, self.app.pending_web_node = self.app.pending_web_node, None
            self.query_one("#node", Input).value = self.node
        if self.node is None:  # start from the most mentioned entity, else the newest memory
            entities = await self.memory.web.entities(limit=1)
            newest = [] if entities else await self.memory.timeline(limit=1)
            if not entities and not newest:
                return
            self.node = entities[0]["node"] if entities else f"episode:{newest[0]['id']}"
            self.query_one("#node", Input).value = self.node
        r = await self.memory.web.neighbours(self.node)
        tree = self.query_one("#web", Tree)
        tree.clear()
        tree.root.set_label(f"{r['node']} ({r['state']})")
        tree.root.data = r["node"]
        self._fill(tree.root, r)
        tree.root.expand()

    def _fill(self, branch, r: dict) -> None:
        for e in r["neighbours"]:
            branch.add(f"{e['node']}  w {e['weight']:.3f} · {e['activations']}×", data=e["node"],
                       allow_expand=True)
        for link in r["links"]:
            other = link["dst"] if link["src"] == r["node"] else link["src"]
            branch.add(f"{other}  ({link['type']} link)", data=other, allow_expand=True)
        if not r["neighbours"] and not r["links"]:
            branch.add_leaf("(no edges yet)")

    async def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        branch = event.node
        if branch.is_root or branch.children or branch.data is None:
            return
        node = branch.data

        async def hop() -> None:
            self._fill(branch, await self.memory.web.neighbours(node))

        self.run_worker(hop, group="hop")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.show(event.value.strip())

    def _selected(self) -> str | None:
        node = self.query_one("#web", Tree).cursor_node
        return None if node is None else node.data

    def action_focus_node(self) -> None:
        self.query_one("#node", Input).focus()

    def action_centre(self) -> None:
        node = self._selected()
        if node:
            self.show(node)

    def action_spread(self) -> None:
        node = self._selected() or self.node
        if node is None:
            return

        async def run() -> dict:
            return await self.memory.web.spread([node])

        def shown(r: dict) -> str:
            self.query_one("#spread-title", Label).update(f"Spread from {node} (depth {r['depth']})")
            table = self.query_one("#reached", DataTable)
            table.clear()
            for x in r["reached"]:
                table.add_row(x["node"], f"{x['activation']:.3f}", x["state"], one_line(" → ".join(x["path"]), 80))
            return f"{len(r['reached'])} nodes reached" + "".join(f"; {w}" for w in r["warnings"])

        self.act(run, shown, reload=False)
