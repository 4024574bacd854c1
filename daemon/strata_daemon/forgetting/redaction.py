"""What a purge looks for in derived text, and how a line loses its words. Pure: no I/O.

A line is touched by a purge when it cites a purged memory (`e12`) or fact value (`f34`) the
way dossiers and the capsule cite them, when it is a capsule fact line (`- label: value`)
showing a purged value, or when it holds one of the purge's needles: the purged memory's
text, its lines and sentences, the values captured from it, the entities only it mentioned,
and the text a person asked to forget. Needles are long enough not to match by chance
(MIN_NEEDLE characters), except the text a person names, which is looked for as given.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from strata_daemon.base.wording import printable

REDACTED = "[redacted]"
MIN_NEEDLE = 8
_CITE = re.compile(r"(?<![\w-])([ef])(\d+)(?![\w-])")
_PIECES = re.compile(r"\n|(?<=[.!?;:])\s+")
_LIST = re.compile(r"^(\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?)?)")
_TOPIC_LINE = re.compile(r"^\s*[-*+]\s+([^\s:(]+)(?::|\s+\(|\s*$)")  # `- falcon: dossier v3`, `- falcon (dossier v3)`


@dataclass
class Purged:
    """What one purge removes, as text and references. Build it with `add_*`, then test lines."""
    episodes: set[int] = field(default_factory=set)
    values: set[int] = field(default_factory=set)
    fact_lines: set[tuple[str, str]] = field(default_factory=set)  # (label, value), case-folded
    needles: set[str] = field(default_factory=set)  # case-folded
    originals: set[str] = field(default_factory=set)  # as written: SQLite's lower() folds ASCII alone
    topics: set[str] = field(default_factory=set)  # dossier topics removed: the capsule's lines naming them

    def add_memory(self, episode_id: int, content: str) -> None:
        self.episodes.add(episode_id)
        self.add_text(content, whole=False)
        for piece in _PIECES.split(content):
            self.add_text(piece, whole=False)

    def add_value(self, value_id: int, label: str, value: str | None) -> None:
        self.values.add(value_id)
        if value is not None:
            self.fact_lines.add((label.strip().casefold(), value.strip().casefold()))
            self.add_text(value, whole=False)

    def add_text(self, text: str, *, whole: bool = True) -> None:
        """A text to look for: WHOLE (what a person named) however short, else only when long
        enough to be this memory's words rather than anyone's."""
        text = " ".join(text.split())
        if text and (whole or len(text) >= MIN_NEEDLE):
            # Capsule and dossier files show control characters as \xNN: look for that too.
            for form in {text, printable(text)}:
                self.needles.add(form.casefold())
                self.originals.add(form)

    def add_topic(self, topic: str) -> None:
        self.topics.add(topic.casefold())

    def json_needles(self) -> list[str]:
        """The needles as they appear inside stored JSON (escaped, with or without ASCII escapes)."""
        out = set(self.needles)
        for n in self.needles:
            out.add(json.dumps(n)[1:-1])
            out.add(json.dumps(n, ensure_ascii=False)[1:-1])
        return sorted(out)

    def raw_needles(self) -> list[str]:
        """The needles as written, for SQLite to find where its lower() does not fold a letter."""
        return sorted(self.originals | {json.dumps(n)[1:-1] for n in self.originals})

    def search_terms(self) -> list[str]:
        """What SQLite looks for to narrow the rows that may hold what is purged: the needles (as
        stored in JSON too), the cites, the values of its facts. Each row found is tested after."""
        return self.json_needles() + self.raw_needles() + [f"e{i}" for i in self.episodes] + \
            [f"f{i}" for i in self.values] + sorted({json.dumps(v)[1:-1] for _, v in self.fact_lines if v}) + \
            sorted(self.topics)

    def cites(self, text: str) -> bool:
        return any((self.episodes if kind == "e" else self.values).__contains__(int(n))
                   for kind, n in _CITE.findall(text))

    def touches(self, text: str) -> bool:
        folded = " ".join(text.split()).casefold()
        if any(n in folded for n in self.needles) or self.cites(text):
            return True
        topic = _TOPIC_LINE.match(folded)
        if topic and topic.group(1) in self.topics:
            return True
        label, sep, value = folded.lstrip("-*+ ").partition(": ")
        return bool(sep) and (label, value.strip()) in self.fact_lines

    def touches_json(self, raw: str) -> bool:
        folded = raw.casefold()
        return self.touches(raw) or any(n in folded for n in self.json_needles())


def redact_line(line: str) -> str:
    """The line with its words replaced, its list marker (`- `, `- [ ] `) kept."""
    return _LIST.match(line).group(1) + REDACTED


def redact_lines(text: str, purged: Purged) -> tuple[str, int]:
    """TEXT with each line the purge touches redacted, and how many were."""
    out, n = [], 0
    for line in text.split("\n"):
        if line.strip() and purged.touches(line) and redact_line(line) != line:
            out.append(redact_line(line))
            n += 1
        else:
            out.append(line)
    return "\n".join(out), n
