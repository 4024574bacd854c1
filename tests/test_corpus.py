"""The synthetic benchmark corpus must be reproducible, well-formed and shaped like agent history."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from strata_bench.corpus import KINDS, observations, queries

START = 1_767_225_600.0
SPAN_DAYS = 180.0
FIELDS = {"content": str, "kind": str, "importance": float, "event_at": float,
          "source": str, "session": str, "context": dict}
CONTEXT_KEYS = {"environment", "task_type", "goal", "host"}


@pytest.fixture(scope="module")
def corpus_20k() -> list[dict]:
    return list(observations(20_000, seed=7))


def test_same_arguments_give_identical_output() -> None:
    assert list(observations(3000, seed=3)) == list(observations(3000, seed=3))
    assert queries(200, seed=3) == queries(200, seed=3)


def test_different_seed_gives_different_output() -> None:
    a = [o["content"] for o in observations(500, seed=1)]
    b = [o["content"] for o in observations(500, seed=2)]
    assert a != b
    assert len(set(a) & set(b)) < 50
    assert queries(100, seed=1) != queries(100, seed=2)


def test_output_does_not_depend_on_hash_seed() -> None:
    root = Path(__file__).resolve().parents[1]
    code = ("import hashlib, json; from strata_bench.corpus import observations, queries; "
            "print(hashlib.sha256(json.dumps([list(observations(400, seed=5)), queries(50, seed=5)], "
            "sort_keys=True).encode()).hexdigest())")
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True,
                             check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


@pytest.mark.parametrize("n", [0, 1, 2, 17, 1000, 4321])
def test_count_is_exact(n: int) -> None:
    assert sum(1 for _ in observations(n, seed=11)) == n


def test_is_a_lazy_stream() -> None:
    # A billion items would never finish if the generator built them up front.
    first = list(itertools.islice(observations(10**9, seed=1), 5))
    assert len(first) == 5
    assert all(first[i]["event_at"] <= first[i + 1]["event_at"] for i in range(4))


def _check_times(times: list[float], start: float, span_days: float) -> None:
    assert all(a <= b for a, b in zip(times, times[1:]))
    assert start <= times[0] and times[-1] <= start + span_days * 86400
    if len(times) >= 300 and span_days > 1:  # spread across the span, not bunched at its start
        assert times[-1] - times[0] > 0.8 * span_days * 86400


def test_event_times_are_ordered_and_inside_the_default_span(corpus_20k: list[dict]) -> None:
    _check_times([o["event_at"] for o in corpus_20k], START, SPAN_DAYS)


@pytest.mark.parametrize("n,start,span_days", [(5000, 1_700_000_000.0, 3.0), (300, START, 365.0),
                                               (3000, 0.0, 0.01), (10_000, START, 0.1)])
def test_event_times_are_ordered_and_inside_the_span(n: int, start: float, span_days: float) -> None:
    _check_times([o["event_at"] for o in observations(n, seed=4, start=start, span_days=span_days)], start, span_days)


def test_fields_types_and_ranges(corpus_20k: list[dict]) -> None:
    for o in corpus_20k:
        assert set(o) == set(FIELDS)
        for key, typ in FIELDS.items():
            assert type(o[key]) is typ, (key, o)
        assert o["kind"] in KINDS
        assert 0.0 <= o["importance"] <= 1.0 and round(o["importance"], 2) == o["importance"]
        assert o["content"].strip() and o["source"] and o["session"]
        assert set(o["context"]) <= CONTEXT_KEYS
        assert all(isinstance(v, str) and v for v in o["context"].values())
    sources = Counter(o["source"] for o in corpus_20k)
    assert {"loop", "email", "monitor", "shell", "person"} <= set(sources)
    assert sum(1 for o in corpus_20k if o["context"]) > 0.8 * len(corpus_20k)


def test_kinds_all_present_and_plausibly_weighted() -> None:
    kinds = Counter(o["kind"] for o in observations(5000, seed=9))
    assert set(kinds) == set(KINDS)
    common = kinds["observation"] + kinds["event"]
    assert common > 0.5 * 5000
    assert min(kinds["observation"], kinds["event"]) > max(kinds["decision"], kinds["lesson"], kinds["note"])


def test_importance_is_higher_for_lessons_and_decisions(corpus_20k: list[dict]) -> None:
    by_kind: dict[str, list[float]] = {}
    for o in corpus_20k:
        by_kind.setdefault(o["kind"], []).append(o["importance"])
    mean = {k: sum(v) / len(v) for k, v in by_kind.items()}
    assert mean["lesson"] > mean["observation"] and mean["decision"] > mean["observation"]
    assert mean["lesson"] > mean["note"] and mean["decision"] > mean["note"]


def test_repeats_are_rare_and_close_to_their_original(corpus_20k: list[dict]) -> None:
    first_seen: dict[str, float] = {}
    repeats = 0
    for o in corpus_20k:
        content, at = o["content"], o["event_at"]
        if content in first_seen:
            repeats += 1
            assert 60.0 <= at - first_seen[content] <= 300.0, o
        else:
            first_seen[content] = at
    assert 0.002 <= repeats / len(corpus_20k) <= 0.01


def test_repeats_copy_the_whole_observation(corpus_20k: list[dict]) -> None:
    originals: dict[str, dict] = {}
    checked = 0
    for o in corpus_20k:
        prev = originals.setdefault(o["content"], o)
        if prev is not o:
            assert (o["kind"], o["importance"], o["source"]) == (prev["kind"], prev["importance"], prev["source"])
            checked += 1
    assert checked


def test_sessions_run_for_a_while(corpus_20k: list[dict]) -> None:
    runs = [len(list(g)) for _, g in itertools.groupby(o["session"] for o in corpus_20k)]
    assert len(runs) == len({o["session"] for o in corpus_20k}), "a session id came back after it ended"
    assert all(20 <= r <= 200 for r in runs[:-1])
    assert 1 <= runs[-1] <= 200


def test_content_lengths_vary(corpus_20k: list[dict]) -> None:
    lengths = sorted(len(o["content"]) for o in corpus_20k)
    median = lengths[len(lengths) // 2]
    assert lengths[0] >= 20 and 45 <= median <= 200
    assert lengths[int(0.99 * len(lengths))] >= 300
    assert any(n > 600 for n in lengths) and sum(n > 600 for n in lengths) < 0.02 * len(lengths)


def test_status_lines_flip_over_time(corpus_20k: list[dict]) -> None:
    bridge = [o["content"] for o in corpus_20k if o["content"].startswith("Bridge")]
    assert any(": UP (" in c for c in bridge) and any(": DOWN (" in c for c in bridge)
    transitions = sum(1 for a, b in zip(bridge, bridge[1:]) if ("UP" in a) != ("UP" in b))
    assert transitions >= 5


def test_tasks_open_and_close(corpus_20k: list[dict]) -> None:
    texts = dict.fromkeys(o["content"] for o in corpus_20k if o["kind"] == "task")  # ordered, repeats dropped
    task_id = re.compile(r"T-\d+")
    opened = {task_id.search(c).group() for c in texts if c.startswith(("TODO T-", "New task T-"))}
    closed = [task_id.search(c).group() for c in texts if c.startswith(("Done T-", "Closed T-"))]
    assert opened and closed
    assert len(closed) == len(set(closed)), "a task was closed twice"
    assert set(closed) <= opened


def test_queries_deterministic_nonempty_and_varied() -> None:
    qs = queries(300, seed=0)
    assert qs == queries(300, seed=0) and qs != queries(300, seed=1)
    assert len(qs) == 300 and queries(0) == []
    assert all(isinstance(q, str) and q.strip() for q in qs)
    assert len(set(qs)) > 150
    assert any('"' in q for q in qs) and any("?" in q for q in qs)
    assert any(op in q for q in qs for op in (" OR ", " AND ", ">", " -"))
    assert any(q.endswith("?") and " " in q for q in qs), "expected natural-language questions"


def test_queries_share_vocabulary_with_observations(corpus_20k: list[dict]) -> None:
    text = " ".join(o["content"] for o in corpus_20k[:5000]).lower()
    hits = sum(1 for q in queries(100, seed=2) if any(w in text for w in q.lower().split() if len(w) > 4))
    assert hits > 80
