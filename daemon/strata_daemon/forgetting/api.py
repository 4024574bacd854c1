"""The forgetting layer of a Memory: `mem.purge_plan(...)`, and the purges `mem.forget*` run.

A purge is one transaction (strata_daemon/forgetting/purge.py) taken under the capsule's render
lock, so the capsule file and its kept renders lose the same lines as the renders stored in
the database before any render can compare them. After it: the WAL is folded into the file
and truncated (the words leave the disk), dossiers whose current version lost a line are
written again from what is left, and the capsule is rendered again.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time

from strata_daemon.base import timeutil
from strata_daemon.base.text import require_text
from strata_daemon.base.wording import quoted
from strata_daemon.errors import InvalidInput, StrataError
from strata_daemon.forgetting import backups, folding, purge as purging
from strata_daemon.forgetting.redaction import redact_lines
from strata_daemon.store import copies, erase, purge as store
from strata_daemon.store.db import Database
from strata_daemon.store.postgres import dumps

log = logging.getLogger("strata.forgetting")

MIN_MATCH_CHARS = 3
_SEPARATORS = re.compile(r"[\s_.\-:/]+")  # what key and topic names fold: a name is its letters and digits
MAX_MATCHES = 1000


class Forgetting:
    def __init__(self, db: Database, agent: str, actor: str, home, capsule, dossiers):
        self.db, self.agent, self.actor, self.home = db, agent, actor, home
        self.capsule, self.dossiers = capsule, dossiers

    @property
    def backups_dir(self):
        return self.home.state_dir / "backups"

    async def plan(self, **asked) -> dict:
        """What a purge of what ASKED names (purging.Asked's fields: ids, keys, whole, topics,
        entities, texts) would take with it; changes nothing."""
        return await self.db.run(purging.plan, self.agent, purging.Asked.of(**asked))

    async def matching(self, text: str) -> dict:
        """What holds TEXT (any case, any accents) wherever the namespace keeps words: memories by
        their text, source, session or context; facts by a value or a value's source (their
        values go) or by their key or label (they go whole); dossier topics by name or query;
        entities by value. What `forget --matching` offers to forget: `asked` (what to pass to
        `plan` and `purge`), with each spelling of TEXT found (`spellings`)."""
        require_text(str(text), "the text to match")
        text = " ".join(str(text).split())
        if len(text) < MIN_MATCH_CHARS:
            raise InvalidInput(f"give at least {MIN_MATCH_CHARS} characters to match",
                               hint="a shorter text would match nearly every memory")
        asked, said = await self.db.run(_matching, self.agent, text)
        if len(asked.ids) > MAX_MATCHES:
            raise InvalidInput(f"more than {MAX_MATCHES} memories hold {quoted(text)}",
                               hint="name a longer, more particular text")
        asked.texts = sorted({text, *said})  # "MÜLLER" asked, "Müller" stored
        return {"text": text, "asked": asked.as_dict(), "spellings": sorted(said)}

    async def purge(self, **asked) -> dict:
        """Remove what ASKED names (as for `plan`) from every layer, for good. `elapsed_ms` has
        `removed` (until the words are out of the database, its WAL and the capsule files) and
        `regenerated` (dossiers and the capsule written again from what is left)."""
        started = time.perf_counter()
        now = timeutil.now()
        async with self.capsule.locked():
            what = purging.Asked.of(**asked)
            result = await self.db.transact(lambda c: purging.purge(c, self.agent, what, actor=self.actor, now=now))
            purged = result.pop("_purged")
            result["capsule_lines_redacted"] += await asyncio.to_thread(self.capsule.redact_files,
                                                                        lambda t: redact_lines(t, purged))
        result["wal_cleared"], result["heap_cleared"] = await self._fold_wal(result.pop("_rewritten"))
        result["store"] = self.db.dialect  # what keeps a log of the old pages, and until when, differs
        removed = time.perf_counter()
        result["dossiers_rewritten"] = await self._after(result.pop("_topics"))
        # A dead backup's partial copy holds the words too, and no listing names it: gone with them.
        await asyncio.to_thread(copies.sweep, self.backups_dir)
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
            await asyncio.to_thread(copies.sweep, self.backups_dir)
            for path in found:
                dumps.remove(path)
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

    async def _fold_wal(self, rewritten: list[str]) -> tuple[bool, bool]:
        """(wal cleared, heap cleared): store/erase.py's fold_wal of the tables REWRITTEN."""
        cleared, barred = await self.db.run(erase.fold_wal, rewritten)
        if barred:
            log.warning("purge: the role may not rewrite %s, whose files keep the purged rows' bytes until the "
                        "table's owner runs VACUUM FULL on it (docs/forgetting.md)", ", ".join(barred))
        return cleared, not barred


def _found(text: str, *fields) -> set[str]:
    out: set[str] = set()
    for f in fields:
        if f:
            out |= folding.spellings(text, f)
    return out


def _named(text: str, *names) -> set[str]:
    """TEXT found in NAMES as said, or with the separators a kept name folds aside: keys and
    topic names change only case and separators (`SECRET-ZEBRA-7741` is the topic
    `secret_zebra_7741` and the key `secret zebra-7741`), so a name whose letters and digits hold
    the text's is found, whole."""
    found = _found(text, *names)
    want = _squeezed(text)
    return found | {n for n in names if n and len(want) >= MIN_MATCH_CHARS and want in _squeezed(n)}


def _squeezed(text: str) -> str:
    return _SEPARATORS.sub("", folding.fold(text))


def _matching(conn, agent: str, text: str) -> tuple[purging.Asked, set[str]]:
    """Compared in Python: SQLite's lower() leaves "Ü" and accents alone."""
    asked, said = purging.Asked(), set()
    for row in store.memory_texts(conn, agent):
        found = _found(text, *row[1:])
        if found:
            asked.ids.append(row[0])
            said |= found
            if len(asked.ids) > MAX_MATCHES:
                return asked, said
    for key, label, value, source in store.fact_texts(conn, agent):
        named, held = _named(text, key, label), _found(text, value, source)
        said |= named | held
        if named and key not in asked.whole:
            asked.whole.append(key)
        elif held and key not in asked.keys:
            asked.keys.append(key)
    asked.keys = [k for k in asked.keys if k not in asked.whole]
    for topic, query in store.topic_texts(conn, agent):
        found = _named(text, topic) | _found(text, query)
        if found:
            asked.topics.append(topic)
            said |= found
    for etype, value in store.entity_texts(conn, agent):
        found = _found(text, value)
        if found:
            asked.entities.append((etype, value))
            said |= found
    return asked, said
