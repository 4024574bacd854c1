"""`strata backup --restore`: put a backup back as the home's database, keeping the current one,
and purge again what the current one had purged since the backup was made: a restore rolls
the memory back, never a purge."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path

from strata_daemon.app.phases.lock import holder
from strata_daemon.config.home import Home
from strata_daemon.errors import Conflict, InvalidInput, StorageError, StrataError
from strata_daemon.store import (
    capsule as capsule_rows,
    copies,
    driver,
    episode_reads as reads,
    fact_lookups as fact_rows,
    files,
    purge as purge_rows,
    users,
)
from strata_daemon.store.postgres import dumps
from strata_daemon.store.postgres.connection import shown


def _check_backup(source: Path) -> None:
    if not source.is_file():
        raise InvalidInput(f"{source} is a folder, not a backup" if source.is_dir() else f"no file at {source}",
                           hint="name one backup file: `strata backup --list` lists them (strata backup makes one)")
    try:
        ok = files.integrity(source)[0][0] == "ok"
    except driver.driver_errors() as e:
        raise InvalidInput(f"{source} is not a strata database ({e})", hint="nothing was changed") from None
    if not ok:
        raise InvalidInput(f"{source} fails SQLite's integrity check", hint="choose an older backup; nothing was changed")


_NAMED = ("facts", "whole", "topics", "entities", "texts")  # what a purge record holds by the hashes of its names


def purges_since(current: dict, backup: dict) -> dict[str, dict[str, set[str]]]:
    """agent -> {"memories": content hashes, "facts": key hashes (their values went), "whole":
    key hashes (the facts went), "topics", "entities" ("type:value"), "texts" (named to
    `forget --matching`): hashes} of the purges CURRENT records and BACKUP does not (each the
    store's `purge_records`)."""
    out: dict[str, dict[str, set[str]]] = {}
    for key, (agent, data) in current.items():
        if key in backup:
            continue
        mine = out.setdefault(agent, {k: set() for k in ("memories", *_NAMED)})
        mine["memories"].update(m["hash"] for m in data.get("memories", ()) if m.get("hash"))
        for k in _NAMED:
            mine[k].update(data.get(k, ()))
    return out


_LONGEST_NAMED = 8  # words: the longest text named to `forget --matching` looked for again


def named_texts(line: str, hashes: set[str]) -> set[str]:
    """The runs of words in LINE whose hash is among HASHES: a text a purge named, known again
    by its hash alone (with or without the punctuation around it)."""
    words = line.split()
    out = set()
    for n in range(1, min(_LONGEST_NAMED, len(words)) + 1):
        for i in range(len(words) - n + 1):
            run = " ".join(words[i:i + n])
            for form in {run, run.strip(".,;:!?()[]{}'\"")}:
                if hashlib.sha256(form.encode()).hexdigest() in hashes:
                    out.add(form)
    return out


def _hashed(values, hashes: set[str], name=lambda v: v) -> list:
    return [v for v in values if hashlib.sha256(name(v).encode()).hexdigest() in hashes]


def _held(conn, agent: str, purge: dict[str, set[str]]) -> dict:
    """What of AGENT a purge since took, known again by its hashes: the memories holding the
    purged words, the facts under purged keys (whole, or their values), the topics and
    entities, and the purged texts its capsule lines written by a person hold (a pin is
    neither memory nor fact)."""
    ids = reads.ids_by_hashes(conn, agent, sorted(purge["memories"]))
    # A fact `fact forget` emptied keeps its key: only one still holding a value counts.
    keys = _hashed(fact_rows.keys_with_values(conn, agent), purge["facts"])
    whole = _hashed(fact_rows.all_keys(conn, agent), purge["whole"])
    topics = _hashed([t for t, _ in purge_rows.topic_texts(conn, agent)], purge["topics"])
    entities = _hashed([tuple(e) for e in purge_rows.entity_texts(conn, agent)], purge["entities"],
                       lambda e: f"{e[0]}:{e[1]}")
    texts = set()
    if purge["texts"]:
        for line in capsule_rows.override_lines(conn, agent):
            texts |= named_texts(line, purge["texts"])
    return {"ids": ids, "keys": [k for k in keys if k not in whole], "whole": whole, "topics": topics,
            "entities": entities, "texts": sorted(texts)}


async def purge_again(home: Home, purges: dict[str, dict[str, set[str]]]) -> dict[str, int]:
    """Purge from the restored database what `purges_since` found (see `_held`). Returns the
    counts of memories and facts."""
    from strata_daemon.app.memory import Memory

    counts = {"memories": 0, "facts": 0}
    for agent, purge in sorted(purges.items()):
        async with await Memory.open(home.root, agent=agent, actor="restore") as mem:
            asked = await mem.db.run(_held, agent, purge)
            if any(asked.values()):
                r = await mem.layers.forgetting.purge(**asked)
                counts["memories"] += len(r["memories"])
                counts["facts"] += len(asked["keys"]) + len(asked["whole"])
    return counts


def restore(home: Home, source: Path) -> dict:
    """Replace the database with the backup at `source`. Refused while a daemon runs on the
    home or any process has the database open; the database it replaces is kept in
    state/backups/ first."""
    pid = holder(home.state_dir / "daemon.lock")
    if pid is not None:
        raise Conflict(f"the daemon (pid {pid}) runs on this home",
                       hint="stop it first (systemctl --user stop strata, or Ctrl-C), restore, then start it")
    source = source.expanduser().resolve()
    _check_backup(source)
    if source == home.db_path.resolve():
        raise InvalidInput("that is the database itself", hint="name a file in state/backups/")
    alone = users.exclusive(home.db_path)
    try:
        kept = None
        if home.db_path.exists():
            try:
                kept = copies.keep_copy(home.db_path, home.state_dir / "backups", "before-restore")
            except (*driver.driver_errors(), StorageError):  # damaged, or sealed with a key not given
                # Damaged (the case `strata doctor` sends people here for): SQLite cannot read
                # it, so its files are kept as they are and removed, and the backup copied in.
                kept = copies.keep_copy(home.db_path, home.state_dir / "backups", "before-restore-damaged",
                                        raw=True)
                for suffix in ("", "-wal", "-shm"):
                    home.db_path.with_name(home.db_path.name + suffix).unlink(missing_ok=True)
        driver.copy(source, home.db_path)
    finally:
        os.close(alone)
    return {"restored_from": str(source), "database": str(home.db_path), "bytes": home.db_path.stat().st_size,
            "previous_kept_as": None if kept is None else str(kept)}


async def restore_home(home: Home, source: Path) -> dict:
    """`restore` (on PostgreSQL, `restore_dump`), then `purge_again`: `purged_again` counts what
    the backup held that was purged after it was made."""
    from strata_daemon.app import wiring
    from strata_daemon.store import engines

    url = engines.url_of(wiring.configuration(home)["store.url"])
    if url is not None:
        r, purges = await restore_dump(home, url, source)
    else:
        r = restore(home, source)
        kept = r["previous_kept_as"]
        purges = {}
        # A database too damaged to read was kept byte for byte, and cannot say what it purged.
        if kept and not Path(kept).name.startswith("before-restore-damaged"):
            purges = purges_since(files.purge_records(Path(kept)), files.purge_records(Path(r["restored_from"])))
    await _end_the_copys_run(home)
    again = await purge_again(home, purges) if purges else {"memories": 0, "facts": 0}
    return {**r, "purged_again": again, "capsules_kept_as": await _capsules_rolled_back(home)}


async def _capsules_rolled_back(home: Home) -> list[str]:
    """Each namespace's capsule with its blocks as the restored database rendered them (the file
    as it was kept first, beside its kept renders): else the lines of what the restore rolled back
    would come back as a person's edits."""
    from strata_daemon.app import wiring
    from strata_daemon.app.memory import Memory
    from strata_daemon.capsule.restored import roll_back

    stamp, kept = time.strftime("%Y%m%dT%H%M%S", time.gmtime()), []
    home_agent = wiring.configuration(home)["agent.namespace"]
    for path in sorted(home.capsule_dir.glob("*.md")):
        agent = home_agent if path.name == "CAPSULE.md" else path.stem
        try:
            async with await Memory.open(home.root, agent=agent, actor="restore") as mem:
                if mem.layers.capsule.path != path:
                    continue
                copy = await roll_back(mem.layers.capsule, stamp)
        except StrataError:  # a file that names no namespace of this home
            continue
        kept += [copy] if copy else []
    return kept


async def _end_the_copys_run(home: Home) -> None:
    """The backup run the restored copy holds as running ended when the copy was made
    (store.phases.backed_up_mid_run); `strata phase list` would call it interrupted."""
    from strata_daemon.app.memory import Memory
    from strata_daemon.store import phases

    async with await Memory.open(home.root, actor="restore") as mem:
        await mem.db.transact(phases.backed_up_mid_run)


async def restore_dump(home: Home, url: str, source: Path) -> tuple[dict, dict]:
    """Make the PostgreSQL store what the dump SOURCE holds (pg_restore, one transaction), after
    keeping the store as it is as state/backups/before-restore-TIME.dump. Refused while any
    other session is connected to the database: every host's daemon is to be stopped first.
    Returns the result and `purges_since` of the store before and after."""
    from strata_daemon.store.engines import open_database

    pid = holder(home.state_dir / "daemon.lock")
    if pid is not None:
        raise Conflict(f"the daemon (pid {pid}) runs on this home",
                       hint="stop it first (systemctl --user stop strata, or Ctrl-C), restore, then start it")
    source = source.expanduser().resolve()
    db = await open_database(home.db_path, url)
    try:
        others = await db.other_sessions()
        if others:
            raise Conflict(f"{len(others)} other session(s) use the database: {', '.join(others)}",
                           hint="stop the daemon on every host that shares it (and other clients), then restore")
        major, before = await db.server_major(), await db.run(purge_rows.purge_records)
    finally:
        await db.close()
    await asyncio.to_thread(dumps.check, source, major)
    folder = home.state_dir / "backups"
    kept = await asyncio.to_thread(copies.keep_copy, None, folder, "before-restore", suffix=dumps.SUFFIX,
                                   write=lambda p: dumps.dump(url, major, p))
    await asyncio.to_thread(lambda: dumps.write_hashes(kept, dumps.content_hashes(kept, major)))
    await asyncio.to_thread(dumps.restore, url, major, source)
    db = await open_database(home.db_path, url)
    try:
        await db.analyze()  # pg_restore leaves the planner without statistics of what it loaded
        after = await db.run(purge_rows.purge_records)
    finally:
        await db.close()
    return ({"restored_from": str(source), "database": shown(url), "bytes": source.stat().st_size,
             "previous_kept_as": str(kept)}, purges_since(before, after))
