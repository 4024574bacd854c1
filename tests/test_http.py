"""`strata serve`: the HTTP API on a real server over its Unix socket (and loopback TCP with a
token): every endpoint, the errors, the limits, the namespaces, and the OpenAPI document."""

from __future__ import annotations

import asyncio
import json
import socket
import stat

import pytest

from conftest import on_postgres, write_config
from http_helpers import check_answer, doctor_on_http, free_port, listening_tcp_sockets, serving
from strata_daemon import Memory
from strata_daemon.errors import EXIT_DOCTOR
from strata_daemon.faces.http.openapi import document
from strata_daemon.faces.http.routes import OPS

pytestmark = pytest.mark.slow


@pytest.mark.reliability
def test_by_default_a_private_socket_and_no_tcp_port(home):
    with serving(home) as api:
        assert api("GET", "/v1/status")[0] == 200
        assert stat.S_IMODE(api.socket_path.stat().st_mode) == 0o600
        assert not listening_tcp_sockets(api.proc.pid)
    assert not api.socket_path.exists()  # removed at a clean stop


def test_every_endpoint_and_its_errors(home):
    async def prepare():
        async with await Memory.open(home) as mem:
            await mem.add_topic("bridge", query="bridge gw-02")
            await mem.render_capsule()
    asyncio.run(prepare())
    called: set[tuple[str, str]] = set()
    doc = document()

    with serving(home) as raw:
        def api(method, template, body=None, **path):
            called.add((method, template.split("?")[0]))
            code, answer = raw(method, template.format(**path), body)
            check_answer(doc, method, template.format(**path), code, answer)  # as documented, errors too
            return code, answer

        code, first = api("POST", "/v1/memories", {"content": "Bridge is DOWN on gw-02", "kind": "event",
                                                   "context": {"environment": "prod"}})
        assert code == 201 and first["status"] == "created"
        code, batch = api("POST", "/v1/memories/batch", {"items": [
            {"content": "Rolled gw-02 back to firmware 4.1; bridge is UP", "kind": "decision"},
            {"content": "Disk on db-01 at 91%"}]})
        assert code == 201 and batch["created"] == 2
        second, third = batch["ids"]
        code, got = api("POST", "/v1/memories/get", {"ids": [first["id"], 999, third]})
        assert [m["id"] for m in got["items"]] == [first["id"], third] and got["missing"] == [999]
        code, one = api("GET", "/v1/memories/{id}", id=first["id"])
        assert code == 200 and {"scores", "history", "context"} <= set(one) and one["context"] == {"environment": "prod"}

        code, found = api("POST", "/v1/recall", {"query": "bridge gw-02", "k": 5, "explain": True, "mode": "fast"})
        assert code == 200 and {h["id"] for h in found["hits"]} == {first["id"], second}
        assert "signals" in found["hits"][0]["explain"]
        code, given = api("POST", "/v1/recalls/{id}/feedback", {"outcome": "success", "used": [second]},
                          id=found["recall_id"])
        assert code == 200 and given["episodes"] == [second]  # a success goes to what was used
        assert given["used"] == [second] and given["arena_episode"] is not None
        assert api("GET", "/v1/memories/{id}", id=first["id"])[1]["success_count"] == 0
        arena = api("GET", "/v1/arena")[1]
        assert arena["episodes"] == {"total": 1, "used": 1, "shared": 0, "questions": 0}
        code, block = api("POST", "/v1/context", {"text": "what about the bridge on gw-02?", "budget": 64})
        assert code == 200 and 0 < block["tokens"] <= 64 and block["recall_id"] > found["recall_id"]
        assert {m["id"] for m in block["parts"]["memories"]} <= {first["id"], second}
        assert arena["strategy"]["chosen_by"] == "config"
        assert api("POST", "/v1/recalls/{id}/feedback", {"outcome": "success"}, id=found["recall_id"])[0] == 409

        assert api("PATCH", "/v1/memories/{id}", {"state": "archived", "reason": "done"}, id=third)[1]["state"] \
            == "archived"
        assert api("PATCH", "/v1/memories/{id}", {"state": "active", "factual": True}, id=third)[1]["changed"] \
            == {"factual": True}
        assert api("PATCH", "/v1/memories/{id}", {}, id=third)[0] == 400
        assert api("PATCH", "/v1/memories/{id}", {"reason": "x"}, id=third)[0] == 400  # was 200, nothing changed
        purged = api("DELETE", "/v1/memories/{id}?purge=true", id=third)[1]
        assert purged["purged"] is True and purged["memories"] == [third] and purged["wal_cleared"] is not on_postgres()
        kept = api("POST", "/v1/memories", {"content": "The spare key hides under the blue gnomeqx."})[1]["id"]
        listed = api("POST", "/v1/forget", {"matching": "gnomeqx"})[1]
        assert [m["id"] for m in listed["memories"]] == [kept] and not listed["applied"]
        assert api("POST", "/v1/forget", {"matching": "gnomeqx", "purge": True, "confirm": True})[1]["result"][
            "memories"] == [kept]
        assert api("POST", "/v1/forget", {"matching": "ab"})[0] == 400

        code, page1 = api("GET", "/v1/timeline?limit=1")
        code, page2 = api("GET", f"/v1/timeline?limit=1&offset={page1['next_offset']}")
        assert [m["id"] for m in page1["items"] + page2["items"]] == [second, first["id"]] and page2["next_offset"] is None
        assert [m["id"] for m in api("GET", "/v1/timeline?kind=event&kind=decision&order=oldest")[1]["items"]] \
            == [first["id"], second]

        async def link():
            async with await Memory.open(home) as mem:
                await mem.activate([f"episode:{first['id']}", f"episode:{second}"])
                await mem.commit_working_set()
        asyncio.run(link())
        related = api("GET", "/v1/memories/{id}/related", id=first["id"])[1]
        assert [r["node"] for r in related["reached"]] == [f"episode:{second}"]
        edges = api("GET", "/v1/nodes/{node}/coactivations", node=f"episode:{first['id']}")[1]
        assert f"episode:{second}" in [n["node"] for n in edges["neighbours"]]
        spread = api("POST", "/v1/spread", {"items": [str(first["id"])], "threshold": 0.01})[1]
        assert f"episode:{second}" in [r["node"] for r in spread["reached"]]

        assert api("PUT", "/v1/facts/{key}", {"value": "DOWN", "source": "person:ines"}, key="bridge")[0] == 200
        assert api("POST", "/v1/facts/{key}/cas", {"expected": "DOWN", "new": "UP"}, key="bridge")[1]["value"] == "UP"
        code, mismatch = api("POST", "/v1/facts/{key}/cas", {"expected": "DOWN", "new": "UP"}, key="bridge")
        assert code == 409 and mismatch["error"] == "cas_mismatch" and mismatch["current"] == "UP"
        assert api("GET", "/v1/facts/{key}", key="bridge")[1]["value"] == "UP"
        assert [h["value"] for h in api("GET", "/v1/facts/{key}/history", key="bridge")[1]["history"]] == ["DOWN", "UP"]
        assert [f["key"] for f in api("GET", "/v1/facts?prefix=bridge")[1]["items"]] == ["bridge"]
        assert [c["key"] for c in api("GET", "/v1/facts/conflicts?flagged=true")[1]] == ["bridge"]  # DOWN, UP at once
        assert api("DELETE", "/v1/facts/{key}", key="bridge")[1]["status"] == "retracted"
        assert api("POST", "/v1/facts/{key}/forget", {}, key="bridge")[1]["facts"][0]["values"] == ["DOWN", "UP"]
        assert api("POST", "/v1/facts/{key}/forget", {"confirm": True}, key="bridge")[1]["applied"] is True
        assert [h["value"] for h in api("GET", "/v1/facts/{key}/history", key="bridge")[1]["history"]] == [None]
        assert api("POST", "/v1/facts/{key}/forget", {}, key="nothing")[0] == 404
        assert api("PUT", "/v1/facts/{key}", {"value": "on"}, key="Pellucine%20lamp")[0] == 200
        listed = api("POST", "/v1/facts/forget", {"matching": "pellucine"})[1]
        assert [(f["key"], f["removed_whole"]) for f in listed["facts"]] == [("pellucine lamp", True)]
        assert api("POST", "/v1/facts/forget", {"matching": "pellucine", "confirm": True})[1]["result"]["facts"] == \
            [{"key": "pellucine lamp", "removed": True}]
        assert api("GET", "/v1/facts/{key}", key="pellucine%20lamp")[0] == 404
        assert api("POST", "/v1/facts/forget", {"matching": "pellucine"})[0] == 404
        assert api("GET", "/v1/facts/{key}", key="nothing")[0] == 404

        assert "bridge" in [t["topic"] for t in api("GET", "/v1/dossiers")[1]["topics"]]
        assert api("POST", "/v1/dossiers/{topic}/refresh", {"force": True}, topic="bridge")[1]["status"] == "refreshed"
        assert "gw-02" in api("GET", "/v1/dossiers/{topic}", topic="bridge")[1]["text"]
        assert api("POST", "/v1/dossiers/forget", {"topic": "bridge"})[1]["topics"] == ["bridge"]
        gone = api("POST", "/v1/dossiers/forget", {"matching": "bridge", "confirm": True})[1]["result"]
        assert gone["topics_removed"] == ["bridge"] and gone["dossier_versions_removed"] == 1
        assert api("POST", "/v1/dossiers/forget", {"matching": "bridge"})[0] == 404
        assert api("POST", "/v1/dossiers/forget", {})[0] == 400
        assert api("GET", "/v1/capsule")[1]["ok"] is True

        plan = api("POST", "/v1/consolidate", {"dry_run": True})[1]
        assert plan["dry_run"] is True and "counts" in plan
        assert api("POST", "/v1/consolidate", {"rules": ["nonsense"]})[0] == 400
        assert api("GET", "/v1/status")[1]["episodes"] == 2

        # errors, one body shape
        for method, path, body, code in (
                ("GET", "/v1/memories/999", None, 404), ("GET", "/v1/memories/abc", None, 400),
                ("POST", "/v1/recall", {"query": ""}, 400), ("POST", "/v1/recall", {"query": "x", "k": 0}, 400),
                ("POST", "/v1/recall", {"query": "x", "surprise": 1}, 400), ("POST", "/v1/memories", [], 400),
                ("POST", "/v1/context", {"text": "x", "budget": 8}, 400), ("POST", "/v1/context", {}, 400),
                ("POST", "/v1/memories", {"content": "nul \x00"}, 400), ("GET", "/v1/timeline?limit=0", None, 400),
                ("GET", "/v1/nowhere", None, 404), ("DELETE", "/v1/status", None, 405),
                ("POST", "/v1/memories?scope=other", {"content": "x"}, 403),
                ("GET", "/v1/status?scope=other", None, 403)):
            got_code, error = raw(method, path, body)
            assert got_code == code, (method, path, error)
            assert set(error) >= {"error", "message"}, error
            if code != 405 and path != "/v1/nowhere":  # no operation: nothing the document could say
                check_answer(doc, method, path, got_code, error)
        # A number out of bounds is said as the layers say it: the CLI without the daemon says the same.
        assert raw("POST", "/v1/context", {"text": "x", "budget": 5})[1]["message"] == \
            "budget must be between 32 and 100000, not 5"
        assert raw("POST", "/v1/recall", {"query": "x", "k": 0})[1]["message"] == "k must be between 1 and 1000, not 0"
        # an empty text is said as the layers say it, not as the schema's `'' should be non-empty`
        assert raw("POST", "/v1/recall", {"query": ""})[1]["message"] == "query is empty"
        assert raw("POST", "/v1/context", {"text": ""})[1]["message"] == "text is empty"
        assert raw.raw("POST", "/v1/recall", b'{"query": ')[0] == 400
        assert raw.raw("POST", "/v1/memories", b"\xff\xfe binary")[0] == 400
        assert raw.raw("POST", "/v1/memories/batch", b"[" * 100_000 + b"]" * 100_000)[0] == 400
        code, error = raw("POST", "/v1/memories/batch", {"items": [{"content": 1}, {"kind": "x"}], "extra": 0})
        assert code == 400 and error["error"] == "invalid_input"  # errors at int and str paths
        assert raw.raw("POST", "/v1/memories", b'{"content": "' + b"x" * (9 << 20) + b'"}')[0] == 413

    assert called == {(op.method, op.path) for op in OPS}  # every endpoint was exercised


@pytest.mark.reliability
def test_tcp_needs_the_token_from_the_home(home):
    port = free_port()
    with serving(home, "--port", str(port)) as api:
        token_file = home / "state" / "http-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        assert api("GET", "/v1/status", tcp=True)[0] == 401
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": "Bearer wrong"})[0] == 401
        assert api("GET", "/openapi.json", tcp=True)[0] == 401
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": f"Bearer {token}"})[0] == 200
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": f"bearer {token}"})[0] == 200
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": f"Basic {token}"})[0] == 401
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": token})[0] == 401
        assert api("GET", "/v1/status")[0] == 200  # the socket needs none: its mode is the access control


def test_a_non_loopback_address_needs_explicit_consent(home, cli):
    write_config(home, '[http]\nhost = "0.0.0.0"\n')
    proc = cli("serve", "--port", str(free_port()))
    assert proc.returncode == 7 and "http.allow_remote" in proc.err and "Traceback" not in proc.err
    assert not (home / "state" / "strata.sock").exists()


def test_kinds_added_in_the_config_are_accepted(home):
    write_config(home, '[store]\nkinds = ["observation", "dream"]\n')
    with serving(home) as api:
        code, stored = api("POST", "/v1/memories", {"content": "flew over the data centre", "kind": "dream"})
        assert code == 201
        assert [m["id"] for m in api("GET", "/v1/timeline?kind=dream")[1]["items"]] == [stored["id"]]
        code, error = api("POST", "/v1/memories", {"content": "x", "kind": "decision"})
        assert code == 400 and "store.kinds" in error["hint"]


def test_a_socket_in_a_missing_folder_is_a_clear_error(home, cli):
    proc = cli("serve", "--socket", str(home / "no-such-folder" / "api.sock"))
    assert proc.returncode != 0 and "cannot listen on" in proc.err and "existing folder" in proc.err
    assert "Traceback" not in proc.err


@pytest.mark.parametrize("target", ["state/memory.db", "capsule", ""])
@pytest.mark.sqlite_only
def test_serve_never_removes_what_is_not_a_stale_socket(home, cli, target):
    cli("observe", "kept through a mistyped socket path", check=True)
    before = {p: p.stat().st_mtime_ns for p in home.rglob("*") if p.is_file()}
    where = str(home / target) if target else ""
    proc = cli("serve", "--socket", where)
    assert proc.returncode == 7 and "Traceback" not in proc.err, proc.err
    assert ("left as it is" if target else "socket path is empty") in proc.err
    assert all(p.exists() for p in before)
    assert "kept through" in cli("recall", "mistyped socket", check=True).out


def test_a_stale_socket_is_replaced_and_a_live_one_refused(home, cli):
    path = home / "state" / "strata.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()  # a socket file nobody answers, as a killed server leaves it
    with serving(home) as api:
        assert api("GET", "/v1/status")[0] == 200
        second = cli("serve")
        assert second.returncode == 5 and "already listens" in second.err and "strata status" in second.err
        assert "or another `strata serve`" in second.err  # no daemon runs here: say what else it can be
    assert not path.exists()


@pytest.mark.reliability
def test_the_namespace_is_the_servers_own(home):
    async def other():
        async with await Memory.open(home, agent="b") as b:
            return (await b.observe("B's private note about vault-07"))["id"]
    hidden = asyncio.run(other())
    with serving(home, agent="a") as api:
        assert api("GET", f"/v1/memories/{hidden}")[0] == 404
        assert api("POST", "/v1/recall", {"query": "vault-07 private note"})[1]["hits"] == []
        assert api("GET", "/v1/timeline?scope=b")[0] == 403
    write_config(home, '[agent]\nshared = ["b"]\n')
    with serving(home, agent="a") as api:
        assert [m["id"] for m in api("GET", "/v1/timeline?scope=b")[1]["items"]] == [hidden]
        assert api("PATCH", f"/v1/memories/{hidden}?scope=b", {"state": "archived"})[0] == 403


def test_the_openapi_document_is_served(home):
    with serving(home) as api:
        assert api("GET", "/openapi.json") == (200, document())  # valid and kept: test_http_openapi.py


def test_the_daemon_serves_it_when_enabled(home):
    write_config(home, "[http]\nenabled = true\n")
    with serving(home, command="run") as api:
        assert api("POST", "/v1/memories", {"content": "stored through the daemon's API"})[0] == 201
    assert not api.socket_path.exists()

    async def read():
        async with await Memory.open(home) as mem:
            return [(e["content"], e["history"][0]["actor"]) for e in
                    [await mem.get(m["id"]) for m in await mem.timeline()]]
    assert asyncio.run(read()) == [("stored through the daemon's API", "http")]


def test_the_daemon_serves_its_socket_when_its_tcp_port_is_taken_and_the_doctor_says_so(home, cli):
    with socket.socket() as taken:  # another program holds the port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        write_config(home, f"[http]\nenabled = true\nport = {port}\n")
        with serving(home, command="run") as api:
            assert api("POST", "/v1/memories", {"content": "stored while the port was taken"})[0] == 201
            assert not listening_tcp_sockets(api.proc.pid)
            code, found = doctor_on_http(cli, home)
            status = json.loads(cli("status", "--json", check=True).out)["daemon"]["listeners"]
            shown = cli("status", check=True).out
            assert api.proc.poll() is None  # the daemon runs on
    assert status["unix"]["up"] and not status["tcp"]["up"] and "Address already in use" in status["tcp"]["error"]
    assert f"api         unix {home / 'state' / 'strata.sock'} up · tcp 127.0.0.1:{port} down (" in shown
    assert code == EXIT_DOCTOR and [f["status"] for f in found] == ["error", "ok"]
    down, up = found
    assert f"TCP listener 127.0.0.1:{port} is configured but down" in down["message"]
    assert "Address already in use" in down["message"]
    assert f"sport = :{port}" in down["fix"] and "restart the daemon" in down["fix"]
    assert up["message"] == f"serving on unix {home / 'state' / 'strata.sock'}"
    assert f"serving {home / 'state' / 'strata.sock'} only" in api.stderr and "Traceback" not in api.stderr
    with socket.socket() as taken:  # `strata serve --port` itself: another program's port is a conflict (5)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        refused = cli("serve", "--port", str(taken.getsockname()[1]), timeout=60)
    assert refused.returncode == 5 and "Address already in use" in refused.err, refused.err

    port = free_port()
    write_config(home, f"[http]\nenabled = true\nport = {port}\n")
    (home / "state" / "http-listeners.json").unlink()  # the stopped daemon's record: wait for the new one
    with serving(home, command="run") as api:
        code, found = doctor_on_http(cli, home)
    assert [(f["status"], f["message"]) for f in found] == [
        ("ok", f"serving on unix {home / 'state' / 'strata.sock'} and tcp 127.0.0.1:{port}")]


def test_clients_that_go_away_or_dawdle_cost_one_quiet_line_and_a_closed_connection(home):
    write_config(home, "[http]\nrequest_timeout_seconds = 1.0\n")
    with serving(home) as api:
        path = str(api.socket_path)
        for _ in range(50):  # a body announced, a part sent, the client gone
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
                s.sendall(b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1000\r\n\r\n{\"content\": \"par")
        with socket.socket(socket.AF_UNIX) as slow_body, socket.socket(socket.AF_UNIX) as slow_headers:
            slow_body.connect(path)
            slow_body.sendall(b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            slow_headers.connect(path)
            slow_headers.sendall(b"GET /v1/status HTTP/1.1\r\nHost")
            slow_body.settimeout(30)
            slow_headers.settimeout(30)
            assert b" 408 " in slow_body.recv(4096).split(b"\r\n")[0]
            assert slow_headers.recv(4096) == b""  # closed, never answered
        assert api("GET", "/v1/status")[1]["episodes"] == 0
    assert "http: serving" in api.stderr  # the log was read
    assert "Traceback" not in api.stderr and len(api.stderr.splitlines()) < 10, api.stderr[-2000:]


def test_odd_but_valid_requests_are_answered_and_bad_ones_refused_without_a_500(home):
    with serving(home) as api:
        assert api("POST", "/v1/memories", {"content": "Disk on db-01 is 91% full"})[0] == 201
        # HEAD is GET without a body (it was a KeyError, so a 500).
        assert api.raw("HEAD", "/v1/status")[0] == 200
        # JSON Schema calls 3.0 an integer; the code behind it counts with ints.
        code, spread = api("POST", "/v1/spread", {"items": ["episode:1"], "limit": 3.0})
        assert code == 200 and len(spread["reached"]) <= 3
        assert api("POST", "/v1/spread", {"items": ["episode:1"], "limit": 3.5})[0] == 400
        # A key holding '/' goes as %2F and is one key, on every route that names one.
        assert api("PUT", "/v1/facts/ops%2Fon-call", {"value": "ines"})[0] == 200
        assert api("GET", "/v1/facts/ops%2Fon-call")[1]["value"] == "ines"
        assert api("GET", "/v1/facts/ops%2Fon-call/history")[1]["label"] == "ops/on-call"
        assert api("GET", "/v1/facts/caf%C3%A9")[1]["message"] == "no fact 'café' in this namespace"
        refused = {
            "a 5,001-digit number": api.raw("POST", "/v1/memories", b'{"content": "x", "importance": 1'
                                            + b"0" * 5000 + b"}"),
            "a 5,001-digit query": api.raw("GET", "/v1/timeline?limit=" + "9" * 5001),
            "a lone surrogate": api.raw("POST", "/v1/memories", b'{"content": "x", "session": "\\ud800"}'),
            "a key not UTF-8": api.raw("GET", "/v1/facts/a%FFb"),
            "a write through a scope": api("POST", "/v1/memories?scope=default", {"content": "x"}),
        }
        for what, (code, answer) in refused.items():
            assert 400 <= code < 500 and len(answer["message"]) < 200, (what, code, answer)
        assert refused["a lone surrogate"][1]["message"] == "the request body at session is not valid UTF-8 text"
        unknown = api("POST", "/v1/memories", {"content": "x", "bogus": 1})
        assert unknown == (400, {"error": "invalid_input", "message": "request body: unknown field 'bogus' "
                                                                      "(GET /openapi.json lists the fields)"})
        misspelt = api("GET", "/v1/timeline?limt=5")  # answered as if not given, before
        assert misspelt[0] == 400 and misspelt[1]["message"] == "unknown query parameter 'limt'; did you mean 'limit'?"
        assert api("GET", "/v1/timeline")[1]["items"][0]["content"] == "Disk on db-01 is 91% full"  # one memory
    assert "Traceback" not in api.stderr
