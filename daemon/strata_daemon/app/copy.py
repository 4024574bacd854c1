"""`strata store copy`: a home's store copied into another, either way between its SQLite file
and a PostgreSQL database, then checked table by table (store/copying.py). A copy cut short
is run again: what it wrote is kept, and the rest follows."""

from __future__ import annotations

import asyncio

from strata_daemon.store import copying


async def copy(home, url: str | None, target: str, progress=None) -> dict:
    return await asyncio.to_thread(copying.copy_home, home.db_path, str(home.root), url, target, progress)
