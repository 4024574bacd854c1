"""The stdio wire of `strata mcp`, guarded: every line the client sends gets an answer. The
SDK's own transport drops a line it cannot parse (no reply, so the client waits forever) and
reads bytes that are not UTF-8 as U+FFFD, which every other face of strata refuses. Here a
line that is too long, not UTF-8, not JSON, nested too deeply, holds a lone surrogate or is
not a JSON-RPC message is answered with a JSON-RPC error; the rest goes to the SDK as is."""

from __future__ import annotations

import contextlib
import json
import os
import re
from typing import AsyncIterator

import anyio
import anyio.to_thread
import mcp_types

MAX_LINE_BYTES = 16 * 1024 * 1024  # as an import line: well above any memory store.max_content_bytes allows
# An id the line opens with; a number only when whole (not the first digits of a longer one).
_LEADING_ID = re.compile(rb'^\s*\{[^{}]{0,200}?"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"[^"\\]{0,200}")')
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


class Out:
    """The wire out: one whole line per write, never two writers' bytes interleaved."""

    def __init__(self, fd: int):
        self._file = os.fdopen(fd, "wb", buffering=0, closefd=False)
        self._lock = anyio.Lock()

    def _put(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self._file.write(view):]

    async def write(self, text: str) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._put, text.encode("utf-8"))

    async def flush(self) -> None:  # every write is unbuffered
        return None

    async def error(self, ident, code: int, message: str) -> None:
        await self.write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})
                         + "\n")


def _surrogate(value, depth: int = 0) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if depth > 64:
        return False
    if isinstance(value, dict):
        return any(_surrogate(k, depth + 1) or _surrogate(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return any(_surrogate(v, depth + 1) for v in value)
    return False


def _id_of(message) -> str | int | None:
    """The request id to answer, when the message is readable enough to have one."""
    if isinstance(message, str):
        try:
            message = json.loads(message)
        except (ValueError, RecursionError):
            return None
    ident = message.get("id") if isinstance(message, dict) else None
    return ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None


def problem(raw: bytes) -> tuple[object, int, str] | None:
    """(id, code, message) when the line cannot go to the SDK, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return _id_of(raw.decode("utf-8", "replace")), PARSE_ERROR, f"the message is not UTF-8 (byte {e.start})"
    try:
        message = json.loads(text)
    except RecursionError:
        return None, PARSE_ERROR, "the message nests too deeply to read"
    except json.JSONDecodeError as e:
        return None, PARSE_ERROR, f"the message is not JSON ({e.msg} at column {e.colno})"
    except ValueError:  # an integer of more digits than Python converts (4,300)
        found = _LEADING_ID.match(raw[:1024])
        return (None if found is None else json.loads(found.group(1))), PARSE_ERROR, \
            "a number in the message has too many digits to read"
    ident = _id_of(message)
    if isinstance(message, dict) and "id" in message and ident is None:
        return None, INVALID_REQUEST, "the id must be a string or a number"
    if _surrogate(message):
        return ident, INVALID_PARAMS, "the message holds a lone surrogate (\\ud800-\\udfff): not valid Unicode text"
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except ValueError as e:
        return ident, INVALID_REQUEST, f"not a JSON-RPC 2.0 message: {_why_not(message, e)}"
    return None


def _why_not(message, e: ValueError) -> str:
    """What a message that is JSON but no JSON-RPC message lacks, in words (the SDK's validator
    says `4 validation errors for union[JSONRPCRequest, ...]`)."""
    if not isinstance(message, dict):
        return "a message is one JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'it needs "jsonrpc": "2.0"'
    if not {"method", "result", "error"} & set(message):
        return 'it has no "method" (a request or a notification), nor a "result" or an "error" (a response)'
    errors = e.errors() if callable(getattr(e, "errors", None)) else []
    said = [x for x in errors if x.get("loc") and x["loc"][0] == ("JSONRPCRequest" if "method" in message
                                                                   else "JSONRPCResponse")]
    if said:
        field = ".".join(str(part) for part in said[0]["loc"][1:]) or "the message"
        return f'"{field}": {said[0]["msg"].lower()}'
    return "its fields fit neither a request, a notification nor a response"


def too_early(message) -> tuple[object, int, str] | None:
    """(id, code, message) for a request sent before `initialize`, which the SDK answers only with
    "Invalid request parameters"; None for a ping or a notification."""
    if not isinstance(message, dict) or "id" not in message or message.get("method") in (None, "ping"):
        return None
    return _id_of(message), INVALID_REQUEST, ("the session is not initialized: send `initialize` (and then "
                                              "`notifications/initialized`) before any other request")


class In:
    """The wire in: the client's lines, checked; a bad one is answered on `out` and skipped."""

    def __init__(self, fd: int, out: Out):
        self._file = os.fdopen(fd, "rb", closefd=False)
        self._out = out
        self._initialized = False

    def _readline(self) -> bytes:
        return self._file.readline(MAX_LINE_BYTES + 2)

    def _skip_rest(self) -> None:
        while (chunk := self._file.readline(MAX_LINE_BYTES)) and not chunk.endswith(b"\n"):
            pass

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while raw := await anyio.to_thread.run_sync(self._readline, abandon_on_cancel=True):
            if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES:
                if not raw.endswith(b"\n"):
                    await anyio.to_thread.run_sync(self._skip_rest, abandon_on_cancel=True)
                # Not read whole, so not parsed: an id the message opens with is still answered.
                found = _LEADING_ID.match(raw[:1024])
                ident = None if found is None else json.loads(found.group(1))
                await self._out.error(ident, PARSE_ERROR, f"the message is longer than {MAX_LINE_BYTES // 2**20} MiB")
                continue
            if not raw.strip():
                continue
            found = problem(raw)
            if found is None and not self._initialized:
                message = json.loads(raw)
                self._initialized = isinstance(message, dict) and message.get("method") == "initialize"
                found = None if self._initialized else too_early(message)
            if found:
                await self._out.error(*found)
                continue
            yield raw.decode("utf-8")


@contextlib.contextmanager
def claimed():
    """(In, Out) on private copies of fd 0 and 1, with fd 0 then reading /dev/null and fd 1
    writing to stderr: stray output of a library (a model loader) never lands on the wire."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        out = Out(wire_out)
        yield In(wire_in, out), out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        for fd in (null, wire_in, wire_out):
            with contextlib.suppress(OSError):
                os.close(fd)
