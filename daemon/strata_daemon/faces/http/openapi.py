"""The OpenAPI 3.1 document of the HTTP API, built from the operation table and the response
shapes (pure).

`strata_daemon/faces/http/openapi.json` in the repository is this document; a test keeps the two equal and
`strata serve --openapi` prints it."""

from __future__ import annotations

import re

from strata_daemon import __version__
from strata_daemon.faces.http.responses import SCHEMAS
from strata_daemon.faces.http.routes import OPS, PATH_TYPES, Op, scoped
from strata_daemon.faces.http.shapes import ref

# The errors, each with the one body shape (Error). Every operation may answer those in
# EVERYWHERE; those with a body, BODY_ERRORS too; the others (404, 409) each operation names.
ERRORS = {
    400: ("BadRequest", "The request is not valid: a parameter or the body breaks its schema, or the values make "
                        "no sense together. The message says which."),
    401: ("Unauthorized", "Over TCP: the bearer token is missing or wrong."),
    403: ("NotPermitted", "`scope` names a namespace that is not shared with this agent, or was given to a "
                          "writing operation."),
    404: ("NotFound", "What the path names is not in this namespace."),
    408: ("TooSlow", "The body did not arrive within http.request_timeout_seconds."),
    409: ("Conflict", "The change conflicts with what is stored: feedback already given, or (cas_mismatch) the "
                      "fact holds another value, given in `current`."),
    413: ("TooLarge", "The body is over http.max_body_bytes."),
}
EVERYWHERE = (400, 401, 403)
BODY_ERRORS = (408, 413)
SERVER_ERROR = ("ServerError", "The server failed: 503 when the database stayed locked or a model could not be "
                               "loaded, 500 on an unexpected error (the daemon log has the details).")

TAGS = {
    "memories": "Storing, reading and forgetting memories.",
    "recall": "Finding memories for a query, and learning from feedback which strategy finds them best.",
    "spiderweb": "Associations between memories, facts and entities, learned from their use together.",
    "facts": "Keyed values with their whole history (what was true when, and who said so).",
    "dossiers": "Markdown summaries of topics, every line citing its sources.",
    "capsule": "The file the agent reads first after a context reset.",
    "lifecycle": "Upkeep and the namespace's state.",
}

BEARER = {"type": "http", "scheme": "bearer",
          "description": "The token strata keeps in `state/http-token` in the home (0600), sent as "
                         "`Authorization: Bearer TOKEN`. Every request over TCP needs it. Over the Unix socket it "
                         "is not checked: the socket file's mode (0600) is the access control there."}


PATH_WORDS = {"id": "the memory's id",
              "key": "the fact's key; case and separators do not matter (`DB-01 status` is `db 01 status`)",
              "topic": "the dossier's topic; likewise (`Memory Systems` is `memory_systems`)",
              "node": "episode:ID, fact:KEY or entity:TYPE:VALUE"}


def _parameters(op: Op) -> list[dict]:
    out = [{"name": name, "in": "path", "required": True, "schema": PATH_TYPES[name],
            "description": "the recall's id" if op.path.startswith("/v1/recalls/") else PATH_WORDS[name]}
           for name in re.findall(r"{(\w+)}", op.path)]
    for p in scoped(op):
        param = {"name": p.name, "in": "query", "required": p.required, "description": p.description,
                 "schema": p.schema}
        if p.schema.get("type") == "array":
            param.update(style="form", explode=True)
        out.append(param)
    return out


def _described(schema: dict) -> str:
    """What a response body is: the description of its schema, or of the named schema it refers to."""
    if "$ref" in schema:
        return SCHEMAS[schema["$ref"].rsplit("/", 1)[-1]]["description"]
    return schema["description"]


def _error(name: str) -> dict:
    return {"$ref": f"#/components/responses/{name}"}


def _operation(op: Op) -> dict:
    codes = sorted({*EVERYWHERE, *op.errors, *(BODY_ERRORS if op.body is not None else ())})
    responses = {str(op.status): {"description": _described(op.answer),
                                  "content": {"application/json": {"schema": op.answer}}}}
    responses.update((str(code), _error(ERRORS[code][0])) for code in codes)
    responses["5XX"] = _error(SERVER_ERROR[0])
    out = {"operationId": op.op_id, "summary": op.summary, "description": op.description, "tags": [op.tag],
           "parameters": _parameters(op), "responses": responses}
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": op.body}}}
    return out


def _spec_itself() -> dict:
    """GET /openapi.json, which the app serves beside the operations."""
    return {"operationId": "getOpenApi", "summary": "Read this document", "tags": ["lifecycle"],
            "description": "The OpenAPI document of the API, as `strata serve --openapi` prints it.",
            "responses": {"200": {"description": "The OpenAPI 3.1 document.",
                                  "content": {"application/json": {"schema": {"type": "object"}}}},
                          "401": _error(ERRORS[401][0])}}


def document() -> dict:
    paths: dict[str, dict] = {}
    for op in OPS:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op)
    paths["/openapi.json"] = {"get": _spec_itself()}
    error_body = {"application/json": {"schema": ref("Error")}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "strata", "version": __version__,
                 "description": "One agent namespace of a strata home, over a Unix socket (or loopback TCP "
                                "with a bearer token). The same operations as the CLI and MCP server."},
        "servers": [{"url": "http://localhost"}],
        "security": [{"bearer": []}],
        "tags": [{"name": name, "description": text} for name, text in TAGS.items()],
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "responses": {name: {"description": text, "content": error_body}
                          for name, text in [*ERRORS.values(), SERVER_ERROR]},
            "securitySchemes": {"bearer": BEARER},
        },
    }
