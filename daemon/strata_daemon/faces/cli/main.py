"""The `strata` command. Parses arguments, runs the core, shows the result, maps errors to exit codes."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import json
import os
import re
import sys
import textwrap

from strata_daemon import __version__
from strata_daemon.base import text
from strata_daemon.errors import EXIT_CODES, InvalidInput, StorageError, StrataError, shortened
from strata_daemon.faces.cli import (
    admin_cmds,
    arena_cmds,
    capsule_cmds,
    care_cmds,
    context_cmds,
    consolidate_cmds,
    dossier_cmds,
    fact_cmds,
    io_cmds,
    mcp_cmds,
    memory_cmds,
    seal_cmds,
    serve_cmds,
    store_cmds,
    systemd_cmds,
    tui_cmds,
    web_cmds,
)
from strata_daemon.faces.cli.output import Guarded, OutputLost, error, note


class _Joined:
    """One group's commands kept in several modules, standing in for one module: COMMANDS in the
    modules' order (the group's one line in --help) and register(sub, common) adding them in it."""

    def __init__(self, *modules) -> None:
        self.modules = modules
        self.COMMANDS = tuple(name for mod in modules for name in mod.COMMANDS)

    def register(self, sub, common) -> None:
        for mod in self.modules:
            mod.register(sub, common)


GROUPS = (
    ("memory", _Joined(io_cmds, memory_cmds)),
    ("facts", fact_cmds),
    ("spiderweb", web_cmds),
    ("dossiers", dossier_cmds),
    ("capsule", capsule_cmds),
    ("consolidation", consolidate_cmds),
    ("arena", arena_cmds),
    ("inspector", tui_cmds),
    ("agent context", context_cmds),
    ("agent interfaces", mcp_cmds),
    ("http api", serve_cmds),
    ("home and daemon", admin_cmds),
    ("care", care_cmds),
    ("store", store_cmds),
    ("sealing", seal_cmds),
    ("systemd", systemd_cmds),
)
# Other installed packages may add commands (a checkout's benchmark harness adds `bench`): each
# entry point of this group names a module with GROUP, COMMANDS and register(sub, common).
PLUGINS = "strata.commands"


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
    words: list[str] = []  # the command line, for the options a "did you mean" picks from

    def _hidden(self) -> set[str]:
        """The common options this command refuses, which its help leaves out."""
        command = self.prog.split()[1:2]
        return ({"scope"} if command and command[0] in UNSCOPED else set()) | (
            {"json"} if command and command[0] in SCREENS else set())

    def format_help(self) -> str:
        return self._without_hidden(super().format_help)

    def format_usage(self) -> str:
        return self._without_hidden(super().format_usage)

    def _without_hidden(self, format_) -> str:
        # The common options are one set of actions shared by every command: hidden while this
        # command's help is written, shown again after.
        hidden = [(a, a.help) for a in self._actions if a.dest in self._hidden()]
        for a, _ in hidden:
            a.help = argparse.SUPPRESS
        try:
            return format_()
        finally:
            for a, saved in hidden:
                a.help = saved

    def error(self, message: str):
        message = shortened(_suggested(message, self), 160)  # argparse quotes the whole value it refused
        subs = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if subs is not None and message.startswith("the following arguments are required") and \
                str(subs.metavar) in message:  # `strata fact`: which actions there are
            message += f" (one of: {', '.join(subs.choices)})"
        if _Parser.json_wanted and sys.stdout is not None:  # None: the caller closed it
            with contextlib.suppress(OSError, OutputLost):  # full: stderr and the exit code still say it
                sys.stdout.write(json.dumps({"error": "usage", "message": message,
                                             "hint": f"see {self.prog} --help"}) + "\n")
        if message.startswith("unrecognized arguments"):  # the root parser says it: show the command's usage
            command = _command_parser(self, [w for w in _Parser.words if not w.startswith("-")])
            command.print_usage(sys.stderr)
            self.exit(2, f"{command.prog}: error: {message}\n")
        super().error(message)


_CHOICE = re.compile(r"argument (?P<what>[^:]+): invalid choice: '(?P<given>.*)' \(choose from (?P<known>.*)\)$",
                     re.DOTALL)


def _command_parser(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The parser of the command WORDS name (`recall`, `fact set`), for its options."""
    for word in words:
        subs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if subs is None or word not in subs.choices:
            continue
        parser = subs.choices[word]
    return parser


def _suggested(message: str, parser: argparse.ArgumentParser | None = None) -> str:
    """An unknown command, choice or option with the nearest known ones ("did you mean"), in
    place of argparse's list of every one."""
    if message.startswith("unrecognized arguments: ") and parser is not None:
        given = message.split(": ", 1)[1].split()[0]
        command = _command_parser(parser, [w for w in _Parser.words if not w.startswith("-")])
        given_already = {w.split("=")[0] for w in _Parser.words}  # `--verbose --bogus`: not --verbose again
        options = sorted(o for a in command._actions for o in a.option_strings if o.startswith("--"))
        name = given.split("=")[0]
        if name in options:  # the command's own option, given before the command's name
            return f"{message}: it goes after `{command.prog}` (`{command.prog} {name}`)"
        near = difflib.get_close_matches(name, [o for o in options if o not in given_already], n=2, cutoff=0.6)
        return f"{message}; did you mean {' or '.join(near)}?" if given.startswith("-") and near else message
    m = _CHOICE.match(message)
    if m is None:
        return message
    known = re.findall(r"'([^']*)'", m["known"])
    alike = {k: difflib.SequenceMatcher(None, m["given"], k).ratio() for k in known}
    best = max(alike.values(), default=0.0)
    near = [k for k in sorted(known, key=alike.get, reverse=True)[:3] if alike[k] >= max(0.6, best - 0.1)]
    said = f"{m['what'].lower()} {m['given']!r} is not one strata knows"
    if near:
        return f"{said}; did you mean {' or '.join(repr(n) for n in near)}?"
    return f"{said} (one of: {', '.join(known)})" if len(known) <= 8 else f"{said} (--help lists them)"


_VALUED = ("--home", "--agent", "--scope")  # the options before a command that take a value


def plugins(argv: list[str] | None) -> list:
    """The modules of the commands other packages add, loaded only when the command line may need
    them (their command, help, or a word no built-in command has): scanning the installed
    packages costs every other command nothing."""
    argv = argv or []
    words = [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] not in _VALUED)]
    builtin = {c.split()[0] for _, mod in GROUPS for c in mod.COMMANDS}
    if words and words[0] in builtin and "-h" not in argv and "--help" not in argv:
        return []
    from importlib.metadata import entry_points

    return [ep.load() for ep in entry_points(group=PLUGINS)]


def command_groups(argv: list[str] | None = None) -> list[tuple[str, object]]:
    """(group, module) of every command the line may run: strata's own, then the plugins'."""
    return [*GROUPS, *((mod.GROUP, mod) for mod in plugins(sys.argv[1:] if argv is None else argv))]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    groups = command_groups(argv)
    # The epilog keeps its own lines (a table), each wrapped to 80 columns with its indent.
    codes = "\n".join(textwrap.fill(text, 80, initial_indent=f"  {code:>3}  ", subsequent_indent=" " * 7)
                      for code, text in EXIT_CODES.items())
    parser = _Parser(
        prog="strata", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A local-only layered memory for an autonomous agent.",
        epilog="commands by group:\n" + "\n".join(
            textwrap.fill(f"{name}: {', '.join(mod.COMMANDS)}", 80, initial_indent="  ", subsequent_indent="    ")
            for name, mod in groups)
        + "\n\nevery command takes --help; read commands take --json.\n\nexit codes:\n" + codes)
    parser.add_argument("--version", action="version", version=f"strata {__version__}")
    _common_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # The same options after the command; SUPPRESS keeps a value given before the command.
    common = argparse.ArgumentParser(add_help=False)
    _common_options(common, suppress=True)
    for _, mod in groups:
        mod.register(sub, common)
    return parser



def _hook_event(words: list[str]) -> bool:
    """Whether the line runs an agent loop's hook, which always exits 0: any event but claude-code,
    a misspelt one too (`hook promt` in the loop's settings would block every prompt with exit 2)."""
    plain = [w for i, w in enumerate(words) if not w.startswith("-") and (i == 0 or words[i - 1] not in _VALUED)]
    return plain[:1] == ["hook"] and len(plain) > 1 and plain[1] != "claude-code"


# Commands that do not read one namespace through the API, so --scope would mean nothing.
UNSCOPED = ("init", "config", "run", "systemd", "bench", "mcp", "serve", "doctor", "backup")
# Screens a person reads, for which --json means nothing.
SCREENS = ("tui",)


def _closed_streams() -> None:
    """The standard streams a caller closed (`<&-`, `>&-`, `2>&-`), which Python holds as None.
    Each descriptor is opened again on /dev/null (else the next file opened would take its number,
    and what a library prints would land in that file); a closed stdin reads as empty, what goes
    to a closed stderr is dropped, and an answer for a closed stdout is lost (`OutputLost`)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            spare = os.open(os.devnull, os.O_RDWR)
            if spare != fd:
                os.dup2(spare, fd)
                os.close(spare)
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    _closed_streams()
    parser = build_parser(argv)
    words = sys.argv[1:] if argv is None else argv
    _Parser.json_wanted, _Parser.words = "--json" in words, list(words)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        if e.code == 2 and _hook_event(words):  # argparse said what it refused; a hook's loop must go on
            sys.stderr.write("strata hook: the agent's turn goes on without its memory\n")
            return 0
        raise
    if getattr(args, "scope", None) and args.command in UNSCOPED:
        parser.error(f"--scope does not apply to `strata {args.command}`")
    if (name := _not_text(args, words)) is not None:
        refused = InvalidInput(f"{name} is not valid UTF-8 text", hint=text.HINT)
        if _hook_event(words):  # a hook's loop must go on, whatever it was handed
            note(f"strata hook: {refused.message} (the agent's turn goes on without its memory)")
            return 0
        return error(refused, getattr(args, "json", False))
    if not isinstance(sys.stdout, Guarded):
        sys.stdout = Guarded(sys.stdout)
    try:
        result = args.handler(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        sys.stdout.flush()
        return int(result or 0)
    except OutputLost as e:
        return _unprinted(e)
    except StrataError as e:
        return error(e, getattr(args, "json", False))
    except KeyboardInterrupt:
        sys.stderr.write("strata: interrupted\n")
        return 130
    except BrokenPipeError:  # `strata export | head`
        sys.stderr.close()
        return 0


# A file name may be any bytes; every other argument is text strata may store.
_PATHS = frozenset({"home", "dir", "file", "output", "restore", "socket"})


def _not_text(args: argparse.Namespace, words: list[str]) -> str | None:
    """The first argument holding bytes that are not UTF-8 (Python reads them as lone
    surrogates), named as the user wrote it (`--source`, `KEY`); None when all are text."""
    for name, value in vars(args).items():
        if name not in _PATHS and not callable(value) and text.broken_part(value) is not None:
            option = f"--{name.replace('_', '-')}"
            return option if any(w == option or w.startswith(option + "=") for w in words) else name.upper()
    return None


def _unprinted(e: OutputLost) -> int:
    """The answer could not be printed. What was stored stays stored, and the user is told so
    (exit 0); a command that only read failed at its one job (exit 6)."""
    from strata_daemon.app.public import changes_committed

    with contextlib.suppress(OSError):  # what is still buffered would fail again at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1 if sys.__stdout__ is None else sys.__stdout__.fileno())
    if changes_committed():
        note(f"strata: done (what it stored is stored), but its answer could not be printed: {e}")
        return 0
    return error(StorageError(f"the answer could not be printed: {e}",
                              hint="free space where standard output goes, or send it elsewhere"), False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
