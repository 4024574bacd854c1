"""The reference documents in docs/reference/, generated from the code (pure functions).

- cli.md: every command and subcommand of the `strata` argument parser, with its options;
- config.md: every setting of the settings table, by section, and how settings are set;
- http.md: every operation of the OpenAPI document;
- mcp.md: every tool and resource of the MCP server.

`python -m strata_daemon.bench.reference docs/reference` writes them; `--check` only compares and
exits 1 when one is out of date. tests/test_reference.py keeps the files equal to what this
module generates, so they change with the code or the tests fail.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

REGENERATE = "python -m strata_daemon.bench.reference docs/reference"
NOTE = f"<!-- Generated from the code by `{REGENERATE}`; do not edit by hand. -->"


# --- shared helpers ---------------------------------------------------------------------------


def _cell(text: Any) -> str:
    """Text for one markdown table cell: one line, pipes escaped."""
    return re.sub(r"\s+", " ", str(text)).strip().replace("|", "\\|")


def _code(text: Any) -> str:
    """An inline code span that survives any backticks in the text."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _table(header: tuple[str, ...], rows: list[tuple]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _anchor(title: str) -> str:
    """The anchor GitHub gives a heading."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return slug.replace(" ", "-")


def _finish(lines: list[str]) -> str:
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def _schema_text(schema: dict, *, top: bool = True, link: bool = False) -> str:
    """A JSON schema in a few words: type, allowed values, bounds. With `link`, a schema named in
    the OpenAPI document's components is a link to its section."""
    if not schema:
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})" if link else name
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf")
        text = " or ".join(_schema_text(o, top=False, link=link) for o in options)
    elif "enum" in schema:
        text = "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    elif "const" in schema:
        text = json.dumps(schema["const"])
    else:
        kind = schema.get("type", "any")
        kinds = kind if isinstance(kind, list) else [kind]
        words = []
        for k in kinds:
            if k == "array":
                items = schema.get("items")
                words.append("array of " + _schema_text(items, top=False, link=link) if items else "array")
            elif k == "object" and isinstance(schema.get("additionalProperties"), dict):
                words.append("object of " + _schema_text(schema["additionalProperties"], top=False, link=link)
                             + " values")
            else:
                words.append(k)
        text = " or ".join(words)
    bounds = []
    for key, word in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in schema:
            bounds.append(f"{word} {schema[key]}")
    if schema.get("minLength") == 1:
        bounds.append("not empty")
    elif "minLength" in schema:
        bounds.append(f"at least {schema['minLength']} characters")
    if "maxLength" in schema:
        bounds.append(f"at most {schema['maxLength']} characters")
    if "minItems" in schema:
        bounds.append(f"at least {schema['minItems']} item" + ("" if schema["minItems"] == 1 else "s"))
    if "maxItems" in schema:
        bounds.append(f"at most {schema['maxItems']} items")
    if bounds:
        text += f" ({', '.join(bounds)})"
    return text


# --- cli.md -----------------------------------------------------------------------------------

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
    return _code(d)


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
        rows.append((_code(name), text, _default(a)))
    return rows


def _paragraph(text: str, parser: argparse.ArgumentParser) -> list[str]:
    if issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter):
        return ["```text", text.strip("\n"), "```"]
    return [re.sub(r"\s+", " ", text).strip()]


def cli_markdown() -> str:
    from strata_daemon.faces.cli import GROUPS, UNSCOPED, build_parser
    from strata_daemon.errors import EXIT_CODES

    parser = build_parser()
    commands = list(_commands(parser))
    lines = ["# Command-line reference", "", NOTE, "",
             re.sub(r"\s+", " ", parser.description or "").strip(), "",
             "Every command takes `--help`. The usage lines below leave out `-h` and the "
             "[common options](#common-options).", "",
             "## Common options", "",
             "Each may come before the command or after it (`strata --json status` or `strata status --json`).",
             ""]
    top = [a for a in parser._actions if _shown(a) and _is_common(a)]
    lines += _table(("Option", "Description"),
                    [(_code(", ".join(a.option_strings) + ("" if a.nargs == 0 else f" {_args(a)}")),
                      _expand(a.help, a, "strata")) for a in top])
    lines += ["", "`--scope` does not apply to " + ", ".join(f"`strata {c}`" for c in UNSCOPED)
              + " (they do not read one namespace).", "",
              "`strata --version` prints the version.", "",
              "## Exit codes", ""]
    lines += _table(("Code", "Meaning"), [(str(code), text) for code, text in EXIT_CODES.items()])
    lines += ["", "## Commands by group", ""]
    for group, mod in GROUPS:
        links = []
        for name in mod.COMMANDS:
            title = f"strata {name}"
            links.append(f"[{name}](#{_anchor(title)})")
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
            lines += ["Also spelled: " + ", ".join(_code(f"strata {' '.join(path[:-1] + (a,))}") for a in aliases),
                      ""]
        lines += ["```text", "usage: " + _usage(child, prog), "```", ""]
        sub = _subparsers(child)
        if sub is not None:
            helps = {c.dest: c.help for c in sub._choices_actions}
            lines += _table(("Subcommand", "Description"),
                            [(f"[{name}](#{_anchor(f'{prog} {name}')})", helps.get(name) or "")
                             for name in helps]) + [""]
        rows = _argument_rows(child, prog)
        if rows and any(row[2] for row in rows):
            lines += _table(("Argument", "Description", "Default"), rows) + [""]
        elif rows:
            lines += _table(("Argument", "Description"), [row[:2] for row in rows]) + [""]
        if any(_is_common(a) for a in child._actions):
            lines += ["Takes the [common options](#common-options)"
                      + (" except `--scope`." if path[0] in UNSCOPED else "."), ""]
        if child.epilog:
            lines += _paragraph(_expand(child.epilog, None, prog), child) + [""]
    return _finish(lines)


# --- config.md --------------------------------------------------------------------------------


def _closure(fn: Callable) -> dict[str, Any]:
    cells = fn.__closure__ or ()
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in cells)))


def _number(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) and abs(v) >= 10000 else f"{v:g}" if isinstance(v, float) else str(v)


def _allowed(check: Callable | None) -> str:
    """What a setting's check accepts, in words, for the checks settings.py builds from its helpers."""
    if check is None:
        return ""
    name = getattr(check, "__qualname__", "")
    env = _closure(check) if getattr(check, "__closure__", None) else {}
    if name.startswith("_optional."):
        return _allowed(env.get("check"))
    if name.startswith("_between."):
        return f"{_number(env['lo'])} to {_number(env['hi'])}"
    if name.startswith("_one_of."):
        return "one of " + ", ".join(_code(json.dumps(c)) for c in env["choices"])
    return {"_positive": "above 0", "_non_negative": "0 or more", "_factor": "above 0, at most 1",
            "_kinds": "a non-empty list of simple words", "_namespace": "a namespace name",
            "_namespaces": "namespace names", "_regex": "a regular expression",
            "_rule_names": "names of consolidation rules", "_arm_names": "MODE or MODE+PRESET",
            "_rules_table": "one table per rule", "_topics_table": "one table per topic",
            "_steps_table": "one table per step", "_wake_table": "a step's table",
            "_presets_table": "one table per preset"}.get(name, "")


def config_markdown() -> str:
    from strata_daemon.config.load import _TYPE_WORDS, _toml_value
    from strata_daemon.errors import ConfigError
    from strata_daemon.config.home import ENV_VAR
    from strata_daemon.config.settings import SETTINGS

    sections: dict[str, list] = {}
    for s in SETTINGS:
        sections.setdefault(s.section, []).append(s)
    lines = ["# Configuration reference", "", NOTE, "",
             f"strata reads {len(SETTINGS)} settings. Every one has a default, so a home needs no configuration "
             "at all.", "",
             "## How settings are set", "",
             "- **strata.toml in the home.** The home folder (`--home`, else the `" + ENV_VAR + "` environment "
             "variable, else the per-user data folder) holds `strata.toml`. A setting `section.name` is the line "
             "`section.name = value` above the file's first table, or `name = value` below a `[section]` line; a "
             "setting that is left out keeps its default. `strata init` writes the file with every setting "
             "commented out at its default in the first form, its description above it: uncomment a line to "
             "change a setting, and add tables (`[http]`, `[loop.steps.NAME]`) at the end of the file.",
             "- **Checked when read.** An unknown key, a value of the wrong type or one out of range stops the "
             f"command with exit code {ConfigError.exit_code}, naming the file and the key; the hint repeats the "
             "setting's description and default.",
             "- **`strata config show`** prints every setting's effective value and where it came from (the "
             "default or the file); `--json` for programs.",
             "- **The daemon** (`strata run`) reads the file again on SIGHUP; a broken file is reported in the log "
             "and the running configuration kept.",
             "- **The retrieval arena** (`arena.enabled`) may lay a preset's `recall.*` and `scoring.*` values "
             "over the file for recalls that name no mode; `strata arena status` says which.",
             "- **`--set KEY=VALUE`** exists only on `strata bench recall`, for the benchmark's temporary home. "
             "No environment variable sets a setting (`" + ENV_VAR + "` only chooses the home).", "",
             "A default below is written as the line strata.toml would hold below its `[section]` line. A "
             "setting whose default is *unset* "
             "has no line at all (TOML has no null): leave it out and strata uses what its description says.",
             "", "## Sections", ""]
    lines += [f"- [`[{section}]`](#{_anchor(section)}): " + ", ".join(f"`{s.name}`" for s in items)
              for section, items in sections.items()]
    lines.append("")
    for section, items in sections.items():
        lines += [f"## [{section}]", ""]
        for s in items:
            lines += [f"### {s.key}", "", re.sub(r"\s+", " ", s.doc).strip(), ""]
            if s.default is None:
                default = f"unset ({s.unset_meaning})"
            else:
                default = _code(f"{s.name} = {_toml_value(s.default)}")
            kind = _TYPE_WORDS.get(s.value_type, s.value_type.__name__)
            allowed = _allowed(s.check)
            lines += [f"- Default: {default}", f"- Type: {kind}" + (f"; {allowed}" if allowed else ""), ""]
    return _finish(lines)


# --- http.md ----------------------------------------------------------------------------------


def _unwrapped(schema: dict) -> dict:
    """What a schema that may also be null stands for (`X or null` is documented as X)."""
    options = [o for o in schema.get("anyOf") or schema.get("oneOf") or () if o.get("type") != "null"]
    return options[0] if len(options) == 1 else schema


def _body_rows(schema: dict, prefix: str = "", *, link: bool = False) -> list[tuple[str, str, str, str]]:
    """A row per field, with the fields of nested objects (`a.b`) and of arrays of objects (`a[].b`)."""
    rows = []
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        rows.append((_code(prefix + name), _schema_text(prop, link=link), "yes" if name in required else "",
                     prop.get("description", "")))
        inner = _unwrapped(prop)
        kinds = inner.get("type") if isinstance(inner.get("type"), list) else [inner.get("type")]
        if "array" in kinds and inner.get("items", {}).get("properties"):
            rows += _body_rows(inner["items"], f"{prefix}{name}[].", link=link)
        elif "object" in kinds and inner.get("properties"):
            rows += _body_rows(inner, f"{prefix}{name}.", link=link)
    return rows


def _base_of(name: str, schemas: dict) -> str | None:
    """The largest other schema whose every field this one has, alike and as required: its
    table need not be repeated."""
    schema = schemas[name]
    props, required = schema.get("properties", {}), set(schema.get("required", ()))

    def within(other: dict) -> bool:
        theirs = other.get("properties", {})
        return bool(theirs) and all(props.get(k) == v and (k in required) == (k in other.get("required", ()))
                                    for k, v in theirs.items())

    found = [(len(s.get("properties", {})), n) for n, s in schemas.items() if n != name and within(s)]
    return max(found)[1] if found else None


def _status_names(ops: list) -> dict[str, str]:
    """Each named error response of the document with the status it stands for."""
    return {r["$ref"].rsplit("/", 1)[-1]: code for _, _, op in ops for code, r in op["responses"].items()
            if "$ref" in r}


def http_markdown() -> str:
    from strata_daemon.faces.http.openapi import document

    doc = document()
    components = doc.get("components", {})
    schemas = components.get("schemas", {})
    lines = ["# HTTP API reference", "", NOTE, "",
             f"From the OpenAPI {doc['openapi']} document that `strata serve --openapi` prints and "
             "`GET /openapi.json` serves.", "",
             doc["info"].get("description", ""), ""]
    servers = [s["url"] for s in doc.get("servers", ())]
    if servers:
        lines += ["Server URL: " + ", ".join(_code(u) for u in servers)
                  + " (over the Unix socket the host name is not used).", ""]
    lines += ["Read operations take `scope`, to read a namespace strata.toml shares (`agent.shared`); writing "
              "operations do not. The socket, the port and the limits are settings: see "
              "[`[http]` in the configuration reference](config.md#http).", ""]
    schemes = components.get("securitySchemes", {})
    if schemes:
        lines += ["## Authentication", ""]
        for name, scheme in schemes.items():
            kind = f"HTTP {scheme['scheme']}" if scheme.get("type") == "http" else scheme.get("type", "")
            lines += [f"`{name}` ({kind}): {scheme.get('description', '')}", ""]
    ops = [(path, method.upper(), op) for path, item in doc["paths"].items() for method, op in item.items()]
    tags: dict[str, list] = {}
    for path, method, op in ops:
        tags.setdefault(op["tags"][0] if op.get("tags") else "other", []).append((path, method, op))
    lines += ["## Operations", ""]
    lines += _table(("Method", "Path", "Summary"),
                    [(method, f"[{_code(path)}](#{_anchor(op['operationId'])})", op.get("summary", ""))
                     for path, method, op in ops])
    lines.append("")
    statuses = _status_names(ops)
    named = components.get("responses", {})
    if named:
        lines += ["## Errors", "", "Every error has the body " + _schema_text({"$ref": "#/components/schemas/Error"},
                                                                             link=True) + ".", ""]
        lines += _table(("Status", "When"), [(_code(statuses.get(name, "")), r.get("description", ""))
                                             for name, r in sorted(named.items(),
                                                                   key=lambda item: statuses.get(item[0], ""))])
        lines.append("")
    descriptions = {t["name"]: t.get("description", "") for t in doc.get("tags", ())}
    for tag, items in tags.items():
        lines += [f"## {tag}", "", descriptions.get(tag, ""), ""]
        for path, method, op in items:
            lines += [f"### {op['operationId']}", "", f"`{method} {path}`", "", op.get("summary", ""), "",
                      op.get("description", ""), ""]
            params = op.get("parameters", [])
            if params:
                lines += ["Parameters:", ""]
                rows = []
                for p in params:
                    schema = p.get("schema", {})
                    extra = f" (default {json.dumps(schema['default'])})" if "default" in schema else ""
                    rows.append((_code(p["name"]), p["in"], _schema_text({k: v for k, v in schema.items()
                                                                           if k != "default"}),
                                 "yes" if p.get("required") else "", p.get("description", "") + extra))
                lines += _table(("Name", "In", "Type", "Required", "Description"), rows) + [""]
            body = op.get("requestBody")
            if body:
                schema = body["content"]["application/json"]["schema"]
                lines += ["Request body (JSON" + (", required" if body.get("required") else "") + "):", ""]
                rows = _body_rows(schema)
                lines += (_table(("Field", "Type", "Required", "Description"), rows) if rows
                          else [_schema_text(schema)]) + [""]
            lines += ["Responses:", ""]
            errors = [code for code, r in op["responses"].items() if "$ref" in r]
            for code, r in op["responses"].items():
                if "$ref" not in r:
                    schema = r.get("content", {}).get("application/json", {}).get("schema", {})
                    lines.append(f"- `{code}`: {_schema_text(schema, link=True)}: {r.get('description', '')}")
            if errors:
                lines.append("- " + ", ".join(_code(c) for c in errors) + ": an "
                             + _schema_text({"$ref": "#/components/schemas/Error"}, link=True)
                             + " (see [Errors](#errors))")
            lines.append("")
    if schemas:
        lines += ["## Schemas", "", "The bodies the operations answer with, and the shapes they share. A field "
                  "not marked required is there only when it applies.", ""]
        for name, schema in schemas.items():
            lines += [f"### {name}", "", schema.get("description", ""), ""]
            base = _base_of(name, schemas)
            shown = schema
            if base is not None:
                lines += [f"The fields of {_schema_text({'$ref': base}, link=True)}, and:", ""]
                mine = {k: v for k, v in schema["properties"].items() if k not in schemas[base]["properties"]}
                shown = {**schema, "properties": mine}
            rows = _body_rows(shown, link=True)
            lines += (_table(("Field", "Type", "Required", "Description"), rows) if rows
                      else [_schema_text(schema, link=True)]) + [""]
    return _finish(lines)


# --- mcp.md -----------------------------------------------------------------------------------


class _NoMemory:
    """Stands in for the Memory the server is built around: listing tools calls none of it."""

    agent = "AGENT"

    def __getattr__(self, name: str):
        raise RuntimeError(f"the MCP reference reads tool definitions only, not Memory.{name}")


async def _mcp_listing() -> tuple[Any, list, list, list]:
    from strata_daemon.faces.mcp.server import build

    server = build(_NoMemory())  # type: ignore[arg-type]
    return server, await server.list_tools(), await server.list_resources(), await server.list_resource_templates()


def _run(coro):
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures  # called from inside an event loop: run it on a thread of its own

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _hint(annotations: Any, name: str) -> bool | None:
    return getattr(annotations, name, None) if annotations is not None else None


def _effects(annotations: Any) -> str:
    """The tool's annotations in words (the MCP hints: read-only, destructive, open world)."""
    read_only, destructive = _hint(annotations, "read_only_hint"), _hint(annotations, "destructive_hint")
    if read_only:
        words = ["read-only"]
    else:
        words = ["writes"] + ([] if destructive is None else ["destructive" if destructive else "not destructive"])
    open_world = _hint(annotations, "open_world_hint")
    if open_world is not None:
        words.append("open world" if open_world else "closed world")
    return ", ".join(words)


def _first_sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    found = re.match(r"(.+?[.!?])(?=\s+[A-Z(`]|$)", text)
    return found.group(1) if found else text


def _optional(prop: dict) -> dict:
    """A parameter's schema without the null that only stands for "not given"."""
    options = prop.get("anyOf")
    if prop.get("default", 0) is None and options and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        return rest[0] if len(rest) == 1 else {"anyOf": rest}
    return {k: v for k, v in prop.items() if k not in ("title", "description", "default")}


def mcp_markdown() -> str:
    from strata_daemon.faces.mcp.server import INSTRUCTIONS

    server, tools, resources, templates = _run(_mcp_listing())
    lines = ["# MCP reference", "", NOTE, "",
             f"`strata mcp` serves one agent namespace to an MCP client over stdio, as the server "
             f"{_code(server.name)}. Tools return JSON (structured content, and the same JSON as text); a strata "
             "error becomes a tool error whose text says what went wrong and what to do.", "",
             "## Instructions", "", "The server gives the client these instructions:", "", "```text",
             inspect.cleandoc(INSTRUCTIONS), "```", "",
             "## Tools", ""]
    lines += _table(("Tool", "Read-only", "Summary"),
                    [(f"[{t.name}](#{_anchor(t.name)})", "yes" if _hint(t.annotations, "read_only_hint") else "no",
                      _first_sentence(inspect.cleandoc(t.description or ""))) for t in tools])
    lines.append("")
    for t in tools:
        lines += [f"### {t.name}", "", re.sub(r"\s+", " ", inspect.cleandoc(t.description or "")).strip(), "",
                  f"Annotations: {_effects(t.annotations)}.", ""]
        schema = t.input_schema
        required = set(schema.get("required", ()))
        rows = []
        for name, prop in schema.get("properties", {}).items():
            shown = _optional(prop)
            default = json.dumps(prop["default"]) if "default" in prop else ""
            rows.append((_code(name), _schema_text(shown), "yes" if name in required else "",
                         _code(default) if default else "", prop.get("description", "")))
        if rows:
            lines += _table(("Parameter", "Type", "Required", "Default", "Description"), rows) + [""]
        else:
            lines += ["No parameters.", ""]
    lines += ["## Resources", ""]
    rows = [(_code(r.uri), r.name, r.mime_type or "", r.description or "") for r in resources]
    rows += [(_code(r.uri_template), r.name, r.mime_type or "", r.description or "") for r in templates]
    lines += _table(("URI", "Name", "MIME type", "Description"), rows)
    return _finish(lines)


# --- writing them -----------------------------------------------------------------------------

FILES: dict[str, Callable[[], str]] = {
    "cli.md": cli_markdown,
    "config.md": config_markdown,
    "http.md": http_markdown,
    "mcp.md": mcp_markdown,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_daemon.bench.reference",
                                     description="Write the reference documents generated from the code.")
    parser.add_argument("dir", nargs="?", default="docs/reference", help="where to write them (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    out = Path(args.dir)
    stale = []
    for name, generate in FILES.items():
        path, text = out / name, generate()
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(str(path))
        if not args.check:
            out.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    verb = "out of date" if args.check else "written"
    print(f"{verb}: {', '.join(stale)}" if stale else "up to date", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
