"""`strata tui`: the inspector (Textual is loaded only here)."""

from __future__ import annotations

import math
import sys

from strata_daemon.errors import InvalidInput
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.parsers import number

COMMANDS = ("tui",)


def seconds(text: str) -> float:
    """A refresh interval: 0 (never) or more seconds; NaN, infinity or a negative number would
    start an inspector that never looks for changes, or fails on its first timer."""
    value = number(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


async def cmd_tui(args) -> int:
    from strata_daemon.faces.tui.app import StrataApp

    if args.json:
        raise InvalidInput("the inspector is a screen for a person: --json has no meaning for it",
                           hint="`strata status --json`, `timeline --json` and `recall --json` give its data")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # it would write its screen's codes into a file
        raise InvalidInput("the inspector needs a terminal: its input or output is a pipe or a file",
                           hint="run it in a terminal (over SSH: ssh -t); `strata status` prints the overview")

    async with opened(args, actor="tui") as mem:
        await StrataApp(mem, refresh_seconds=args.refresh).run_async()
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("tui", parents=[common], help="Inspect and steer every layer in a terminal interface.",
                       description="A terminal inspector over this home: overview, memories (with why each was "
                                   "recalled), facts, spiderweb, dossiers and the capsule. Safe to run beside the "
                                   "daemon; press ? inside for the keys.")
    p.add_argument("--refresh", type=seconds, metavar="SECONDS",
                   help="look for changes this often (default: tui.refresh_seconds; 0: never)")
    p.set_defaults(handler=cmd_tui)
