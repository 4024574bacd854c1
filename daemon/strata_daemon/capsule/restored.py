"""A capsule after its home's database was restored from a backup: its blocks as the restored
database last rendered them. The next render tells a person's edits from strata's lines by the
renders the database recorded; without this, the lines of everything the restore rolled back
(a fact, a recent memory) read as a person's edits and came back, credited to them. The file as
it was is kept first, beside the capsule's kept renders (a purge redacts it with them), so no
edit is lost."""

from __future__ import annotations

import asyncio
from strata_daemon.base.private import write_private
from strata_daemon.capsule import document, files
from strata_daemon.store import capsule as store

FOLDER = "before-restore"  # in a namespace's folder of kept renders


async def roll_back(capsule, stamp: str) -> str | None:
    """Put CAPSULE's blocks back as the database's newest render of them (empty where it holds
    none), keeping the file as it was (FOLDER/CAPSULE-STAMP.md); the kept copy's path, or None
    when the file is absent, broken (left for a person) or already so."""
    async with capsule.locked():
        text = await asyncio.to_thread(files.read, capsule.path)
        if text is None:
            return None
        doc = document.parse(text)
        if not doc.ok:
            return None
        renders = await capsule.db.run(lambda c: store.recent_renders(c, capsule.agent, 1))
        blocks = renders[0]["blocks"] if renders else {}
        rolled = document.splice(doc, {name: blocks.get(name, []) for name in doc.blocks})
        if rolled == text:
            return None
        folder = capsule.versions_dir / FOLDER
        await asyncio.to_thread(folder.mkdir, 0o700, True, True)
        copy = folder / f"CAPSULE-{stamp}.md"
        await asyncio.to_thread(write_private, copy, text)
        await asyncio.to_thread(files.overwrite, capsule.path, rolled)
        return str(copy)
