"""Packing a context block within a token budget. Pure: no I/O.

The block is what an agent pastes into its prompt for one turn: its capsule condensed (who it
is, its rules, its pending work), the current facts the turn names, then the best memories
that fit. Each part is a markdown section; a memory is one line, `#ID text`, under the day it
was said (`8 May 2023:`, five tokens where a heading took seven), newest day first, so a
newer statement of a thing comes before the older one it updates and every line can be cited
by its id. Tokens are counted line by line with one ruler
(embedding/tokens.py): a line break is whitespace to it, so the block costs the sum of its
lines, and the block never exceeds the budget.

The capsule and the facts each take at most a quarter of the budget (what they leave goes to
the memories): at 256 tokens an agent still gets most of its room for what the turn is about.
A memory that says what one already in the block says is left out; one that does not fit is
left out and the next is tried, so the room a long memory would overrun is not wasted.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

Counter = Callable[[Sequence[str]], list[int]]
SHARE = 4  # the capsule and the facts: each at most 1/SHARE of the budget
MEMORIES = "## Memories (cite #id)"  # under each day, newest first: the days say the order
_SPACE = re.compile(r"\s+")


def day(at: float) -> str:
    t = time.gmtime(at)
    return f"{t.tm_mday} {time.strftime('%b', t)} {t.tm_year}"


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class Packed:
    budget: int
    capsule: list[tuple[str, list[str]]] = field(default_factory=list)
    facts: list[dict] = field(default_factory=list)
    memories: list[dict] = field(default_factory=list)  # {id, at, rank, line}
    left_out: list[dict] = field(default_factory=list)  # {part, reason, and id, key or line}
    used: int = 0

    def lines(self) -> list[str]:
        out = []
        for heading, lines in self.capsule:
            out += [f"## {heading}", *lines]
        if self.facts:
            out += ["## Facts", *(f["line"] for f in self.facts)]
        if self.memories:
            out.append(MEMORIES)
            shown = None
            for m in sorted(self.memories, key=lambda m: (-m["at"], m["rank"])):
                if day(m["at"]) != shown:
                    shown = day(m["at"])
                    out.append(f"{shown}:")
                out.append(m["line"])
        return out


def _capsule(p: Packed, parts: Sequence[tuple[str, list[str]]], count: Counter, room: int) -> None:
    for heading, lines in parts:
        costs = count([f"## {heading}", *lines])
        taken, spent = [], costs[0]
        for line, cost in zip(lines, costs[1:]):
            if p.used + spent + cost > room:
                p.left_out.append({"part": "capsule", "line": line, "reason": "budget"})
                continue
            taken.append(line)
            spent += cost
        if taken:
            p.capsule.append((heading, taken))
            p.used += spent


def _facts(p: Packed, facts: Sequence[dict], count: Counter, room: int) -> None:
    lines = [f"- {f.get('label') or f['key']}: {_flat(str(f['value']))}"
             + (f" (since {day(f['valid_from'])})" if f.get("valid_from") else "") for f in facts]
    if not lines:
        return
    header, *costs = count(["## Facts", *lines])
    start = p.used
    for f, line, cost in zip(facts, lines, costs):
        extra = header if not p.facts else 0
        if p.used + extra + cost > start + room:
            p.left_out.append({"part": "facts", "key": f["key"], "reason": "budget"})
            continue
        p.facts.append({"key": f["key"], "label": f.get("label") or f["key"], "value": f["value"], "line": line})
        p.used += extra + cost


def _repeats(text: str, kept: dict[str, str]) -> str | None:
    """What already in the block says this text (the same words, or all of them within a longer
    line), or None."""
    flat = text.casefold()
    for other, what in kept.items():
        if flat == other or (len(flat) >= 20 and flat in other):
            return what
    return None


def _memories(p: Packed, hits: Sequence[dict], count: Counter) -> None:
    texts = [_flat(h["content"]) for h in hits]
    lines = [f"#{h['id']} {text}" for h, text in zip(hits, texts)]
    days = [day(h["event_at"]) for h in hits]
    costs = count([MEMORIES, *lines, *(f"{d}:" for d in days)])
    header, line_costs, day_costs = costs[0], costs[1:len(hits) + 1], costs[len(hits) + 1:]
    # What the capsule and the facts already say: a pending task's memory, a status line that
    # is all its fact says.
    kept = {_flat(line).casefold(): f"the {heading.casefold()} line" for heading, lines in p.capsule for line in lines}
    kept.update({f"{f['label']}: {_flat(str(f['value']))}".casefold(): f"the fact {f['key']}" for f in p.facts})
    shown_days: set[str] = set()
    rows = zip(hits, texts, lines, line_costs, days, day_costs)
    for rank, (h, text, line, cost, d, d_cost) in enumerate(rows, 1):
        if (same := _repeats(text, kept)) is not None:
            p.left_out.append({"part": "memories", "id": h["id"], "reason": f"says what {same} says"})
            continue
        extra = (header if not p.memories else 0) + (d_cost if d not in shown_days else 0)
        if p.used + extra + cost > p.budget:
            p.left_out.append({"part": "memories", "id": h["id"], "reason": "budget"})
            continue
        p.memories.append({"id": h["id"], "at": h["event_at"], "rank": rank, "line": line})
        kept[text.casefold()] = f"#{h['id']}"
        shown_days.add(d)
        p.used += extra + cost


def pack(budget: int, count: Counter, *, capsule: Sequence[tuple[str, list[str]]] = (),
         facts: Sequence[dict] = (), hits: Sequence[dict] = ()) -> Packed:
    """The block's parts within `budget` tokens: capsule parts (heading, lines), facts ({key,
    label, value, valid_from}) and recall hits ({id, content, event_at}, best first)."""
    p = Packed(budget)
    _capsule(p, capsule, count, budget // SHARE)
    _facts(p, facts, count, budget // SHARE)
    _memories(p, hits, count)
    return p
