"""The PostgreSQL store's schema: its migrations applied to a server's database."""

from __future__ import annotations

from strata_daemon.store import migrate
from strata_daemon.store.postgres import migrations as _package

MIGRATIONS = migrate.found(_package)


def apply(conn) -> list[int]:
    """The migrations the database lacks, applied; several daemons starting at once apply each once."""
    return migrate.migrate(conn, MIGRATIONS, MIGRATIONS)
