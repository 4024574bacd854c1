"""The capsule condensed for a context block: who the agent is, its rules and its pending work,
without what nobody wrote. Pure: no I/O.

A capsule a person never edited still holds the shipped guidance (`Write here who you are
...`); handed to an agent every turn it would cost tokens and say nothing, so a line the
shipped capsule holds word for word is left out, as are the notes on rendered sections and
the markers."""

from __future__ import annotations

from strata_daemon.capsule import document

# (section, heading in the block), in the order an agent needs them.
PARTS = (("identity", "Who I am"), ("operational_rules", "Rules"), ("pending_tasks", "Pending"))


def condensed(text: str, shipped: str = "") -> list[tuple[str, list[str]]]:
    """(heading, lines) for each part of PARTS that holds something of its own, in order."""
    doc = document.parse(text)
    template = {ln.strip() for ln in shipped.splitlines()}
    starts = [at for _, at in doc.sections] + [len(doc.lines)]
    out = []
    for (key, at), end in zip(doc.sections, starts[1:]):
        heading = dict(PARTS).get(key)
        if heading is None:
            continue
        lines = []
        for raw in doc.lines[at + 1:end]:
            line = raw.strip()
            if (not line or line in template or document.is_marker(line)
                    or (line.startswith("*(") and line.endswith(")*"))):
                continue
            lines.append(line)
        if lines:
            out.append((heading, lines))
    order = [h for _, h in PARTS]
    return sorted(out, key=lambda part: order.index(part[0]))
