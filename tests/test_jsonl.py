"""Reading an import: rows kept while small, read again when large."""

import io
import json

import pytest

from daemon.config import load_config
from daemon.episodes.jsonl import parse_jsonl, stored_rows
from daemon.episodes.model import Limits
from daemon.errors import InvalidInput

LIMITS = Limits.from_config(load_config(None))
NOW = 1_780_000_000.0
LINES = [json.dumps({"content": f"note {n}", "at": NOW - n}).encode() + b"\n" for n in range(6)]
LINES[2] = b'{"content": "broken\n'
LINES[4] = b"\n"


def _parse(keep_bytes):
    return parse_jsonl(io.BytesIO(b"".join(LINES)), LIMITS, agent="default", now=NOW, keep_bytes=keep_bytes)


def test_rows_are_kept_up_to_the_buffer_and_read_again_past_it():
    kept = _parse(None)
    assert [r["content"] for r in kept.rows] == ["note 0", "note 1", "note 3", "note 5"]
    assert kept.good == 4 and kept.blank == 1 and [n for n, _ in kept.bad] == [3]
    assert _parse(10_000).rows == kept.rows  # the whole input fits
    large = _parse(len(LINES[0]) + len(LINES[1]))  # past the second line
    assert large.rows is None and (large.good, large.blank, large.bad) == (kept.good, kept.blank, kept.bad)
    again = stored_rows(io.BytesIO(b"".join(LINES)), LIMITS, agent="default", now=NOW, skip={3})
    assert list(again) == kept.rows


def test_a_line_that_went_bad_between_the_two_readings_is_named():
    changed = LINES[:5] + [b"not json\n"]
    rows = stored_rows(io.BytesIO(b"".join(changed)), LIMITS, agent="default", now=NOW, skip={3})
    assert next(rows)["content"] == "note 0"
    with pytest.raises(InvalidInput, match="line 6 changed while it was imported"):
        list(rows)
