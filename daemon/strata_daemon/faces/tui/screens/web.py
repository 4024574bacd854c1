"""Spiderweb: the selected item's neighbours as a tree with edge weights (each branch opens
the next hop), a picture of the highlighted node's neighbourhood, a spread from any node (and
why one reached nothing), and a jump to any node by name. Nodes show what they say, not ids."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Label, Static, Tree

from strata_daemon.base.wording import counted
from strata_daemon.errors import StrataError
from strata_daemon.faces.tui.format import node_short, node_text, nothing_reached, one_line
from strata_daemon.faces.tui.screens.base import LayerScreen, problem
from strata_daemon.faces.tui.widgets.bars import KeyBar, TitleBar
from strata_daemon.faces.tui.widgets.webpicture import WebPicture

LABEL_CHARS = 70  # of a node's text in the tree and the spread table


def around(r: dict, texts: dict[str, str | None]) -> list[tuple[str, str, str]]:
    """A node's neighbours as (node, its text, the weight or link type), edges heaviest first."""
    out = [(e["node"], node_text(e["node"], texts.get(e["node"])), f"{e['weight']:.3f}") for e in r["neighbours"]]
    for link in r["links"]:
        other = link["dst"] if link["src"] == r["node"] else link["src"]
        out.append((other, node_text(other, texts.get(other)), link["type"]))
    return out


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
        self.seen: dict[str, tuple[dict, dict]] = {}  # node -> (its neighbours, their texts), this load's

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="searchbar"):
            yield Input(placeholder="node: episode:12, fact:user.timezone, entity:host:web-01 (Enter)", id="node")
        yield WebPicture(id="picture")
        with Horizontal(classes="panes"):
            with Vertical(id="left"):
                yield Tree("(no node)", id="web")
            with Vertical(id="right"):
                yield Label("Spread", classes="section", id="spread-title")
                yield DataTable(id="reached", cursor_type="row", zebra_stripes=True)
                yield Static(id="spread-note")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#reached", DataTable).add_columns("activation", "path", "state", "node")
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
            entities = await self.memory.entities(limit=1)
            newest = [] if entities else await self.memory.timeline(limit=1)
            if not entities and not newest:
                return
            self.node = entities[0]["node"] if entities else f"episode:{newest[0]['id']}"
            self.query_one("#node", Input).value = self.node
        self.seen = {}
        r, texts = await self._around(self.node)
        tree = self.query_one("#web", Tree)
        tree.clear()
        tree.root.set_label(Text(f"{one_line(node_text(r['node'], texts.get(r['node'])), LABEL_CHARS)} ({r['state']})"))
        tree.root.data = r["node"]
        self._fill(tree.root, r, texts)
        tree.root.expand()
        self._picture(r["node"])

    async def _around(self, node: str) -> tuple[dict, dict]:
        """The node's neighbours and what each of them (and it) says: two database hops."""
        if node not in self.seen:
            r = await self.memory.neighbours(node)
            self.seen[node] = r, await self.memory.node_texts([node, *(n for n, _, _ in around(r, {}))])
        return self.seen[node]

    def _picture(self, node: str) -> None:
        r, texts = self.seen[node]
        self.query_one("#picture", WebPicture).show(
            node_text(node, texts.get(node)), [(text, weight) for _, text, weight in around(r, texts)])

    def _fill(self, branch, r: dict, texts: dict) -> None:
        edges = len(r["neighbours"])
        for n, (other, text, weight) in enumerate(around(r, texts)):
            # The weight first: a narrow pane cuts the end of the line.
            detail = f"w {weight} · {r['neighbours'][n]['activations']}×" if n < edges else f"{weight} link"
            # Text, not a string: Textual would read brackets in a memory as markup.
            branch.add(Text(f"{detail}  {one_line(text, LABEL_CHARS)}"), data=other, allow_expand=True)
        if not r["neighbours"] and not r["links"]:
            branch.add_leaf("(no edges yet)")

    async def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        branch = event.node
        if branch.is_root or branch.children or branch.data is None:
            return
        node = branch.data

        async def hop() -> None:
            try:
                self._fill(branch, *await self._around(node))
            except StrataError as e:  # gone since the tree was drawn
                self.notify(problem(e), title="could not open", severity="error")

        self.run_worker(hop, group="hop")

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        node = event.node.data
        if node is None:
            return

        async def draw() -> None:
            try:
                await self._around(node)
            except StrataError as e:
                self.notify(problem(e), title="could not draw", severity="error")
                return
            self._picture(node)

        self.run_worker(draw, group="picture", exclusive=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.show(event.value.strip())
            self.query_one("#web", Tree).focus()  # keys act on the graph again, not typed into the input

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

        mem, graph = self.memory, self.memory.config.tuning.graph

        async def run() -> tuple[dict, dict, str]:
            r = await mem.spread([node])
            texts = await mem.node_texts([x["node"] for x in r["reached"]]) if r["reached"] else {}
            why = ""
            if not r["reached"]:
                n = await mem.neighbours(node)
                why = nothing_reached([e["weight"] for e in n["neighbours"]], len(n["links"]),
                                      threshold=r["threshold"], cap=graph.edge_cap, fan_out=r["fan_out"],
                                      link_weight=graph.link_weight)
            return r, texts, why

        def shown(result: tuple[dict, dict, str]) -> str:
            r, texts, why = result
            self.query_one("#spread-title", Label).update(
                f"Spread from {node_short(node)} (depth {r['depth']}, threshold {r['threshold']:g})")
            table = self.query_one("#reached", DataTable)
            table.clear()
            for x in r["reached"]:
                table.add_row(f"{x['activation']:.3f}", " → ".join(map(node_short, x["path"])), x["state"],
                              one_line(node_text(x["node"], texts.get(x["node"])), LABEL_CHARS), key=x["node"])
            self.query_one("#spread-note", Static).update(f"Nothing reached: {why}." if why else "")
            said = f"{counted(len(r['reached']), 'node')} reached" if r["reached"] else f"nothing reached: {why}"
            return said + "".join(f"; {w}" for w in r["warnings"])

        self.act(run, shown, reload=False)
