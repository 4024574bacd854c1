"""`strata bench capture`: fact capture's precision and recall on labelled lines (states that
should become facts, events that should stay memories), on the development set the judge and
the statement forms were tuned on and on a held-out set written apart from the code."""

from __future__ import annotations

from pathlib import Path

from ..facts.rules import capture, compile_rules
from ..settings import KINDS

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
# The development lines (the judge and the statement forms were tuned on them) come from two
# authors; the held-out lines were written apart from the code and are only scored.
SETS = {"dev": (DATA / "capture_dev.tsv", DATA / "capture_dev2.tsv"), "held_out": (DATA / "capture_heldout.tsv",)}


def labelled(paths: tuple[Path, ...]) -> list[tuple[str, str]]:
    """(label, line) pairs of a set's files: `state` or `event`, a tab, the line; `#` starts a
    comment."""
    out = []
    for path in paths:
        for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not raw.strip() or raw.startswith("#"):
                continue
            label, sep, text = raw.partition("\t")
            if not sep or label not in ("state", "event") or not text.strip():
                raise ValueError(f"{path.name} line {n}: expected `state` or `event`, a tab, then the line")
            out.append((label, text))
    return out


def score(pairs: list[tuple[str, str]]) -> dict:
    """Capture as a new home does it (built-in rules and statements) on each line, as an observation."""
    rules = compile_rules(None, KINDS)
    tp = fp = fn = tn = 0
    wrong = []
    for label, text in pairs:
        captured = capture(rules, text, "observation", sentences=True)
        if captured and label == "state":
            tp += 1
        elif captured:
            fp += 1
            wrong.append({"line": text, "label": label, "captured": [f"{c.key} = {c.value}" for c in captured]})
        elif label == "state":
            fn += 1
            wrong.append({"line": text, "label": label, "captured": []})
        else:
            tn += 1
    return {"lines": len(pairs), "states": tp + fn, "events": fp + tn, "captured": tp + fp,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None, "wrong": wrong}


def bench_capture(sets: dict[str, tuple[Path, ...]] | None = None) -> dict:
    return {"benchmark": "capture", "sets": {name: {"paths": [str(p) for p in paths], **score(labelled(paths))}
                                             for name, paths in (sets or SETS).items()}}


def format_capture(r: dict) -> str:
    lines = ["capture benchmark (precision: captured lines that are states; recall: states captured)"]
    for name, s in r["sets"].items():
        lines.append(f"  {name:<9} {s['lines']:>4} lines ({s['states']} states)  precision {s['precision']}  "
                     f"recall {s['recall']}")
    for name, s in r["sets"].items():
        for w in s["wrong"]:
            got = ", ".join(w["captured"]) or "nothing"
            lines.append(f"  {name} miss: {w['label']} {w['line']!r} -> {got}")
    return "\n".join(lines)
