"""The extractive synthesizer: a dossier made only of what the layers hold, each line citing
where it came from. Deterministic and pure: the same material gives the same lines.

Sections, in order: current facts; contradictions (two values of a key close together, both
named with their times); what changed recently (value changes, then recent memories by
salience); open items (tasks no later memory closes); key older context
(older memories by importance x relevance). A memory is quoted once, in the first section
that takes it. Citations: `e12` is memory 12, `f34` is fact value 34.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from strata_daemon.dossier.topics import Topic

SECTIONS = (("facts", "Current facts"), ("contradictions", "Contradictions"), ("changes", "What changed recently"),
            ("open", "Open items"), ("context", "Key older context"))
_IDENTIFIER = re.compile(r"(?<![\w-])(?:[A-Z][A-Z0-9]{0,9}-\d+|#\d+)(?![\w-])")
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class Line:
    text: str
    cites: tuple[str, ...]


@dataclass
class Section:
    name: str
    title: str
    lines: list[Line] = field(default_factory=list)


@dataclass(frozen=True)
class Material:
    """Everything a refresh read for one topic."""
    topic: Topic
    facts: list[dict]  # current values: key, label, value, value_id, valid_from, source, stale
    changes: list[dict]  # value changes, newest first: id, key, label, old/new {value, value_id, valid_from, source}, flagged
    sources: list[dict]  # memories by salience: id, kind, content, event_at, importance, relevance, salience
    closers: dict[int, list[dict]]  # for an open item, later memories that may close it (id, content, event_at)
    recent_after: float  # changes and memories from then on are recent
    off_topic: list[dict] = field(default_factory=list)  # recalled but not about the topic: they only close tasks


@dataclass(frozen=True)
class Patterns:
    open: re.Pattern
    closed: re.Pattern


def when(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%MZ")


def quote(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _gap(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def _episode_cite(source: str | None) -> tuple[str, ...]:
    if source and source.startswith("episode:"):
        return (f"e{source.split(':', 1)[1]}",)
    return ()


def _value_cites(side: dict | None) -> tuple[str, ...]:
    if side is None:
        return ()
    return (f"f{side['value_id']}", *_episode_cite(side.get("source")))


def _shown(value: str | None, limit: int) -> str:
    return "no value" if value is None else f'"{quote(value, limit)}"'


def _stems(text: str) -> set[str]:
    return {w[:5] for w in (m.group(0).casefold() for m in _WORD.finditer(text))}


def is_open(memory: dict, patterns: Patterns) -> bool:
    """Whether a memory states a task: its text says something is to do where a statement
    starts (the open pattern), or it is of kind task and does not report something done (a
    task-kind `Done T-12: ...` closes a task rather than opening one)."""
    if patterns.open.search(memory["content"]):
        return True
    return memory["kind"] == "task" and not patterns.closed.search(memory["content"])


def still_open(items: list[dict], later: list[dict], patterns: Patterns) -> list[dict]:
    """The open items that none of `later` closes. A later memory closes an item when it says
    so (matches the closed pattern) and names the same identifier (T-12, #34), or, when the
    item has none, shares most of its words. Each memory's words are read once."""
    closing = [m for m in later if patterns.closed.search(m["content"])]
    by_identifier: dict[str, list[dict]] = {}
    for m in closing:
        for ident in set(_IDENTIFIER.findall(m["content"])):
            by_identifier.setdefault(ident, []).append(m)
    stems: list[tuple[dict, set[str]]] | None = None
    out = []
    def after(c: dict, item: dict) -> bool:
        return c["event_at"] >= item["event_at"] and c["id"] != item["id"]

    for item in items:
        ids = set(_IDENTIFIER.findall(item["content"]))
        if ids:
            closed = any(after(c, item) for i in ids for c in by_identifier.get(i, ()))
        else:
            if stems is None:
                stems = [(c, _stems(c["content"])) for c in closing]
            words = _stems(patterns.open.sub(" ", item["content"]))
            closed = bool(words) and any(after(c, item) and len(words & w) >= 0.6 * len(words) for c, w in stems)
        if not closed:
            out.append(item)
    return out


# The full-text words tasks are closed with: a prefilter for the closed pattern, which decides.
CLOSING_WORDS = "done OR closed OR fixed OR resolved OR completed OR finished OR cancelled OR canceled"


def closing_query(item: dict, patterns: Patterns) -> str | None:
    """The full-text query for memories that may close ITEM: a closing word and its identifier,
    or a closing word and any of its words (as prefixes, the stems `still_open` compares)."""
    ids = set(_IDENTIFIER.findall(item["content"]))
    if ids:
        names = " OR ".join('"' + i.replace('"', "") + '"' for i in sorted(ids))
    else:
        stems = sorted(_stems(patterns.open.sub(" ", item["content"])))
        if not stems:
            return None
        names = " OR ".join(f'"{s}"*' for s in stems)
    return f"({CLOSING_WORDS}) AND ({names})"


def closes(later: dict, item: dict, patterns: Patterns) -> bool:
    return not still_open([item], [later], patterns)


def identifiers(text: str) -> list[str]:
    return sorted(set(_IDENTIFIER.findall(text)))


def synthesize(m: Material, patterns: Patterns, *, max_lines: int, line_chars: int) -> list[Section]:
    sections = {name: Section(name, title) for name, title in SECTIONS}
    cited: set[int] = set()  # memories already quoted or behind a fact line

    def mark(cites: tuple[str, ...]) -> None:
        cited.update(int(c[1:]) for c in cites if c.startswith("e"))

    def add(name: str, text: str, cites: tuple[str, ...]) -> bool:
        lines = sections[name].lines
        if len(lines) >= max_lines:
            return False
        lines.append(Line(text, cites))
        mark(cites)
        return True

    for f in m.facts:
        stale = ", stale" if f.get("stale") else ""
        add("facts", f"{f['label']}: {_shown(f['value'], line_chars)} (since {when(f['valid_from'])}{stale})",
            _value_cites(f))
    for c in m.changes:
        old, new = c["old"], c["new"]
        if c["flagged"] and old is not None:
            current = next((f["value"] for f in m.facts if f["key"] == c["key"]), None)
            add("contradictions",
                f"{c['label']}: {_shown(old['value'], line_chars)} at {when(old['valid_from'])} and "
                f"{_shown(new['value'], line_chars)} at {when(new['valid_from'])}, "
                f"{_gap(new['valid_from'] - old['valid_from'])} apart; now {_shown(current, line_chars)}",
                (*_value_cites(old), *_value_cites(new)))
        elif new["valid_from"] >= m.recent_after:
            if old is None:
                text = f"{c['label']} set to {_shown(new['value'], line_chars)} at {when(new['valid_from'])}"
            elif new["value"] is None:
                text = f"{c['label']} retracted at {when(new['valid_from'])} (was {_shown(old['value'], line_chars)})"
            else:
                text = (f"{c['label']} changed from {_shown(old['value'], line_chars)} to "
                        f"{_shown(new['value'], line_chars)} at {when(new['valid_from'])}")
            add("changes", text, (*_value_cites(old), *_value_cites(new)))

    def memory_line(s: dict) -> str:
        return f"{when(s['event_at'])} ({s['kind']}) {quote(s['content'], line_chars)}"

    candidates = [s for s in m.sources if s["id"] not in cited and is_open(s, patterns)]
    later = [*m.sources, *m.off_topic, *(c for found in m.closers.values() for c in found)]
    remaining = {s["id"] for s in still_open(candidates, later, patterns)}
    for s in candidates:
        if s["id"] in remaining:
            add("open", memory_line(s), (f"e{s['id']}",))
        else:
            cited.add(s["id"])  # done: neither open nor worth quoting as context
    for s in m.sources:
        if s["id"] not in cited and s["event_at"] >= m.recent_after:
            add("changes", memory_line(s), (f"e{s['id']}",))
    older = sorted((s for s in m.sources if s["id"] not in cited and s["event_at"] < m.recent_after),
                   key=lambda s: (-(s["importance"] * s["relevance"]), -s["event_at"], -s["id"]))
    for s in older:
        add("context", memory_line(s), (f"e{s['id']}",))
    return [sections[name] for name, _ in SECTIONS]


def cited_ids(sections: list[Section]) -> list[str]:
    seen: dict[str, None] = {}
    for section in sections:
        for line in section.lines:
            for c in line.cites:
                seen[c] = None
    return list(seen)


def as_data(sections: list[Section]) -> list[dict]:
    return [{"name": s.name, "title": s.title, "lines": [{"text": ln.text, "cites": list(ln.cites)} for ln in s.lines]}
            for s in sections]
