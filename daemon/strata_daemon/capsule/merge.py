"""Telling a person's edits from strata's own inside rendered blocks. Pure: no I/O.

The base is what strata last wrote in each block. Against it, a line in the file that the
base lacks was added by a person, and a base line the file lacks was removed by one (a
changed line is both). Order and blank lines do not count as edits.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

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


@dataclass(frozen=True)
class Taken:
    """What a render takes in from a person's edits, before anything is written."""
    facts: list[tuple[str, str]]  # (key, value) of each changed or added fact line
    pinned: list[dict]  # {"block", "line"}
    hidden: list[dict]


def taken(base: dict[str, list[str]], blocks: dict[str, list[str]],
          clean: Callable[[str], str] | None = None) -> Taken:
    """A person's edits of BLOCKS (block -> lines in the file) against BASE (what strata wrote
    there): in the facts block a `- key: value` line added or changed is a fact; any other
    added line is pinned, any removed line hidden. The header is regenerated on every render
    (a timestamp and counts), so nothing in it is an edit. A pinned line is kept as CLEAN (the
    redactor) leaves it: a credential typed into the capsule is stored, and rendered back, as
    its placeholder, as in an observation."""
    facts, pinned, hidden = [], [], []
    for name, lines in blocks.items():
        if name == "header":
            continue
        e = edits(base.get(name, []), lines)
        changed = set()  # facts given a new value: their old line is replaced, not hidden
        for line in e.added:
            fact = fact_of(line) if name == "facts" else None
            if fact is not None:
                facts.append(fact)
                changed.add(fact[0].casefold())
            else:
                pinned.append({"block": name, "line": clean(line) if clean else line})
        for line in e.removed:
            fact = fact_of(line) if name == "facts" else None
            if fact is None or fact[0].casefold() not in changed:  # a changed fact is not a hidden one
                hidden.append({"block": name, "line": line})
    return Taken(facts, pinned, hidden)


def overridden(overrides: list[dict], pinned: list[dict], hidden: list[dict]) -> list[dict]:
    """OVERRIDES (block, kind, line) as they stand once PINNED and HIDDEN are recorded: a pin
    replaces a hide of its line and a hide a pin; one already in place is not added again."""
    out = list(overrides)
    for kind, other, lines in (("pin", "hide", pinned), ("hide", "pin", hidden)):
        for x in lines:
            out = [o for o in out if (o["block"], o["kind"], o["line"]) != (x["block"], other, x["line"])]
            if not any((o["block"], o["kind"], o["line"]) == (x["block"], kind, x["line"]) for o in out):
                out.append({"block": x["block"], "kind": kind, "line": x["line"]})
    return out


def fact_of(line: str) -> tuple[str, str] | None:
    """`- key: value` (the facts block's own form) as (key, value), else None."""
    m = _FACT_LINE.match(line)
    return (m.group(1).strip(), m.group(2)) if m else None


def apply(generated: list[str], pins: list[str], hidden: set[str]) -> list[str]:
    """A block's lines: the person's pinned lines first, then what strata generated, less the
    lines the person removed and anything already pinned."""
    seen = set(pins)
    return [*pins, *(ln for ln in generated if ln.rstrip() not in hidden and ln not in seen)]
