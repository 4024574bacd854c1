"""`strata capsule ...`: the hand-editable identity document (check, render, show, stats, watch)."""

from __future__ import annotations

import asyncio
import signal
import time

from strata_daemon.base.wording import counted
from strata_daemon.errors import StrataError
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import emit, inline, note, short_time
from strata_daemon.faces.cli.parsers import adder, integer

COMMANDS = ("capsule",)


def _show_check(r: dict) -> str:
    head = f"{r['path']}: {'ok' if r['ok'] else 'has errors'} ({counted(r['lines'], 'line')})"
    return "\n".join([head] + [f"  {'line ' + str(p['line']) if p['line'] else 'file'}: {p['level']}: {p['message']}"
                               for p in r["problems"]])


def _show_render(r: dict) -> str:
    dry = r["status"] == "dry-run"
    # A dry run reports what the render it previews would do, in the same words.
    would = "would be " if dry else ""
    edits = r["absorbed"] or r["pinned"] or r["hidden"] or r["cut"]
    # The diff is of the file's text: a render that only takes in a person's edits changes none.
    lines = ([r["diff"]] if r["diff"] else [] if edits else ["no change"]) if dry else \
        [f"{r['path']}: {r['status']}, {counted(r['lines'], 'line')}, {r['elapsed_ms']:.0f} ms"]
    # In `fact set`'s words, not a Python repr: quotes around a value said nothing it did not.
    lines += [f"  fact {a['key']}: {a['status']} = {inline(a['value'])}, {would}taken from your edit"
              for a in r["absorbed"]]
    lines += [f"  {would}pinned in {p['block']}: {p['line']}" for p in r["pinned"]]
    lines += [f"  {would}hidden from {h['block']}: {h['line']}" for h in r["hidden"]]
    lines += [f"  over the line budget: {'would cut' if dry else 'cut'} {counted(n, 'line')} of {block}"
              for block, n in r["cut"].items()]
    return "\n".join(lines)


async def cmd_check(args) -> int:
    async with opened(args) as mem:
        r = await mem.check_capsule()
    emit(r, args.json, _show_check)
    return 0 if r["ok"] else 4


async def cmd_render(args) -> int:
    async with opened(args) as mem:
        emit(await mem.render_capsule(dry_run=args.dry_run), args.json, _show_render)
    return 0


async def cmd_show(args) -> int:
    async with opened(args) as mem:
        r = await mem.show_capsule(last_good=args.last_good, render_missing=not args.last_good)
        fallback = "`strata capsule show --last-good` prints strata's newest good render"
        if not r["ok"] and not args.json:
            try:  # point to a good render only where one is kept
                await mem.show_capsule(last_good=True)
            except StrataError:
                fallback = "no good render is kept yet: mend the file, then `strata capsule render` writes one"
    emit(r, args.json, lambda r: r["text"], wrap=False)
    if not r["ok"] and not args.json:  # a person reading it, or a script, learns it is broken
        note(f"strata: warning: {r['path']} has {counted(len(r['problems']), 'error')} (`strata capsule check` "
             f"lists them); {fallback}")
    return 0


async def cmd_stats(args) -> int:
    async with opened(args) as mem:
        r = await mem.capsule_stats()
    emit(r, args.json, lambda r: f"{r['path']}\n  {r['lines']} lines of {r['budget_lines']}, {r['bytes']:,} bytes"
                                 f"\n  from {counted(r['episodes'], 'memory')}, {r['archive_bytes']:,} bytes"
                                 f"{_smaller(r['compression_ratio'])}\n  last render {short_time(r['last_render_at'])}")
    return 0


def _smaller(ratio: float) -> str:
    # Below 1 the capsule is mostly its own shipped text: a ratio would say nothing.
    return f": {ratio}x smaller than they are" if ratio >= 1 else ""


async def cmd_overrides(args) -> int:
    async with opened(args) as mem:
        if args.clear is not None:
            r = await mem.clear_capsule_override(args.clear)
            emit(r, args.json, lambda r: f"cleared: {r['kind']} in {r['block']}: {r['line']}")
            return 0
        rows = await mem.capsule_overrides()
    emit(rows, args.json, lambda rows: "\n".join(f"#{o['id']:<4} {o['kind']:<4} {o['block']:<10} {o['line']}"
                                                 for o in rows) or "no overrides")
    return 0


async def cmd_watch(args) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with opened(args) as mem:
        note(f"watching {mem.capsule_path}; Ctrl-C stops")
        await mem.watch_capsule(stop, on_handled=lambda r: emit(r, True) if args.json else _say(r))
    return 0


def _say(r: dict) -> None:
    """What the watcher did with a save, as the daemon's log says it (its own render: nothing)."""
    at = short_time(time.time())
    if r["action"] == "rendered":
        note(f"{at} edit taken in: {counted(len(r['absorbed']), 'fact')}, {counted(len(r['pinned']), 'line')} "
             f"pinned, {len(r['hidden'])} hidden; {r['status']}")
    elif r["action"] == "invalid":  # the log line above names each error: this says what came of the save
        errors = [p for p in r["problems"] if p["level"] == "error"] or r["problems"]
        note(f"{at} not taken in: the file has {counted(len(errors), 'error')} (`strata capsule check` lists them)")
    elif r["action"] == "missing":
        note(f"{at} the capsule file is gone; `strata capsule render` writes it again")
    elif r["action"] == "failed":
        note(f"{at} not taken in: {r.get('message')}")


def register(sub, common) -> None:
    top = sub.add_parser("capsule", parents=[common], help="The capsule: the document the agent reads first.",
                         description="The capsule: a hand-editable markdown document (capsule/CAPSULE.md) with "
                                     "blocks strata keeps current. See capsule/CAPSULE-SPEC.md.")
    cs = top.add_subparsers(dest="capsule_command", metavar="ACTION", required=True)

    add = adder(cs, common)

    add("check", cmd_check, "Validate the capsule: sections, markers, blocks, the 300-line budget (exit 4 on error).")
    p = add("render", cmd_render, "Take in your edits and render the blocks from the layers.")
    p.add_argument("--dry-run", action="store_true",
                   help="print the diff and the edits a render would take in; change nothing")
    p = add("show", cmd_show, "Print the capsule.")
    p.add_argument("--last-good", action="store_true", help="strata's newest kept render (while the file has errors)")
    add("stats", cmd_stats, "Lines, bytes, and how much smaller it is than the memories behind it.")
    add("watch", cmd_watch, "Watch the capsule and take in each saved edit (the daemon does this too).")
    p = add("overrides", cmd_overrides, "Lines you pinned into or hid from rendered blocks.")
    p.add_argument("--clear", type=integer, metavar="ID", help="drop one, so strata renders that line as it sees fit")
