"""Reading an import: rows kept while small, read again when large."""

import io
import json

import pytest

from strata_daemon.app import wiring
from strata_daemon.config.load import load_config
from strata_daemon.episodes.jsonl import MAX_LINE_BYTES, parse_jsonl, stored_rows
from strata_daemon.errors import InvalidInput

LIMITS = wiring.limits(load_config(None))
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


class Endless:
    """A stream with no line end, ever (a device, a binary pipe), counting what was asked of it."""

    def __init__(self):
        self.given = 0

    def readline(self, size=-1):
        assert size > 0, "an unbounded read of an endless stream"
        self.given += size
        return b"\0" * size


def test_a_line_past_the_limit_ends_the_reading_before_it_fills_memory():
    stream = Endless()
    with pytest.raises(InvalidInput, match="line 1 is longer than 16 MiB"):
        parse_jsonl(stream, LIMITS, agent="default", now=NOW)
    assert stream.given <= MAX_LINE_BYTES + 2
    exact = b'{"content": "' + b"x" * (MAX_LINE_BYTES - 15) + b'"}\r\n'  # 16 MiB, then CRLF: still a line
    assert len(exact.rstrip()) == MAX_LINE_BYTES
    assert "over the limit" in parse_jsonl(io.BytesIO(exact), LIMITS, agent="default", now=NOW).bad[0][1]
