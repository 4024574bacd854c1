"""The HTTP API as an ASGI app (Starlette): every route comes from `routes.OPS` and calls the
same `Memory` methods as the CLI and MCP. Requests are checked against the same JSON schemas
the OpenAPI document publishes; every error has one body shape: {"error", "message", "hint"?}."""

from __future__ import annotations

import asyncio
import difflib
import hmac
import json
import logging
from typing import Any
from urllib.parse import unquote_to_bytes

from jsonschema import Draft202012Validator
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from strata_daemon.app.memory import Memory
from strata_daemon.base import text
from strata_daemon.base.wording import quoted
from strata_daemon.errors import (
    CasMismatch,
    ConfigError,
    Conflict,
    EmbeddingUnavailable,
    InvalidInput,
    LlmUnavailable,
    NotFound,
    NotPermitted,
    StorageError,
    StrataError,
    shortened,
)
from strata_daemon.faces.http.openapi import document
from strata_daemon.faces.http.routes import OPS, PATH_TYPES, Call, Op, scoped

log = logging.getLogger("strata")

# By class, the nearest in an error's MRO wins (CasMismatch before a plain StrataError).
STATUS = {NotFound: 404, InvalidInput: 400, Conflict: 409, CasMismatch: 409, NotPermitted: 403,
          StorageError: 503, EmbeddingUnavailable: 503, LlmUnavailable: 503, ConfigError: 500}
PATH_CHECKS = {name: Draft202012Validator(schema) for name, schema in PATH_TYPES.items()}


class Unauthorized(StrataError):
    kind = "unauthorized"


class TooLarge(StrataError):
    kind = "too_large"


class TooSlow(StrataError):
    kind = "timeout"


def status_of(e: StrataError) -> int:
    if isinstance(e, Unauthorized):
        return 401
    if isinstance(e, TooLarge):
        return 413
    if isinstance(e, TooSlow):
        return 408
    return next((STATUS[cls] for cls in type(e).__mro__ if cls in STATUS), 500)


def _problem(errors, what: str, name: str = "") -> str | None:
    """The first schema error as one message: WHAT (`request body`, `query parameter`) and where.
    A number out of its bounds is said as the layers say it (`budget must be between 32 and
    100000, not 5`): one voice, whichever face checked it."""
    first = next(iter(sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])), None)
    if first is None:
        return None
    where = ".".join(str(p) for p in first.absolute_path)
    low, high = first.schema.get("minimum"), first.schema.get("maximum")
    if first.validator in ("minimum", "maximum") and (where or name):
        bounds = f"between {low} and {high}" if low is not None and high is not None else \
            f"at least {low}" if low is not None else f"at most {high}"
        return f"{where or name} must be {bounds}, not {first.instance}"
    if first.validator == "minLength" and first.instance == "" and (where or name):
        return f"{where or name} is empty"  # as the layers say it, not `'' should be non-empty`
    said = " ".join(w for w in (what, name) if w)
    message = first.message
    if first.validator == "additionalProperties" and isinstance(first.instance, dict):
        unknown = sorted(set(first.instance) - set(first.schema.get("properties", {})))
        message = f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(quoted, unknown))} " \
                  f"(GET /openapi.json lists the fields)"
    return f"{said} {where}: {message}" if where else f"{said}: {message}"


def _scalar(raw: str, schema: dict, name: str) -> Any:
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError:  # also a number of more digits than Python converts
        raise InvalidInput(f"{name} must be a {'whole ' if kind == 'integer' else ''}number, not {quoted(raw)}") \
            from None
    if kind == "boolean":
        if raw.lower() not in ("true", "false", "1", "0"):
            raise InvalidInput(f"{name} must be true or false, not {quoted(raw)}")
        return raw.lower() in ("true", "1")
    return raw


def _whole(value: Any, schema: dict) -> Any:
    """VALUE with the numbers its schema calls integers as ints: JSON Schema counts 3.0 as an
    integer, and the code behind it counts with ints."""
    if isinstance(value, float) and schema.get("type") == "integer":
        return int(value)
    if isinstance(value, dict) and "properties" in schema:
        return {k: _whole(v, schema["properties"].get(k, {})) for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_whole(v, schema["items"]) for v in value]
    for alternative in schema.get("anyOf", ()):
        if alternative.get("type") == "integer":
            return _whole(value, alternative)
    return value


def _json(raw: bytes) -> Any:
    try:
        body = json.loads(raw) if raw else {}
    except ValueError as e:  # not UTF-8, not JSON, or an integer of more digits than Python reads
        said = "a number in it has too many digits" if "digits" in str(e) else shortened(str(e), 120)
        raise InvalidInput(f"the request body is not valid JSON ({said})") from None
    except RecursionError:
        raise InvalidInput("the request body is nested too deeply") from None
    if (where := text.broken_part(body)) is not None:
        raise InvalidInput(f"the request body{' at ' + where if where else ''} is not valid UTF-8 text",
                           hint=text.HINT)
    return body


class RawPath:
    """Routes on the path as the client sent it, each parameter decoded on its own: a fact's key
    may hold '/', sent as %2F, which a path decoded first would split into two segments."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("raw_path"):
            # Some servers' raw_path carries the query string too; the query is read from its own field.
            scope = {**scope, "path": scope["raw_path"].decode("latin-1").partition("?")[0]}
        await self.app(scope, receive, send)


def _unquoted(raw: str, name: str) -> str:
    try:
        return unquote_to_bytes(raw.encode("latin-1")).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"path parameter {name} is not valid UTF-8 text", hint=text.HINT) from None


class Checked:
    """An operation with its compiled validators."""

    def __init__(self, op: Op):
        self.op = op
        self.params = scoped(op)
        props = {p.name: p.schema for p in self.params}
        self.query_schema = Draft202012Validator({"type": "object", "properties": props})
        self.body_schema = Draft202012Validator(op.body) if op.body else None

    def query(self, request: Request) -> dict:
        known = [p.name for p in self.params]
        for name in request.query_params:  # a misspelt `limt` would be answered as if not given, as bodies are not
            if name not in known:
                near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
                raise InvalidInput(f"unknown query parameter {name!r}" + (f"; did you mean {near[0]!r}?" if near
                                                                           else ""),
                                   hint="the API's document (GET /openapi.json) lists each path's parameters")
        out: dict[str, Any] = {}
        for p in self.params:
            if p.schema.get("type") == "array":
                values = request.query_params.getlist(p.name)
                if values:
                    out[p.name] = [_scalar(v, p.schema["items"], p.name) for v in values]
            elif p.name in request.query_params:
                out[p.name] = _scalar(request.query_params[p.name], p.schema, p.name)
            elif "default" in p.schema:
                out[p.name] = p.schema["default"]
        problem = _problem(self.query_schema.iter_errors(out), "query parameter")
        if problem:
            raise InvalidInput(problem)
        return out

    def path(self, request: Request) -> dict:
        out = {}
        for name, raw in request.path_params.items():
            value = _scalar(_unquoted(raw, name), PATH_TYPES[name], name)
            problem = _problem(PATH_CHECKS[name].iter_errors(value), "path parameter", name)
            if problem:
                raise InvalidInput(problem)
            out[name] = value
        return out

    async def body(self, request: Request, limit: int, seconds: float) -> dict:
        if self.body_schema is None:
            return {}
        raw = bytearray()
        try:
            async with asyncio.timeout(seconds):  # a body that trickles in holds a connection for nothing
                async for chunk in request.stream():
                    raw += chunk
                    if len(raw) > limit:
                        raise TooLarge(f"the request body is over http.max_body_bytes ({limit:,} bytes)",
                                       hint="send less per request (POST /v1/memories/batch takes many at once)")
        except TimeoutError:
            raise TooSlow(f"the request body did not arrive within {seconds:g} s",
                          hint="http.request_timeout_seconds sets the limit") from None
        body = _json(bytes(raw))
        problem = _problem(self.body_schema.iter_errors(body), "request body")
        if problem:
            raise InvalidInput(problem)
        return _whole(body, self.op.body)


def error_response(e: StrataError) -> JSONResponse:
    return JSONResponse(e.as_dict(), status_code=status_of(e))


def build(mem: Memory, *, token: str | None = None, max_body_bytes: int = 8 << 20,
          body_seconds: float = 30.0) -> Starlette:
    """The app for one namespace. With `token`, every request over TCP must carry
    `Authorization: Bearer TOKEN`; on the Unix socket the file's mode is the access control."""

    def authorize(request: Request) -> None:
        server = request.scope.get("server")
        on_unix_socket = isinstance(server, (tuple, list)) and server[1] is None  # (path, None)
        if token is None or on_unix_socket:
            return
        scheme, _, given = request.headers.get("authorization", "").strip().partition(" ")
        # The scheme is case-insensitive (RFC 9110); the token is compared in constant time.
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            raise Unauthorized("missing or wrong bearer token", hint="send Authorization: Bearer <state/http-token>")

    def endpoint(by_method: dict[str, Checked]):
        async def handle(request: Request) -> Response:
            checked = by_method[request.method if request.method != "HEAD" else "GET"]
            try:
                authorize(request)
                if checked.op.writes and "scope" in request.query_params:
                    raise NotPermitted("a write goes to the server's own namespace; scope only reads")
                query = checked.query(request)
                scope = query.pop("scope", None)
                call = Call(checked.path(request), query, await checked.body(request, max_body_bytes, body_seconds),
                            await mem.shared(scope) if scope else mem)
                return JSONResponse(await checked.op.run(call), status_code=checked.op.status)
            except StrataError as e:
                return error_response(e)
            except ClientDisconnect:  # gone mid-body: nobody reads an answer, and nothing was done
                log.debug("http: %s %s: the client went away before its body arrived", request.method,
                          request.url.path)
                return Response(status_code=400)
            except Exception:
                log.exception("http: %s %s failed", request.method, request.url.path)
                return JSONResponse({"error": "internal", "message": "unexpected error; the daemon log has "
                                     "the details"}, status_code=500)
        return handle

    by_path: dict[str, dict[str, Checked]] = {}
    for op in OPS:
        by_path.setdefault(op.path, {})[op.method] = Checked(op)
    spec = document()

    async def openapi(request: Request) -> Response:
        try:
            authorize(request)
        except StrataError as e:
            return error_response(e)
        return JSONResponse(spec)

    routes = [Route(path, endpoint(methods), methods=list(methods)) for path, methods in by_path.items()]
    routes.append(Route("/openapi.json", openapi, methods=["GET"]))

    async def not_found(request: Request, exc) -> Response:
        code = getattr(exc, "status_code", 404)
        kind, text = ("method_not_allowed", f"{request.method} is not allowed on {request.url.path}") if code == 405 \
            else ("not_found", f"no endpoint {request.url.path}")
        return JSONResponse({"error": kind, "message": text, "hint": "GET /openapi.json lists the endpoints"},
                            status_code=code)

    return RawPath(Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found}))
