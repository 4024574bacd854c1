"""The capsule condensed for a context block: who the agent is, its rules and its pending work,
without what nobody wrote. Pure: no I/O.

A capsule a person never edited still holds the shipped guidance (`Write here who you are
...`); handed to an agent every turn it would cost tokens and say nothing, so a sentence (or a
list item) the shipped capsule holds word for word is left out, as are the notes on rendered
sections and the markers. Sentences, not lines: a person who rewrites the first sentence of a
shipped paragraph leaves the rest of its line, whose sentence ends on the next one."""

from __future__ import annotations

import re

from strata_daemon.capsule import document

_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

# (section, heading in the block), in the order an agent needs them.
PARTS = (("identity", "Who I am"), ("operational_rules", "Rules"), ("pending_tasks", "Pending"))


def condensed(text: str, shipped: str = "") -> list[tuple[str, list[str]]]:
    """(heading, lines) for each part of PARTS that holds something of its own, in order."""
    doc = document.parse(text)
    template, words = {ln.strip() for ln in shipped.splitlines()}, " ".join(shipped.split())
    starts = [at for _, at in doc.sections] + [len(doc.lines)]
    out = []
    for (key, at), end in zip(doc.sections, starts[1:]):
        heading = dict(PARTS).get(key)
        if heading is None:
            continue
        lines: list[str] = []
        paragraph: list[str] = []
        for raw in [*doc.lines[at + 1:end], ""]:
            line = raw.strip()
            if line and not _ITEM.match(line) and not document.is_marker(line) and \
                    not (line.startswith("*(") and line.endswith(")*")):
                paragraph.append(line)
                continue
            if paragraph:  # its own sentences, the shipped ones left out
                own = [x for x in _SENTENCE_END.split(" ".join(paragraph)) if x and x not in words]
                lines += [" ".join(own)] if own else []
                paragraph = []
            if line and _ITEM.match(line) and line not in template:
                lines.append(line)
        if lines:
            out.append((heading, lines))
    order = [h for _, h in PARTS]
    return sorted(out, key=lambda part: order.index(part[0]))
