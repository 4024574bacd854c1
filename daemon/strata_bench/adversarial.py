"""The adversarial corpus of `strata bench reliability`: over 1,500 inputs a careless or hostile
user could hand strata, through every face (the Python API, the CLI, the hooks, `strata
import`, the capsule file, strata.toml, HTTP, and MCP's tools, prompts and resources). Every
one must be answered (an exit code, an HTTP status, a JSON-RPC reply) without a traceback or a
server error, none may change what the home holds, and every hook call must exit 0.

The inputs are in `bad_input` (per operation, also the test suite's corpus), `damage`, and
`hostile`, `hostile_lines` and `hostile_wire`, of which `share` runs a fixed, seeded part (the
test suite's; the benchmark runs them all): `hostile.corpus()` lists what a run holds."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

from strata_bench.bad_input import EXIT
from strata_bench.hostile import cli_call, corpus, http_call, mcp_args, python_call
from strata_bench.hostile_lines import hook_paths, run_with
from strata_bench.hostile_wire import Wire
from strata_bench.procs import spawn, strata
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import sqlite_module
from strata_daemon.errors import StrataError

ANSWER_SECONDS = 60.0


def corpus_size(share: float = 1.0, seed: int = 0) -> int:
    c = corpus(share, seed)
    faces = sum(1 + (cli_call(op, a) is not None) + (mcp_args(op, a) is not None) + (http_call(op, a) is not None)
                for _, op, a, _ in c["cases"])
    return faces + 3 * len(c["capsules"]) + sum(len(c[k]) for k in c if k not in ("cases", "capsules"))


# -- running it ----------------------------------------------------------------------------------

def fingerprint(db_path: Path) -> dict[str, str]:
    """A hash per layer of what the home holds (reads and their logs left out: recalls are
    answered, and answering is not a change)."""
    queries = {
        "memories": "SELECT id, agent, kind, content, event_at, occurrences, importance, factual, irrelevant, state, "
                    "tier, source, session, context FROM episodes ORDER BY id",
        "facts": "SELECT f.agent, f.key, v.value, v.valid_from, v.valid_to FROM fact_values v JOIN facts f "
                 "ON f.id = v.fact_id ORDER BY v.id",
        "spiderweb": "SELECT agent, a, b, level FROM web_edges ORDER BY agent, a, b",
        "dossiers": "SELECT t.agent, t.topic, t.enabled, v.version, v.text FROM dossier_topics t LEFT JOIN "
                    "dossier_versions v ON v.agent = t.agent AND v.topic = t.topic ORDER BY t.agent, t.topic, v.version",
        "imports": "SELECT agent, input_sha256, rows_stored FROM imports ORDER BY agent, input_sha256",
    }
    conn = sqlite_module().connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        out = {}
        for layer, sql in queries.items():
            digest = hashlib.sha256()
            for row in conn.execute(sql):
                digest.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
            out[layer] = digest.hexdigest()
        return out
    finally:
        conn.close()


COUNTS = ("inputs", "tracebacks", "server_errors", "unanswered", "unexpected")


class Tally:
    def __init__(self):
        self.faces: dict[str, dict] = {}
        self.problems: list[str] = []

    def add(self, face: str, name: str, *, answered: bool, traceback: bool, expected: bool = True,
            server_error: bool = False) -> None:
        """SERVER_ERROR: an HTTP 5xx or a JSON-RPC internal error, the server's fault by its own word."""
        f = self.faces.setdefault(face, dict.fromkeys(COUNTS, 0))
        f["inputs"] += 1
        f["tracebacks"] += traceback
        f["server_errors"] += server_error
        f["unanswered"] += not answered
        f["unexpected"] += answered and not traceback and not expected
        for bad, what in ((not answered, "unanswered"), (traceback, "traceback"), (server_error, "server error"),
                          (answered and not traceback and not expected, "unexpected answer")):
            if bad:
                self.problems.append(f"{face}: {name}: {what}")


def _cli(home: Path, argv: list[str], stdin: bytes | None = None) -> tuple[int | None, str, str]:
    try:
        proc = strata(home, *argv, stdin=stdin, timeout=ANSWER_SECONDS)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def _python_face(home: Path, c: dict, tally: Tally, progress) -> None:
    async def go():
        async with await Memory.open(home, actor="adversary") as mem:
            for name, op, args, expected in c["cases"]:
                try:
                    await python_call(mem, op, args)
                    kind = "ok"
                except StrataError as e:
                    kind = e.kind
                except Exception as e:  # noqa: BLE001 - what this face must never raise
                    tally.add("python", name, answered=True, traceback=True)
                    tally.problems.append(f"python: {name}: {type(e).__name__}: {e}"[:300])
                    continue
                tally.add("python", name, answered=True, traceback=False, expected=kind == expected)
                progress(1)
    asyncio.run(go())


def _cli_face(home: Path, c: dict, tally: Tally, progress) -> None:
    for name, op, args, expected in c["cases"]:
        call = cli_call(op, args)
        if call is None:
            continue
        code, _, err = _cli(home, ["--json", *call[0]], call[1])
        usage = code == 2 and expected == "invalid_input"
        tally.add("cli", name, answered=code is not None, traceback="Traceback" in err,
                  expected=usage or code == EXIT[expected])
        progress(1)
    for argv in c["cli"]:
        code, _, err = _cli(home, argv)
        tally.add("cli", " ".join(argv)[:60], answered=code is not None, traceback="Traceback" in err,
                  expected=code not in (0, 1))
        progress(1)
    for name, argv, stdin, stream, codes in c["cli_streams"]:
        code, err = run_with(home, argv, stdin, stream, ANSWER_SECONDS)
        tally.add("cli", name, answered=code is not None, traceback="Traceback" in err, expected=code in codes)
        progress(1)


def _import_face(home: Path, work: Path, c: dict, tally: Tally, progress) -> None:
    for name, data in c["imports"]:
        path = work / "import.jsonl"
        path.write_bytes(data)
        code, _, err = _cli(home, ["import", str(path)])
        tally.add("import", name, answered=code is not None, traceback="Traceback" in err, expected=code == 4)
        progress(1)
    path.unlink(missing_ok=True)


def _put_back(path: Path, saved: bytes) -> None:
    if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.write_bytes(saved)
    os.chmod(path, 0o600)


def _capsule_face(home: Path, c: dict, tally: Tally, progress) -> None:
    path = home / "capsule" / "CAPSULE.md"
    saved = path.read_bytes()
    for name, damage in c["capsules"]:
        damage(path)
        for argv in (["capsule", "check"], ["capsule", "render"], ["status"]):
            code, _, err = _cli(home, argv)
            tally.add("capsule", f"{name}: {' '.join(argv)}", answered=code is not None,
                      traceback="Traceback" in err, expected=code in (0, 4))
            progress(1)
        _put_back(path, saved)


def _config_face(home: Path, c: dict, tally: Tally, progress) -> None:
    path = home / "strata.toml"
    saved = path.read_bytes()
    for name, damage in c["configs"]:
        if callable(damage):
            damage(path)
        else:
            path.write_bytes(damage)
        code, _, err = _cli(home, ["status"])
        tally.add("strata.toml", name, answered=code is not None, traceback="Traceback" in err,
                  expected=code in (0, 7))
        progress(1)
        _put_back(path, saved)


def _http_exchange(sock_path: Path, raw: bytes) -> bytes | None:
    """What the server sent back (b"" when it closed without a word), or None when it neither
    answered nor closed within ANSWER_SECONDS."""
    data = b""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(ANSWER_SECONDS)
        s.connect(str(sock_path))
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it answered early (a body too large) and closed: the answer may be waiting
        try:
            while chunk := s.recv(65536):
                data += chunk
                s.settimeout(1.0)  # an answer has begun; a kept-alive connection stays open after it
        except ConnectionResetError:
            pass
        except socket.timeout:
            return data or None
    return data


def _http_face(home: Path, c: dict, tally: Tally, progress) -> None:
    sock_path = home / "state" / "strata.sock"
    server = spawn(["-m", "strata_daemon", "serve"], home, stdout=subprocess.DEVNULL, text=False)
    try:
        deadline = time.monotonic() + 60
        while not sock_path.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"strata serve did not start: {server.communicate(timeout=10)[1][-500:]!r}")
            time.sleep(0.05)
        time.sleep(0.3)
        requests = []
        for name, op, args, expected in c["cases"]:
            if (call := http_call(op, args)) is not None:
                requests.append((name, *call, expected))
        for name, method, path, body in c["http_bodies"]:
            requests.append((name, method, path, body or None, "refused"))
        for name, method, path, body, expected in requests:
            head = f"{method} {path} HTTP/1.1\r\nHost: strata\r\nConnection: close\r\n"
            if body is not None:
                head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            answer = _http_exchange(sock_path, head.encode("utf-8", "surrogatepass") + b"\r\n" + (body or b""))
            status = answer.split(b" ", 2)[1] if answer and answer.startswith(b"HTTP/1.1 ") else b""
            ok_status = status.startswith(b"2")
            good = ok_status if expected == "ok" else (not ok_status and status != b"500")
            tally.add("http", name, answered=bool(status), traceback=False, expected=good,
                      server_error=status.startswith(b"5"))
            progress(1)
        for name, raw in c["http_raw"]:
            answer = _http_exchange(sock_path, raw)
            # A malformed request may be answered with a status or with the connection closed.
            status = (answer or b"")[9:12]
            tally.add("http", f"raw: {name}", answered=answer is not None, traceback=False,
                      server_error=status.startswith(b"5"))
            progress(1)
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=60)
    logged = err.decode("utf-8", "replace").count("Traceback")
    if logged:
        tally.faces["http"]["tracebacks"] += logged
        tally.problems.append(f"http: the server logged {logged} traceback(s)")


HOOK_SECONDS = 2.0  # what an agent's turn may wait on a hook, whatever it was handed


def _hooks_face(home: Path, work: Path, c: dict, tally: Tally, progress) -> dict:
    """Each hook with what a loop may hand it: it must exit 0; how long each took is counted
    apart (a busy machine is slower; the benchmark reports it, a test does not judge it)."""
    work.mkdir(parents=True, exist_ok=True)
    fifo = work / "transcript.fifo"  # nothing ever writes to it
    paths = {**hook_paths(work), b'"FIFO"': b'"%s"' % str(fifo).encode()}
    times = []
    for name, argv, stdin in c["hooks"]:
        for placeholder, path in paths.items():
            stdin = stdin.replace(placeholder, path)
        started = time.monotonic()
        code, _, err = _cli(home, ["hook", *argv], stdin)
        times.append(time.monotonic() - started)
        tally.add("hooks", name, answered=code is not None, traceback="Traceback" in err, expected=code == 0)
        progress(1)
    for name, argv, stdin, stream, codes in c["hook_streams"]:  # a stream closed or full
        started = time.monotonic()
        code, err = run_with(home, argv, stdin, stream, ANSWER_SECONDS)
        times.append(time.monotonic() - started)
        tally.add("hooks", name, answered=code is not None, traceback="Traceback" in err, expected=code in codes)
        progress(1)
    return {"slowest_seconds": round(max(times), 2), "over_limit": sum(t > HOOK_SECONDS for t in times),
            "limit_seconds": HOOK_SECONDS}


def _internal(message: dict | None) -> bool:
    return isinstance(message, dict) and (message.get("error") or {}).get("code") == -32603  # JSON-RPC internal


def _mcp_face(home: Path, c: dict, tally: Tally, progress) -> None:
    proc = spawn(["-m", "strata_daemon", "mcp"], home, stdin=subprocess.PIPE, text=False)
    err_lines: list[bytes] = []
    wire = Wire(proc, ANSWER_SECONDS)
    send, answer = wire.send, wire.answer
    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
             .encode())
        if answer(0) is None:
            raise RuntimeError("strata mcp did not answer initialize")
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        ident = 10_000
        for name, op, args, expected in c["cases"]:
            call = mcp_args(op, args)
            if call is None:
                continue
            ident += 1
            send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                             "params": {"name": call[0], "arguments": call[1]}}).encode())
            got = answer(ident)
            text = json.dumps(got or {})
            failed = got is not None and ("error" in got or got.get("result", {}).get("isError"))
            tally.add("mcp", name, answered=got is not None, traceback="Traceback" in text,
                      expected=(not failed) if expected == "ok" else bool(failed), server_error=_internal(got))
            progress(1)
        for name, line in c["mcp_raw"]:
            send(line)
            got = answer()
            tally.add("mcp", f"raw: {name}", answered=got is not None, traceback="Traceback" in json.dumps(got or {}),
                      server_error=_internal(got))
            progress(1)
        for name, line in c["mcp_lines"]:
            ident += 1
            got = wire.line(line, ident)
            tally.add("mcp", f"line: {name}", answered=got is not None, traceback="Traceback" in json.dumps(got or []),
                      server_error=any(map(_internal, got or ())))
            progress(1)
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        err_lines = err.splitlines()
    logged = sum(b"Traceback" in line for line in err_lines)
    if logged:
        tally.faces["mcp"]["tracebacks"] += logged
        tally.problems.append(f"mcp: the server logged {logged} traceback(s)")


def adversarial(home: Path, work: Path, progress: Callable[[int], None] | None = None, *, share: float = 1.0,
                seed: int = 0) -> dict:
    """Run the corpus on `home` (made and filled by the caller's init); `work` holds files.
    `share` of the newer inputs (hostile*.py), fixed by `seed`: all of them at 1."""
    progress = progress or (lambda _n: None)
    c = corpus(share, seed)

    async def fill():
        async with await Memory.open(home) as mem:
            await mem.observe("Disk on db-01 is 91% full", kind="event")
            await mem.set_fact("canary", "alive")
    asyncio.run(fill())
    (home / "strata.toml").write_text("[http]\nrequest_timeout_seconds = 2.0\n", encoding="utf-8")
    db = home / "state" / "memory.db"
    before = fingerprint(db)
    tally = Tally()
    started = time.perf_counter()
    for face in (_python_face, _cli_face, _mcp_face, _http_face, _capsule_face, _config_face):
        face(home, c, tally, progress)
    _import_face(home, work, c, tally, progress)
    hooks = _hooks_face(home, work, c, tally, progress)
    after = fingerprint(db)
    changed = [layer for layer in before if before[layer] != after[layer]]
    total = {k: sum(f[k] for f in tally.faces.values()) for k in COUNTS}
    return {**total, "data_changed": changed, "by_face": tally.faces, "problems": tally.problems[:40],
            "hooks": hooks, "seconds": round(time.perf_counter() - started, 1)}
