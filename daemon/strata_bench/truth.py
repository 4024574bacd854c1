"""What the corpus generator knows, held against what strata shows: whether each line of a
dossier is about its topic, whether the capsule's facts are states and its tasks open tasks.

The judge is the generator's own Label of each memory (corpus.labelled), never strata's
filters: a line is about a topic when every memory it cites was generated about it.
"""

from __future__ import annotations

import re
from typing import Iterable

from strata_bench import corpus
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import capsule_document

_ITEM = re.compile(r"^- (.*) \[((?:[ef]\d+)(?:, [ef]\d+)*)\]$")


async def labels_by_id(mem: Memory, n: int, seed: int) -> dict[int, corpus.Label]:
    """Each stored memory's Label. Contents are unique but for the generator's exact repeats,
    which carry their original's label (and were folded into it at import)."""
    by_content = {o["content"]: label for o, label in corpus.labelled(n, seed=seed)}
    return {e["id"]: by_content[e["content"]] async for e in mem.export() if e["content"] in by_content}


def dossier_lines(text: str) -> list[tuple[str, list[int]]]:
    """A rendered dossier's cited lines: (text, the memory ids it cites)."""
    out = []
    for line in text.splitlines():
        m = _ITEM.match(line)
        if m:
            out.append((m.group(1), [int(c[1:]) for c in m.group(2).split(", ") if c[0] == "e"]))
    return out


def on_topic(text: str, ids: list[int], subject: str, labels: dict[int, corpus.Label]) -> bool:
    """Every memory the line cites was generated about the subject; a line citing none (a fact
    a person set) must name the subject."""
    if not ids:
        return subject.casefold() in text.casefold()
    return all(i in labels and subject in labels[i].subjects for i in ids)


def topic_precision(texts: dict[str, str], subjects: dict[str, str], labels: dict[int, corpus.Label]) -> dict:
    """Lines on topic / lines, per dossier (topic -> its text) and as a mean and a minimum over
    the dossiers with at least one line."""
    by_topic = {}
    for topic, text in texts.items():
        lines = dossier_lines(text)
        good = sum(on_topic(t, ids, subjects[topic], labels) for t, ids in lines)
        by_topic[topic] = {"lines": len(lines), "on_topic": good,
                           "precision": round(good / len(lines), 4) if lines else None}
    shares = [v["precision"] for v in by_topic.values() if v["precision"] is not None]
    return {"mean": round(sum(shares) / len(shares), 4) if shares else None, "min": min(shares, default=None),
            "lines": sum(v["lines"] for v in by_topic.values()),
            "on_topic": sum(v["on_topic"] for v in by_topic.values()),
            "empty_dossiers": sum(1 for v in by_topic.values() if not v["lines"]), "by_topic": by_topic}


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def capsule_blocks(text: str, facts: Iterable[dict], labels: dict[int, corpus.Label],
                   visible: Iterable[int]) -> dict:
    """The rendered capsule's facts and tasks judged by the generator.

    - A fact line is a state when the memory its value came from is a generated state line
      (a fact set by a person or an edit counts as one; a line no fact explains does not).
    - A task line is an open task when its memory opened a generated task that no generated
      line closed. `visible` are the memories the render could draw tasks from: the generated
      tasks open among them are the ones it should have shown.
    """
    doc = capsule_document.parse(text)
    fact_lines = doc.block_lines("facts") if "facts" in doc.blocks else []
    task_lines = doc.block_lines("tasks") if "tasks" in doc.blocks else []
    source_of = {capsule_document.inert(f"- {f['label']}: {' '.join(str(f['value']).split())}"): f.get("source") or ""
                 for f in facts}
    states = 0
    for line in fact_lines:
        source = source_of.get(line)
        if source is None:
            continue
        if not source.startswith("episode:"):
            states += 1
        else:
            label = labels.get(int(source.split(":", 1)[1]))
            states += bool(label and label.state)
    closed = {label.task[1] for label in labels.values() if label.task and label.task[0] == "close"}

    def is_open(i: int) -> bool:
        label = labels.get(i)
        return bool(label and label.task and label.task[0] == "open" and label.task[1] not in closed)

    shown = [int(m.group(1)) for line in task_lines if (m := re.search(r"\[e(\d+)\]$", line))]
    opened = sum(map(is_open, shown))
    should = sum(map(is_open, set(visible)))
    return {"fact_lines": len(fact_lines), "fact_state_lines": states,
            "fact_state_share": _share(states, len(fact_lines)),
            "task_lines": len(task_lines), "task_open_lines": opened,
            "task_open_share": _share(opened, len(task_lines)),
            "open_tasks_visible": should}
