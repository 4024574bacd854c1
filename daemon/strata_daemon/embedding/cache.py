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

Up to `exact_below` vectors a search is one exact matrix-vector product. Above that the
product is bound by memory bandwidth (about 7 ms for 100k x 384 floats on this machine), so
the search first ranks every vector by the Hamming distance of its sign bits (centred on the
mean; 48 bytes a vector) and then scores the best `max(shortlist, n / 50)` exactly. On MiniLM
vectors of the benchmark corpus that keeps 99.8% of the exact top 50.
"""

from __future__ import annotations

import threading

import numpy as np

from strata_daemon.store import vectors as store


def cutoff(distance: np.ndarray, keep: int, *, sample_every: int = 16, steps: int = 4) -> int:
    """The smallest distance d such that at least `keep` distances are <= d (ties at the
    cut-off are all kept). Distances are small integers: a histogram of every 16th one guesses
    d and counting corrects it one unit at a time (a step or two on sign-bit distances; a
    guess further off falls back to the histogram of them all). At a million vectors this
    takes 0.5 ms where the full histogram takes 4."""
    sample = distance[::sample_every]
    d = int(np.searchsorted(np.cumsum(np.bincount(sample)), keep * len(sample) / len(distance)))
    for _ in range(steps):
        if np.count_nonzero(distance <= d) < keep:
            d += 1
        elif d > 0 and np.count_nonzero(distance < d) >= keep:
            d -= 1
        else:
            return d
    return int(np.searchsorted(np.cumsum(np.bincount(distance)), keep))


class VectorCache:
    def __init__(self, agent: str, *, exact_below: int = 20_000, shortlist: int = 2000):
        self.agent = agent
        self.exact_below = exact_below
        self.shortlist = shortlist
        self._lock = threading.Lock()
        self._clear(None, None)

    def _clear(self, model, epoch) -> None:
        self.model, self.epoch, self.seq = model, epoch, 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, model.dim if model else 0), dtype=np.float32)
        self._size = 0
        self._pos: dict[int, int] = {}
        self._mean: np.ndarray | None = None  # the centre of the sign bits, fixed when they are first made
        self._bits = np.zeros((0, 0), dtype=np.uint64)  # one row per 64 dimensions, one column per vector
        self._bits_done = 0

    def __len__(self) -> int:
        return self._size

    def sync(self, conn) -> None:
        """Catch up with the database (on the database thread)."""
        model = store.indexed(conn)
        epoch, newest = store.copy_state(conn, self.agent)
        with self._lock:
            if model is None:
                self._clear(None, epoch)
                return
            if (model, epoch) != (self.model, self.epoch):
                self._clear(model, epoch)
                rows = store.all_vectors(conn, self.agent)
                self.seq = newest or 0
            elif (newest or 0) > self.seq:
                rows = store.vectors_after(conn, self.agent, self.seq)
                self.seq = newest
            else:
                return
            self._add(rows)

    def _add(self, rows: list) -> None:
        if not rows:
            return
        dim = self.model.dim
        fresh = [(i, v) for i, v in rows if i not in self._pos]
        for i, v in rows:
            if i in self._pos:  # re-embedded in place
                self._matrix[self._pos[i]] = np.frombuffer(v, dtype=np.float32)
                self._bits_done = min(self._bits_done, self._pos[i])
        need = self._size + len(fresh)
        if need > len(self._ids):
            capacity = max(need, 2 * len(self._ids), 1024)
            ids = np.zeros(capacity, dtype=np.int64)
            matrix = np.zeros((capacity, dim), dtype=np.float32)
            ids[:self._size] = self._ids[:self._size]
            matrix[:self._size] = self._matrix[:self._size]
            self._ids, self._matrix = ids, matrix
        if fresh:  # one copy of the whole block: a million vectors load in seconds, not a quarter minute
            fresh_ids = [i for i, _ in fresh]
            self._ids[self._size:need] = fresh_ids
            self._matrix[self._size:need] = np.frombuffer(b"".join(v for _, v in fresh), dtype=np.float32
                                                          ).reshape(len(fresh), dim)
            self._pos.update(zip(fresh_ids, range(self._size, need)))
        self._size = need

    def _signs(self, rows: np.ndarray) -> np.ndarray:
        packed = np.packbits(rows > self._mean, axis=1)
        pad = (-packed.shape[1]) % 8
        if pad:
            packed = np.pad(packed, ((0, 0), (0, pad)))
        return np.ascontiguousarray(packed.view(np.uint64).T)

    def _update_bits(self) -> None:
        if self._mean is None:
            self._mean = self._matrix[:self._size].mean(axis=0)
        if self._bits.shape[1] < len(self._ids):
            grown = np.zeros((self._signs(self._matrix[:1]).shape[0], len(self._ids)), dtype=np.uint64)
            if self._bits_done:
                grown[:, :self._bits_done] = self._bits[:, :self._bits_done]
            self._bits = grown
        self._bits[:, self._bits_done:self._size] = self._signs(self._matrix[self._bits_done:self._size])
        self._bits_done = self._size

    def _shortlist(self, vector: np.ndarray) -> np.ndarray:
        """Positions of the vectors nearest by sign bits."""
        if self._bits_done < self._size:
            self._update_bits()
        query = self._signs(vector[None, :])[:, 0]
        distance = np.bitwise_count(self._bits[0, :self._size] ^ query[0]).astype(np.uint16)
        for word in range(1, len(query)):
            distance += np.bitwise_count(self._bits[word, :self._size] ^ query[word])
        keep = max(self.shortlist, self._size // 50)
        if keep >= self._size:
            return np.arange(self._size)
        return np.flatnonzero(distance <= cutoff(distance, keep))

    def vectors(self, ids) -> dict[int, np.ndarray]:
        """The vectors held for these episode ids (copies)."""
        with self._lock:
            return {i: self._matrix[self._pos[i]].copy() for i in ids if i in self._pos}

    def cosines(self, ids, vector: np.ndarray) -> dict[int, float]:
        """Each held id's cosine to `vector` (both normalised), in one matrix product: a named
        time can hold two thousand memories."""
        with self._lock:
            held = [i for i in ids if i in self._pos]
            if not held:
                return {}
            scores = self._matrix[[self._pos[i] for i in held]] @ vector.astype(np.float32)
        return dict(zip(held, scores.tolist()))

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k nearest: (episode id, cosine distance), nearest first. Vectors are normalised,
        so cosine similarity is a dot product."""
        vector = vector.astype(np.float32)
        with self._lock:
            if self._size == 0:
                return []
            if self._size > self.exact_below:
                positions = self._shortlist(vector)
                scores = self._matrix[positions] @ vector
            else:
                positions = np.arange(self._size)
                scores = self._matrix[:self._size] @ vector
            ids = self._ids[positions]
            top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
            top = top[np.lexsort((ids[top], -scores[top]))]
            return [(int(ids[t]), float(1.0 - scores[t])) for t in top]
