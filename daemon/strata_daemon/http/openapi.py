"""The OpenAPI 3.1 document of the HTTP API, built from the operation table (pure).

`strata_daemon/http/openapi.json` in the repository is this document; a test keeps the two equal and
`strata serve --openapi` prints it."""

from __future__ import annotations

import re

from .. import __version__
from .routes import OPS, PATH_TYPES, Op, scoped

ERROR = {"type": "object", "required": ["error", "message"],
         "properties": {"error": {"type": "string"}, "message": {"type": "string"}, "hint": {"type": "string"},
                        "current": {"type": ["string", "null"]}}}
PAGE = {"type": "object", "required": ["items", "offset", "next_offset"],
        "properties": {"items": {"type": "array", "items": {"type": "object"}}, "offset": {"type": "integer"},
                       "next_offset": {"type": ["integer", "null"]}}}
RESULT = {"type": ["object", "array"]}


def _parameters(op: Op) -> list[dict]:
    out = [{"name": name, "in": "path", "required": True, "schema": PATH_TYPES[name]}
           for name in re.findall(r"{(\w+)}", op.path)]
    for p in scoped(op):
        param = {"name": p.name, "in": "query", "required": p.required, "description": p.description,
                 "schema": p.schema}
        if p.schema.get("type") == "array":
            param.update(style="form", explode=True)
        out.append(param)
    return out


def _operation(op: Op) -> dict:
    body = {"description": "the result", "content": {"application/json": {"schema": PAGE if op.list_of else RESULT}}}
    error = {"description": "{error, message, hint}: 400 invalid input, 401 no token, 403 not permitted, "
                            "404 not found, 409 conflict or compare-and-set mismatch, 413 too large",
             "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    out = {"operationId": op.op_id, "summary": op.summary, "tags": [op.tag], "parameters": _parameters(op),
           "responses": {str(op.status): body, "4XX": error}}
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": op.body}}}
    return out


def document() -> dict:
    paths: dict[str, dict] = {}
    for op in OPS:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "strata", "version": __version__,
                 "description": "One agent namespace of a strata home, over a Unix socket (or loopback TCP "
                                "with a bearer token). The same operations as the CLI and MCP server."},
        "servers": [{"url": "http://localhost"}],
        "paths": paths,
        "components": {"schemas": {"Error": ERROR}},
    }
