"""Dossier topics: names, where they come from, which are due. Pure: no I/O.

A topic comes from the config (`[dossier.topics.NAME]`), from the capsule (a `Topics:` line
or the items of a `## Topics` section), from a person (`strata dossier add`), or is
discovered (an entity mentioned often, or a first word shared by several fact keys).
Discovered topics are proposals: they are kept only once a person adds them, unless
dossier.enable_discovered says otherwise. A person's choice (add, remove) overrides the
origin's default.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

from strata_daemon.errors import ConfigError, InvalidInput

MAX_TOPIC_CHARS = 64
_TOPIC = re.compile(r"^[^\W_][\w.-]*$")
_SEPARATORS = re.compile(r"[\s_\-]+")
_TOPICS_LINE = re.compile(r"^\s*(?:[-*]\s*)?\**topics\**\s*:\s*(.*)$", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BLOCK_MARKER = re.compile(r"^<!-- strata:(begin|end) [a-z_]+ -->\s*$")
_ITEM = re.compile(r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?(.+?)\s*$")


def normalise_topic(raw: object) -> str:
    """`Memory Systems`, `memory-systems` and `memory_systems` are one topic: `memory_systems`."""
    if not isinstance(raw, str):
        raise InvalidInput(f"a topic must be text, not {type(raw).__name__}")
    if any(unicodedata.category(ch) == "Cc" for ch in raw):  # a newline or tab would be folded into `_`
        raise InvalidInput(f"{raw!r} is not a topic name: it holds a line break or control character",
                           hint="name it in a word or two on one line, e.g. `revenue`")
    text = _SEPARATORS.sub("_", unicodedata.normalize("NFKC", raw).strip().casefold()).strip("_")
    if not text:
        raise InvalidInput("the topic is empty", hint="name it in a word or two, e.g. `revenue`")
    if len(text) > MAX_TOPIC_CHARS or not _TOPIC.match(text):
        raise InvalidInput(f"{raw!r} is not a topic name",
                           hint=f"use letters, digits, spaces, dots or dashes, at most {MAX_TOPIC_CHARS} characters")
    return text


@dataclass(frozen=True)
class Topic:
    name: str
    query: str  # what recall looks for
    fact_prefixes: tuple[str, ...]  # whose facts the dossier shows
    origin: str
    enabled: bool
    detail: dict = field(default_factory=dict, compare=False)  # why it was proposed, for discovered ones

    def as_dict(self) -> dict:
        return {"topic": self.name, "query": self.query, "facts": list(self.fact_prefixes), "origin": self.origin,
                "enabled": self.enabled, **({"proposed_because": self.detail} if self.detail else {})}


def default_query(name: str) -> str:
    return name.replace("_", " ").replace(".", " ")


def from_config(table: Mapping[str, Mapping]) -> list[Topic]:
    out = []
    for raw, spec in table.items():
        try:
            name = normalise_topic(raw)
        except InvalidInput as e:
            raise ConfigError(f"[dossier.topics] {e.message}", hint=e.hint) from None
        facts = spec.get("facts", [default_query(name)])
        if isinstance(facts, str):
            facts = [facts]
        if not isinstance(facts, list) or not all(isinstance(f, str) and f.strip() for f in facts):
            raise ConfigError(f"[dossier.topics.{raw}] facts must be a list of fact-key prefixes")
        query = spec.get("query", default_query(name))
        if not isinstance(query, str) or not query.strip():
            raise ConfigError(f"[dossier.topics.{raw}] query must be non-empty text")
        unknown = set(spec) - {"query", "facts", "enabled"}
        if unknown:
            raise ConfigError(f"[dossier.topics.{raw}] has unknown field {sorted(unknown)[0]!r}",
                               hint="a topic takes query, facts and enabled")
        out.append(Topic(name, query.strip(), tuple(f.strip() for f in facts), "config",
                         bool(spec.get("enabled", True))))
    return out


def _topic_items(text: str) -> list[tuple[str, str | None]]:
    """An item is `name` or `name: query words`."""
    name, _, query = text.partition(":")
    return [(name.strip().strip("*`"), query.strip() or None)]


def from_capsule(text: str) -> list[Topic]:
    """Topics a capsule names: every `Topics: a, b, c` line, and the list items of a section
    headed `Topics`. Lines inside fenced code and inside strata's rendered blocks are ignored. Names that are not valid topics
    are skipped (the capsule check reports them)."""
    found: dict[str, Topic] = {}
    in_section, level, fenced, in_block = False, 0, False, False

    def add(name: str, query: str | None) -> None:
        try:
            topic = normalise_topic(name)
        except InvalidInput:
            return
        found.setdefault(topic, Topic(topic, query or default_query(topic), (default_query(topic),), "capsule", True))

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        marker = _BLOCK_MARKER.match(line)
        if marker:
            in_block = marker.group(1) == "begin"
            continue
        if in_block:
            continue  # strata's rendered lines (the topics it keeps already) are not the person's
        heading = _HEADING.match(line)
        if heading:
            depth = len(heading.group(1))
            if in_section and depth <= level:
                in_section = False
            if heading.group(2).strip().casefold() == "topics":
                in_section, level = True, depth
            continue
        m = _TOPICS_LINE.match(line)
        if m:
            for part in m.group(1).split(","):
                if part.strip():
                    add(part.strip().strip("*`"), None)
            continue
        if in_section:
            item = _ITEM.match(line)
            if item:
                for name, query in _topic_items(item.group(1)):
                    add(name, query)
    return list(found.values())


def discovered(entities: Iterable[tuple[str, str, int]], fact_keys: Iterable[str], *, min_mentions: int,
               min_keys: int, limit: int, enabled: bool) -> list[Topic]:
    """Proposals: entities (type, value, mentions) mentioned at least `min_mentions` times, and
    first words shared by at least `min_keys` fact keys; the most frequent first."""
    scored: dict[str, tuple[int, Topic]] = {}
    for kind, value, mentions in entities:
        if mentions < min_mentions:
            continue
        try:
            name = normalise_topic(value.lstrip("@"))
        except InvalidInput:
            continue
        t = Topic(name, value, (default_query(name),), "discovered", enabled,
                  {"entity": f"{kind}:{value}", "mentions": mentions})
        if mentions > scored.get(name, (0, None))[0]:
            scored[name] = (mentions, t)
    firsts: dict[str, int] = {}
    for key in fact_keys:
        first = key.split(" ", 1)[0]
        firsts[first] = firsts.get(first, 0) + 1
    for first, count in firsts.items():
        if count < min_keys:
            continue
        try:
            name = normalise_topic(first)
        except InvalidInput:
            continue
        t = Topic(name, first, (first,), "discovered", enabled, {"fact_keys": count})
        if name not in scored:
            scored[name] = (count, t)
    ranked = sorted(scored.values(), key=lambda p: (-p[0], p[1].name))
    return [t for _, t in ranked[:max(0, limit)]]


@dataclass(frozen=True)
class Choice:
    """A person's row for a topic (`strata dossier add|remove`)."""
    query: str | None
    fact_prefixes: tuple[str, ...] | None
    enabled: bool | None
    added: bool


def merged(config: list[Topic], capsule: list[Topic], proposals: list[Topic], choices: Mapping[str, Choice]
           ) -> list[Topic]:
    """Every topic once, by precedence config > capsule > person > discovered, with a person's
    choices applied on top; sorted by name."""
    out: dict[str, Topic] = {}
    for t in proposals:
        out[t.name] = t
    for name, c in choices.items():
        if c.added and name not in out:
            out[name] = Topic(name, c.query or default_query(name), c.fact_prefixes or (default_query(name),),
                              "person", True)
        elif c.added:
            out[name] = replace(out[name], origin="person", enabled=True, detail={})
    for t in (*capsule, *config):
        out[t.name] = t
    for name, c in choices.items():
        if name not in out:
            continue
        t = out[name]
        out[name] = replace(t, query=c.query or t.query, fact_prefixes=c.fact_prefixes or t.fact_prefixes,
                            enabled=t.enabled if c.enabled is None else c.enabled)
    return sorted(out.values(), key=lambda t: t.name)


def due(last_checked: Mapping[str, float | None], now: float, *, min_hours: float) -> list[str]:
    """Topics a scheduled refresh (every dossier.refresh_interval_hours) takes now: those never
    refreshed, and those last checked at least `min_hours` ago. Oldest first."""
    out = [(at or 0.0, name) for name, at in last_checked.items() if at is None or now - at >= min_hours * 3600.0]
    return [name for _, name in sorted(out)]
