"""`strata bench locomo --lived`: does a home that has been used recall as well as a fresh one?

Each conversation is stored once (turns at their real dates) and the home is copied before any
question is asked. The fresh copy answers every question, as `bench locomo` does. The lived
copy is used the way an agent uses strata: half of the questions (every other one) are asked
through recall and answered with feedback (`success` naming the evidence turns as the memories
used when the recall found some of them, else `failure` naming them), then tonight's phases run
as the daemon runs them, every one in the daemon's order, at the real current time. Then the
other half is asked, and scored against the fresh copy's answers to the same questions: with
the benchmark's mode, and with none (the strategy the arena chose that night, which an agent
that names no mode gets).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench import stores
from strata_bench.locomo import Run, ask_all, result_of
from strata_bench.locomo_data import (
    KS,
    Conversation,
    Question,
    dia_ranking,
    evidence_recall,
    question_scores,
    summarise,
    turn_text,
)
from strata_bench.locomo_home import Stored, recall_settings, stored_home
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.registry import PHASES
from strata_daemon.app.phases.runs import run_phase
from strata_daemon.config.home import Home

METRICS = ("recall_at_5", "recall_at_10")


def split(questions: Sequence[Question]) -> tuple[list[Question], list[Question]]:
    """(asked first, measured): alternate questions, so both halves span the conversation's categories."""
    return list(questions[0::2]), list(questions[1::2])


async def answer_as_agent(mem: Memory, q: Question, stored: Stored, *, mode: str | None) -> dict:
    """One question asked the way an agent asks it, with the feedback an agent gives: the
    evidence turns are the memories it used (it found them through this recall or by looking
    further); the recall succeeded when it returned some of them."""
    r = await mem.recall(q.text, k=max(KS), mode=mode)
    episode_of = {d: e for e, ds in stored.dia_ids.items() for d in ds}
    used = sorted({episode_of[d] for d in q.evidence if d in episode_of})
    found = evidence_recall(q.evidence, dia_ranking([h["id"] for h in r["hits"]], stored.dia_ids), max(KS)) > 0
    await mem.feedback(r["recall_id"], "success" if found else "failure", used=used or None)
    return r


async def night(mem: Memory) -> dict:
    """Every daemon phase once, in the daemon's order, as `strata run` would run them tonight:
    {phase: {"status", "seconds", "result" or "error"}}."""
    out = {}
    for phase in PHASES:
        r = await run_phase(mem, phase.name, actor="bench")
        out[phase.name] = {k: v for k, v in r.items() if k != "phase"}
    return out


def copy_home(home: Home, root: Path) -> Home:
    """A closed home's files at `root`: the same memories, vectors and settings."""
    shutil.copytree(home.root, root, symlinks=True)
    text = home.config_path.read_text(encoding="utf-8")
    found = next((line for line in text.splitlines() if line.startswith("store.url = ")), None)
    if found is not None:  # its database copied too
        url = stores.new_database(template=found.split("=", 1)[1].strip().strip('"'))
        (root / home.config_path.name).write_text(text.replace(found, stores.toml_line(url).strip()), encoding="utf-8")
    return Home(root)


async def live_first_half(mem: Memory, conv: Conversation, stored: Stored, mode: str,
                          progress: Callable[[int], None] | None = None) -> tuple[dict, float]:
    """The first half of the questions asked with feedback, then a night: (phases, its seconds)."""
    for q in split(conv.questions)[0]:
        await answer_as_agent(mem, q, stored, mode=mode)
        if progress:
            progress(1)
    started = time.perf_counter()
    phases = await night(mem)
    return phases, time.perf_counter() - started


async def live(home: Home, conv: Conversation, stored: Stored, mode: str,
               progress: Callable[[int], None] | None = None) -> dict:
    """The lived copy: the first half asked with feedback, a night, the second half measured."""
    measured = split(conv.questions)[1]
    async with await Memory.open(home, actor="bench") as mem:
        phases, night_seconds = await live_first_half(mem, conv, stored, mode, progress)
        scored, by_arena, cold_hits, hits = [], [], 0, 0
        for q in measured:
            # As asked with the benchmark's mode, and with none: the strategy the arena chose
            # tonight, which is what an agent that names no mode gets.
            for rows, asked in ((scored, mode), (by_arena, None)):
                r = await mem.recall(q.text, k=max(KS), mode=asked)
                rows.append((q.category, question_scores(q.evidence, dia_ranking([h["id"] for h in r["hits"]],
                                                                                   stored.dia_ids))))
                if asked is not None:
                    cold_hits += sum(h["tier"] == "cold" for h in r["hits"])
                    hits += len(r["hits"])
            if progress:
                progress(1)
        status = await mem.status()
    return {"scored": scored, "by_arena": by_arena, "strategy": status["recall_strategy"]["arm"],
            "night_seconds": night_seconds, "phases": phases, "phase": status["phase"],
            "by_state": status["by_state"], "by_tier": status.get("by_tier"), "cold_hit_share":
            round(cold_hits / hits, 4) if hits else 0.0}


def lived_steps(conversations: Sequence[Conversation]) -> int:
    return sum(len(c.questions) for c in conversations)


def _delta(lived: Mapping[str, Any], fresh: Mapping[str, Any]) -> dict:
    return {m: round(lived[m] - fresh[m], 4) for m in METRICS}


def compare(fresh: list[tuple[int, dict]], lived: list[tuple[int, dict]]) -> dict:
    """Fresh and lived on the same measured questions, overall and per category, with the change."""
    f, li = summarise(fresh), summarise(lived)
    cats = {key: {"name": c["name"], "questions": c["questions"], "fresh": {m: c[m] for m in METRICS},
                  "lived": {m: li["categories"][key][m] for m in METRICS},
                  "delta": _delta(li["categories"][key], c)} for key, c in f["categories"].items()}
    return {"questions": len(lived), "fresh": {m: f[m] for m in METRICS}, "lived": {m: li[m] for m in METRICS},
            "delta": _delta(li, f), "categories": cats}


async def bench_locomo_lived(data: str | Path, conversations: Sequence[Conversation], *, mode: str = "balanced",
                             settings: Mapping[str, Any] | None = None,
                             progress: Callable[[int], None] | None = None,
                             store_progress: Callable[[int], None] | None = None) -> dict:
    """`bench locomo`'s result on the fresh homes, with a "lived" block comparing them with lived
    copies on the measured half of the questions."""
    started = time.perf_counter()
    settings = {**(settings or {}), "store.attention_window_seconds": 0}
    from strata_bench import hooked

    runs: list[Run] = []
    lived: list[dict] = []
    hooked_runs: list[dict] = []
    for conv in conversations:
        texts = [turn_text(t.raw) for t in conv.turns]
        with tempfile.TemporaryDirectory(prefix="strata-lived-") as tmp:
            home, stored = await stored_home(Path(tmp) / "fresh", conv, texts, mode, settings, store_progress)
            copy = copy_home(home, Path(tmp) / "lived")
            hooked_copy = copy_home(home, Path(tmp) / "hooked")
            async with await Memory.open(home, actor="bench") as mem:
                run = Run(recall_settings(mem.config), (await mem.embedder()).name)
                await ask_all(mem, conv, stored, mode, run, progress, store_progress)
            runs.append(run)
            lived.append({"name": conv.name, **await live(copy, conv, stored, mode, progress)})
            hooked_runs.append(await hooked.hooked(hooked_copy, conv, stored, mode, split, night))
    result = result_of(data, conversations, runs, mode, started)
    fresh_measured = [s for r in runs for s in split(r.scored["strata"])[1]]
    by_arena = summarise([s for r in lived for s in r["by_arena"]])
    result["lived"] = {
        **compare(fresh_measured, [s for r in lived for s in r["scored"]]),
        "arena_choice": {**{m: by_arena[m] for m in METRICS},
                         "delta": _delta(by_arena, summarise(fresh_measured))},
        "night_seconds": {"median": round(statistics.median(r["night_seconds"] for r in lived), 3),
                          "max": round(max(r["night_seconds"] for r in lived), 3)},
        "per_conversation": [{"name": r["name"], "phase": r["phase"], "strategy": r["strategy"],
                              "by_state": r["by_state"],
                              "by_tier": r["by_tier"], "cold_hit_share": r["cold_hit_share"],
                              "night_seconds": round(r["night_seconds"], 3),
                              "night": {p: v.get("result", v.get("error")) for p, v in r["phases"].items()
                                        if p in ("consolidate", "decay", "arena", "fold")},
                              "failed_phases": [p for p, v in r["phases"].items() if v["status"] != "ok"]}
                             for r in lived],
    }
    result["hooked"] = hooked.compare([row for r in runs for row in split(r.context)[1]], hooked_runs)
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def format_lived(result: Mapping[str, Any]) -> str:
    lv = result["lived"]
    lines = [f"lived vs fresh on the measured half ({lv['questions']} questions; the other half was asked first "
             "with feedback, then one night of phases)",
             f"  {'':<12}{'n':>5}    fresh @5 @10      lived @5 @10      change @5 @10"]
    rows = [("overall", lv["questions"], lv)] + [(c["name"], c["questions"], c) for c in lv["categories"].values()]
    for name, n, c in rows:
        lines.append(f"  {name:<12}{n:>5}    {c['fresh']['recall_at_5']:.4f} {c['fresh']['recall_at_10']:.4f}"
                     f"    {c['lived']['recall_at_5']:.4f} {c['lived']['recall_at_10']:.4f}"
                     f"    {c['delta']['recall_at_5']:+.4f} {c['delta']['recall_at_10']:+.4f}")
    a = lv["arena_choice"]
    lines.append(f"  {'no mode':<12}{lv['questions']:>5}                      {a['recall_at_5']:.4f} "
                 f"{a['recall_at_10']:.4f}    {a['delta']['recall_at_5']:+.4f} {a['delta']['recall_at_10']:+.4f}"
                 "  (the arena's choice)")
    lines.append(f"  night: median {lv['night_seconds']['median']} s, max {lv['night_seconds']['max']} s")
    for c in lv["per_conversation"]:
        cons = c["night"].get("consolidate")
        cons = cons if isinstance(cons, dict) else {}
        counts = ", ".join(f"{k} {v}" for k, v in cons.items() if isinstance(v, int) and v and k != "run")
        lines.append(f"    {c['name']:<10} phase {c['phase']:<8} strategy {c['strategy']:<18} "
                     f"cold hits {c['cold_hit_share']:.0%}  "
                     f"consolidation: {counts or 'nothing'}" + (f"  FAILED: {', '.join(c['failed_phases'])}"
                                                                 if c["failed_phases"] else ""))
    if "hooked" in result:
        h = result["hooked"]
        lines.append(f"hooked vs fresh, evidence inside `strata context`'s block on the measured half "
                     f"({h['questions']} questions; the first half asked through the prompt hook, "
                     f"{h['feedback_given']} of {h['asked_through_the_hook']} replies citing evidence, then a night)")
        lines += [f"  {m.removeprefix('context_within_'):>5} tokens  fresh {h['fresh'][m]:.4f}  hooked "
                  f"{h['hooked'][m]:.4f}  change {h['delta'][m]:+.4f}" for m in h["fresh"]]
    return "\n".join(lines)
