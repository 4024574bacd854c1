"""Embedding the memories that wait for a vector, in short transactions: safe to interrupt,
what is stored stays and the rest waits in the backlog."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from strata_daemon.base import stopping
from strata_daemon.store import vectors
from strata_daemon.store.db import Database

# Memories waiting for a vector are read this many at a time and embedded shortest first, so
# the embedder's groups hold texts of about one length and pad little: 98 texts/s on the
# million-memory corpus's texts, against 62 when each batch of 64 was sorted only within
# itself (`bench embed`: 102 against 89), and the same vectors.
EMBED_WINDOW = 2048
EMBED_BATCH = 256  # texts per embedder call and per stored transaction


async def embed_waiting(db: Database, emb: Any, spec: vectors.Spec, *, agent: str | None, batch: int = EMBED_BATCH,
                        limit: int | None = None, progress: Callable[[int], None] | None = None) -> int:
    """Embed up to `limit` waiting memories (of `agent` only, when given); how many were. A
    batch is stored on the database thread while the next one is embedded."""
    async def next_window(after: int, done: int) -> list:
        size = EMBED_WINDOW if limit is None else min(EMBED_WINDOW, limit - done)
        rows = await db.run(vectors.pending, size, after, agent) if size > 0 else []
        return sorted(((r[0], r[1], vectors.document(r[2], r[3], spec.text)) for r in rows), key=lambda r: len(r[2]))

    done, storing = 0, None
    window = await next_window(0, 0)
    try:
        while window:
            for start in range(0, len(window), batch):
                stopping.check()
                rows = window[start:start + batch]
                found = await asyncio.to_thread(emb.embed, [r[2] for r in rows])
                if storing is not None:
                    await storing
                done += len(rows)
                storing = asyncio.ensure_future(
                    db.transact(vectors.store, [(r[0], r[1], v) for r, v in zip(rows, found)], upkeep=True))
                if progress:
                    progress(len(rows))
            window = await next_window(max(r[0] for r in window), done)
    finally:
        if storing is not None:
            await storing
    return done
