"""Pairs of memories whose vectors are close, for merging and association. Pure numpy.

Vectors are unit length, so cosine similarity is a dot product. The search runs in blocks
of rows against the whole matrix (one BLAS product per block), keeping only the pairs above
the threshold (and, when asked, only each row's strongest few), so memory stays at block x n
floats however many memories there are and however alike they are."""

from __future__ import annotations

from typing import Callable

import numpy as np

BLOCK = 1024
CELLS = 4_000_000  # a block's similarities at most (16 MB, and 32 MB of positions when capped)


def _block(n: int) -> int:
    """Rows per block: fewer as the matrix widens, so a block's products stay within CELLS."""
    return max(16, min(BLOCK, CELLS // max(n, 1)))


def _hits(sims: np.ndarray, threshold: float, per_row: int | None) -> tuple[list[int], list[int]]:
    """(row, column) of the cells >= threshold; with `per_row`, only each row's strongest
    `per_row`: a home of thousands of identical lines has millions of close pairs, and merging
    and association need only each memory's closest few."""
    if per_row is None or per_row >= sims.shape[1]:
        r, c = np.nonzero(sims >= threshold)
        return r.tolist(), c.tolist()
    cut = sims.shape[1] - per_row
    top = np.argpartition(sims, cut, axis=1)[:, cut:]
    keep = np.take_along_axis(sims, top, axis=1) >= threshold
    r, k = np.nonzero(keep)
    return r.tolist(), top[r, k].tolist()


def close_pairs(matrix: np.ndarray, threshold: float, *, rows: np.ndarray | None = None,
                per_row: int | None = None, between: Callable[[], None] | None = None
                ) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j, cosine >= threshold, positions into `matrix`; only pairs with at
    least one end in `rows` (default: all), so a nightly run compares the new against all. With
    `per_row`, each row keeps at most its `per_row` strongest partners (all against all: among
    the rows after it), so the pairs stay at most n x per_row whatever the home holds.
    `between` is called after each block (a stop request raises there)."""
    n = len(matrix)
    found: list[tuple[int, int, float]] = []
    step = _block(n)
    if rows is None:  # all against all: each block against itself and what follows, half the products
        for start in range(0, n, step):
            sims = matrix[start:start + step] @ matrix[start:].T
            size = sims.shape[0]
            sims[:, :size][np.tril_indices(size)] = -2.0  # below any cosine: a pair once, never with itself
            hit_r, hit_c = _hits(sims, threshold, per_row)
            found += [(start + r, start + c, float(sims[r, c])) for r, c in zip(hit_r, hit_c)]
            if between:
                between()
        return found
    todo = np.asarray(rows, dtype=np.int64)
    pairs: dict[tuple[int, int], float] = {}  # each pair once, though both its ends may be new
    for start in range(0, len(todo), step):
        block = todo[start:start + step]
        sims = matrix[block] @ matrix.T
        sims[np.arange(len(block)), block] = -2.0  # never with itself
        hit_r, hit_c = _hits(sims, threshold, per_row)
        for r, c in zip(hit_r, hit_c):
            i = int(block[r])
            pairs[(min(i, c), max(i, c))] = float(sims[r, c])
        if between:
            between()
    return [(i, j, cos) for (i, j), cos in pairs.items()]


def components(n: int, pairs: list[tuple[int, int, float]]) -> list[list[int]]:
    """Connected groups (of two or more) of positions joined by the pairs (union-find)."""
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j, _ in pairs:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    out: dict[int, list[int]] = {}
    for i, j, _ in pairs:
        for x in (i, j):
            out.setdefault(root(x), [])
    for x in {p for i, j, _ in pairs for p in (i, j)}:
        out[root(x)].append(x)
    return [sorted(g) for g in out.values() if len(g) > 1]


def strongest(pairs: list[tuple[int, int, float]], per_item: int) -> list[tuple[int, int, float]]:
    """The pairs kept when each item keeps at most `per_item` partners, strongest first."""
    count: dict[int, int] = {}
    kept = []
    for i, j, s in sorted(pairs, key=lambda p: (-p[2], p[0], p[1])):
        if count.get(i, 0) < per_item and count.get(j, 0) < per_item:
            kept.append((i, j, s))
            count[i] = count.get(i, 0) + 1
            count[j] = count.get(j, 0) + 1
    return kept
