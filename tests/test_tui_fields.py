"""Details as a person reads them: local times with their age, yes/no, "—", key=value. Pure."""

from __future__ import annotations

import time

import pytest

from strata_daemon.faces.tui.fields import rows
from strata_daemon.faces.tui.format import explain, local_time, match, when

NOW = 1_795_000_000.0  # 2026-11-18 11:06:40 UTC


@pytest.fixture
def lisbon_winter(monkeypatch):
    """Local time an hour ahead of UTC, whatever the machine's zone."""
    monkeypatch.setenv("TZ", "XYZ-1")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_times_are_local_with_their_age(lisbon_winter):
    assert local_time(NOW - 3 * 3600, NOW) == "2026-11-18 09:06 (3 h ago)"
    assert when(NOW) == "2026-11-18 12:06" and when(None) == "-"  # tables too, not UTC beside local details
    assert local_time(NOW + 90, NOW) == "2026-11-18 12:08 (in 90 s)"


def test_a_record_reads_as_fields_and_values(lisbon_winter):
    record = {"id": 7, "content": "the [bold] backup\nruns at night", "event_at": NOW - 86400 * 12,
              "event_at_iso": "2026-11-06T11:06:40Z", "factual": True, "irrelevant": False, "source": None,
              "context": {"host": "web-01", "env": "prod"}, "importance": 0.123456, "ttl_seconds": 7200,
              "valid_to": None, "history": [{"at": NOW - 60, "action": "create", "data": '{"kind": "note"}',
                                             "actor": "cli"}], "tags": []}
    out = rows(record, NOW, first=("content",))
    assert out[0] == ("content", "the [bold] backup\nruns at night")  # whole, as written
    got = dict(out)
    assert got["event at"] == "2026-11-06 12:06 (12 days ago)" and "event at iso" not in got
    assert got["factual"] == "yes" and got["irrelevant"] == "no"
    assert got["source"] == "—" and got["valid to"] == "—" and got["tags"] == "—"
    assert got["context"] == "host=web-01, env=prod"
    assert got["importance"] == "0.1235" and got["ttl seconds"] == "2 h" and got["id"] == "7"
    assert got["history"] == "at=2026-11-18 12:05 (1 min ago), action=create, data=kind=note, actor=cli"


def test_a_hits_match_is_measured_and_relevance_is_labelled_relative_to_the_best():
    hit = {"score": 0.41, "match": 0.27, "kind": "note", "factual": False, "context": {"host": "gw"},
           "explain": {"signals": {"relevance": 1.0}, "retrievers": {}, "features": {},
                       "match": {"cosine": 0.27, "words": 0.1}}}
    assert match(hit) == "0.270 (meaning 0.270, words 0.100)"
    out = explain(hit, {"relevance": 0.5})
    assert ("score", "match", "0.270 (meaning 0.270, words 0.100)") in out
    assert ("signal", "relevance (vs best)", "1.000 × 0.5 = 0.500") in out
    assert ("memory", "context", "host=gw") in out
    hit["explain"]["match"] = {"cosine": None, "words": 0.27}
    assert match(hit) == "0.270 (words 0.270)"
