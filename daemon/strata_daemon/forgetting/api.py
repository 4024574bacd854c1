"""The forgetting layer of a Memory: `mem.forgetting.plan(...)`, `purge(...)`, `matching(text)`.

A purge is one transaction (strata_daemon/forgetting/purge.py) taken under the capsule's render
lock, so the capsule file and its kept renders lose the same lines as the renders stored in
the database before any render can compare them. After it: the WAL is folded into the file
and truncated (the words leave the disk), dossiers whose current version lost a line are
written again from what is left, and the capsule is rendered again.
"""

from __future__ import annotations

import asyncio
import logging
import time

from strata_daemon.base import timeutil
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.forgetting import backups, folding, purge as purging
from strata_daemon.forgetting.redaction import redact_lines
from strata_daemon.store import purge as store
from strata_daemon.store.db import Database

log = logging.getLogger("strata.forgetting")

MIN_MATCH_CHARS = 3
MAX_MATCHES = 1000


class Forgetting:
    def __init__(self, db: Database, agent: str, actor: str, home, capsule, dossiers):
        self.db, self.agent, self.actor, self.home = db, agent, actor, home
        self.capsule, self.dossiers = capsule, dossiers

    @property
    def backups_dir(self):
        return self.home.state_dir / "backups"

    async def plan(self, *, ids: list[int] = (), keys: list[str] = (), texts: list[str] = ()) -> dict:
        """What a purge of these would take with it; changes nothing."""
        return await self.db.run(lambda c: purging.plan(c, self.agent, ids=list(ids), keys=list(keys),
                                                        texts=list(texts)))

    async def matching(self, text: str) -> dict:
        """The memories whose text holds TEXT (any case, any accents) and the facts whose label
        or a value of which holds it: what `forget --matching` offers to forget, with each
        spelling of TEXT found (`spellings`)."""
        text = " ".join(str(text).split())
        if len(text) < MIN_MATCH_CHARS:
            raise InvalidInput(f"give at least {MIN_MATCH_CHARS} characters to match",
                               hint="a shorter text would match nearly every memory")

        def find(conn):
            # Compared in Python: SQLite's lower() leaves "Ü" and accents alone.
            said: set[str] = set()
            ids = []
            for i, content in store.memory_texts(conn, self.agent):
                found = folding.spellings(text, content)
                if found:
                    ids.append(i)
                    said |= found
                    if len(ids) > MAX_MATCHES:
                        break
            keys = []
            for key, label, value in store.fact_texts(conn, self.agent):
                found = folding.spellings(text, label or "") | folding.spellings(text, value or "")
                if found:
                    said |= found
                    if key not in keys:
                        keys.append(key)
            return ids, keys, sorted(said)

        ids, keys, said = await self.db.run(find)
        if len(ids) > MAX_MATCHES:
            raise InvalidInput(f"more than {MAX_MATCHES} memories hold {text!r}",
                               hint="name a longer, more particular text")
        return {"text": text, "ids": ids, "keys": keys, "spellings": said}

    async def purge(self, *, ids: list[int] = (), keys: list[str] = (), texts: list[str] = ()) -> dict:
        """Remove these memories, facts and texts from every layer, for good. `elapsed_ms` has
        `removed` (until the words are out of the database, its WAL and the capsule files) and
        `regenerated` (dossiers and the capsule written again from what is left)."""
        started = time.perf_counter()
        now = timeutil.now()
        async with self.capsule.locked():
            result = await self.db.transact(lambda c: purging.purge(c, self.agent, ids=list(ids), keys=list(keys),
                                                                    texts=list(texts), actor=self.actor, now=now))
            purged = result.pop("_purged")
            result["capsule_lines_redacted"] += await asyncio.to_thread(self.capsule.redact_files,
                                                                        lambda t: redact_lines(t, purged))
        result["wal_cleared"] = await self._fold_wal()
        removed = time.perf_counter()
        result["dossiers_rewritten"] = await self._after(result.pop("_topics"))
        held = await asyncio.to_thread(backups.holding, self.backups_dir, result.pop("_hashes"))
        result["backups_holding"] = [str(p) for p in held]
        result["elapsed_ms"] = {"removed": round(1000 * (removed - started), 1),
                                "regenerated": round(1000 * (time.perf_counter() - removed), 1)}
        return result

    async def backups_holding(self, episode_id: int, *, remove: bool = False) -> dict:
        """The database copies that still hold purged memory EPISODE_ID; with REMOVE, removed."""
        hashes = await self.db.run(backups.purged_hashes, self.agent, int(episode_id))
        if not hashes:
            raise InvalidInput(f"memory {episode_id} was not purged in namespace {self.agent!r}",
                               hint="`strata forget ID --purge` purges it; its backups are found afterwards")
        found = await asyncio.to_thread(backups.holding, self.backups_dir, hashes)
        if remove:
            for path in found:
                path.unlink(missing_ok=True)
        return {"id": int(episode_id), "backups": [str(p) for p in found], "removed": remove}

    async def _after(self, topics: list[str]) -> list[str]:
        """Dossiers written again and the capsule rendered again from what is left. Both are
        best effort: their stored texts were already redacted inside the purge."""
        done = []
        for topic in topics:
            try:
                await self.dossiers.refresh(topic, force=True)
                done.append(topic)
            except StrataError as e:
                log.warning("dossier %s not refreshed after a purge: %s", topic, e.message)
        if self.capsule.path.exists():
            try:
                await self.capsule.render()
            except StrataError as e:
                log.warning("capsule not rendered after a purge: %s", e.message)
        return done

    async def _fold_wal(self) -> bool:
        """Fold the WAL into the database file and empty it; False when a reader in another
        process kept part of it (the next checkpoint removes the rest)."""
        rows = await self.db.run(store.fold_wal)
        return bool(rows) and rows[0][0] == 0
