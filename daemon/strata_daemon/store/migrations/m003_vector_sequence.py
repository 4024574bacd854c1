"""Migration 3: vector sequence."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "vector sequence"


def up(conn) -> None:
    # `embedded` becomes the sequence number of the batch that stored the vector (0: none yet),
    # so an in-memory copy of a namespace's vectors can fetch just what is new
    # (strata_daemon/embedding/cache.py); `vector_epoch` changes when vectors are removed.
    run_script(conn, """
CREATE INDEX episodes_embedded_seq ON episodes(agent, embedded);
INSERT OR REPLACE INTO meta (key, value) SELECT 'vector_seq', coalesce(max(embedded), 0) FROM episodes;
INSERT OR REPLACE INTO meta (key, value) VALUES ('vector_epoch', '0');
""")
