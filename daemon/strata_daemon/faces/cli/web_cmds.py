"""`strata web ...` and `strata related`: the spiderweb (working set, commit, decay, spread)."""

from __future__ import annotations

import argparse

from strata_daemon.base.wording import counted
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import columns, count, emit, one_line, short_time
from strata_daemon.faces.cli.parsers import adder, integer, number

COMMANDS = ("web", "related", "link")


def _edges(n: int) -> str:
    return counted(n, "edge")


def _show_reached(r: dict, texts: dict[int, str] | None = None) -> str:
    """What a spread reached, a memory by its text (TEXTS) with the path under it."""
    lines = [f"from {', '.join(r['seeds'])} (depth {r['depth']}, threshold {r['threshold']}):"]
    for n in r["reached"]:
        path = " → ".join(n["path"])
        state = "" if n["state"] in ("active", "current") else f" [{n['state']}]"
        text = (texts or {}).get(_episode(n["node"]))
        if text is None:
            lines.append(f"  {n['activation']:.3f}  {n['node']}{state}   via {path}")
        else:
            lines += [f"  {n['activation']:.3f}  #{_episode(n['node'])}{state} {one_line(text, columns() - 16)}",
                      f"         via {path}"]
    if not r["reached"]:
        lines.append("  nothing above the threshold")
    left = r.get("left_out") or {}
    if left.get("below_threshold"):
        seed = r["seeds"][0]
        lines += [f"  left out: {_edges(left['below_threshold'])} of {seed} weaker than the threshold (strength = "
                  f"weight / graph.edge_cap; the strongest {left['strongest']:.3f})",
                  f"  `strata web neighbors {seed}` lists them; --threshold {left['strongest']:g} follows them"]
    return "\n".join(lines + [f"warning: {w}" for w in r["warnings"]])


def _show_context(c: dict) -> str:
    if not c["items"]:
        return "the working set is empty"
    lines = [f"working set ({len(c['items'])} of {c['capacity']})"
             + (", expired: the next call commits it" if c["expired"] else f", expires {short_time(c['expires_at'])}")]
    lines += [f"  {i['node']}   since {short_time(i['activated_at'])}  from {i['source']}" for i in c["items"]]
    return "\n".join(lines)


def _show_activated(r: dict) -> str:
    lines = [f"activated {', '.join(r['activated'])}"]
    if r["evicted"]:
        lines.append(f"left the working set (over capacity): {', '.join(r['evicted'])}")
    if r["expired_commit"]:
        lines.append(f"the previous working set had expired and was committed first "
                     f"({_edges(r['expired_commit']['edges_strengthened'])})")
    return "\n".join(lines + [f"working set: {', '.join(i['node'] for i in r['context'])}"])


def _below(edge: dict) -> str:
    return "" if edge["followed"] else "   below the threshold"


def _show_neighbours(r: dict) -> str:
    weak = sum(not n["followed"] for n in (*r["neighbours"], *r["links"]))
    lines = [f"{r['node']}: {_edges(len(r['neighbours']))}, {counted(len(r['links']), 'link')}; `related` and `web spread` "
             f"follow a strength of {r['threshold']:g} or more" + (f" ({weak} below)" if weak else ""),
             f"  {'weight':>7}  {'strength':>8}"]
    lines += [f"  {n['weight']:7.3f}  {n['strength']:8.3f}  {n['node']}   x{n['activations']}, "
              f"last {short_time(n['last_activated_at'])}{_below(n)}" for n in r["neighbours"]]
    lines += [f"  {'link':>7}  {k['strength']:8.3f}  {k['src']} -{k['type']}-> {k['dst']}{_below(k)}"
              for k in r["links"]]
    return "\n".join(lines)


async def cmd_activate(args) -> int:
    async with opened(args) as mem:
        emit(await mem.activate(args.items), args.json, _show_activated)
    return 0


async def cmd_commit(args) -> int:
    async with opened(args) as mem:
        r = await mem.commit_working_set()
    emit(r, args.json, lambda r: f"co-activated {counted(len(r['committed']), 'item')}: {_edges(r['edges_strengthened'])} "
                                 "strengthened" if r["committed"] else "the working set was empty; nothing to commit")
    return 0


async def cmd_context(args) -> int:
    async with opened(args) as mem:
        emit(await mem.working_set(), args.json, _show_context)
    return 0


async def cmd_decay(args) -> int:
    async with opened(args) as mem:
        r = await mem.decay_web()
    emit(r, args.json, lambda r: f"decay run {r['decay_runs']}: weights x {r['factor']}, {_edges(r['pruned'])} pruned, "
                                 f"{r['edges']} left")
    return 0


async def cmd_neighbours(args) -> int:
    async with opened(args) as mem:
        emit(await mem.neighbours(args.item, limit=args.limit, threshold=args.threshold), args.json,
             _show_neighbours)
    return 0


def _episode(node: str) -> int | None:
    kind, _, ref = node.partition(":")
    return int(ref) if kind == "episode" and ref.isdigit() else None


async def _texts(mem, r: dict) -> dict[int, str]:
    ids = [i for n in r["reached"] if (i := _episode(n["node"])) is not None]
    return {i: m["content"] for i, m in (await mem.get_many(ids)).items()} if ids else {}


async def cmd_spread(args) -> int:
    async with opened(args) as mem:
        r = await mem.spread(args.items, depth=args.depth, threshold=args.threshold, fan_out=args.fan_out,
                                 include_archived=args.include_archived, limit=args.limit)
        texts = {} if args.json else await _texts(mem, r)
    emit(r, args.json, lambda r: _show_reached(r, texts))
    return 0


async def cmd_related(args) -> int:
    async with opened(args) as mem:
        r = await mem.related(args.item, limit=args.limit, depth=args.depth, threshold=args.threshold)
        texts = {} if args.json else await _texts(mem, r)
    emit(r, args.json, lambda r: _show_reached(r, texts))
    return 0


async def cmd_link(args) -> int:
    async with opened(args) as mem:
        r = await mem.link(args.src, args.dst, args.type, remove=args.remove)
    emit(r, args.json, lambda r: f"{r['src']} -{r['type']}-> {r['dst']}: {r['status']}")
    return 0


async def cmd_entities(args) -> int:
    async with opened(args) as mem:
        rows = await mem.entities(kind=args.type, limit=args.limit)
    emit(rows, args.json, lambda rs: "\n".join(f"{r['mentions']:6}  {r['node']}" for r in rs) or "no entities")
    return 0


def register(sub, common) -> None:
    items_help = "items: episode:ID (or just ID), fact:KEY, entity:TYPE:VALUE"
    top = sub.add_parser("web", parents=[common], help="The spiderweb: what goes with what.",
                         description="The spiderweb: Hebbian edges between items used together. Items in the "
                                     "working set are co-activated when it is committed.")
    ws = top.add_subparsers(dest="web_command", metavar="ACTION", required=True)

    add = adder(ws, common)

    def spreading(p, limit: int = 50):
        p.add_argument("--depth", type=integer, help="edges to follow (1-5; default graph.spread_depth)")
        p.add_argument("--threshold", type=number, help="least activation kept (0-1; default graph.spread_threshold)")
        p.add_argument("--limit", type=count, default=limit)

    p = add("activate", cmd_activate, "Put items in the working set (used together).")
    p.add_argument("items", nargs="+", metavar="ITEM", help=items_help)
    add("commit", cmd_commit, "Co-activate everything in the working set now, and empty it.")
    add("context", cmd_context, "Show the working set.")
    add("decay", cmd_decay, "One decay run now: weights x graph.decay_factor, prune below graph.prune_below.")
    p = add("neighbors", cmd_neighbours, "An item's edges, heaviest first, each with its strength (weight / "
                                         "graph.edge_cap) and whether `related` follows it.", aliases=["neighbours"])
    p.add_argument("item", help=items_help)
    p.add_argument("--limit", type=count, default=50)
    p.add_argument("--threshold", type=number, help="mark edges weaker than this (0-1; default graph.spread_threshold)")
    p = add("spread", cmd_spread, "Spreading activation from items over the weighted edges.")
    p.add_argument("items", nargs="+", metavar="ITEM", help=items_help)
    spreading(p)
    p.add_argument("--fan-out", action=argparse.BooleanOptionalAction, default=None,
                   help="divide by the square root of a node's edges (default graph.fan_out_normalise)")
    p.add_argument("--include-archived", action="store_true", help="report archived memories too")

    p = add("entities", cmd_entities, "Entities memories mention, most mentioned first.")
    p.add_argument("--type", help="only this type: person, handle, email, url, host, path (default: every type)")
    p.add_argument("--limit", type=count, default=100)

    p = sub.add_parser("link", parents=[common], help="A typed link between two items.",
                       description="Link item SRC to item DST: related, supports, contradicts or supersedes. "
                                   "Spreading follows links at graph.link_weight; they do not decay.")
    p.set_defaults(handler=cmd_link)
    p.add_argument("src", help=items_help)
    p.add_argument("dst", help=items_help)
    p.add_argument("--type", default="related", help="related, supports, contradicts or supersedes")
    p.add_argument("--remove", action="store_true", help="remove the link instead")

    p = sub.add_parser("related", parents=[common], help="Memories associated with an item in the spiderweb.",
                       description="Memories associated with an item: the episodes a spread from it reaches. "
                                   "It says how many of the item's edges were too weak for the threshold.")
    p.set_defaults(handler=cmd_related)
    p.add_argument("item", help=items_help)
    spreading(p, limit=10)
