"""Vectors in sqlite-vec, one row per episode, partitioned by namespace; on PostgreSQL, in a
table of pgvector's `vector` with an HNSW index for cosine distance, read back as the same bytes
(store/postgres/connection.py).

The table is made for the model's dimension on first use, and the model's name, dimension and
what of a memory is embedded are recorded in `meta`; anything different needs `strata reindex`. Functions
here take a raw connection and run inside Database.run / Database.transact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from strata_daemon.errors import ConfigError, EmbeddingUnavailable
from strata_daemon.store.dialect import on_postgres

if TYPE_CHECKING:  # numpy is loaded by the functions that need it: storing a memory does not
    import numpy as np

TABLE = "episode_vectors"


TEXTS = ("content", "source: content")  # what of a memory is embedded (embedding.with_source)


@dataclass(frozen=True)
class Spec:
    """What the vectors of an index are: vectors of different specs never mix."""
    model: str
    dim: int
    text: str  # one of TEXTS

    def describe(self) -> str:
        return f"{self.model} ({self.dim}-d, embedding {self.text})"


def document(content: str, source: str | None, text: str) -> str:
    """The text embedded for a memory: with its source first when the spec says so, so that who
    said something is part of what it means ("Caroline: I went to the support group")."""
    return f"{source}: {content}" if text == "source: content" and source else content


def indexed(conn) -> Spec | None:
    rows = dict(conn.execute(
        "SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim', 'embedding_text')"))
    if "embedding_model" not in rows:
        return None
    return Spec(rows["embedding_model"], int(rows["embedding_dim"]), rows.get("embedding_text", "content"))


def check(conn, spec: Spec) -> bool:
    """True when the index exists for this spec, False when there is none yet; raises when it
    was built otherwise."""
    current = indexed(conn)
    if current is not None and current != spec:
        raise EmbeddingUnavailable(
            f"the database is indexed with {current.describe()} but {spec.describe()} is configured",
            hint="run `strata reindex` to embed every memory again")
    return current is not None


def _owned(conn) -> bool:
    """On PostgreSQL, whether this login owns the vectors' table (is not a role bound to a namespace)."""
    return conn.execute(f"SELECT pg_has_role(tableowner, 'MEMBER') FROM pg_tables WHERE tablename = '{TABLE}'"
                        ).fetchone()[0]


def prepare(conn, spec: Spec) -> None:
    """Make sure the index exists for this spec (inside a write transaction)."""
    if check(conn, spec):
        return
    if on_postgres(conn):
        # The table is the schema's (migration 3: its `rowid` names the episode as sqlite-vec's
        # does, so every query of vectors reads both). Its HNSW index is for this dimension, made
        # by the tables' owner; a role bound to a namespace searches exactly without it.
        if _owned(conn):
            conn.execute(f"CREATE INDEX IF NOT EXISTS {TABLE}_hnsw_{spec.dim} ON {TABLE} "
                         f"USING hnsw ((embedding::vector({spec.dim})) vector_cosine_ops)")
    else:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING vec0("
                     f"agent TEXT PARTITION KEY, embedding FLOAT[{spec.dim}] distance_metric=cosine)")
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     [("embedding_model", spec.model), ("embedding_dim", str(spec.dim)),
                      ("embedding_text", spec.text)])


# Run whenever vectors are removed: in-memory copies (cache.py) then reload.
BUMP_EPOCH = ("INSERT INTO meta (key, value) VALUES ('vector_epoch', '1') "
              "ON CONFLICT(key) DO UPDATE SET value = CAST(meta.value AS INTEGER) + 1")


def reset(conn) -> int:
    """Forget every vector and the recorded model (inside a write transaction); returns the new backlog."""
    if on_postgres(conn):  # the table is the schema's; its rows and the index for the old dimension go
        if not _owned(conn):
            # The model is the store's, every namespace's vectors with it, and a bound role sees its own only.
            raise ConfigError("only the tables' owner may embed a shared store anew: the model is every "
                              "namespace's", hint="run `strata reindex` with the owner's URL in store.url "
                                                  "(docs/operations.md)")
        conn.execute(f"DELETE FROM {TABLE}")
        for (index,) in conn.execute(f"SELECT indexname FROM pg_indexes WHERE tablename = '{TABLE}' "
                                     f"AND indexname LIKE '{TABLE}_hnsw_%'").fetchall():
            conn.execute(f"DROP INDEX IF EXISTS {index}")
    else:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    conn.execute(BUMP_EPOCH)
    conn.execute("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim', 'embedding_text')")
    return conn.execute("UPDATE episodes SET embedded = 0").rowcount


def pending(conn, limit: int, after: int = 0, agent: str | None = None) -> list[tuple[int, str, str, str | None]]:
    """(id, namespace, content, source) of memories waiting for a vector, oldest first, above id
    `after`; of one namespace when `agent` is given."""
    if agent is None:
        return conn.execute("SELECT id, agent, content, source FROM episodes WHERE embedded = 0 AND id > ? "
                            "ORDER BY id LIMIT ?", (after, limit)).fetchall()
    return conn.execute("SELECT id, agent, content, source FROM episodes WHERE embedded = 0 AND id > ? AND agent = ? "
                        "ORDER BY id LIMIT ?", (after, agent, limit)).fetchall()


def store(conn, rows: list[tuple[int, str, np.ndarray]]) -> None:
    """Write vectors and mark their episodes embedded with the batch's sequence number (inside a
    write transaction). An episode purged, or embedded by another process, while its vector was
    being computed is skipped."""
    import numpy as np

    waiting = {r[0] for r in conn.execute(
        f"SELECT id FROM episodes WHERE embedded = 0 AND id IN ({', '.join('?' * len(rows))})", [r[0] for r in rows])}
    kept = [(eid, agent, vec.astype(np.float32).tobytes()) for eid, agent, vec in rows if eid in waiting]
    if on_postgres(conn):
        from strata_daemon.store.postgres.connection import vector_text

        conn.executemany(f"INSERT INTO {TABLE} (rowid, agent, embedding) VALUES (?, ?, ?::vector)",
                         [(eid, agent, vector_text(blob)) for eid, agent, blob in kept])
    else:
        conn.executemany(f"INSERT INTO {TABLE} (rowid, agent, embedding) VALUES (?, ?, ?)", kept)
    seq = conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_seq' "
                       "RETURNING CAST(value AS INTEGER)").fetchall()[0][0]
    conn.executemany("UPDATE episodes SET embedded = ? WHERE id = ?", [(seq, eid) for eid, _, _ in kept])


def backlog(conn, agent: str | None = None) -> int:
    if agent is None:
        return conn.execute("SELECT count(*) FROM episodes WHERE embedded = 0").fetchone()[0]
    return conn.execute("SELECT count(*) FROM episodes WHERE embedded = 0 AND agent = ?", (agent,)).fetchone()[0]


def vectors_of(conn, ids) -> dict[int, np.ndarray]:
    """The stored vectors of these episode ids (those embedded)."""
    import numpy as np

    ids = list(ids)
    if not ids or indexed(conn) is None:
        return {}
    found = {}
    for part in range(0, len(ids), 500):
        chunk = ids[part:part + 500]
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {TABLE} WHERE rowid IN "
                                        f"({', '.join('?' * len(chunk))})", chunk):
            found[rowid] = np.frombuffer(blob, dtype=np.float32)
    return found


def nearest(conn, agent: str, vector: np.ndarray, k: int, *, exact_below: int = 0) -> list[tuple[int, float]]:
    """The k nearest vectors of one namespace: (episode id, cosine distance). On PostgreSQL a
    namespace of fewer than `exact_below` memories is searched exactly, past the HNSW index."""
    import numpy as np

    if indexed(conn) is None:
        return []
    blob = vector.astype(np.float32).tobytes()
    if on_postgres(conn):
        from strata_daemon.store.postgres.connection import vector_text

        # Exact: the distance plus 0 is no index's ORDER BY. Else the HNSW index, scanning on
        # until k of the namespace are found.
        exact = conn.execute("SELECT episode_count < ? FROM namespaces WHERE agent = ?",
                             (exact_below, agent)).fetchone()
        dim = len(blob) // 4
        near = f"(embedding::vector({dim})) <=> ?::vector({dim})"
        order = f"({near}) + 0" if exact is None or exact[0] else near
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(f"SELECT rowid, {near} AS distance FROM {TABLE} WHERE agent = ? "
                            f"ORDER BY {order} LIMIT ?", (vector_text(blob), agent, vector_text(blob), k)).fetchall()
    else:
        rows = conn.execute(f"SELECT rowid, distance FROM {TABLE} WHERE embedding MATCH ? AND k = ? AND agent = ?",
                            (blob, k, agent)).fetchall()
    return [(r[0], r[1]) for r in rows]


def copy_state(conn, agent: str) -> tuple:
    """(vector epoch, the namespace's newest vector sequence number): what an in-memory copy of
    its vectors compares with what it holds."""
    return conn.execute(
        "SELECT (SELECT value FROM meta WHERE key = 'vector_epoch'), "
        "(SELECT max(embedded) FROM episodes WHERE agent = ?)", (agent,)).fetchone()


def all_vectors(conn, agent: str) -> list[tuple[int, bytes]]:
    """(episode id, vector bytes) of every vector of the namespace."""
    return conn.execute(f"SELECT rowid, embedding FROM {TABLE} WHERE agent = ?", (agent,)).fetchall()


def vectors_after(conn, agent: str, seq: int) -> list[tuple[int, bytes]]:
    """(episode id, vector bytes) of the namespace's vectors stored after sequence number `seq`."""
    return conn.execute(f"SELECT e.id, v.embedding FROM episodes e JOIN {TABLE} v ON v.rowid = e.id "
                        "WHERE e.agent = ? AND e.embedded > ?", (agent, seq)).fetchall()
