"""Packing a context block within a token budget. Pure: no I/O.

The block is what an agent pastes into its prompt for one turn: its capsule condensed (who it
is, its rules, its pending work), the current facts the turn names, then the memories that
answer it. Each part is a markdown section; a memory is one line, `#ID 8 May 2023 text`, in
the order recall ranked them (a newer statement of a thing ranks above the older one it
updates), with the day it was said: left out when the line above is of the same day (`#ID
text`), its year left out when that is the year of the line above (`#ID 2 Jun text`). Every
line can be cited by its id and read in its time, for two tokens a day (LoCoMo: a colon after
the day cost 0.003 of the evidence a 256-token block holds, day headings over lines in recall's
order 0.004). Tokens are counted line by line with one ruler (embedding/tokens.py): a line break is
whitespace to it, so the block costs the sum of its lines, and the block never exceeds the
budget.

The budget is a ceiling, not a target: a memory far less relevant than the best one
(recall.context_floor, a tuned constant) is left out, so a block about one thing does not fill
up with others, unless its match to the turn as measured (its cosine or its share of the turn's
words) is still at least half the best's: relevance is relative to the candidates, and in a home
of a few memories the second of two is 0 however close it is. A fact
that a newer memory in the block updates (facts/updates.py) is left out too: the block never
reads an old value ahead of the memory that changed it.

The capsule and the facts each take at most a quarter of the budget (what they leave goes to
the memories): at 256 tokens an agent still gets most of its room for what the turn is about.
A memory that says what one already in the block says is left out; one that does not fit is
left out and the next is tried, so the room a long memory would overrun is not wasted. A memory
longer than all the room the memories have (a pasted log, a 60 KB key) could never fit: it is
cut to the room left, from its start, and marked (`… [cut]`) so the agent knows to read it whole
by its id, rather than dropped though it ranked first.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from strata_daemon.facts.speaking import Known, parse_key
from strata_daemon.facts.updates import update_of
from strata_daemon.store.nodes import episode_id

Counter = Callable[[Sequence[str]], list[int]]
SHARE = 4  # the capsule and the facts: each at most 1/SHARE of the budget
MATCHED = 0.5  # a memory under the relevance floor stays when its measured match is this share of the best's
MEMORIES = "## Memories (cite #id)"
CUT = " … [cut]"
MIN_CUT = 16  # tokens: less room than this holds no useful part of a memory
LONG_WORD = 20  # characters: a longer word may be cut inside; a shorter one stays whole
_SPACE = re.compile(r"\s+")


def day(at: float, *, year: bool = True) -> str:
    t = time.gmtime(at)
    return f"{t.tm_mday} {time.strftime('%b', t)}" + (f" {t.tm_year}" if year else "")


def _year(at: float) -> int:
    return time.gmtime(at).tm_year


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
            out += [MEMORIES, *(m["line"] for m in self.memories)]
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


def _updated(f: dict, hits: Sequence[dict]) -> dict | None:
    """The newest of HITS, said after fact F's value began, that updates it (facts/updates.py)."""
    begun = f.get("valid_from")
    if begun is None:
        return None
    k = parse_key(f["key"], f.get("label") or f["key"])
    known = Known(f["key"], k.subject, k.attribute, str(f["value"]))
    newer = sorted((h for h in hits if h["event_at"] > begun), key=lambda h: -h["event_at"])
    return next((h for h in newer if update_of(known, h["content"]) is not None), None)


def _outranked(f: dict, by_id: dict[int, dict]) -> dict | None:
    """The hit recall ranked above the memory fact F was drawn from as its newer statement (it
    superseded it, or says the same thing with newer values), when F's memory is a hit (BY_ID)."""
    source = by_id.get(episode_id(str(f.get("source") or "")))
    if source is None:
        return None
    why = source.get("explain", {})
    return next((by_id[i] for i in (*why.get("superseded_by", ()), *why.get("newer_alike", ())) if i in by_id), None)


def _facts(p: Packed, facts: Sequence[dict], count: Counter, room: int, hits: Sequence[dict]) -> None:
    lines = [f"- {f.get('label') or f['key']}: {_flat(str(f['value']))}"
             + (f" (since {day(f['valid_from'])})" if f.get("valid_from") else "") for f in facts]
    if not lines:
        return
    header, *costs = count(["## Facts", *lines])
    start = p.used
    by_id = {h["id"]: h for h in hits}
    for f, line, cost in zip(facts, lines, costs):
        if (newer := _updated(f, hits) or _outranked(f, by_id)) is not None:
            p.left_out.append({"part": "facts", "key": f["key"], "reason": f"#{newer['id']} says it changed since"})
            continue
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


def _relevance(h: dict) -> float:
    return float(h.get("explain", {}).get("signals", {}).get("relevance", 1.0))


def _memories(p: Packed, hits: Sequence[dict], count: Counter, floor: float) -> None:
    texts = [_flat(h["content"]) for h in hits]
    dated = [f"#{h['id']} {day(h['event_at'])} {text}" for h, text in zip(hits, texts)]
    short = [f"#{h['id']} {day(h['event_at'], year=False)} {text}" for h, text in zip(hits, texts)]
    plain = [f"#{h['id']} {text}" for h, text in zip(hits, texts)]
    n = len(hits)
    costs = count([MEMORIES, *dated, *short, *plain])
    header, dated_costs, short_costs, plain_costs = costs[0], costs[1:n + 1], costs[n + 1:2 * n + 1], costs[2 * n + 1:]
    # What the capsule and the facts already say: a pending task's memory, a status line that
    # is all its fact says.
    kept = {_flat(line).casefold(): f"the {heading.casefold()} line" for heading, lines in p.capsule for line in lines}
    kept.update({f"{f['label']}: {_flat(str(f['value']))}".casefold(): f"the fact {f['key']}" for f in p.facts})
    best = max((_relevance(h) for h in hits), default=0.0)
    best_match = max((h.get("match", 0.0) for h in hits), default=0.0)
    def relevant(h: dict) -> bool:
        return bool(h.get("led")) or _relevance(h) >= floor * best or h.get("match", 0.0) >= MATCHED * best_match > 0

    # A memory that ended another hit stays though a fact says it all: beside the older statement
    # it is what tells the agent which one is true now, and what it cites. Only beside it: with
    # the older left out, it would say twice what the capsule or a fact says.
    ended_others = {i for h in hits if relevant(h) for i in h.get("explain", {}).get("superseded_by", ())}
    room = p.budget - p.used - header  # all the room the memories have
    for rank, h in enumerate(hits, 1):
        text = texts[rank - 1]
        # A line says its day when the line above it is of another day (the first always), and
        # the year only when it is not the year of the line above.
        above = p.memories[-1]["at"] if p.memories else None
        j = rank - 1
        if above is not None and day(above) == day(h["event_at"]):
            line, cost = plain[j], plain_costs[j]
        elif above is not None and _year(above) == _year(h["event_at"]):
            line, cost = short[j], short_costs[j]
        else:
            line, cost = dated[j], dated_costs[j]
        if not relevant(h):
            p.left_out.append({"part": "memories", "id": h["id"], "reason": "not relevant enough"})
            continue
        if h["id"] not in ended_others and (same := _repeats(text, kept)) is not None:
            p.left_out.append({"part": "memories", "id": h["id"], "reason": f"says what {same} says"})
            continue
        extra = header if not p.memories else 0
        cut = False
        if p.used + extra + cost > p.budget:
            if cost <= room or (fitted := _cut(line, p.budget - p.used - extra, count)) is None:
                p.left_out.append({"part": "memories", "id": h["id"], "reason": "budget"})
                continue
            (line, cost), cut = fitted, True
        p.memories.append({"id": h["id"], "at": h["event_at"], "rank": rank, "line": line, "cut": cut})
        kept[text.casefold()] = f"#{h['id']}"
        p.used += extra + cost


def _most(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The largest m in [lo, hi] that fits (lo when none does), fitting being monotone."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def _cut(line: str, room: int, count: Counter) -> tuple[str, int] | None:
    """LINE's longest start that fits ROOM tokens with the cut mark, and its cost; None when the
    room is too small to hold any useful part. Words are kept whole but for one longer than
    a long run of characters (a key, a hash), which is cut where the room ends."""
    if room < MIN_CUT:
        return None
    words = line.split(" ")
    fits = lambda text: count([text + CUT])[0] <= room  # noqa: E731
    n = _most(1, len(words), lambda m: fits(" ".join(words[:m])))  # the id always stays
    head = " ".join(words[:n])
    if n < len(words) and len(words[n]) > LONG_WORD:  # a key, a hash, a log's run: take what fits
        a = _most(0, len(words[n]), lambda m: fits(f"{head} {words[n][:m]}"))
        head = f"{head} {words[n][:a]}" if a else head
    out = head + CUT
    cost = count([out])[0]
    return (out, cost) if cost <= room else None


def pack(budget: int, count: Counter, *, capsule: Sequence[tuple[str, list[str]]] = (),
         facts: Sequence[dict] = (), hits: Sequence[dict] = (), floor: float = 0.0) -> Packed:
    """The block's parts within `budget` tokens: capsule parts (heading, lines), facts ({key,
    label, value, valid_from}) and recall hits ({id, content, event_at, explain}, best first)."""
    p = Packed(budget)
    _capsule(p, capsule, count, budget // SHARE)
    _facts(p, facts, count, budget // SHARE, hits)
    _memories(p, hits, count, floor)
    return p
