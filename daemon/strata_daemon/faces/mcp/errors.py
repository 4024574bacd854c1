"""What the MCP face answers when something is refused: strata's own words (`invalid_input:
k must be at least 1, not 0`), as a tool error or as the protocol's error code, never a
library's text or an internal error for what the caller can fix."""

from __future__ import annotations

from typing import Awaitable, TypeVar

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from strata_daemon.errors import InvalidInput, NotFound, StrataError

T = TypeVar("T")


def error_text(e: StrataError) -> str:
    return f"{e.kind}: {e.message}" + (f" (hint: {e.hint})" if e.hint else "")


# JSON-RPC's code for a request whose parameters are wrong: a bad input, or nothing by that name.
INVALID_PARAMS = -32602


def protocol_error(e: StrataError) -> Exception:
    """A refused read (a resource, a prompt) as the protocol says it: invalid parameters for what
    the caller can fix, an internal error with the message for the rest."""
    if isinstance(e, NotFound):
        return ResourceNotFoundError(error_text(e))
    if isinstance(e, InvalidInput):
        return MCPError(INVALID_PARAMS, error_text(e))
    return ResourceError(error_text(e))


def arguments_said(exc: ValidationError) -> str:
    """The first argument pydantic refused, in strata's words: `invalid_input: k must be at least
    1, not 0`, never pydantic's own text and its links."""
    first = exc.errors(include_url=False)[0]
    name = ".".join(str(p) for p in first["loc"]) or "arguments"
    ctx, given = first.get("ctx") or {}, first.get("input")
    bounds = {"greater_than_equal": "at least {ge}", "less_than_equal": "at most {le}", "greater_than": "more than {gt}",
              "less_than": "less than {lt}", "missing": "given", "literal_error": "one of {expected}"}
    if first["type"] in bounds:
        said = f"{name} must be {bounds[first['type']].format(**ctx)}"
        said += "" if first["type"] == "missing" else f", not {given!r}"
    else:
        said = f"{name}: {first['msg'][:1].lower()}{first['msg'][1:]}"
    return f"invalid_input: {said} (hint: tools/list gives each tool's parameters)"


async def guarded(call: Awaitable[T]) -> T:
    try:
        return await call
    except StrataError as e:
        raise ToolError(error_text(e)) from None
