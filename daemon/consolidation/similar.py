"""Pairs of memories whose vectors are close, for merging and association. Pure numpy.

Vectors are unit length, so cosine similarity is a dot product. The search runs in blocks
of rows against the whole matrix (one BLAS product per block), keeping only the pairs above
the threshold, so memory stays at block x n floats however many memories there are."""

from __future__ import annotations

import numpy as np

BLOCK = 1024


def close_pairs(matrix: np.ndarray, threshold: float, *, rows: np.ndarray | None = None
                ) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j, cosine >= threshold, positions into `matrix`; only pairs with at
    least one end in `rows` (default: all), so a nightly run compares the new against all."""
    n = len(matrix)
    found: list[tuple[int, int, float]] = []
    if rows is None:  # all against all: each block against itself and what follows, half the products
        for start in range(0, n, BLOCK):
            sims = matrix[start:start + BLOCK] @ matrix[start:].T
            size = sims.shape[0]
            sims[:, :size][np.tril_indices(size)] = -2.0  # below any cosine: a pair once, never with itself
            hit_r, hit_c = np.nonzero(sims >= threshold)
            found += [(start + r, start + c, float(sims[r, c])) for r, c in zip(hit_r.tolist(), hit_c.tolist())]
        return found
    todo = np.asarray(rows, dtype=np.int64)
    in_rows = np.zeros(n, dtype=bool)
    in_rows[todo] = True
    for start in range(0, len(todo), BLOCK):
        block = todo[start:start + BLOCK]
        sims = matrix[block] @ matrix.T
        hit_r, hit_c = np.nonzero(sims >= threshold)
        for r, c in zip(hit_r.tolist(), hit_c.tolist()):
            i, j = int(block[r]), c
            # Each pair once: from its lower end when both are new, else from its new end.
            if i == j or (in_rows[j] and j < i):
                continue
            found.append((min(i, j), max(i, j), float(sims[r, c])))
    return found


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
