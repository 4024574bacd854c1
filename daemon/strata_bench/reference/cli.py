"""docs/reference/cli.md: every command and subcommand of the `strata` argument parser, with its
options."""

from __future__ import annotations

import argparse
import re

from strata_bench.reference.markdown import NOTE, anchor, code, finish, table

COMMON = ("home", "agent", "scope", "json")  # the options every command takes (cli._common_options)


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser, help, aliases) of every command and subcommand, depth first, in parser order."""
    sub = _subparsers(parser)
    if sub is None:
        return
    helps = {c.dest: c.help for c in sub._choices_actions}
    names: dict[int, list[str]] = {}
    for name, child in sub.choices.items():
        names.setdefault(id(child), []).append(name)
    seen: set[int] = set()
    for name, child in sub.choices.items():
        if id(child) in seen:
            continue
        seen.add(id(child))
        yield path + (name,), child, helps.get(name), names[id(child)][1:]
        yield from _commands(child, path + (name,))


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def _args(action: argparse.Action) -> str:
    m, n = _metavar(action), action.nargs
    if n is None:
        return m
    if n == argparse.OPTIONAL:
        return f"[{m}]"
    if n == argparse.ZERO_OR_MORE:
        return f"[{m} ...]"
    if n == argparse.ONE_OR_MORE:
        return f"{m} [{m} ...]"
    if n == argparse.REMAINDER:
        return "..."
    if n == argparse.PARSER:
        return f"{m} ..."
    return " ".join([m] * int(n))


def _shown(action: argparse.Action) -> bool:
    return not isinstance(action, argparse._HelpAction) and action.help != argparse.SUPPRESS


def _is_common(action: argparse.Action) -> bool:
    return action.dest in COMMON and bool(action.option_strings)


def _flag(action: argparse.Action) -> str:
    """An option as usage writes it: its first spelling and its argument (both spellings of a
    --x/--no-x pair)."""
    if isinstance(action, argparse.BooleanOptionalAction):
        return " | ".join(action.option_strings)
    if action.nargs == 0:
        return action.option_strings[0]
    return f"{action.option_strings[0]} {_args(action)}"


def _usage(parser: argparse.ArgumentParser, prog: str) -> str:
    """The usage line, written here rather than by argparse: no terminal width, no Python
    version's wrapping; -h and the common options are left out."""
    actions = [a for a in parser._actions if _shown(a) and not _is_common(a)]
    groups = {id(a): g for g in parser._mutually_exclusive_groups for a in g._group_actions}
    parts, done = [prog], set()
    for a in actions:
        if not a.option_strings:
            continue
        group = groups.get(id(a))
        if group is not None:
            if id(group) in done:
                continue
            done.add(id(group))
            members = [_flag(m) for m in group._group_actions if _shown(m)]
            parts.append(("(" if group.required else "[") + " | ".join(members) + (")" if group.required else "]"))
        else:
            parts.append(_flag(a) if a.required else f"[{_flag(a)}]")
    for a in actions:
        if not a.option_strings:
            parts.append(_args(a))
    return " ".join(parts)


def _expand(text: str | None, action: argparse.Action | None, prog: str) -> str:
    if not text:
        return ""
    params = {"prog": prog}
    if action is not None:
        params.update(vars(action), default=action.default)
    try:
        return text % params
    except (KeyError, TypeError, ValueError):
        return text


def _default(action: argparse.Action) -> str:
    d = action.default
    if d is None or d == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
        return ""
    if action.nargs == 0 and isinstance(d, bool):  # a flag: its default is that it is not given
        return ""
    if d == [] or d == ():
        return ""
    return code(d)


def _argument_rows(parser: argparse.ArgumentParser, prog: str) -> list[tuple[str, str, str]]:
    rows = []
    for a in parser._actions:
        if not _shown(a) or _is_common(a) or isinstance(a, argparse._SubParsersAction):
            continue
        if a.option_strings:
            name = ", ".join(a.option_strings) + ("" if a.nargs == 0 else f" {_args(a)}")
        else:
            name = _args(a)
        text = _expand(a.help, a, prog)
        if a.choices is not None and a.metavar is not None:
            text = (text + "; " if text else "") + "one of: " + ", ".join(map(str, a.choices))
        if a.required and a.option_strings:
            text = (text + " " if text else "") + "(required)"
        rows.append((code(name), text, _default(a)))
    return rows


def _paragraph(text: str, parser: argparse.ArgumentParser) -> list[str]:
    if issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter):
        return ["```text", text.strip("\n"), "```"]
    return [re.sub(r"\s+", " ", text).strip()]


def cli_markdown() -> str:
    from strata_daemon.errors import EXIT_CODES
    from strata_daemon.faces.cli.main import UNSCOPED, build_parser, command_groups

    parser = build_parser(["--help"])  # --help: with the commands plugins add
    commands = list(_commands(parser))
    lines = ["# Command-line reference", "", NOTE, "",
             re.sub(r"\s+", " ", parser.description or "").strip(), "",
             "Every command takes `--help`. The usage lines below leave out `-h` and the "
             "[common options](#common-options).", "",
             "## Common options", "",
             "Each may come before the command or after it (`strata --json status` or `strata status --json`).",
             ""]
    top = [a for a in parser._actions if _shown(a) and _is_common(a)]
    lines += table(("Option", "Description"),
                    [(code(", ".join(a.option_strings) + ("" if a.nargs == 0 else f" {_args(a)}")),
                      _expand(a.help, a, "strata")) for a in top])
    lines += ["", "`--scope` does not apply to " + ", ".join(f"`strata {c}`" for c in UNSCOPED)
              + " (they do not read one namespace).", "",
              "`strata --version` prints the version.", "",
              "## Exit codes", ""]
    lines += table(("Code", "Meaning"), [(str(code), text) for code, text in EXIT_CODES.items()])
    lines += ["", "## Commands by group", ""]
    for group, mod in command_groups(["--help"]):
        links = []
        for name in mod.COMMANDS:
            title = f"strata {name}"
            links.append(f"[{name}](#{anchor(title)})")
        lines.append(f"- **{group}**: " + ", ".join(links))
    lines.append("")
    for path, child, help_, aliases in commands:
        prog = "strata " + " ".join(path)
        lines += ["#" * min(len(path) + 1, 4) + f" {prog}", ""]
        if help_:
            lines += [re.sub(r"\s+", " ", _expand(help_, None, prog)).strip(), ""]
        description = _expand(child.description, None, prog)
        if description and re.sub(r"\s+", " ", description).strip() != re.sub(r"\s+", " ", help_ or "").strip():
            lines += _paragraph(description, child) + [""]
        if aliases:
            lines += ["Also spelled: " + ", ".join(code(f"strata {' '.join(path[:-1] + (a,))}") for a in aliases),
                      ""]
        lines += ["```text", "usage: " + _usage(child, prog), "```", ""]
        sub = _subparsers(child)
        if sub is not None:
            helps = {c.dest: c.help for c in sub._choices_actions}
            lines += table(("Subcommand", "Description"),
                            [(f"[{name}](#{anchor(f'{prog} {name}')})", helps.get(name) or "")
                             for name in helps]) + [""]
        rows = _argument_rows(child, prog)
        if rows and any(row[2] for row in rows):
            lines += table(("Argument", "Description", "Default"), rows) + [""]
        elif rows:
            lines += table(("Argument", "Description"), [row[:2] for row in rows]) + [""]
        if any(_is_common(a) for a in child._actions):
            lines += ["Takes the [common options](#common-options)"
                      + (" except `--scope`." if path[0] in UNSCOPED else "."), ""]
        if child.epilog:
            lines += _paragraph(_expand(child.epilog, None, prog), child) + [""]
    return finish(lines)
