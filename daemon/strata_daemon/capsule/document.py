"""The capsule as a document: sections, rendered blocks, validation, splicing. Pure: no I/O.

A capsule is markdown. `## ` headings open its sections; the nine of the capsule spec are required,
in order (the header is the `# ` title and the block under it). Rendered content lives only
between markers, `<!-- strata:begin NAME -->` and `<!-- strata:end NAME -->`, each on its
own line; everything outside the markers belongs to the person and is never rewritten.
Splicing a block replaces the lines between its markers and leaves every other byte as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# (key, heading, owner). The required sections, in order.
SECTIONS = (
    ("identity", "Identity", "person"),
    ("loop_protocol", "Loop protocol", "person"),
    ("key_contacts", "Key contacts", "person"),
    ("tools", "Tools", "person"),
    ("current_priorities", "Current priorities", "rendered"),
    ("recent_work", "Recent work", "rendered"),
    ("operational_rules", "Operational rules", "person"),
    ("pending_tasks", "Pending tasks", "rendered"),
)
OPTIONAL = (("current_facts", "Current facts", "rendered"), ("topics", "Topics", "rendered"))
# Each rendered block and the section it must sit in (None: the header, above the first section).
BLOCKS = {"header": None, "priorities": "current_priorities", "recent": "recent_work",
          "tasks": "pending_tasks", "facts": "current_facts", "topics": "topics"}
BUDGET_LINES = 300

_HEADING = re.compile(r"^(#{1,2})\s+(.+?)\s*#*\s*$")
_MARKER = re.compile(r"^<!-- strata:(begin|end) ([a-z_]+) -->\s*$")
_MARKERISH = re.compile(r"strata:(?:begin|end)|<!--\s*strata")
_BY_TITLE = {title.casefold(): key for key, title, _ in (*SECTIONS, *OPTIONAL)}


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based; 0 for the whole file
    level: str  # error | warning
    code: str
    message: str

    def as_dict(self) -> dict:
        return {"line": self.line, "level": self.level, "code": self.code, "message": self.message}

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{where}: {self.level}: {self.message}"


@dataclass
class Block:
    name: str
    begin: int  # index of the begin marker line
    end: int  # index of the end marker line
    section: str | None


@dataclass
class Document:
    lines: list[str]  # with their line endings, so joining gives the text back byte for byte
    sections: list[tuple[str, int]] = field(default_factory=list)  # (key, heading line index), in order
    blocks: dict[str, Block] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    @property
    def ok(self) -> bool:
        return not any(p.level == "error" for p in self.problems)

    def block_lines(self, name: str) -> list[str]:
        """A block's content lines, without line endings."""
        b = self.blocks[name]
        return [ln.rstrip("\r\n") for ln in self.lines[b.begin + 1:b.end]]

    def section_of(self, index: int) -> str | None:
        current = None
        for key, at in self.sections:
            if at > index:
                break
            current = key
        return current


def is_marker(line: str) -> bool:
    """Whether a line is a block's begin or end marker."""
    return _MARKER.match(line) is not None


def parse(text: str) -> Document:
    doc = Document(text.splitlines(keepends=True))
    problems = doc.problems
    open_block: tuple[str, int] | None = None
    fenced = False
    seen: dict[str, int] = {}
    title_at = None
    for i, raw in enumerate(doc.lines):
        line = raw.rstrip("\r\n")
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = _MARKER.match(line)
        if m:
            kind, name = m.groups()
            if name not in BLOCKS:
                problems.append(Problem(i + 1, "error", "unknown-block",
                                        f"unknown block {name!r} (blocks: {', '.join(BLOCKS)})"))
            elif kind == "begin":
                if open_block is not None:
                    problems.append(Problem(i + 1, "error", "unclosed-block",
                                            f"block {name!r} begins inside block {open_block[0]!r}, which "
                                            f"began on line {open_block[1] + 1} and has no end marker"))
                open_block = (name, i)
            else:
                if open_block is None or open_block[0] != name:
                    problems.append(Problem(i + 1, "error", "stray-end",
                                            f"end marker of block {name!r} without its begin marker"))
                else:
                    if name in doc.blocks:
                        problems.append(Problem(open_block[1] + 1, "error", "duplicate-block",
                                                f"block {name!r} appears twice (first on line "
                                                f"{doc.blocks[name].begin + 1})"))
                    else:
                        doc.blocks[name] = Block(name, open_block[1], i, None)
                    open_block = None
            continue
        if _MARKERISH.search(line):
            problems.append(Problem(i + 1, "error", "damaged-marker",
                                    "this looks like a strata marker but is not one; a marker is exactly "
                                    "`<!-- strata:begin NAME -->` or `<!-- strata:end NAME -->` on its own line"))
            continue
        h = _HEADING.match(line)
        if not h:
            continue
        if len(h.group(1)) == 1:
            if title_at is None:
                title_at = i
            continue
        key = _BY_TITLE.get(h.group(2).strip().casefold())
        if key is None:
            continue  # a section of the person's own: allowed anywhere
        if key in seen:
            problems.append(Problem(i + 1, "error", "duplicate-section",
                                    f"section {h.group(2).strip()!r} appears twice (first on line {seen[key] + 1})"))
            continue
        seen[key] = i
        doc.sections.append((key, i))
    _check_whole(doc, open_block, title_at, seen)
    problems.sort(key=lambda p: (p.line, p.code))
    return doc


def _check_whole(doc: Document, open_block: tuple[str, int] | None, title_at: int | None,
                 seen: dict[str, int]) -> None:
    """What only the whole scanned file shows (a block left open, the title, where the blocks
    sit, the required sections and their order, the budget), into doc.problems."""
    problems = doc.problems
    if open_block is not None:
        problems.append(Problem(open_block[1] + 1, "error", "unclosed-block",
                                f"block {open_block[0]!r} has no end marker"))
    if title_at is None:
        problems.append(Problem(0, "error", "missing-title", "the capsule has no `# ` title line"))
    for b in doc.blocks.values():
        b.section = doc.section_of(b.begin)
        want = BLOCKS[b.name]
        if b.section != want:
            where = "above the first section" if want is None else f"in section {_title(want)!r}"
            problems.append(Problem(b.begin + 1, "error", "misplaced-block", f"block {b.name!r} belongs {where}"))
    for key, title, _ in SECTIONS:
        if key not in seen:
            problems.append(Problem(0, "error", "missing-section", f"required section {title!r} is missing"))
    broken = any(p.level == "error" for p in problems)  # then the errors say what became of the markers
    for name, section in BLOCKS.items():
        if not broken and name not in doc.blocks and (open_block is None or open_block[0] != name):
            where = "above the first section" if section is None else f"in section {_title(section)!r}"
            problems.append(Problem(0, "warning", "missing-block",
                                    f"block {name!r} has no markers, so strata no longer renders it and the "
                                    f"lines left of it stay as they are; to have it rendered again, put "
                                    f"`<!-- strata:begin {name} -->` and `<!-- strata:end {name} -->` {where}"))
    required = [k for k, _ in doc.sections if k in {s[0] for s in SECTIONS}]
    expected = [k for k, _, _ in SECTIONS if k in seen]
    if required != expected:
        for got, want in zip(required, expected):
            if got != want:
                problems.append(Problem(seen[got] + 1, "warning", "misordered-section",
                                        f"section {_title(got)!r} comes where {_title(want)!r} should "
                                        f"(order: {', '.join(t for _, t, _ in SECTIONS)})"))
                break
    if len(doc.lines) > BUDGET_LINES:
        problems.append(Problem(BUDGET_LINES + 1, "error", "over-budget",
                                f"the capsule has {len(doc.lines)} lines; the budget is {BUDGET_LINES}"))


def _title(key: str) -> str:
    return next(t for k, t, _ in (*SECTIONS, *OPTIONAL) if k == key)


def owner(section: str | None) -> str:
    return next((o for k, _, o in (*SECTIONS, *OPTIONAL) if k == section), "person")


# Every character str.splitlines() breaks a line at: a memory's text holding one would end
# its rendered line early and start a line of its own (a heading, a marker).
_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def inert(line: str) -> str:
    """A rendered line that cannot open, close or break a block, whatever text a memory holds
    (markdown shows `&lt;!--` as `<!--`, so the reader sees the same text)."""
    line = _BREAKS.sub(" ", line).replace("<!--", "&lt;!--")
    return line.replace("strata:begin", "strata&#58;begin").replace("strata:end", "strata&#58;end")


def splice(doc: Document, contents: dict[str, list[str]]) -> str:
    """The document's text with each named block's content replaced (each line made inert);
    every other line is kept byte for byte. Lines are written with the file's own line ending."""
    newline = "\r\n" if doc.lines and doc.lines[0].endswith("\r\n") else "\n"
    out: list[str] = []
    replace = {doc.blocks[name].begin: (doc.blocks[name].end, lines) for name, lines in contents.items()
               if name in doc.blocks}
    i = 0
    while i < len(doc.lines):
        out.append(doc.lines[i])
        if i in replace:
            end, lines = replace[i]
            out.extend(inert(line) + newline for line in lines)
            i = end
            continue
        i += 1
    return "".join(out)
