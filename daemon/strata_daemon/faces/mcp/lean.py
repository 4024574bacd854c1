"""The MCP server strata runs: the SDK's, with parameter schemas an agent reads cheaply and
every argument, resource and prompt checked before the SDK sees it, so a mistake is answered
in strata's words (invalid_input, not_found) and never dropped, or taken as an internal error."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from strata_daemon.faces.mcp.errors import INVALID_PARAMS, arguments_said


def lean(schema: Any) -> Any:
    """A parameter schema as an agent needs it, every token of which it pays for on every turn:
    no titles (the names say it), an optional value as its own type rather than anyOf with null
    (not being required says it may be left out), no null or false defaults."""
    if isinstance(schema, list):
        return [lean(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str) or key == "default" and value in (None, False) \
                or key in ("minimum", "maximum", "exclusiveMinimum"):  # the description says the range; the server checks it
            continue
        if key == "anyOf" and isinstance(value, list):
            kept = [v for v in value if v != {"type": "null"}]
            if len(kept) == 1 and len(kept) < len(value):
                out.update(lean(kept[0]))
                continue
        out[key] = lean(value) if key != "properties" else {name: lean(v) for name, v in value.items()}
    return out


class LeanServer(MCPServer):
    """The tool list without what costs an agent tokens and tells it nothing: lean parameter
    schemas, and no output schemas (every tool returns an open JSON object, which its
    description spells out)."""

    _parameters: dict[str, set[str]] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """A tool's arguments checked first against its parameters: the SDK drops one it does not
        know, so a misspelt `kk` or a write with `scope` would be done as if it were not there."""
        if self._parameters is None:
            self._parameters = {t.name: set(t.input_schema.get("properties", {})) for t in await self.list_tools()}
        if name not in self._parameters:
            raise ToolError(f"Unknown tool: {name} (hint: tools/list names them: {', '.join(sorted(self._parameters))})")
        unknown = sorted(set(arguments or {}) - self._parameters[name])
        if unknown:
            why = "; a write goes to the server's own namespace, scope only reads" if unknown[0] == "scope" else ""
            raise ToolError(f"Error executing tool {name}: invalid_input: {name} takes no argument {unknown[0]!r}"
                            f"{why} (hint: tools/list gives each tool's parameters)")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: {arguments_said(e.__cause__)}") from None
            raise

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as e:
            if not str(e).startswith("Unknown resource"):
                raise
            raise ResourceNotFoundError(f"not_found: no resource {str(uri)!r} (hint: resources/list and "
                                        "resources/templates/list name them)") from None

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        """A prompt's arguments checked first: the SDK answers a missing one as an internal
        error and logs a traceback."""
        known = {p.name: p for p in await self.list_prompts()}
        if name not in known:
            raise MCPError(INVALID_PARAMS, f"invalid_input: no prompt {name!r} (prompts/list names them)")
        missing = [a.name for a in known[name].arguments or () if a.required and a.name not in (arguments or {})]
        if missing:
            raise MCPError(INVALID_PARAMS, f"invalid_input: {', '.join(missing)} must be given")
        # An argument the prompt does not take fails in the SDK as "Error rendering prompt", code 0.
        unknown = sorted(set(arguments or {}) - {a.name for a in known[name].arguments or ()})
        if unknown:
            raise MCPError(INVALID_PARAMS, f"invalid_input: prompt {name!r} takes no argument {unknown[0]!r} "
                                           "(hint: prompts/list names its arguments)")
        return await super().get_prompt(name, arguments, context)

    async def list_tools(self) -> list[MCPTool]:
        return [t.model_copy(update={"description": " ".join(t.description.split()),
                                     "input_schema": lean(t.input_schema), "output_schema": None})
                for t in await super().list_tools()]
