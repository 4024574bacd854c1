"""Which store a home keeps its memories in: its own SQLite file, or the PostgreSQL database
`store.url` (or STRATA_DATABASE_URL) names. Both are the same Database to everything above."""

from __future__ import annotations

import os
from pathlib import Path

from strata_daemon.errors import ConfigError
from strata_daemon.store.db import Database

ENV_VAR = "STRATA_DATABASE_URL"
SCHEMES = ("postgresql://", "postgres://")


def url_of(configured: str) -> str | None:
    """The store's URL: STRATA_DATABASE_URL, else the setting; None for the home's SQLite file."""
    url = os.environ.get(ENV_VAR) or configured or None
    if url is not None and not url.startswith(SCHEMES):
        raise ConfigError(f"{ENV_VAR if os.environ.get(ENV_VAR) else 'store.url'} must be a postgresql:// URL",
                          hint="leave it empty to keep the memories in the home's own SQLite file")
    return url


async def open_database(path: Path, url: str | None, *, read_only: str | None = None) -> Database:
    """The home's SQLite file at PATH, or the PostgreSQL database at URL; migrated unless read only."""
    if url is None:
        return await Database.open(path, read_only=read_only)
    from strata_daemon.store.postgres.database import PostgresDatabase

    return await PostgresDatabase.open(url, read_only=read_only)
