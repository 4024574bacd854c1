"""A real `strata serve` in a subprocess (or its server on a thread of the test), a small HTTP
client over its Unix socket (stdlib), and the check of an answer against the OpenAPI document."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

from jsonschema import Draft202012Validator

from conftest import REPO
from strata_daemon import Memory
from strata_daemon.faces.http.client import UnixConnection
from strata_daemon.faces.http.serve import serve


class Api:
    def __init__(self, proc: subprocess.Popen | None, socket_path: Path, port: int | None):
        self.proc, self.socket_path, self.port = proc, socket_path, port
        self.stderr = ""

    def raw(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
            tcp: bool = False) -> tuple[int, dict | list]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120) if tcp \
            else UnixConnection(self.socket_path)
        try:
            conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
            response = conn.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            conn.close()

    def __call__(self, method: str, path: str, body=None, **kw) -> tuple[int, dict | list]:
        return self.raw(method, path, None if body is None else json.dumps(body).encode(), **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accepts(socket_path: Path, port: int | None) -> bool:
    """Whether the server takes connections: its socket file appears at bind(), before listen()."""
    probes = [(socket.AF_UNIX, str(socket_path))] + ([(socket.AF_INET, ("127.0.0.1", port))] if port else [])
    for family, address in probes:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.connect(address)
            except OSError:
                return False
    return True


@contextlib.contextmanager
def serving(home: Path, *args: str, agent: str | None = None, command: str = "serve",
            prefix: list[str] | tuple[str, ...] = ()) -> Iterator[Api]:
    """The server (or with command "run", the daemon) until the block ends; `prefix` runs
    before the command (a launcher that sandboxes it)."""
    socket_path = home / "state" / "strata.sock"
    port = int(args[args.index("--port") + 1]) if "--port" in args else None
    # The store a test chose (STRATA_DATABASE_URL) goes with it; any other STRATA_ variable does not.
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_") or k in ("STRATA_DATABASE_URL", "STRATA_KEY")}
    proc = subprocess.Popen([*prefix, sys.executable, "-m", "strata_daemon", "--home", str(home),
                             *(["--agent", agent] if agent else []), command, *args],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _accepts(socket_path, port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the server did not start: {proc.communicate(timeout=10)}")
            time.sleep(0.05)
        api = Api(proc, socket_path, port)
        yield api
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        if "api" in locals():
            api.stderr = err  # what the server logged, for tests to read once it stopped


@contextlib.contextmanager
def served_here(home: Path, *, port: int | None = None) -> Iterator[Api]:
    """The server `strata serve` runs (http/serve.py: the app, its sockets, uvicorn) on a thread
    of this process: real requests over a real socket, without a second interpreter to start."""
    socket_path = home / "state" / "strata.sock"
    held: dict = {}

    async def main() -> None:
        async with await Memory.open(home, actor="http") as mem:
            held["loop"], held["stop"] = asyncio.get_running_loop(), asyncio.Event()
            await serve(mem, held["stop"], port=port)

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as e:  # handed to the test, which raises it
            held["error"] = e

    thread = threading.Thread(target=run, name="strata-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not _accepts(socket_path, port):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError(f"the server did not start: {held.get('error')!r}")
        time.sleep(0.02)
    try:
        yield Api(None, socket_path, port)
    finally:
        held["loop"].call_soon_threadsafe(held["stop"].set)
        thread.join(30)
    if "error" in held:
        raise held["error"]


def answer_check(doc: dict, method: str, path: str, status: int) -> Draft202012Validator:
    """A validator of the body the document gives for this answer: the first path template that
    matches, as the app's router picks it, and the status or its range (4XX)."""
    bare = path.split("?", 1)[0]
    for template, item in doc["paths"].items():
        pattern = "".join("[^/]+" if part.startswith("{") else re.escape(part)
                          for part in re.split(r"({\w+})", template))
        if method.lower() in item and re.fullmatch(pattern, bare):
            responses = item[method.lower()]["responses"]
            break
    else:
        raise AssertionError(f"the document has no operation {method} {bare}")
    response = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX")
    assert response is not None, f"{method} {bare} answered {status}, which the document does not list"
    if "$ref" in response:
        response = doc["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    schema = response["content"]["application/json"]["schema"]
    # The components beside the schema, so that its "#/components/..." references resolve.
    return Draft202012Validator({**schema, "components": doc["components"]},
                                format_checker=Draft202012Validator.FORMAT_CHECKER)


def check_answer(doc: dict, method: str, path: str, status: int, body) -> None:
    """Fail, naming each place, unless the body is what the document says this answer holds."""
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}"
                for e in answer_check(doc, method, path, status).iter_errors(body)]
    assert not problems, f"{method} {path} -> {status} breaks the OpenAPI document:\n" + "\n".join(problems[:10])


def listening_tcp_sockets(pid: int) -> set[str]:
    """The TCP sockets in LISTEN state that process `pid` holds (inodes, from /proc)."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in list(f)[1:]:
                fields = line.split()
                if fields[3] == "0A":  # LISTEN
                    listening.add(fields[9])
    held = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):
            m = re.match(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
            if m:
                held.add(m.group(1))
    return held & listening


def doctor_on_http(cli, home: Path, timeout: float = 60) -> tuple[int, list[dict]]:
    """`strata doctor`'s exit code and its http findings, once the daemon serving `home` has
    recorded its listeners (it does so just after its socket starts answering)."""
    record = home / "state" / "http-listeners.json"
    deadline = time.monotonic() + timeout
    while not record.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"the daemon wrote no {record} within {timeout} s")
        time.sleep(0.05)
    proc = cli("doctor", "--json")
    return proc.returncode, [f for f in json.loads(proc.out)["findings"] if f["check"] == "http"]
