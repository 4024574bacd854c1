"""`strata consolidate`: one consolidation pass now, a dry run of it, or undoing one."""

from __future__ import annotations

from strata_daemon.base.wording import counted
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import emit, one_line
from strata_daemon.faces.cli.parsers import integer

COMMANDS = ("consolidate",)
SHOWN = 200  # changes a dry run lists; --json has them all


def _show(r: dict, texts: dict[int, str]) -> str:
    head = ("would change" if r["dry_run"] else f"run {r['run']} changed") + f" ({counted(r['memories'], 'memory')}, " \
           f"{r['seconds']:g} s): " + ", ".join(f"{k} {v}" for k, v in r["counts"].items())
    lines = [head]
    for a in r["actions"][:SHOWN] if r["dry_run"] else []:
        lines.append(f"  #{a['episode']:<7} {a['rule']:<12} {one_line(texts.get(a['episode'], ''), 80)}")
        lines.append(f"  {'':<21} {a['reason']}")
    if r["dry_run"] and len(r["actions"]) > SHOWN:
        lines.append(f"  ... and {len(r['actions']) - SHOWN} more (--json lists them all)")
    return "\n".join(lines)


async def cmd_consolidate(args) -> int:
    async with opened(args, actor="cli") as mem:
        if args.undo is not None:
            r = await mem.undo_consolidation(args.undo)
            emit(r, args.json, lambda r: f"run {r['run']}: {counted(r['undone'], 'change')} undone")
            return 0
        r = await mem.consolidate(dry_run=args.dry_run, rules=args.rule)
        shown = {} if args.json or not args.dry_run else await mem.get_many(a["episode"] for a in r["actions"][:SHOWN])
    emit(r, args.json, lambda r: _show(r, {i: ep["content"] for i, ep in shown.items()}))
    return 0


def register(sub, common) -> None:
    from strata_daemon.app.public import CONSOLIDATION_RULES as RULES

    p = sub.add_parser("consolidate", parents=[common],
                       help="Consolidate now (the daemon does it nightly): merge, replay, potentiate, promote, "
                            "interference, stale decay, archive to the cold tier, associate.",
                       description="One consolidation pass over this namespace. Every change is audited with "
                                   "the values before it; --dry-run shows each change and why without making it.")
    p.add_argument("--dry-run", action="store_true", help="show what would change and why, change nothing")
    p.add_argument("--rule", action="append", choices=RULES, metavar="RULE",
                   help=f"run only this rule (repeatable): {', '.join(RULES)}")
    p.add_argument("--undo", type=integer, metavar="RUN", help="put back what run RUN changed")
    p.set_defaults(handler=cmd_consolidate)
