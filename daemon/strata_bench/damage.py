"""Malformed input beyond single operations, for `strata bench reliability`'s adversarial
corpus: command lines, import files, damaged capsules and strata.toml files (as functions that
damage a path), raw HTTP requests and bodies, raw MCP lines. Each must be refused or answered
without changing what the home holds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

CLI_FUZZ = [
    ["nonsense"], ["recall"], ["recall", "--k", "abc", "disk"], ["recall", "--k", "1e9", "disk"],
    ["recall", "--mode", "", "disk"], ["recall", "--since", "yesterday-ish", "disk"], ["show"], ["show", "abc"],
    ["show", "99999999999999999999999"], ["show", "--", "-1"], ["show", "1.5"], ["forget", "abc"],
    ["forget", "0"], ["forget", "--", "-7"], ["restore", "0"], ["mark", "1"], ["mark", "0", "--factual"],
    ["fact", "get"], ["fact", "set", "k"], ["fact", "retract", ""], ["fact", "history", "never set"],
    ["fact", "list", "--limit", "-3"], ["fact", "cas", "canary"], ["timeline", "--since", "garbage"],
    ["timeline", "--offset", "-5"], ["timeline", "--limit", "abc"], ["timeline", "--kind", "gossip"],
    ["feedback", "1"], ["feedback", "abc", "success"], ["feedback", "1", "success", "--used", "abc"],
    ["dossier", "add", ""], ["dossier", "add", "a\tb"], ["dossier", "show", "../x"], ["dossier", "remove", "nope"],
    ["dossier", "refresh", "never-added"], ["consolidate", "--rules", "nope"], ["consolidate", "--undo", "0"],
    ["consolidate", "--undo", "abc"], ["phase", "run", "nope"], ["serve", "--socket", ""],
    ["serve", "--port", "70000"], ["serve", "--port", "-1"], ["backup", "--restore", "/etc/passwd"],
    ["backup", "--restore", "/dev/zero"], ["backup", "--restore", "/nonexistent/x.db"],
    ["import", "/nonexistent/file.jsonl"], ["import", "/"], ["import", "/dev/zero"], ["config", "show", "--bogus"],
    ["web", "neighbors", "nope:1"], ["spread", "episode:abc"], ["related", ""], ["arena", "undo", "0"],
    ["arena", "questions", "/dev/zero"], ["--agent", "CAPSULE", "status"], ["--agent", "no spaces", "status"],
    ["--agent", "", "status"], ["--scope", "unshared", "timeline"], ["--home", "/nonexistent/home", "status"],
    ["capsule", "show", "--bogus"], ["mark", "1", "--irrelevant", "--factual", "--bogus"],
    # \udcff is how Python reads the byte 0xff of an argument: not UTF-8, so not text to store
    ["observe", "x", "--source", "\udcff"], ["observe", "x", "--session", "s-\udcff"],
    ["observe", "x", "--context", "code=\udcff"], ["observe", "x", "--context", "\udcff=v"],
    ["fact", "set", "k", "v", "--source", "person:\udcff"], ["fact", "set", "k\udcff", "v"],
    ["forget", "--matching", "sec\udcffret"], ["recall", "--context", "k=\udcff", "disk"],
    ["dossier", "add", "topic", "--query", "\udcff"], ["dossier", "add", "\udcff"], ["recall", "\udcff"],
    ["observe", "x", "--importance", "0_5"], ["recall", "--k", "1_0", "disk"], ["--home", "", "status"],
    ["--agent", "ops\n", "status"], ["--scope", "default", "observe", "a write through a scope"],
    ["recall", "--k", "9" * 5001, "disk"], ["show", "9" * 5001], ["export", "-o", "/dev/full"],
    ["observe", "x", "--source", "s" * 100_000],
]


def import_files() -> list[tuple[str, bytes]]:
    """Files `strata import` must refuse whole (nothing stored)."""
    good = b'{"content": "an imported line that must not be stored, since the file is bad"}\n'
    return [
        ("binary", bytes(range(256)) * 64),
        ("only NUL bytes", b"\x00" * 10_000),
        ("not JSON", b"hello world\n"),
        ("a JSON array line", good + b"[1, 2, 3]\n"),
        ("a JSON string line", good + b'"just text"\n'),
        ("a number line", good + b"42\n"),
        ("null line", good + b"null\n"),
        ("no content", good + b'{"kind": "event"}\n'),
        ("content a number", good + b'{"content": 12}\n'),
        ("content null", good + b'{"content": null}\n'),
        ("content a list", good + b'{"content": ["a"]}\n'),
        ("empty content", good + b'{"content": ""}\n'),
        ("unknown kind", good + b'{"content": "x", "kind": "gossip"}\n'),
        ("importance 7", good + b'{"content": "x", "importance": 7}\n'),
        ("importance as text", good + b'{"content": "x", "importance": "high"}\n'),
        ("unreadable time", good + b'{"content": "x", "at": "soonish"}\n'),
        ("time 1e400", good + b'{"content": "x", "at": 1e400}\n'),
        ("invalid UTF-8", good + b'{"content": "bad \xff byte"}\n'),
        ("lone surrogate escape", good + b'{"content": "bad \\ud800 pair"}\n'),
        ("NUL in content", good + b'{"content": "a\\u0000b"}\n'),
        ("nested 100k deep", good + b"[" * 100_000 + b"]" * 100_000 + b"\n"),
        ("another agent's line", good + b'{"content": "x", "agent": "mallory"}\n'),
        ("text over the limit", good + b'{"content": "' + b"y" * 70_000 + b'"}\n'),
        ("a line over 16 MiB", good + b'{"content": "' + b"z" * (17 << 20) + b'"}\n'),
        ("truncated last line", good + b'{"content": "cut sh'),
        ("context not an object", good + b'{"content": "x", "context": "prod"}\n'),
        ("id of another type", good + b'{"content": "x", "id": "seven"}\n'),
        ("negative id", good + b'{"content": "x", "id": -4}\n'),
        ("state unknown", good + b'{"content": "x", "state": "zombie"}\n'),
        ("BOM then garbage", b"\xef\xbb\xbfnot json\n"),
        ("session a lone surrogate", good + b'{"content": "x", "session": "\\ud800"}\n'),
        ("source a lone surrogate", good + b'{"content": "x", "source": "s-\\udcff"}\n'),
        ("context key a lone surrogate", good + b'{"content": "x", "context": {"\\ud800": 1}}\n'),
        ("context value a lone surrogate", good + b'{"content": "x", "context": {"k": ["\\udfff"]}}\n'),
        ("a 5,001-digit importance", good + b'{"content": "x", "importance": 1' + b"0" * 5000 + b"}\n"),
        ("a 5,001-digit id", good + b'{"content": "x", "id": 1' + b"0" * 5000 + b"}\n"),
    ]


def folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def device(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent / "nowhere" / "gone.md")


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path, 0o600)


def _edit(change: Callable[[str], str]) -> Callable[[Path], None]:
    return lambda path: path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")


def _linked(path: Path) -> None:
    """The capsule as a link to a file of the same text elsewhere (a notes repository)."""
    target = path.parent.parent / "capsule-target.md"  # outside capsule/, where capsules are read
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)


def _write(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


CAPSULES: list[tuple[str, Callable[[Path], None]]] = [
    ("a folder", folder), ("a device", device), ("a dangling link", _dangling), ("a pipe", _fifo),
    ("empty", _write(b"")), ("binary", _write(bytes(range(256)) * 16)), ("not UTF-8", _write(b"# Capsule\n\xff\n")),
    ("2 MiB", _write(b"- line\n" * 300_000)), ("NUL bytes", _write(b"# Capsule\n\x00\x00\n")),
    ("no sections", _write(b"just a note\n")),
    ("a marker cut", _edit(lambda t: t.replace("<!-- strata:end recent -->", "<!-- strata:ned recent -->"))),
    ("a marker doubled", _edit(lambda t: t.replace("<!-- strata:end recent -->",
                                                   "<!-- strata:end recent -->\n<!-- strata:end recent -->"))),
    ("a section doubled", _edit(lambda t: t + "\n## Identity\n\nagain\n")),
    ("sections reordered", _edit(lambda t: t.replace("## Identity", "## Tmp").replace("## Tools", "## Identity")
                                 .replace("## Tmp", "## Tools"))),
    ("a block outside its section", _edit(lambda t: t + "\n<!-- strata:begin tasks -->\n<!-- strata:end tasks -->\n")),
    ("5,000 lines", _edit(lambda t: t + "\n".join(f"- filler {n}" for n in range(5000)))),
    ("a 1 MB line", _edit(lambda t: t + "\n" + "w" * 1_000_000 + "\n")),
    ("CRLF endings", _edit(lambda t: t.replace("\n", "\r\n"))),
    ("a lone surrogate escape", _write("# Capsule\n\\ud800 \ud7ff\n".encode("utf-8"))),
    ("markers inside a code block", _edit(lambda t: t + "\n```\n<!-- strata:begin facts -->\n```\n")),
    ("a byte-order mark", lambda path: path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())),
    ("a link to the file", _linked),
]

CONFIGS: list[tuple[str, bytes | Callable[[Path], None]]] = [
    ("malformed", b"[recall\nk = 3\n"), ("wrong type", b"[recall]\nk = 'many'\n"),
    ("out of range", b"[recall]\nk = 0\n"),
    ("unknown choice", b"[recall]\nmode = 'turbo'\n"), ("unknown setting", b"[recall]\nspeed = 11\n"),
    ("unknown section", b"[nonsense]\nx = 1\n"), ("binary", b"\xff\xfe\x00\x01"), ("NUL bytes", b"a = 1\x00\n"),
    ("nested 5000 deep", b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"), ("2 MiB", b"# pad\n" * 350_000),
    ("a device", device), ("a folder", folder), ("a pipe", _fifo), ("NaN", b"[recall]\nk = nan\n"),
    ("infinity", b"[experimental]\n\"scoring.cold_factor\" = inf\n"), ("huge integer", b"[recall]\nk = 99999999999999999999\n"),
    ("negative interval", b"[experimental]\n\"daemon.embed_interval_seconds\" = -5\n"), ("empty string mode", b"[recall]\nmode = ''\n"),
    ("a table doubled", b"[recall]\nk = 3\n[recall]\nk = 4\n"), ("a key doubled", b"[recall]\nk = 3\nk = 4\n"),
    ("bad namespace", b"[agent]\nnamespace = 'no spaces'\n"),
    ("reserved namespace", b"[agent]\nnamespace = 'capsule'\n"),
    ("bad shared list", b"[agent]\nshared = ['a b']\n"), ("shared not a list", b"[agent]\nshared = 'team'\n"),
    ("kinds empty", b"[store]\nkinds = []\n"), ("max content 0", b"[store]\nmax_content_bytes = 0\n"),
    ("a date as a number", b"[recall]\nk = 1979-05-27\n"), ("an array of tables", b"[[recall]]\nk = 3\n"),
    ("port 70000", b"[http]\nport = 70000\n"), ("host as a list", b"[http]\nhost = ['a']\n"),
    ("model path a device", b"[embedding]\nmodel = '/dev/zero'\n"), ("lone surrogate escape", b"a = '\\ud800'\n"),
    ("a dotted key 1,000 deep", b"x" + b".x" * 1000 + b" = 1\n"), ("a table 1,000 deep", b"[" + b"t." * 1000 + b"t]\n"),
    ("inline tables 900 deep", b"a = " + b"{b = " * 900 + b"1" + b"}" * 900 + b"\n"),
    ("namespace with a final newline", b'[agent]\nnamespace = "ops\\n"\n'),
]

HTTP_RAW: list[tuple[str, bytes]] = [
    ("garbage line", b"GARBAGE\r\n\r\n"), ("HTTP/0.9", b"GET /\r\n\r\n"),
    ("no Host", b"GET /v1/status HTTP/1.1\r\n\r\n"),
    ("100 KB header", b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"),
    ("body shorter than said", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"content\""),
    ("bad chunked body", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"),
    ("both lengths", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked"
                     b"\r\n\r\n0\r\n\r\n"),
    ("negative length", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
    ("9 MiB body", b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                   + str(9 << 20).encode() + b"\r\n\r\n" + b"{" + b" " * ((9 << 20) - 1)),
    ("absolute URI", b"GET http://evil.example/v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("non-ASCII path", "GET /v1/memories/é HTTP/1.1\r\nHost: x\r\n\r\n".encode()),
    ("NUL in path", b"GET /v1/facts/a%00b HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("dot segments", b"GET /v1/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("TRACE", b"TRACE /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("OPTIONS", b"OPTIONS /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("unknown method", b"FROB /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("DELETE a collection", b"DELETE /v1/memories HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    ("header without colon", b"GET /v1/status HTTP/1.1\r\nHost x\r\n\r\n"),
    ("bare LF lines", b"GET /v1/status HTTP/1.1\nHost: x\n\n"),
    ("HEAD on a read", b"HEAD /v1/timeline HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("HEAD on a write", b"HEAD /v1/memories/batch HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("a 5,001-digit path id", b"GET /v1/memories/" + b"9" * 5001 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("a 5,001-digit query limit", b"GET /v1/timeline?limit=" + b"9" * 5001 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("a key of bytes not UTF-8", b"GET /v1/facts/a%FFb HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("an encoded slash in a key", b"GET /v1/facts/a%2Fb/history HTTP/1.1\r\nHost: x\r\n\r\n"),
]
HTTP_BODIES: list[tuple[str, str, str, bytes]] = [
    ("not JSON", "POST", "/v1/memories", b"hello"), ("a JSON array", "POST", "/v1/memories", b"[1, 2]"),
    ("content a number", "POST", "/v1/memories", b'{"content": 5}'), ("extra field", "POST", "/v1/memories",
                                                                      b'{"content": "x", "extra": 1}'),
    ("deep JSON", "POST", "/v1/memories", b"[" * 100_000 + b"]" * 100_000),
    ("empty batch", "POST", "/v1/memories/batch", b'{"items": []}'),
    ("batch with one bad item", "POST", "/v1/memories/batch", b'{"items": [{"content": "ok"}, {"content": ""}]}'),
    ("spread of nothing", "POST", "/v1/spread", b'{"items": []}'), ("bad state", "PATCH", "/v1/memories/1",
                                                                    b'{"state": "zombie"}'),
    ("purge a memory that is not there", "DELETE", "/v1/memories/999999?purge=true", b""),
    ("limit -1", "GET", "/v1/timeline?limit=-1", b""), ("limit abc", "GET", "/v1/timeline?limit=abc", b""),
    ("offset -1", "GET", "/v1/timeline?offset=-1", b""), ("since garbage", "GET", "/v1/timeline?since=garbage", b""),
    ("write with a scope", "POST", "/v1/memories?scope=team", b'{"content": "x"}'),
    ("unshared scope", "GET", "/v1/timeline?scope=team", b""),
    ("consolidate with an unknown rule", "POST", "/v1/consolidate", b'{"rules": ["nope"]}'),
    ("dossier version 0", "GET", "/v1/dossiers/nope?version=0", b""),
    ("cas without expected", "POST", "/v1/facts/canary/cas", b'{"new": "x"}'),
    ("retract with a bad time", "DELETE", "/v1/facts/canary?at=soonish", b""),
    ("a 5,001-digit number", "POST", "/v1/memories", b'{"content": "x", "importance": 1' + b"0" * 5000 + b"}"),
    ("a 5,001-digit spread limit", "POST", "/v1/spread", b'{"items": ["episode:1"], "limit": 1' + b"0" * 5000 + b"}"),
    ("a fractional limit", "POST", "/v1/spread", b'{"items": ["episode:1"], "limit": 3.5}'),
    ("a lone surrogate in a context key", "POST", "/v1/memories", b'{"content": "x", "context": {"\\ud800": 1}}'),
    ("a lone surrogate in a session", "POST", "/v1/memories", b'{"content": "x", "session": "\\udcff"}'),
    ("a lone surrogate in a fact source", "PUT", "/v1/facts/k", b'{"value": "v", "source": "person:\\ud800"}'),
    ("a lone surrogate to forget", "POST", "/v1/forget", b'{"matching": "sec\\ud800ret"}'),
    ("a write through a scope of its own", "POST", "/v1/memories?scope=default", b'{"content": "x"}'),
]

MCP_RAW: list[tuple[str, bytes]] = [
    ("not JSON", b"this is not json"), ("a JSON number", b"42"), ("a JSON array", b"[]"), ("empty object", b"{}"),
    ("no jsonrpc", b'{"id": 90, "method": "tools/list"}'),
    ("unknown method", b'{"jsonrpc":"2.0","id":91,"method":"nope"}'),
    ("unknown tool", b'{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{"name":"nope","arguments":{}}}'),
    ("params a string", b'{"jsonrpc":"2.0","id":93,"method":"tools/call","params":"x"}'),
    ("arguments a list", b'{"jsonrpc":"2.0","id":94,"method":"tools/call","params":{"name":"status","arguments":[]}}'),
    ("lone surrogate", b'{"jsonrpc":"2.0","id":95,"method":"tools/call","params":{"name":"observe","arguments":'
                       b'{"content":"bad \\ud800"}}}'),
    ("raw invalid byte", b'{"jsonrpc":"2.0","id":96,"method":"tools/call","params":{"name":"observe","arguments":'
                         b'{"content":"raw \xff"}}}'),
    ("100k deep", b'{"jsonrpc":"2.0","id":97,"params":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ("17 MiB line", b'{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"observe","arguments":'
                    b'{"content":"' + b"x" * (17 << 20) + b'"}}}'),
    ("id an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}'),
    ("unknown resource", b'{"jsonrpc":"2.0","id":99,"method":"resources/read","params":{"uri":"strata://nope"}}'),
    ("dossier resource with a path", b'{"jsonrpc":"2.0","id":100,"method":"resources/read","params":'
                                     b'{"uri":"strata://dossier/..%2F..%2Fetc"}}'),
    ("NaN argument", b'{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"observe","arguments":'
                     b'{"content":"x","importance":NaN}}}'),
    ("huge integer id", b'{"jsonrpc":"2.0","id":1' + b"0" * 400 + b',"method":"tools/list"}'),
    ("BOM first", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":102,"method":"tools/list"}'),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}'),
    ("a 5,000-digit argument", b'{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"observe",'
                               b'"arguments":{"content":"x","importance":1' + b"0" * 5000 + b"}}}"),
    ("a 5,000-digit id", b'{"jsonrpc":"2.0","id":1' + b"0" * 5000 + b',"method":"tools/list"}'),
    ("a lone surrogate in a context key", b'{"jsonrpc":"2.0","id":104,"method":"tools/call","params":{"name":'
                                          b'"observe","arguments":{"content":"x","context":{"\\udcff":"v"}}}}'),
    *((f"resource {uri}", b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"%s"}}'
       % (110 + n, uri.encode())) for n, uri in enumerate(
        ("strata://dossier/", "strata://dossier/%ff%fe", "strata://dossier/a%2Fb", "strata://context/",
         "strata://context/%00", "strata://dossier/" + "x" * 5000))),
    *((f"context prompt {args}", b'{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"context",'
       b'"arguments":%s}}' % (120 + n, args.encode())) for n, args in enumerate(
        ('{"text":""}', '{"text":"x","budget":"0"}', '{"text":"x","budget":"31"}', '{"text":"x","budget":"100001"}',
         '{"text":"x","budget":"abc"}', '{}', '{"text":"x","budget":"1e9"}'))),
]

# What an agent's loop may hand a hook: (name, event and arguments, stdin); a FIFO is made for
# the one that names it. Every one must exit 0, at once (an agent's turn waits on it).
HOOK_CASES: list[tuple[str, list[str], bytes]] = [
    *((f"prompt --budget {b!r}", ["prompt", "--budget", b], b"the disk on db-01") for b in ("abc", "nan", "1e9", "",
                                                                                            "0", "-5", "5")),
    ("prompt --mode nope", ["prompt", "--mode", "nope"], b"the disk"), ("prompt --nope", ["prompt", "--nope"], b"x"),
    ("prompt, nothing", ["prompt"], b""), ("prompt, binary", ["prompt"], bytes(range(256)) * 8),
    ("prompt, a lone surrogate in JSON", ["prompt"], b'{"prompt": "disk \\ud800", "session_id": "s"}'),
    ("prompt, 200 KB", ["prompt"], b"disk " * 40_000), ("prompt, a 60 KB word", ["prompt"], b"a1" * 30_000),
    ("prompt, JSON list", ["prompt"], b"[1, 2]"), ("prompt, prompt a number", ["prompt"], b'{"prompt": 3}'),
    ("prompt, session a list", ["prompt"], b'{"prompt": "disk", "session_id": ["s"]}'),
    ("prompt, session a path", ["prompt"], b'{"prompt": "disk", "session_id": "../../etc/passwd"}'),
    ("reply, binary", ["reply"], bytes(range(256))), ("reply, 200 KB", ["reply"], b"#1 " * 70_000),
    ("session-start, junk", ["session-start"], b"\xff\xfe"),
    *((f"{e}, transcript {t}", [e], b'{"session_id": "s", "transcript_path": "%s"}' % t.encode())
      for e in ("compact", "stop") for t in ("FIFO", "/dev/zero", "/", "/nonexistent", "")),
    ("stop, not JSON", ["stop"], b"not json"), ("stop, transcript a number", ["stop"], b'{"transcript_path": 3}'),
]
