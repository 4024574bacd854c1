"""`strata bench capture`: fact capture's precision and recall on labelled lines (states that
should become facts, events that should stay memories), on the development sets the judge and
the statement forms were tuned on and on a held-out set written apart from the code
(tests/data/LABELLING.md says how the sets are written)."""

from __future__ import annotations

from pathlib import Path

from strata_daemon.app.public import fact_rules
from strata_daemon.config.settings import KINDS
from strata_daemon.errors import InvalidInput

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
# Eight authors wrote the development lines (the judge and the statement forms were tuned on
# them) and a ninth the held-out lines; two more wrote lines of conversation (tests/data/LABELLING.md),
# one set to tune on, one only scored.
SETS = {"dev": tuple(DATA / f"capture_dev{n}.tsv" for n in ("", "2", "3", "4", "5", "6", "7", "8")),
        "held_out": (DATA / "capture_heldout.tsv",),
        "dev_talk": (DATA / "capture_talk_dev.tsv",),
        "held_out_talk": (DATA / "capture_talk_heldout.tsv",)}


def labelled(paths: tuple[Path, ...]) -> list[tuple[str, str]]:
    """(label, line) pairs of a set's files, each line once: `state` or `event`, a tab, the
    line; `#` starts a comment."""
    out, seen = [], set()
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise InvalidInput(f"cannot read the labelled set {path}: {e.strerror}",
                               hint="`strata bench capture` reads tests/data/ of a source checkout") from None
        for n, raw in enumerate(text.splitlines(), 1):
            if not raw.strip() or raw.startswith("#"):
                continue
            label, sep, line = raw.partition("\t")
            if not sep or label not in ("state", "event") or not line.strip():
                raise InvalidInput(f"{path.name} line {n}: expected `state` or `event`, a tab, then the line")
            if line not in seen:
                seen.add(line)
                out.append((label, line))
    return out


def score(pairs: list[tuple[str, str]]) -> dict:
    """Capture as a new home does it (built-in rules and statements) on each line, as an observation."""
    rules = fact_rules.compile_rules(None, KINDS)
    tp = fp = fn = tn = 0
    wrong = []
    for label, text in pairs:
        captured = fact_rules.capture(rules, text, "observation", sentences=True)
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


def held_out(sets: dict[str, tuple[Path, ...]]) -> dict[str, list[tuple[str, str]]]:
    """Each set's lines; a held-out line that a development set also holds was tuned on, so it
    is scored with the development sets only."""
    tuned = {text for name, paths in sets.items() if name.startswith("dev") for _, text in labelled(paths)}
    return {name: labelled(paths) if name.startswith("dev") else [p for p in labelled(paths) if p[1] not in tuned]
            for name, paths in sets.items()}


def bench_capture(sets: dict[str, tuple[Path, ...]] | None = None) -> dict:
    """Precision and recall of each set; a held-out set's wrong lines are not listed (it is only
    scored, never read line by line)."""
    sets = sets or SETS
    out = {}
    for name, pairs in held_out(sets).items():
        r = score(pairs)
        if not name.startswith("dev"):
            r.pop("wrong")
        out[name] = {"paths": [str(p) for p in sets[name]], **r}
    return {"benchmark": "capture", "sets": out}


def format_capture(r: dict) -> str:
    lines = ["capture benchmark (precision: captured lines that are states; recall: states captured)"]
    for name, s in r["sets"].items():
        lines.append(f"  {name:<9} {s['lines']:>4} lines ({s['states']} states)  precision {s['precision']}  "
                     f"recall {s['recall']}")
    for name, s in r["sets"].items():
        for w in s.get("wrong", ()):
            got = ", ".join(w["captured"]) or "nothing"
            lines.append(f"  {name} miss: {w['label']} {w['line']!r} -> {got}")
    return "\n".join(lines)
