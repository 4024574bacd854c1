"""docs/reference/mcp.md: every tool, resource and prompt of the MCP server."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from typing import Any

from strata_bench.reference.markdown import NOTE, anchor, code, finish, schema_text, table


class _NoMemory:
    """Stands in for the Memory the server is built around: listing tools calls none of it."""

    agent = "AGENT"

    def __getattr__(self, name: str):
        raise RuntimeError(f"the MCP reference reads tool definitions only, not Memory.{name}")


async def _mcp_listing() -> tuple[Any, list, list, list, list]:
    from strata_daemon.faces.mcp.server import build

    server = build(_NoMemory())  # type: ignore[arg-type]
    return (server, await server.list_tools(), await server.list_resources(), await server.list_resource_templates(),
            await server.list_prompts())


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

    server, tools, resources, templates, prompts = _run(_mcp_listing())
    lines = ["# MCP reference", "", NOTE, "",
             f"`strata mcp` serves one agent namespace to an MCP client over stdio, as the server "
             f"{code(server.name)}. Tools return JSON (structured content, and the same JSON as text); a strata "
             "error becomes a tool error whose text says what went wrong and what to do.", "",
             "## Instructions", "", "The server gives the client these instructions:", "", "```text",
             inspect.cleandoc(INSTRUCTIONS), "```", "",
             "## Tools", ""]
    lines += table(("Tool", "Read-only", "Summary"),
                    [(f"[{t.name}](#{anchor(t.name)})", "yes" if _hint(t.annotations, "read_only_hint") else "no",
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
            rows.append((code(name), schema_text(shown), "yes" if name in required else "",
                         code(default) if default else "", prop.get("description", "")))
        if rows:
            lines += table(("Parameter", "Type", "Required", "Default", "Description"), rows) + [""]
        else:
            lines += ["No parameters.", ""]
    lines += ["## Resources", ""]
    rows = [(code(r.uri), r.name, r.mime_type or "", r.description or "") for r in resources]
    rows += [(code(r.uri_template), r.name, r.mime_type or "", r.description or "") for r in templates]
    lines += table(("URI", "Name", "MIME type", "Description"), rows)
    lines += ["", "## Prompts", ""]
    lines += table(("Prompt", "Arguments", "Description"),
                   [(code(p.name), ", ".join(code(a.name) + ("" if a.required else " (optional)")
                                             for a in p.arguments or ()), p.description or "") for p in prompts])
    return finish(lines)
