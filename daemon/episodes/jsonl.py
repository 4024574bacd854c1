"""Reading observations from JSON Lines: every line checked before anything is stored."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import IO, Callable

from ..errors import InvalidInput
from .model import Limits, normalize

MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass
class Parsed:
    rows: list[dict] = field(default_factory=list)
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, problem)
    blank: int = 0


def parse_jsonl(stream: IO[bytes], limits: Limits, *, agent: str, now: float,
                progress: Callable[[int], None] | None = None) -> Parsed:
    out = Parsed()
    for number, raw in enumerate(stream, 1):
        if progress is not None:
            progress(len(raw))
        if not raw.strip():
            out.blank += 1
            continue
        try:
            if len(raw) > MAX_LINE_BYTES:
                raise InvalidInput(f"line is {len(raw)} bytes, over {MAX_LINE_BYTES}")
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
            if isinstance(record, dict) and record.get("agent") not in (None, agent):
                raise InvalidInput(f"belongs to agent {record['agent']!r}, not {agent!r} "
                                   f"(import it with --agent {record['agent']})")
            out.rows.append(normalize(record, limits, agent=agent, now=now))
        except InvalidInput as e:
            out.bad.append((number, e.message))
    return out
