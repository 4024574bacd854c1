"""`strata doctor`: check a home and say how to fix each problem found. It only reads: the
database is opened read-only (no migration), and nothing is created or repaired."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Callable

from strata_daemon.app import sealing
from strata_daemon.base import timeutil
from strata_daemon.base.wording import counted
from strata_daemon.config.home import Home
from strata_daemon.errors import INSTALL_LLM, InvalidInput, StrataError
from strata_daemon.store import cipher, copies, driver, files
from strata_daemon.store.migrate import MIGRATIONS

OK, WARN, ERROR = "ok", "warn", "error"
PRIVATE_FILES = ("memory.db", "memory.db-wal", "memory.db-shm", "http-token", "strata.sock",
                 "http-listeners.json", "redaction.key")


def finding(check: str, status: str, message: str, fix: str | None = None) -> dict:
    return {"check": check, "status": status, "message": message, "fix": fix}


def permissions(home: Home) -> list[dict]:
    out = []
    for folder in (home.root, home.state_dir, home.state_dir / "backups"):
        if folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) & 0o077:
            out.append(finding("permissions", WARN, f"{folder} is open to other users "
                               f"({stat.S_IMODE(folder.stat().st_mode):o})", f"chmod 700 {folder}"))
    files = [home.state_dir / n for n in PRIVATE_FILES] + sorted((home.state_dir / "backups").glob("*.db"))
    for path in files:
        if path.exists() and stat.S_IMODE(path.stat().st_mode) & 0o077:
            out.append(finding("permissions", ERROR, f"{path} is readable by other users "
                               f"({stat.S_IMODE(path.stat().st_mode):o})", f"chmod 600 {path}"))
    if home.state_dir.is_dir() and not os.access(home.state_dir, os.W_OK):
        out.append(finding("permissions", ERROR, f"{home.state_dir} is not writable", "check its owner and mode"))
    return out or [finding("permissions", OK, "folders 0700 and private files 0600")]


def configuration(home: Home) -> list[dict]:
    from strata_daemon.app import wiring

    try:
        wiring.configuration(home)
    except StrataError as e:
        return [finding("config", ERROR, e.message, e.hint or f"edit {home.config_path}")]
    where = home.config_path if home.config_path.exists() else "the defaults (no strata.toml)"
    return [finding("config", OK, f"valid: {where}")]


def _store_url(home: Home) -> str | None:
    """The PostgreSQL store the home names, or None for its own file (and for a broken
    configuration, which the config check reports)."""
    from strata_daemon.app import wiring
    from strata_daemon.store import engines

    try:
        return engines.url_of(wiring.configuration(home)["store.url"])
    except StrataError:
        return None


def postgres(url: str) -> list[dict]:
    """The server, its extensions, the role and the schema, for a home whose store is PostgreSQL."""
    from strata_daemon.store.postgres import connection, health
    from strata_daemon.store.postgres.schema import MIGRATIONS as PG_MIGRATIONS

    where = connection.shown(url)
    try:
        h = health.read(url)
    except StrataError as e:
        return [finding("database", ERROR, e.message, e.hint)]
    except connection.driver_errors() as e:
        found = connection.describe(e, url)
        return [finding("database", ERROR, found.message, found.hint)]
    recent = h["version"] >= health.MIN_VERSION
    out = [finding("database", OK if recent else ERROR,
                   f"{where}: {h['version_text']}" + ("" if recent else " (16 or newer needed)"),
                   None if recent else "upgrade the server to PostgreSQL 16 or newer")]
    for name, e in h["extensions"].items():
        if e["installed"]:
            out.append(finding("extension", OK, f"{name} {e['installed']} installed"))
        elif e["available"] and (h["superuser"] or h["applied"]):
            out.append(finding("extension", WARN, f"{name} {e['available']} available, not installed yet",
                               "the next strata command installs it"))
        else:
            out.append(finding("extension", ERROR, f"{name} is " + ("not installed, and role " + h["role"]
                                                                  + " may not install it" if e["available"]
                                                                  else "not available on the server"),
                               f"as a superuser: CREATE EXTENSION {name};" if e["available"]
                               else f"install {'pgvector' if name == 'vector' else 'contrib'} on the server"))
    latest, newest = max(n for n, _, _ in PG_MIGRATIONS), max(h["applied"], default=0)
    if newest > latest:
        out.append(finding("schema", ERROR, f"written by a newer strata (migration {newest}; this one knows {latest})",
                           "upgrade strata"))
    elif newest < latest and not h["may_create"]:
        out.append(finding("role", ERROR, f"role {h['role']} may not create tables, and the schema is at migration "
                                          f"{newest} of {latest}",
                           "run any strata command with the tables' owner's URL first (it migrates)"))
    else:
        out.append(finding("schema", OK if newest == latest else WARN, f"at migration {newest} of {latest}",
                           None if newest == latest else "the next strata command migrates it"))
    if h["word_statistics"]:
        out.append(finding("statistics", WARN, f"the server's statistics keep samples of {h['word_statistics']} "
                                               "columns that hold words, which no purge reaches",
                           "as a superuser: DELETE FROM pg_statistic s USING pg_attribute a WHERE a.attrelid = "
                           "s.starelid AND a.attnum = s.staattnum AND a.attstattarget = 0"))
    return out + [_dump_tool(h["version"] // 10000)]


def _dump_tool(major: int) -> dict:
    """Whether a pg_dump the nightly backup can use is at hand (one as new as the server)."""
    from strata_daemon.store.postgres import dumps

    try:
        return finding("backup", OK, f"pg_dump for PostgreSQL {major}: {dumps.tool('pg_dump', major)}")
    except StrataError as e:
        return finding("backup", WARN, e.message + "; the nightly backup fails until one is", e.hint)


def database(home: Home) -> list[dict]:
    url = _store_url(home)
    if url is not None:
        return postgres(url)
    path = home.db_path
    if not path.exists():
        # A new home has none until its first memory or read: nothing is wrong with it.
        return [finding("database", OK, f"none yet at {path}: the first command that stores or reads a memory "
                                         "creates it")]
    try:
        with files.read_only(path):
            pass
    except driver.driver_errors() as e:
        return [finding("database", ERROR, f"cannot open {path}: {e}", "check its mode and owner")]
    except StrataError as e:  # a sealed file without its key: the sealing check says more
        return [finding("database", ERROR, e.message, e.hint)]
    try:
        result, applied = files.integrity(path)
    except driver.driver_errors() as e:
        return [finding("database", ERROR, f"{path} is damaged: {e}",
                        "restore the newest backup: strata backup --list, then strata backup --restore PATH")]
    out = []
    if result != ["ok"]:
        out.append(finding("database", ERROR, f"integrity check failed: {'; '.join(result[:3])}",
                           "restore the newest backup: strata backup --list, then strata backup --restore PATH"))
    latest = max(n for n, _, _ in MIGRATIONS)
    newest = max(applied, default=0)
    if newest > latest:
        out.append(finding("schema", ERROR, f"written by a newer strata (migration {newest}; this one knows {latest})",
                           "upgrade strata"))
    elif newest < latest:
        out.append(finding("schema", WARN, f"at migration {newest} of {latest}", "the next strata command migrates it"))
    else:
        out.append(finding("schema", OK, f"at migration {latest}, the newest"))
    return [finding("database", OK, f"integrity check ok ({path.stat().st_size:,} bytes)")] + out \
        if result == ["ok"] else out


def models(home: Home) -> list[dict]:
    from strata_daemon.embedding.loader import is_packaged, load_embedder
    from strata_daemon.embedding.model import GGUF_MAGIC

    try:
        cfg = home.config()
    except StrataError:
        return []  # said under config
    out = []
    try:
        emb = load_embedder(cfg["embedding.model"], cfg["embedding.runtime"], home.state_dir / "models", threads=1)
        emb.embed(["strata doctor"])
        # Only the packaged models have known checksums; a configured GGUF is checked for its format.
        checked = "checksum verified" if is_packaged(cfg["embedding.model"]) else "format checked"
        out.append(finding("embedding model", OK, f"{emb.name} ({emb.dim} dimensions) loads, {checked}"))
    except StrataError as e:
        out.append(finding("embedding model", ERROR, e.message + "; recall falls back to fast",
                           e.hint or "check [embedding] model in strata.toml"))
    if cfg.tuning.recall.rerank_weight > 0:
        out.append(_cross_encoder())
    if cfg["llm.model"]:
        out.append(_llm(Path(cfg["llm.model"]).expanduser(), GGUF_MAGIC))
    return out


def _cross_encoder() -> dict:
    from strata_daemon.embedding.rerank import CrossEncoder

    try:
        model = CrossEncoder(threads=1)
        model.scores("strata doctor", ["strata doctor"])
    except StrataError as e:
        return finding("cross-encoder", WARN, e.message + "; deep recall ranks without it", e.hint)
    return finding("cross-encoder", OK, f"{model.name} loads, checksum verified")


def _llm(path: Path, magic: bytes) -> dict:
    fallback = "; dossiers fall back to extractive"
    try:
        with open(path, "rb") as f:
            head = f.read(len(magic))
    except FileNotFoundError:
        return finding("llm model", ERROR, f"{path} does not exist{fallback}", "fix [llm] model in strata.toml")
    except OSError as e:
        return finding("llm model", ERROR, f"cannot read {path} ({e.strerror}){fallback}",
                       "fix [llm] model in strata.toml")
    if head != magic:
        return finding("llm model", ERROR, f"{path} is not a GGUF file{fallback}", "point [llm] model at a .gguf file")
    if importlib.util.find_spec("llama_cpp") is None:  # an extra: a pip install has it only when asked
        return finding("llm model", ERROR, f"llama-cpp-python is not installed{fallback}", INSTALL_LLM)
    return finding("llm model", OK, f"{path.name} is a GGUF file")


def disk(home: Home) -> list[dict]:
    folder = home.state_dir if home.state_dir.is_dir() else home.root
    free = shutil.disk_usage(folder).free
    size = sum(p.stat().st_size for p in home.state_dir.glob("memory.db*")) if home.state_dir.is_dir() else 0
    need = max(1 << 30, 2 * size)  # room for a backup and the WAL
    left = copies.left_behind(home.state_dir / "backups") if (home.state_dir / "backups").is_dir() else []
    out = [finding("disk", WARN, f"{len(left)} files of a backup cut short in {home.state_dir / 'backups'} "
                   f"({sum(p.stat().st_size for p in left) / 2**20:.1f} MiB): a copy of every memory that no "
                   "listing shows", "`strata backup` or a purge removes them")] if left else []
    if free < need:
        return out + [finding("disk", WARN, f"{free / 2**30:.1f} GiB free beside a {size / 2**20:.0f} MiB database",
                              f"free space on the disk holding {folder} (a backup needs about the database's size)")]
    return out + [finding("disk", OK, f"{free / 2**30:.1f} GiB free")]


def daemon(home: Home) -> list[dict]:
    from strata_daemon.app.phases.lock import holder

    pid = holder(home.state_dir / "daemon.lock")
    beat = home.state_dir / "heartbeat"
    if pid is None:
        return [finding("daemon", WARN, "no daemon runs on this home",
                        "start it: `strata run`, or as a service (`strata systemd print-unit --user` prints its unit)")]
    try:
        every = float(home.config()["daemon.heartbeat_seconds"])
    except StrataError:
        every = 300.0
    age = time.time() - beat.stat().st_mtime if beat.exists() else None
    if age is None or age > 2 * every + 60:
        shown = "never" if age is None else f"{timeutil.duration(age)} ago"
        return [finding("daemon", ERROR, f"the daemon (pid {pid}) last beat {shown}", "look at its log "
                        "(journalctl --user -u strata) and restart it")]
    return [finding("daemon", OK, f"running (pid {pid}), heartbeat {timeutil.duration(age)} ago")]


def http(home: Home) -> list[dict]:
    """The running daemon's API listeners (http.enabled), as it recorded them: one that is
    configured but down says why and what to do."""
    from strata_daemon.app import listeners
    from strata_daemon.app.phases.lock import holder

    try:
        cfg = home.config()
    except StrataError:
        return []  # said under config
    pid = holder(home.state_dir / "daemon.lock")
    if not cfg["http.enabled"] or pid is None:
        return []  # no API to check; the daemon check says whether one runs
    record = listeners.of_daemon(home.state_dir, pid)
    if record is None:
        return [finding("http", WARN, f"the daemon (pid {pid}) has not recorded its API listeners yet",
                        "it does once serving starts; if this lasts, look at its log for lines starting with "
                        "'http:' (journalctl -u strata, or --user -u strata)")]
    restart = "then restart the daemon (systemctl [--user] restart strata)"
    out, up = [], []
    for name, what in (("unix", "the Unix socket"), ("tcp", "the TCP listener")):
        state = record.get(name)
        if not isinstance(state, dict):
            continue
        if state.get("up"):
            up.append(f"{name} {state.get('address')}")
        else:
            hint = state.get("hint") or "look at the daemon's log"
            out.append(finding("http", ERROR, f"{what} {state.get('address')} is configured but down: "
                                              f"{state.get('error')}", f"{hint}; {restart}"))
    wanted = f"{cfg['http.host']}:{cfg['http.port']}" if cfg["http.port"] else None
    if wanted and wanted != (record.get("tcp") or {}).get("address"):
        out.append(finding("http", WARN, f"strata.toml asks for TCP on {wanted}, which the running daemon "
                                         "did not start with",
                           f"print the systemd unit again (strata systemd print-unit): it allows network sockets "
                           f"only when http.port is set; {restart}"))
    if up:
        out.append(finding("http", OK, "serving on " + " and ".join(up)))
    return out


def capsule(home: Home) -> list[dict]:
    from strata_daemon.capsule import document, files

    path = home.capsule_dir / "CAPSULE.md"
    try:
        text = files.read(path)
    except InvalidInput as e:
        return [finding("capsule", ERROR, e.message, e.hint)]
    if text is None:
        return [finding("capsule", WARN, f"no capsule at {path}", "strata capsule render writes one")]
    errors = [p for p in document.parse(text).problems if p.level == "error"]
    if errors:
        return [finding("capsule", ERROR, f"{path}: " + "; ".join(f"line {p.line}: {p.message}" for p in errors[:3]),
                        "fix the lines named (strata capsule check shows all), or strata capsule show --last-good")]
    return [finding("capsule", OK, f"{path} is valid")]


def facts(home: Home) -> list[dict]:
    """Facts the status-line rule captured before it judged lines, that read as events."""
    from strata_daemon.facts.judge import judge

    if not home.db_path.exists() or _store_url(home) is not None:
        return []  # a PostgreSQL store: `strata fact rejudge` lists them
    try:
        rows = files.status_line_facts(home.db_path, time.time())
    except (*driver.driver_errors(), StrataError):
        return []  # the database and sealing checks say what is wrong with it
    events = [(agent, key) for agent, key, value, label in rows if judge(key, value, label) is not None]
    if not events:
        return [finding("facts", OK, f"every fact captured from a status line reads as a state, none as an event "
                                     f"({counted(len(rows), 'fact')})")]
    agents = sorted({a for a, _ in events})
    return [finding("facts", WARN, f"{len(events)} facts captured from status lines read as events, not states "
                                   f"(e.g. {events[0][1]!r} in namespace {events[0][0]!r})",
                    "strata fact rejudge lists them; --apply retracts them (undo: --undo)"
                    + (f"; run it in each namespace: {', '.join(agents)}" if len(agents) > 1 else ""))]


def sealed(home: Home) -> list[dict]:
    if _store_url(home) is not None:
        return [finding("sealing", OK, "the memories are on a PostgreSQL server, sealed by the server if at all",
                        None)]
    try:
        st = sealing.status(home)
    except StrataError:
        return []  # strata.toml cannot be read: the config check says why
    if st["problem"]:
        return [finding("sealing", ERROR, st["problem"], "give the home's key: store.key_file, STRATA_KEY or the "
                        "systemd credential strata-key (docs/sealing.md)")]
    if not st["sealed"]:
        if st["key_source"] and home.db_path.exists():
            return [finding("sealing", WARN, f"a key is given ({st['key_source']}) but the database is not sealed",
                            "`strata encrypt` seals it with that key")]
        if st["key_source"]:  # `init --encrypt`: the database is written sealed when first made
            return [finding("sealing", OK, f"sealed from its first write (no database yet); the key comes from "
                                           f"{st['key_source']}")]
        return [finding("sealing", OK, "not sealed: the memories are plain on disk (`strata encrypt` seals them)")]
    folder = home.state_dir / "backups"
    plain = [p for p in folder.glob("*.db") if p.is_file() and not cipher.is_sealed(p)] if folder.is_dir() else []
    if plain:
        return [finding("sealing", WARN, f"sealed, but {len(plain)} backups in {folder} are plain",
                        "`strata rekey` writes every file sealed, under a new key")]
    return [finding("sealing", OK, f"sealed; the key comes from {st['key_source']}")]


CHECKS: tuple[Callable[[Home], list[dict]], ...] = (permissions, configuration, sealed, database, models, disk, daemon,
                                                    http, capsule, facts)


async def examine(home: Home) -> dict:
    """Every check's findings, and whether any is an error."""
    import asyncio

    found: list[dict] = []
    if not home.exists():  # an empty or mistyped folder, or the default home not made yet: nothing to check
        said = finding("home", ERROR, f"there is no strata home at {home.root}",
                       f"`strata init {home.root}` makes one; or check --home and STRATA_HOME") if home.named else \
            finding("home", WARN, f"no home yet at {home.root}", "the first strata command makes it")
        return {"home": str(home.root), "checked_at": timeutil.iso(timeutil.now()), "findings": [said],
                "ok": said["status"] != ERROR}
    for check in CHECKS:
        found += await asyncio.to_thread(check, home)
    return {"home": str(home.root), "checked_at": timeutil.iso(timeutil.now()), "findings": found,
            "ok": not any(f["status"] == ERROR for f in found)}
