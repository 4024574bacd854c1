"""Telling a person's edits from strata's own inside rendered blocks. Pure: no I/O.

The base is what strata last wrote in each block. Against it, a line in the file that the
base lacks was added by a person, and a base line the file lacks was removed by one (a
changed line is both). Order and blank lines do not count as edits.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_FACT_LINE = re.compile(r"^\s*[-*+]\s+(?:\*\*)?([^:*][^:]{0,199}?)(?:\*\*)?\s*:\s+(\S.*?)\s*$")


@dataclass(frozen=True)
class Edits:
    added: list[str]
    removed: list[str]

    @property
    def size(self) -> int:
        return len(self.added) + len(self.removed)

    def __bool__(self) -> bool:
        return bool(self.size)


def edits(base: list[str], current: list[str]) -> Edits:
    def count(lines: list[str]) -> Counter:
        return Counter(ln.rstrip() for ln in lines if ln.strip())

    was, now = count(base), count(current)
    return Edits(sorted((now - was).elements(), key=current_order(current)),
                 sorted((was - now).elements(), key=current_order(base)))


def current_order(lines: list[str]):
    index = {ln.rstrip(): i for i, ln in reversed(list(enumerate(lines)))}
    return lambda ln: index.get(ln, 0)


def fact_of(line: str) -> tuple[str, str] | None:
    """`- key: value` (the facts block's own form) as (key, value), else None."""
    m = _FACT_LINE.match(line)
    return (m.group(1).strip(), m.group(2)) if m else None


def apply(generated: list[str], pins: list[str], hidden: set[str]) -> list[str]:
    """A block's lines: the person's pinned lines first, then what strata generated, less the
    lines the person removed and anything already pinned."""
    seen = set(pins)
    return [*pins, *(ln for ln in generated if ln.rstrip() not in hidden and ln not in seen)]
