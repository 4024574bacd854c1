"""More of the adversarial corpus on the wire faces: raw HTTP requests (header and framing
abuse, bad paths, wrong methods), HTTP bodies of the wrong types and numbers (NaN, infinity,
2^70, fractions) on every route, and MCP lines (every tool with arguments of the wrong type,
the `context` prompt, every resource template, JSON-RPC that is not what it says). Each must be
answered (a status, a JSON-RPC reply) without a server error, and change nothing."""

from __future__ import annotations

import json
import os
import select
import time

_C = b"Host: x\r\nConnection: close\r\n"  # answered at once, not held open for the next request


def _req(line: bytes, *headers: bytes, body: bytes = b"") -> bytes:
    return line + b"\r\n" + _C + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


_Q = b'{"query":"disk"}'  # 16 bytes
HTTP_RAW_MORE: list[tuple[str, bytes]] = [
    ("two different lengths", _req(b"GET /v1/status HTTP/1.1", b"Content-Length: 5", b"Content-Length: 6",
                                   body=b"hello")),
    ("a length of 23 digits", _req(b"POST /v1/recall HTTP/1.1", b"Content-Length: " + b"1" * 23, body=b"{}")),
    ("a length in exponent form", _req(b"POST /v1/recall HTTP/1.1", b"Content-Length: 1e3", body=b"{}")),
    ("a length with a plus sign", _req(b"POST /v1/recall HTTP/1.1", b"Content-Length: +2", body=b"{}")),
    ("gzip then chunked", _req(b"POST /v1/recall HTTP/1.1", b"Transfer-Encoding: gzip, chunked", body=b"0\r\n\r\n")),
    ("a chunk of 2^80 bytes", _req(b"POST /v1/recall HTTP/1.1", b"Transfer-Encoding: chunked",
                                   body=b"ffffffffffffffffffff\r\nx\r\n0\r\n\r\n")),
    ("a negative chunk", _req(b"POST /v1/recall HTTP/1.1", b"Transfer-Encoding: chunked",
                              body=b"-1\r\nx\r\n0\r\n\r\n")),
    ("a chunk extension of 100 KB", _req(b"POST /v1/recall HTTP/1.1", b"Transfer-Encoding: chunked",
                                         body=b"5;e=" + b"e" * 100_000 + b"\r\nhello\r\n0\r\n\r\n")),
    ("a trailer of 100 KB", _req(b"POST /v1/recall HTTP/1.1", b"Transfer-Encoding: chunked",
                                 body=b"1\r\n{\r\n0\r\nX-T: " + b"t" * 100_000 + b"\r\n\r\n")),
    ("JSON as text/plain", _req(b"POST /v1/recall HTTP/1.1", b"Content-Type: text/plain", b"Content-Length: 16",
                                body=_Q)),
    ("JSON said to be UTF-16", _req(b"POST /v1/recall HTTP/1.1", b"Content-Type: application/json; charset=utf-16",
                                    b"Content-Length: 16", body=_Q)),
    ("JSON said to be gzip", _req(b"POST /v1/recall HTTP/1.1", b"Content-Encoding: gzip", b"Content-Length: 16",
                                  body=_Q)),
    ("an Expect nobody meets", _req(b"POST /v1/recall HTTP/1.1", b"Expect: teapot", b"Content-Length: 16", body=_Q)),
    ("2,000 headers", _req(b"GET /v1/status HTTP/1.1", *(b"X-H%d: v" % i for i in range(2000)))),
    ("a NUL in a header", _req(b"GET /v1/status HTTP/1.1", b"X-Bad: a\x00b")),
    ("bytes not UTF-8 in a header", _req(b"GET /v1/status HTTP/1.1", b"X-Bad: \xff\xfe")),
    ("a bare CR in a header", _req(b"GET /v1/status HTTP/1.1", b"X-Bad: a\rb")),
    ("a folded header", _req(b"GET /v1/status HTTP/1.1", b" X-Folded: continued")),
    ("a space in a header name", b"GET /v1/status HTTP/1.1\r\nHo st: x\r\nConnection: close\r\n\r\n"),
    ("a header without a name", _req(b"GET /v1/status HTTP/1.1", b": empty")),
    ("two hosts", _req(b"GET /v1/status HTTP/1.1", b"Host: y")),
    ("a host of a direction mark", b"GET /v1/status HTTP/1.1\r\nHost: \xe2\x80\xae\r\nConnection: close\r\n\r\n"),
    ("a bearer token of 10 KB", _req(b"GET /v1/status HTTP/1.1", b"Authorization: Bearer " + b"A" * 10_000)),
    ("5,000 cookies", _req(b"GET /v1/status HTTP/1.1", b"Cookie: " + b"c=1; " * 5000)),
    ("an upgrade to websocket", b"GET /v1/status HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                                b"Connection: Upgrade\r\n\r\n"),
    ("HTTP/1.0 without a host", b"GET /v1/status HTTP/1.0\r\n\r\n"),
    ("HTTP/9.9", _req(b"GET /v1/status HTTP/9.9")),
    ("FTP/1.1", _req(b"GET /v1/status FTP/1.1")),
    ("double spaces", _req(b"GET  /v1/status  HTTP/1.1")),
    ("a method in lower case", _req(b"get /v1/status HTTP/1.1")),
    ("an asterisk target", _req(b"GET * HTTP/1.1")), ("CONNECT", _req(b"CONNECT strata:80 HTTP/1.1")),
    ("a path of 100 KB", _req(b"GET /" + b"a" * 100_000 + b" HTTP/1.1")),
    ("20,000 query parameters", _req(b"GET /v1/timeline?" + b"&".join([b"kind=event"] * 20_000) + b" HTTP/1.1")),
    ("an encoded path climb", _req(b"GET /v1/memories/1%2F..%2F..%2Fstatus HTTP/1.1")),
    ("an overlong slash", _req(b"GET /v1/facts/%C0%AF HTTP/1.1")),
    ("an encoded surrogate", _req(b"GET /v1/facts/%ED%A0%80 HTTP/1.1")),
    ("a bad percent escape", _req(b"GET /v1/facts/%zz HTTP/1.1")),
    ("a double-encoded percent", _req(b"GET /v1/facts/%%32%35 HTTP/1.1")),
    ("a time of 0xff", _req(b"GET /v1/facts/canary?at=%FF HTTP/1.1")),
    ("a time of NUL", _req(b"GET /v1/facts/canary?at=%00 HTTP/1.1")),
    ("a fragment", _req(b"GET /v1/facts/canary#frag HTTP/1.1")),
    ("a scope of 0xff", _req(b"GET /v1/timeline?scope=%FF HTTP/1.1")),
    ("PUT on a memory", _req(b"PUT /v1/memories/1 HTTP/1.1", b"Content-Length: 2", body=b"{}")),
    ("DELETE on the facts", _req(b"DELETE /v1/facts HTTP/1.1")),
    ("PATCH on a fact", _req(b"PATCH /v1/facts/canary HTTP/1.1", b"Content-Length: 2", body=b"{}")),
    ("GET on recall", _req(b"GET /v1/recall HTTP/1.1")),
    ("a request then garbage", b"GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n"),
    ("a body then a request", _req(b"POST /v1/recall HTTP/1.1", b"Content-Length: 16",
                                   body=_Q + b"GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n")),
    ("blank lines first", b"\r\n\r\n\r\n" + _req(b"GET /v1/status HTTP/1.1")),
    ("a TLS hello", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(40))),
    ("1,000 NUL bytes", b"\x00" * 1000),
]

# (name, method, path, body): each must be refused (4xx), never a 5xx.
HTTP_BODIES_MORE: list[tuple[str, str, str, bytes]] = [
    *((f"memory: {name}", "POST", "/v1/memories", body) for name, body in (
        ("importance NaN", b'{"content": "x", "importance": NaN}'),
        ("importance Infinity", b'{"content": "x", "importance": Infinity}'),
        ("time NaN", b'{"content": "x", "at": NaN}'), ("time -Infinity", b'{"content": "x", "at": -Infinity}'),
        ("time 1e400", b'{"content": "x", "at": 1e400}'), ("time true", b'{"content": "x", "at": true}'),
        ("kind null", b'{"content": "x", "kind": null}'),
        ("a context value null", b'{"content": "x", "context": {"a": null}}'),
        ("factual a word", b'{"content": "x", "factual": "yes"}'),
        ("content twice, the last empty", b'{"content": "x", "content": ""}'),
        ("null", b"null"), ("a string", b'"x"'), ("an empty object", b"{}"),
        ("only zero-width spaces", b'{"content": "\\u200b\\u200b"}'),
        ("a context of 100 KB", b'{"content": "x", "context": {"k": "' + b"v" * 100_000 + b'"}}'))),
    ("batch of null", "POST", "/v1/memories/batch", b'{"items": [null]}'),
    ("batch of a string", "POST", "/v1/memories/batch", b'{"items": "x"}'),
    ("batch of 10,001", "POST", "/v1/memories/batch",
     b'{"items": [' + b",".join([b'{"content":"a"}'] * 10_001) + b"]}"),
    *((f"get ids {name}", "POST", "/v1/memories/get", b'{"ids": %s}' % ids) for name, ids in (
        ("none", b"[]"), ("0", b"[0]"), ("1e300", b"[1e300]"), ("a fraction", b"[1.5]"), ("NaN", b"[NaN]"),
        ("as text", b'["1"]'))),
    *((f"path id {name}", "GET", f"/v1/memories/{i}", b"") for name, i in (
        ("0", "0"), ("-1", "-1"), ("1.0", "1.0"), ("1e3", "1e3"), ("NaN", "NaN"), ("Infinity", "Infinity"))),
    ("PATCH of nothing known", "PATCH", "/v1/memories/1", b'{"reason": "x"}'),
    ("PATCH factual null", "PATCH", "/v1/memories/1", b'{"factual": null}'),
    ("purge maybe", "DELETE", "/v1/memories/1?purge=maybe", b""),
    ("forget a number", "POST", "/v1/forget", b'{"matching": 5}'),
    ("forget, confirm a word", "POST", "/v1/forget", b'{"matching": "disk", "confirm": "yes"}'),
    *((f"timeline {q}", "GET", f"/v1/timeline?{q}", b"") for q in (
        "order=sideways", "state=zombie", "kind=", "kind=nope", "limit=1001", "limit=NaN", "limit=1e3",
        "offset=1000000001", "since=nan", "until=1e400", "limit=%25zz", "scope=..%2Fx")),
    *((f"recall {name}", "POST", "/v1/recall", body) for name, body in (
        ("k 1.5", b'{"query": "disk", "k": 1.5}'), ("k NaN", b'{"query": "disk", "k": NaN}'),
        ("k as text", b'{"query": "disk", "k": "3"}'), ("k true", b'{"query": "disk", "k": true}'),
        ("a context value a number", b'{"query": "disk", "context": {"k": 5}}'),
        ("kinds a string", b'{"query": "disk", "kinds": "event"}'), ("query a list", b'{"query": ["disk"]}'))),
    ("recall in an unshared scope", "POST", "/v1/recall?scope=team", b'{"query": "disk"}'),
    *((f"context {name}", "POST", "/v1/context", body) for name, body in (
        ("empty", b'{"text": ""}'), ("budget NaN", b'{"text": "disk", "budget": NaN}'),
        ("budget 1e308", b'{"text": "disk", "budget": 1e308}'), ("a NUL", b'{"text": "a\\u0000b"}'),
        ("a lone surrogate", b'{"text": "\\ud800"}'), ("a number", b'{"text": 5}'))),
    ("feedback used as text", "POST", "/v1/recalls/1/feedback", b'{"outcome": "success", "used": "1"}'),
    ("feedback on recall abc", "POST", "/v1/recalls/abc/feedback", b'{"outcome": "success"}'),
    ("POST on the arena", "POST", "/v1/arena", b"{}"),
    *((f"spread {name}", "POST", "/v1/spread", body) for name, body in (
        ("threshold NaN", b'{"items": ["episode:1"], "threshold": NaN}'),
        ("threshold -Infinity", b'{"items": ["episode:1"], "threshold": -Infinity}'),
        ("of an empty item", b'{"items": [""]}'), ("of a number", b'{"items": [1]}'),
        ("of 101 items", b'{"items": [' + b",".join([b'"episode:1"'] * 101) + b"]}"))),
    *((f"node {n}", "GET", f"/v1/nodes/{n}/coactivations", b"") for n in (
        "planet:mars", "fact:", "entity%3Ahost%3A", "%FF")),
    ("coactivations limit 99999", "GET", "/v1/nodes/episode:1/coactivations?limit=99999", b""),
    *((f"fact {name}", "PUT", "/v1/facts/k", body) for name, body in (
        ("value a number", b'{"value": 5}'), ("confidence NaN", b'{"value": "v", "confidence": NaN}'),
        ("at Infinity", b'{"value": "v", "at": Infinity}'),
        ("a ttl it does not take", b'{"value": "v", "ttl": "1d"}'))),
    *((f"fact key {name}", "PUT", f"/v1/facts/{k}", b'{"value": "v"}') for name, k in (
        ("NUL", "%00"), ("a line break", "a%0Ab"), ("of 5,000 letters", "k" * 5000))),
    ("cas expected a number", "POST", "/v1/facts/canary/cas", b'{"expected": 5, "new": "x"}'),
    ("forget a fact, confirm a word", "POST", "/v1/facts/canary/forget", b'{"confirm": "yes"}'),
    ("forget facts of nothing", "POST", "/v1/facts/forget", b"{}"),
    ("a dossier of two dots", "GET", "/v1/dossiers/..", b""),
    ("a dossier version of 20 digits", "GET", "/v1/dossiers/nope?version=99999999999999999999", b""),
    ("forget a topic and a match", "POST", "/v1/dossiers/forget", b'{"topic": "a", "matching": "bcd"}'),
    ("refresh a climbing topic", "POST", "/v1/dossiers/..%2F../refresh", b"{}"),
    ("refresh, force 1", "POST", "/v1/dossiers/x/refresh", b'{"force": 1}'),
    ("capsule last_good 2", "GET", "/v1/capsule?last_good=2", b""),
    ("consolidate rules a string", "POST", "/v1/consolidate", b'{"rules": "merge"}'),
    ("consolidate, dry_run a word", "POST", "/v1/consolidate", b'{"dry_run": "yes"}'),
    ("PUT on the status", "PUT", "/v1/status", b"{}"),
    ("POST on the document", "POST", "/openapi.json", b"{}"),
    *((f"path {p}", "GET", p, b"") for p in ("/", "/v2/status", "//v1/status", "/V1/STATUS", "/v1/status;x=1",
                                             "/v1/status%00", "/v1/memories/1/related/../../..")),
]


def _line(ident: int, method: str, params) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


def _tool(ident: int, name: str, arguments) -> bytes:
    return _line(ident, "tools/call", {"name": name, "arguments": arguments})


_TOOLS = [  # only refusals and reads: a tool call that writes would change the home
    ("observe", {"content": 5}), ("observe", {"content": None}), ("observe", {"content": ["a"]}), ("observe", {}),
    ("observe", {"content": "x", "context": {"a": 5}}), ("observe", {"content": "x", "context": "prod"}),
    ("observe", {"content": "x", "at": 1e300}), ("observe", {"content": "x", "at": "nan"}),
    ("observe", {"content": "\u200b\u200b"}), ("observe", {"content": "x", "importance": "high"}),
    ("recall", {"query": "disk", "k": 3.5}), ("recall", {"query": "disk", "k": 1e300}),
    ("recall", {"query": "disk", "kinds": "event"}), ("recall", {"query": "disk", "kinds": [""]}),
    ("recall", {"query": "disk", "scope": "../x"}), ("recall", {"query": "disk", "scope": "team"}),
    ("recall", {"query": "\u202e\u200b\u0301"}), ("recall", {"query": ["disk"]}),
    ("feedback", {"recall_id": 1, "outcome": "success", "used": ["a"]}),
    ("feedback", {"recall_id": 1, "outcome": "maybe"}), ("feedback", {"recall_id": -1, "outcome": "failure"}),
    ("timeline", {"since": "garbage"}), ("timeline", {"limit": 0}), ("timeline", {"limit": "abc"}),
    ("timeline", {"scope": "team"}), ("memory_get", {"id": "abc"}), ("memory_get", {"id": -1}),
    ("memory_get", {"id": 1.5}), ("memory_get", {}), ("memory_get", {"id": 1, "scope": "team"}),
    ("forget", {}), ("forget", {"id": 1, "matching": "disk"}), ("forget", {"id": 1, "purge": True}),
    ("forget", {"matching": ""}), ("fact_get", {"key": ""}), ("fact_get", {"key": "canary", "history": "yes"}),
    ("fact_get", {"prefix": "%"}), ("fact_get", {"key": 5}), ("fact_set", {"key": "k"}),
    ("fact_set", {"key": "k", "value": "v", "retract": True}),
    ("fact_set", {"key": "k", "value": "v", "expected": "x", "at": "now"}),
    ("fact_set", {"key": "k", "retract": True, "expected": "x"}), ("fact_set", {"key": "k" * 5000, "value": "v"}),
    ("dossier", {"topic": "../x"}), ("dossier", {"topic": "never", "version": 2, "refresh": True}),
    ("dossier", {"topic": 5}), ("capsule_get", {"last_good": "yes"}), ("related", {"item": ""}),
    ("related", {"item": "1", "depth": 0}), ("related", {"item": "1", "limit": 0}), ("related", {"item": 1}),
    ("status", {"x": 1}), ("nope", {}), ("", {}),
]
_PROMPTS = [{"name": "nope"}, {"name": "context", "arguments": {"text": "disk", "budget": "-5"}},
            {"name": "context", "arguments": {"text": "disk", "budget": "64.0"}},
            {"name": "context", "arguments": {"text": "disk", "budget": "9" * 5000}},
            {"name": "context", "arguments": {"text": "a\u0000b"}},
            {"name": "context", "arguments": {"text": "x" * 70_000}},
            {"name": "context", "arguments": {"text": 5}}, {"name": "context", "arguments": {"text": "d", "tone": "x"}},
            {"name": "context", "arguments": None}, {"name": "context", "arguments": "x"}, {}, {"name": 5}]
_URIS = ["strata://capsule/", "strata://capsule?x=1", "strata://context/%00", "strata://context/" + "x" * 100_000,
         "strata://context/a/b/c", "strata://dossier/never", "strata://dossier/%2e%2e", "strata://dossier/a/b",
         "file:///etc/passwd", "", "not a uri", "STRATA://CAPSULE", 5]

MCP_MORE: list[tuple[str, bytes]] = [
    *((f"tool {name} {args}"[:80], _tool(2000 + n, name, args)) for n, (name, args) in enumerate(_TOOLS)),
    *((f"prompt {params}"[:80], _line(2100 + n, "prompts/get", params)) for n, params in enumerate(_PROMPTS)),
    *((f"resource {uri!r}"[:80], _line(2200 + n, "resources/read", {"uri": uri})) for n, uri in enumerate(_URIS)),
    *((f"method {m} {p}"[:80], _line(2300 + n, m, p)) for n, (m, p) in enumerate((
        ("resources/read", {}), ("resources/subscribe", {"uri": "strata://capsule"}),
        ("logging/setLevel", {"level": "nope"}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "context"},
                                                                          "argument": {"name": "text", "value": "x"}}),
        ("tools/list", {"cursor": 5}), ("initialize", {}), ("initialize", {"protocolVersion": "1999-01-01",
                                                                          "capabilities": {}, "clientInfo": {}}),
        ("tasks/list", None), ("sampling/createMessage", {}), ("tools/call", {"name": "status", "_meta": "x"}),
        ("tools/call", {"name": "status", "arguments": {}, "_meta": {"progressToken": {"a": 1}}}),
        ("prompts/get", None), ("resources/templates/list", {"cursor": []}), ("ping", {"x": 1})))),
    ("a cancel of nothing", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":424242}}'),
    ("a cancel of a string", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}'),
    ("progress of a word", b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x",'
                           b'"progress":"a"}}'),
    ("a notification nobody knows", b'{"jsonrpc":"2.0","method":"notifications/bogus"}'),
    ("JSON-RPC 1.0", b'{"jsonrpc":"1.0","id":2400,"method":"ping"}'),
    ("a version as a number", b'{"jsonrpc":2.0,"id":2401,"method":"ping"}'),
    ("a method as a number", b'{"jsonrpc":"2.0","id":2402,"method":5}'),
    ("params null", b'{"jsonrpc":"2.0","id":2403,"method":"ping","params":null}'),
    ("a fractional id", b'{"jsonrpc":"2.0","id":2404.5,"method":"ping"}'),
    ("a negative id", b'{"jsonrpc":"2.0","id":-2405,"method":"ping"}'),
    ("an id true", b'{"jsonrpc":"2.0","id":true,"method":"ping"}'),
    ("an empty id", b'{"jsonrpc":"2.0","id":"","method":"ping"}'),
    ("an id of 100 KB", b'{"jsonrpc":"2.0","id":"' + b"i" * 100_000 + b'","method":"ping"}'),
    ("an id as a list", b'{"jsonrpc":"2.0","id":[1],"method":"ping"}'),
    ("a batch", b'[{"jsonrpc":"2.0","id":2406,"method":"ping"},{"jsonrpc":"2.0","id":2407,"method":"ping"}]'),
    ("a method twice", b'{"jsonrpc":"2.0","id":2408,"method":"ping","method":"tools/list"}'),
    ("a result nobody asked for", b'{"jsonrpc":"2.0","id":2409,"result":{}}'),
    ("an error nobody asked for", b'{"jsonrpc":"2.0","id":2410,"error":{"code":1,"message":"x"}}'),
    ("only an id", b'{"jsonrpc":"2.0","id":2411}'),
    ("trailing words", b'{"jsonrpc":"2.0","id":2412,"method":"ping"}   trailing'),
    ("a NUL escape in text", b'{"jsonrpc":"2.0","id":2413,"method":"tools/call","params":{"name":"observe",'
                             b'"arguments":{"content":"x\\u0000y"}}}'),
    ("NUL bytes", b"\x00\x00\x00"), ("only a BOM", b"\xef\xbb\xbf"), ("an open brace", b"{"),
    ("a close brace", b"}"), ("a string of 0xff", b'"\xff"'),
]


class Wire:
    """A `strata mcp` process's stdio: lines out, JSON-RPC messages back, read through a buffer of
    its own (a pipe's buffered reader can hold a second message select() no longer sees)."""

    def __init__(self, proc, seconds: float):
        self.proc, self.seconds, self.pending = proc, seconds, b""

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, ident=None) -> dict | None:
        """The next message (with id IDENT, when given) within the time allowed; None if none came."""
        deadline = time.monotonic() + self.seconds
        while True:
            while b"\n" in self.pending:
                raw, _, self.pending = self.pending.partition(b"\n")
                message = json.loads(raw)
                if ident is None or message.get("id") == ident:
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            if not (chunk := os.read(self.proc.stdout.fileno(), 1 << 16)):
                return None
            self.pending += chunk

    def line(self, line: bytes, ping: int) -> list[dict] | None:
        """Every message the server sends for LINE, up to its answer to a ping sent after it and
        the line's own answer if it is a request (a notification or a response gets none, a bad
        line one with no id); None when either never came."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        own = message.get("id") if isinstance(message, dict) and "method" in message else None
        wanted = {ping} | ({own} if isinstance(own, (int, str)) and not isinstance(own, bool) else set())
        self.send(line)
        self.send(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode())
        got: list[dict] = []
        while wanted:
            if (reply := self.answer()) is None:
                return None
            got.append(reply)
            wanted.discard(reply.get("id"))
        return got
