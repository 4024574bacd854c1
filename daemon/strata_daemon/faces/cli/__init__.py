"""The `strata` command. Parses arguments, runs the core, shows the result, maps errors to exit codes."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from strata_daemon import __version__
from strata_daemon.errors import EXIT_CODES, StrataError
from strata_daemon.faces.cli import (admin_cmds, arena_cmds, bench_cmds, capsule_cmds, care_cmds, consolidate_cmds,
                                     dossier_cmds, fact_cmds, mcp_cmds, memory_cmds, serve_cmds, systemd_cmds,
                                     tui_cmds, web_cmds)
from strata_daemon.faces.cli.output import error

GROUPS = (
    ("memory", memory_cmds),
    ("facts", fact_cmds),
    ("spiderweb", web_cmds),
    ("dossiers", dossier_cmds),
    ("capsule", capsule_cmds),
    ("consolidation", consolidate_cmds),
    ("arena", arena_cmds),
    ("inspector", tui_cmds),
    ("agent interfaces", mcp_cmds),
    ("http api", serve_cmds),
    ("home and daemon", admin_cmds),
    ("care", care_cmds),
    ("systemd", systemd_cmds),
    ("benchmarks", bench_cmds),
)


def _common_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    unset = argparse.SUPPRESS if suppress else None
    parser.add_argument("--home", default=unset, help="home folder (default: $STRATA_HOME, else ~/.local/share/strata)")
    parser.add_argument("--agent", default=unset, help="agent namespace (default: agent.namespace in strata.toml)")
    parser.add_argument("--scope", default=unset, metavar="NAMESPACE",
                        help="read a namespace that strata.toml shares (agent.shared); writes are refused")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="print JSON for programs")


class _Parser(argparse.ArgumentParser):
    """With --json anywhere on the line, a usage error is also answered on stdout in the shape
    of every other error: an agent reads stdout, and an empty one tells it nothing."""
    json_wanted = False  # set by main() from the whole command line, before parsing

    def error(self, message: str):
        if _Parser.json_wanted:
            sys.stdout.write(json.dumps({"error": "usage", "message": message,
                                         "hint": f"see {self.prog} --help"}) + "\n")
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES.items())
    parser = _Parser(
        prog="strata", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A local-only layered memory for an autonomous agent.",
        epilog="commands by group:\n" + "\n".join(
            f"  {name}: {', '.join(mod.COMMANDS)}" for name, mod in GROUPS)
        + "\n\nevery command takes --help; read commands take --json.\n\nexit codes:\n" + codes)
    parser.add_argument("--version", action="version", version=f"strata {__version__}")
    _common_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # The same options after the command; SUPPRESS keeps a value given before the command.
    common = argparse.ArgumentParser(add_help=False)
    _common_options(common, suppress=True)
    for _, mod in GROUPS:
        mod.register(sub, common)
    return parser


# Commands that do not read one namespace through the API, so --scope would mean nothing.
UNSCOPED = ("init", "config", "run", "systemd", "bench", "mcp", "serve", "doctor", "backup")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    _Parser.json_wanted = "--json" in (sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if getattr(args, "scope", None) and args.command in UNSCOPED:
        parser.error(f"--scope does not apply to `strata {args.command}`")
    try:
        result = args.handler(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return int(result or 0)
    except StrataError as e:
        return error(e, getattr(args, "json", False))
    except KeyboardInterrupt:
        sys.stderr.write("strata: interrupted\n")
        return 130
    except BrokenPipeError:  # `strata export | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
