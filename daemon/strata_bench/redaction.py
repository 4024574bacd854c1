"""`strata bench redaction`: are credentials replaced before anything is stored, and do the
lookalikes survive? Labelled lines of tool output, shell sessions, configuration and prose
(tests/data/secrets_*.jsonl, written apart from the rules): `dev`, looked at while writing
them (the first held-out set among them, since its misses were read); `held_out`, only scored.

- recall: the labelled secrets whose every occurrence was replaced whole, by kind;
- false positives: replaced spans that touch no labelled secret, against the lookalikes (runs
  of seven or more characters holding a digit that are not a secret: SHAs, UUIDs, checksums,
  digests, versions, ids);
- time: the redactor per line, median and p95 (the cost every observation pays), and per
  line without a credential;
- through a home: every line stored, then every file of the home searched for every secret.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from strata_daemon.app.memory import Memory
from strata_daemon.base.credentials import Redactor
from strata_daemon.config.home import init_home

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
SETS = {"dev": tuple(DATA / f"secrets_dev{n}.jsonl" for n in ("", "2", "3", "4", "5", "6")),
        "held_out": (DATA / "secrets_heldout.jsonl",)}
_LOOKALIKE = re.compile(r"[A-Za-z0-9_\-./+=:]{7,}")


def load(*paths: Path) -> list[dict]:
    return [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _occurrences(text: str, value: str) -> list[tuple[int, int]]:
    out, at = [], 0
    while (i := text.find(value, at)) >= 0:
        out.append((i, i + len(value)))
        at = i + 1
    return out


def score(items: list[dict], redactor: Redactor) -> dict:
    found, total, false, lookalikes, misses, wrong = Counter(), Counter(), 0, 0, [], []
    times, plain_times = [], []
    for item in items:
        text = item["text"]
        started = time.perf_counter()
        spans = redactor.find(text)
        (times if item["secrets"] else plain_times).append(time.perf_counter() - started)
        covered = [(f.start, f.end) for f in spans]
        secret_spans = [span for s in item["secrets"] for span in _occurrences(text, s["value"])]
        for s in item["secrets"]:
            total[s["kind"]] += 1
            whole = all(all(any(a <= c < b for a, b in covered) for c in range(x, y))
                        for x, y in _occurrences(text, s["value"]))
            found[s["kind"]] += whole
            if not whole:
                misses.append({"kind": s["kind"], "text": text[:160]})
        for f in spans:
            if not any(f.start < b and a < f.end for a, b in secret_spans):
                false += 1
                wrong.append({"kind": f.kind, "text": text[:160]})
        lookalikes += sum(1 for m in _LOOKALIKE.finditer(text) if re.search(r"\d", m.group())
                          and not any(m.start() < b and a < m.end() for a, b in secret_spans))
    n = sum(total.values())
    ms = sorted(1000 * t for t in times + plain_times)
    return {"lines": len(items), "secrets": n, "recall": round(sum(found.values()) / n, 4) if n else None,
            "by_kind": {k: {"secrets": total[k], "found": found[k]} for k in sorted(total)},
            "false_positives": false, "lookalikes": lookalikes,
            "false_positive_rate": round(false / lookalikes, 4) if lookalikes else None,
            "ms_per_line": {"median": round(statistics.median(ms), 3), "p95": round(ms[int(0.95 * (len(ms) - 1))], 3)},
            "ms_per_plain_line": round(1000 * statistics.median(plain_times), 3) if plain_times else None,
            "_misses": misses, "_wrong": wrong}


async def through_home(items: list[dict]) -> dict:
    """Every line stored in a fresh home; then every file of it searched for every secret."""
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home = Path(tmp) / "home"
        init_home(home)
        mem = await Memory.open(home)
        try:
            await mem.observe_many([{"content": item["text"]} for item in items])
        finally:
            await mem.close()
        raw = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    # A value some other line holds as no secret (`changeme` in a README's words) is kept there.
    values = {s["value"] for item in items for s in item["secrets"]}
    plain = {v for item in items for v in values - {s["value"] for s in item["secrets"]} if v in item["text"]}
    left_in = [s for item in items for s in item["secrets"] if s["value"] not in plain and s["value"].encode() in raw]
    left, held = sorted({s["kind"] for s in left_in}), len(left_in)
    return {"secrets_in_files": held, "kinds_in_files": left}


async def bench_redaction(*, only: str | None = None, misses: bool = False) -> dict:
    out: dict = {"benchmark": "redaction", "sets": {}}
    redactor = Redactor(key=b"bench")
    for name, paths in SETS.items():
        if only and name != only:
            continue
        items = load(*paths)
        r = score(items, redactor)
        shown = misses and name == "dev"  # the held-out lines' misses are not printed: nothing tunes on them
        r.update(misses=r.pop("_misses"), wrong=r.pop("_wrong")) if shown else (r.pop("_misses"), r.pop("_wrong"))
        r.update(await through_home(items))
        out["sets"][name] = r
    return out


def format_redaction(r: dict) -> str:
    lines = ["redaction (tests/data/secrets_*.jsonl)"]
    for name, s in r["sets"].items():
        lines.append(f"  {name}: {s['lines']} lines, {s['secrets']} secrets: recall {s['recall']:.3f}; "
                     f"{s['false_positives']} false positives among {s['lookalikes']} lookalikes "
                     f"({s['false_positive_rate']:.3%}); {s['ms_per_line']['median']} ms a line (p95 "
                     f"{s['ms_per_line']['p95']}); stored in a home: {s['secrets_in_files']} secrets left in its files")
        missed = [f"{k} {v['found']}/{v['secrets']}" for k, v in s["by_kind"].items() if v["found"] < v["secrets"]]
        if missed:
            lines.append("    missed: " + ", ".join(missed))
        for m in s.get("misses", ()):
            lines.append(f"    miss {m['kind']}: {m['text']}")
        for m in s.get("wrong", ()):
            lines.append(f"    false {m['kind']}: {m['text']}")
    return "\n".join(lines)
