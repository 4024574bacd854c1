"""`strata bench scale`: every layer measured per size, each size in its own process, with the
flat baselines from the same run; and the pure helpers it scores the vector stage with."""

from __future__ import annotations

import json
import numbers

import numpy as np
import pytest

from strata_bench.scale import flat_top, recall_at_k
from strata_bench.sizes import ROWS, field


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def test_flat_top_is_exact_and_ordered():
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((500, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    v = matrix[42]
    top = flat_top(matrix, v, 10)
    sims = matrix @ v
    assert top[0] == 42 and list(top) == list(np.argsort(-sims)[:10])


def test_recall_at_k_counts_the_exact_hits_and_ties():
    ids = np.array([10, 20, 30, 40], dtype=np.int64)
    matrix = np.array([[1, 0], [1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)  # 10 and 20 are the same vector
    v = np.array([1, 0], dtype=np.float32)
    exact = flat_top(matrix, v, 2)
    assert recall_at_k([10, 20], exact, ids, matrix, v) == 1.0
    assert recall_at_k([10, 30], exact, ids, matrix, v) == 0.5
    assert recall_at_k([30, 40], exact, ids, matrix, v) == 0.0
    one = flat_top(matrix, v, 1)  # either twin is a right answer
    assert recall_at_k([20], one, ids, matrix, v) == recall_at_k([10], one, ids, matrix, v) == 1.0


@pytest.mark.slow
def test_bench_scale_measures_every_layer_per_size(cli, tmp_path):
    out = tmp_path / "out"
    r = cli.json("bench", "scale", "--n", "300,500", "--queries", "5", "--idle-seconds", "2", "--out", str(out),
                 timeout=600)
    assert r["benchmark"] == "scale" and [s["n"] for s in r["sizes"]] == [300, 500]
    for s in r["sizes"]:
        for key in ("ingest_per_s", "embed_per_s", "balanced_p95_ms", "deep_p95_ms", "fast_p95_ms",
                    "fact_get_p95_ms", "fact_set_p95_ms", "spread_p95_ms", "decay_edges_s", "db_bytes_per_1000",
                    "peak_rss_mb", "daemon_idle_rss_mb"):
            assert _number(s[key]) and s[key] > 0, key
        for mode in ("fast", "balanced", "deep"):
            assert s[f"{mode}_p50_ms"] <= s[f"{mode}_p95_ms"] <= s[f"{mode}_p99_ms"]
        # below the in-memory copy's exact threshold the vector stage is exact search
        assert s["vector_recall_at_10"] == 1.0 and 0.9 * s["n"] < s["vectors"] <= s["n"]
        assert s["decay_edges"] == s["n"] and s["edges_after_decay"] > 0
        assert set(s["phases"]) == {"fold_s", "decay_s", "consolidate_s", "dossiers_s", "capsule_s", "backup_s"}
        assert all(_number(v) and v >= 0 for v in s["phases"].values())
        flat, bm25 = s["baselines"]["flat_vector"], s["baselines"]["bm25"]
        assert flat["p95_ms"] > 0 and bm25["p95_ms"] > 0
        assert s["balanced_to_flat_vector_p95"] == round(s["balanced_p95_ms"] / flat["p95_ms"], 3)
        assert s["corpus_cached"] is False and s["embed_seconds"] > 0
    assert json.loads((out / "scale.json").read_text(encoding="utf-8")) == r
    table = (out / "scale.md").read_text(encoding="utf-8").splitlines()
    assert table[0] == "| | 300 | 500 |" and len(table) == 2 + len(ROWS)
    assert all(field(r["sizes"][0], key) is not None for key, _ in ROWS)


def test_bench_scale_refuses_bad_sizes(cli):
    for bad in ("ten", "10", "100,abc", "99999999"):
        proc = cli("bench", "scale", "--n", bad)
        assert proc.returncode == 4 and ("--n" in proc.err or "size" in proc.err), (bad, proc.err)
