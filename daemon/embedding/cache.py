"""A namespace's vectors as one in-memory matrix, for nearest-neighbour search in a few
milliseconds where sqlite-vec's brute-force scan of the same vectors takes about a hundred.

SQLite stays the only source of truth; the matrix is a copy that a long-lived process
(the daemon, an API server, a benchmark) keeps in step cheaply:
- every stored batch of vectors carries a new sequence number in `episodes.embedded`, so
  the copy fetches only rows numbered above the highest it holds;
- purging a vector or resetting the index bumps `vector_epoch` in `meta`, and a copy from
  another epoch (or another model) is reloaded.
`sync` reads through a connection (the database thread); `search` is plain numpy and runs
on any thread, so it can overlap the full-text search.
"""

from __future__ import annotations

import threading

import numpy as np

from .index import TABLE, indexed


def _state(conn, agent: str) -> tuple:
    return conn.execute(
        "SELECT (SELECT value FROM meta WHERE key = 'vector_epoch'), "
        "(SELECT max(embedded) FROM episodes WHERE agent = ?)", (agent,)).fetchone()


class VectorCache:
    def __init__(self, agent: str):
        self.agent = agent
        self._lock = threading.Lock()
        self._clear(None, None)

    def _clear(self, model, epoch) -> None:
        self.model, self.epoch, self.seq = model, epoch, 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, model.dim if model else 0), dtype=np.float32)
        self._size = 0
        self._pos: dict[int, int] = {}

    def __len__(self) -> int:
        return self._size

    def sync(self, conn) -> None:
        """Catch up with the database (on the database thread)."""
        model = indexed(conn)
        epoch, newest = _state(conn, self.agent)
        with self._lock:
            if model is None:
                self._clear(None, epoch)
                return
            if (model, epoch) != (self.model, self.epoch):
                self._clear(model, epoch)
                rows = conn.execute(f"SELECT rowid, embedding FROM {TABLE} WHERE agent = ?", (self.agent,))
                self.seq = newest or 0
            elif (newest or 0) > self.seq:
                rows = conn.execute(
                    f"SELECT e.id, v.embedding FROM episodes e JOIN {TABLE} v ON v.rowid = e.id "
                    "WHERE e.agent = ? AND e.embedded > ?", (self.agent, self.seq))
                self.seq = newest
            else:
                return
            self._add(rows.fetchall())

    def _add(self, rows: list) -> None:
        if not rows:
            return
        dim = self.model.dim
        fresh = [(i, v) for i, v in rows if i not in self._pos]
        for i, v in rows:
            if i in self._pos:  # re-embedded in place
                self._matrix[self._pos[i]] = np.frombuffer(v, dtype=np.float32)
        need = self._size + len(fresh)
        if need > len(self._ids):
            capacity = max(need, 2 * len(self._ids), 1024)
            ids = np.zeros(capacity, dtype=np.int64)
            matrix = np.zeros((capacity, dim), dtype=np.float32)
            ids[:self._size] = self._ids[:self._size]
            matrix[:self._size] = self._matrix[:self._size]
            self._ids, self._matrix = ids, matrix
        for offset, (i, v) in enumerate(fresh, self._size):
            self._ids[offset] = i
            self._matrix[offset] = np.frombuffer(v, dtype=np.float32)
            self._pos[i] = offset
        self._size = need

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k nearest: (episode id, cosine distance), nearest first. Vectors are normalised,
        so cosine similarity is a dot product."""
        with self._lock:
            if self._size == 0:
                return []
            scores = self._matrix[:self._size] @ vector.astype(np.float32)
            ids = self._ids[:self._size]
            if k < self._size:
                top = np.argpartition(-scores, k - 1)[:k]
            else:
                top = np.arange(self._size)
            top = top[np.lexsort((ids[top], -scores[top]))]
            return [(int(ids[t]), float(1.0 - scores[t])) for t in top]
