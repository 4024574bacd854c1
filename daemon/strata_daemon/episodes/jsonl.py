"""Reading observations from JSON Lines: every line checked before anything is stored.

A small file is read once: its rows are kept between checking and storing. A large one is
read twice, checked and then stored batch by batch, so memory stays flat however large it is
(200,000 rows held at once took 280 MB more than reading them twice)."""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from typing import IO, Callable, Iterator, Protocol

from strata_daemon.episodes.model import Limits, normalize
from strata_daemon.errors import InvalidInput
from strata_daemon.store import episodes as store

MAX_LINE_BYTES = 16 * 1024 * 1024


class Lines(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


def lines(stream: Lines) -> Iterator[bytes]:
    """The stream's lines, none read past MAX_LINE_BYTES: a longer one (a binary file, a
    device) ends the reading before it fills memory."""
    number = 0
    while raw := _read_line(stream, number + 1):
        number += 1
        if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES:
            raise InvalidInput(f"line {number} is longer than {MAX_LINE_BYTES // 2**20} MiB: this is not JSON Lines "
                               "of memories (nothing imported)",
                               hint="export writes the format import reads: one JSON object per line")
        yield raw


def _read_line(stream: Lines, number: int) -> bytes:
    try:
        return stream.readline(MAX_LINE_BYTES + 2)
    except OSError as e:  # a file the kernel will not read as text (/proc/self/mem: EIO), a failing disk
        raise InvalidInput(f"cannot read line {number}: {e.strerror or e} (nothing imported)",
                           hint="import reads a file of JSON Lines, one object per line") from None


@dataclass
class Parsed:
    rows: list[dict] | None = field(default_factory=list)  # None: too many to keep; read them again
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, problem)
    blank: int = 0
    good: int = 0
    sha256: str = ""  # of every byte read: an import run again is known by it


def _row(raw: bytes, limits: Limits, agent: str, now: float) -> dict:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidInput(f"not valid UTF-8 (byte {e.start})") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"not valid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise InvalidInput("a number on the line has too many digits") from None
    if isinstance(record, dict) and record.get("agent") not in (None, agent):
        raise InvalidInput(f"belongs to agent {record['agent']!r}, not {agent!r} "
                           f"(import it with --agent {record['agent']})")
    if isinstance(record, dict):
        _misspelt(record)
    return normalize(record, limits, agent=agent, now=now)


# What a line may hold: an export's fields, and `at` as observe takes it.
_FIELDS = ("id", "at", *store.COLUMNS)


def _misspelt(record: dict) -> None:
    """A field that is no field but close to one (`knd`) is a typo whose value would be dropped
    silently (a `kind` of event stored as an observation): refused. Any other extra field is
    left alone, so an export of another version still imports."""
    for name in record:
        if name in _FIELDS or name.endswith("_iso"):
            continue
        near = difflib.get_close_matches(name, _FIELDS, n=1, cutoff=0.75)
        if near:
            raise InvalidInput(f"no field `{name}`; did you mean `{near[0]}`?")


def parse_jsonl(stream: Lines, limits: Limits, *, agent: str, now: float,
                progress: Callable[[int], None] | None = None, keep_bytes: int | None = None) -> Parsed:
    """Check every line. The rows are kept while the lines read add up to at most `keep_bytes`
    (always when None); past that `rows` is None and `stored_rows` reads them again."""
    out, read, digest = Parsed(), 0, hashlib.sha256()
    for number, raw in enumerate(lines(stream), 1):
        read += len(raw)
        digest.update(raw)
        if progress is not None:
            progress(len(raw))
        if not raw.strip():
            out.blank += 1
            continue
        try:
            row = _row(raw, limits, agent, now)
        except InvalidInput as e:
            out.bad.append((number, e.message))
            continue
        out.good += 1
        if out.rows is not None:
            out.rows.append(row)
            if keep_bytes is not None and read > keep_bytes:
                out.rows = None
    out.sha256 = digest.hexdigest()
    return out


def export_line(ep: dict) -> str:
    """One memory as `strata export` writes it and `import` reads it (the `_iso` twins left out)."""
    return json.dumps({k: v for k, v in ep.items() if not k.endswith("_iso")}, ensure_ascii=False) + "\n"


def stored_rows(stream: IO[bytes], limits: Limits, *, agent: str, now: float, skip: set[int]) -> Iterator[dict]:
    """The rows of a stream that `parse_jsonl` checked, read again, without its bad lines (`skip`)."""
    for number, raw in enumerate(lines(stream), 1):
        if number in skip or not raw.strip():
            continue
        try:
            yield _row(raw, limits, agent, now)
        except InvalidInput as e:
            raise InvalidInput(f"line {number} changed while it was imported: {e.message}",
                               hint="what was stored before it stays; importing the file again skips that "
                                    "as already present") from None
