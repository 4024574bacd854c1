"""`strata bench locomo --folds K`: recall settings chosen on some conversations and scored on
the others, so that a figure says what to expect on conversations nobody tuned on.

Each conversation is stored once, in its own temporary home. Every point of a small grid of
recall settings then ranks every question of every home, through the ranking `recall` uses
(nothing is recorded, so no point sees another's traces). The conversations are dealt into K
folds; for each fold, the point best on the other folds' questions (the mean of recall@5 and
@10) is scored on the fold's own. Each question is scored once, by the fold that holds its
conversation: the held-out figure. Beside it: the chosen points on the questions they were
chosen on (tuned-on), the settings the home has now on every question, and the point the
protocol chooses on all conversations, which is what the project ships.

With `--lived`, a point is also chosen by the home a user has: a copy of each home lives first
(every other question asked with feedback, then a night of phases, as `--lived` does, under the
home's own settings), and every point ranks the other half of the questions on it. A point's
objective is then the mean of its objective on the fresh homes and on the lived ones, and the
held-out figure of the lived copies is reported beside the fresh homes' on the same questions.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench.lived import copy_home, live_first_half, split
from strata_bench.locomo import context_summary, through_context
from strata_bench.locomo_data import (
    BUDGET_K,
    Conversation,
    Question,
    budget_ranking,
    dia_ranking,
    question_scores,
    summarise,
    turn_text,
)
from strata_bench.locomo_home import Stored, stored_home
from strata_daemon.app.memory import Memory

# Around the shipped values of the settings that shape fusion and the session structure.
GRID: dict[str, tuple[Any, ...]] = {
    "recall.vector_weight": (0.5, 0.7, 0.9),
    "recall.spread_to_next": (0.5, 0.7),
    "recall.spread_to_previous": (0.3, 0.45),
    "recall.session_weight": (0.3, 0.45, 0.6),
}
K_RANKED = 10
AT_K = ("recall_at_5", "recall_at_10")


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def deal(names: Sequence[str], folds: int) -> list[list[str]]:
    """Conversations dealt round-robin into `folds` groups (every group non-empty)."""
    return [list(names[i::folds]) for i in range(folds)]


def objective(rows: Sequence[Mapping[str, float]]) -> float:
    """What a point is chosen by: the mean of recall@5 and recall@10 over the questions."""
    return statistics.fmean((r["recall_at_5"] + r["recall_at_10"]) / 2 for r in rows) if rows else 0.0


def means(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    return {m: round(statistics.fmean(r[m] for r in rows), 4) for m in AT_K}


def choose(scores: Mapping[int, Mapping[str, list]], train: Sequence[str],
           lived: Mapping[int, Mapping[str, list]] | None = None) -> int:
    """The point best on the training conversations (on the fresh and the lived homes alike when
    there are lived ones); the first of equals (grid order)."""
    def on(table: Mapping[int, Mapping[str, list]], point: int) -> float:
        return objective([s for name in train for _, s in table[point][name]])
    if lived:
        return max(sorted(scores), key=lambda p: (on(scores, p) + on(lived, p)) / 2)
    return max(sorted(scores), key=lambda p: on(scores, p))


async def _ranked_ids(mem: Memory, question: str, k: int, arm: tuple[str, Mapping]) -> list[int]:
    hits, _ = await mem.rank(question, k, mode=arm[0], changes=arm[1])
    return [h["id"] for h in hits]


async def _score(mem: Memory, questions: Sequence[Question], stored: Stored, arm: tuple[str, Mapping], *,
                 budget: bool) -> list[tuple[int, dict]]:
    rows = []
    for q in questions:
        ranked = dia_ranking(await _ranked_ids(mem, q.text, K_RANKED, arm), stored.dia_ids)
        longer = budget_ranking(await _ranked_ids(mem, q.text, BUDGET_K, arm), stored.dia_ids, stored.tokens) \
            if budget else None
        scores = question_scores(q.evidence, ranked, longer)
        if budget:  # and what `strata context`'s block holds at each budget, with the same settings
            scores.update(await through_context(mem, q, stored, arm[0], arm[1]))
        rows.append((q.category, scores))
    return rows


def _arm(mode: str, point: Mapping[str, Any] | None, name: str) -> tuple[str, Mapping]:
    """A grid point as recall ranks with it: the mode and the settings laid over the home's."""
    return mode, dict(point or {})


async def _homes(tmp: Path, conversations: Sequence[Conversation], mode: str, settings: Mapping[str, Any],
                 lived: bool, progress: Callable[[int], None] | None,
                 store_progress: Callable[[int], None] | None) -> tuple[list, list[Path]]:
    """Each conversation stored once in its own home under `tmp`, as (home, stored); with `lived`,
    a copy of each home that has lived through the first half of its questions."""
    homes = []
    for i, conv in enumerate(conversations):
        texts = [turn_text(t.raw) for t in conv.turns]
        homes.append(await stored_home(tmp / f"c{i}", conv, texts, mode, settings, store_progress))
    copies = []
    if lived:
        for i, (conv, (home, stored)) in enumerate(zip(conversations, homes)):
            copies.append(copy_home(home, tmp / f"lived{i}"))
            async with await Memory.open(copies[-1], actor="bench") as mem:
                await live_first_half(mem, conv, stored, mode, progress)
    return homes, copies


async def _grid_scores(conversations: Sequence[Conversation], points: Sequence[Mapping[str, Any]], mode: str,
                       mems: Sequence[Memory], lived_mems: Sequence[Memory], homes: Sequence,
                       progress: Callable[[int], None] | None) -> tuple[dict, dict]:
    """Every point's rows on every conversation: on the fresh homes every question, on the lived
    copies the measured half."""
    scores: dict[int, dict[str, list]] = {i: {} for i in range(len(points))}
    # The lived copies' rows: the measured half of each conversation's questions.
    lived_scores: dict[int, dict[str, list]] = {i: {} for i in range(len(points))}
    for i, point in enumerate(points):
        arm = _arm(mode, point, f"p{i}")
        for conv, mem, (_, stored) in zip(conversations, mems, homes):
            scores[i][conv.name] = await _score(mem, conv.questions, stored, arm, budget=False)
            if progress:
                progress(len(conv.questions))
        for conv, mem, (_, stored) in zip(conversations, lived_mems, homes):
            measured = split(conv.questions)[1]
            lived_scores[i][conv.name] = await _score(mem, measured, stored, arm, budget=False)
            if progress:
                progress(len(measured))
    return scores, lived_scores


async def _held_out(conversations: Sequence[Conversation], groups: Sequence[Sequence[str]],
                    points: Sequence[Mapping[str, Any]], mode: str, scores: dict, lived_scores: dict | None,
                    mems: Sequence[Memory], homes: Sequence) -> tuple[list[dict], dict[str, int], dict[str, list]]:
    """Each fold's point, chosen on the other folds, scored on the fold's own conversations:
    (per_fold, each conversation's point, each conversation's rows under it)."""
    names = [c.name for c in conversations]
    chosen_rows: dict[str, list] = {}
    chosen: dict[str, int] = {}  # each conversation's point, chosen without it
    per_fold = []
    for held in groups:
        train = [n for n in names if n not in held]
        best = choose(scores, train, lived_scores)
        for conv, mem, (_, stored) in zip(conversations, mems, homes):
            if conv.name in held:  # again, with the longer list the budget figures need
                chosen[conv.name] = best
                chosen_rows[conv.name] = await _score(mem, conv.questions, stored,
                                                      _arm(mode, points[best], f"p{best}"), budget=True)
        tuned = [s for n in train for _, s in scores[best][n]]
        held_rows = [s for n in held for _, s in chosen_rows[n]]
        fold = {"held_out": held, "chosen": points[best], "questions": len(held_rows),
                "tuned_on": means(tuned), "held_out_scores": means(held_rows)}
        if lived_scores is not None:
            fold["lived_held_out_scores"] = means([s for n in held for _, s in lived_scores[best][n]])
        per_fold.append(fold)
    return per_fold, chosen, chosen_rows


def _lived_block(names: Sequence[str], chosen: Mapping[str, int], chosen_rows: Mapping[str, list],
                 lived_scores: Mapping[int, Mapping[str, list]], lived_defaults: Sequence) -> dict:
    """The lived copies' held-out figure beside the fresh homes' on the same questions."""
    lived_held = [row for n in names for row in lived_scores[chosen[n]][n]]
    fresh_same = [row for n in names for row in split(chosen_rows[n])[1]]
    lv, fr = summarise(lived_held), summarise(fresh_same)
    return {
        "questions": len(lived_held), "held_out": {m: lv[m] for m in AT_K},
        "fresh_held_out_same_questions": {m: fr[m] for m in AT_K},
        "delta": {m: round(lv[m] - fr[m], 4) for m in AT_K},
        "home_settings": means([s for _, s in lived_defaults]),
    }


async def bench_folds(data: str | Path, conversations: Sequence[Conversation], *, folds: int, mode: str = "balanced",
                      settings: Mapping[str, Any] | None = None, grid: Mapping[str, Sequence[Any]] = GRID,
                      lived: bool = False, progress: Callable[[int], None] | None = None,
                      store_progress: Callable[[int], None] | None = None) -> dict:
    started = time.perf_counter()
    names = [c.name for c in conversations]
    groups = deal(names, folds)
    points = grid_points(grid)
    settings = {**(settings or {}), "store.attention_window_seconds": 0}
    defaults: list = []
    lived_defaults: list = []
    with tempfile.TemporaryDirectory(prefix="strata-folds-") as tmp:
        homes, copies = await _homes(Path(tmp), conversations, mode, settings, lived, progress, store_progress)
        mems = [await Memory.open(home, actor="bench") for home, _ in homes]
        lived_mems = [await Memory.open(copy, actor="bench") for copy in copies]
        try:
            scores, lived_scores = await _grid_scores(conversations, points, mode, mems, lived_mems, homes, progress)
            per_fold, chosen, chosen_rows = await _held_out(conversations, groups, points, mode, scores,
                                                            lived_scores if lived else None, mems, homes)
            for conv, mem, (_, stored) in zip(conversations, mems, homes):
                defaults += await _score(mem, conv.questions, stored, _arm(mode, None, "defaults"), budget=True)
            for conv, mem, (_, stored) in zip(conversations, lived_mems, homes):
                lived_defaults += await _score(mem, split(conv.questions)[1], stored, _arm(mode, None, "defaults"),
                                               budget=False)
        finally:
            for mem in mems + lived_mems:
                await mem.close()
    held_out = summarise([row for n in names for row in chosen_rows[n]])
    tuned = means([f["tuned_on"] for f in per_fold])
    best_all = choose(scores, names, lived_scores if lived else None)
    result = {
        "benchmark": "locomo_folds", "data": str(data), "conversations": len(conversations), "folds": folds,
        "mode": mode, "questions": sum(len(c.questions) for c in conversations),
        "grid": {k: list(v) for k, v in grid.items()}, "points": len(points),
        "held_out": held_out, "tuned_on": tuned,
        "held_out_context": _context_of([row for n in names for row in chosen_rows[n]]),
        "gap": {m: round(tuned[m] - held_out[m], 4) for m in AT_K},
        "per_fold": per_fold,
        "home_settings": summarise(defaults), "home_settings_context": _context_of(defaults),
        "point_scores": [{"settings": p, **means([s for n in names for _, s in scores[i][n]]),
                          **({"lived": means([s for n in names for _, s in lived_scores[i][n]])} if lived else {})}
                         for i, p in enumerate(points)],
        "protocol_choice": {"settings": points[best_all],
                            **means([s for n in names for _, s in scores[best_all][n]])},
    }
    if lived:
        result["lived"] = _lived_block(names, chosen, chosen_rows, lived_scores, lived_defaults)
        result["protocol_choice"]["lived"] = means([s for n in names for _, s in lived_scores[best_all][n]])
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def _context_of(rows: Sequence[tuple[int, Mapping[str, float]]]) -> dict:
    """The evidence inside `strata context`'s block, from rows scored with the budget figures."""
    return context_summary([(c, {m: v for m, v in r.items() if m.startswith("context_within_")}) for c, r in rows])


def format_folds(r: Mapping[str, Any]) -> str:
    h, t, d = r["held_out"], r["tuned_on"], r["home_settings"]
    lines = [f"LoCoMo, {r['conversations']} conversations in {r['folds']} folds, {r['points']} grid points, "
             f"mode {r['mode']}, {r['seconds']:.0f} s",
             f"held out (each question scored by settings chosen without its conversation): "
             f"@5 {h['recall_at_5']:.4f}  @10 {h['recall_at_10']:.4f}  "
             f"within 256/512/1024 tokens {h['evidence_within_256']:.4f} / {h['evidence_within_512']:.4f} / "
             f"{h['evidence_within_1024']:.4f}; inside `strata context`'s block "
             + " / ".join(f"{v:.4f}" for k, v in r["held_out_context"].items() if k != "categories"),
             f"tuned on (the chosen settings on the conversations they were chosen on): @5 {t['recall_at_5']:.4f}  "
             f"@10 {t['recall_at_10']:.4f}  gap {r['gap']['recall_at_5']:+.4f} / {r['gap']['recall_at_10']:+.4f}",
             "  held out by category: " + ", ".join(f"{c['name']} {c['recall_at_5']:.3f}/{c['recall_at_10']:.3f}"
                                                   for c in h["categories"].values()),
             f"this home's settings on every question: @5 {d['recall_at_5']:.4f}  @10 {d['recall_at_10']:.4f}  "
             f"within 256 tokens {d['evidence_within_256']:.4f}",
             f"the protocol's choice on all conversations: {r['protocol_choice']['settings']} "
             f"(@5 {r['protocol_choice']['recall_at_5']:.4f}, @10 {r['protocol_choice']['recall_at_10']:.4f}, tuned on all)"]
    for f in r["per_fold"]:
        lines.append(f"  fold {', '.join(f['held_out'])}: chose {f['chosen']}; tuned on @5 {f['tuned_on']['recall_at_5']:.4f}, "
                     f"held out @5 {f['held_out_scores']['recall_at_5']:.4f}")
    if "lived" in r:
        lv = r["lived"]
        lines.append(f"lived copies, held out ({lv['questions']} questions, the half asked after a night): "
                     f"@5 {lv['held_out']['recall_at_5']:.4f}  @10 {lv['held_out']['recall_at_10']:.4f}; "
                     f"fresh homes on the same questions @5 {lv['fresh_held_out_same_questions']['recall_at_5']:.4f}  "
                     f"@10 {lv['fresh_held_out_same_questions']['recall_at_10']:.4f}  "
                     f"(change {lv['delta']['recall_at_5']:+.4f} / {lv['delta']['recall_at_10']:+.4f})")
        lines.append(f"  this home's settings on the lived copies: @5 {lv['home_settings']['recall_at_5']:.4f}  "
                     f"@10 {lv['home_settings']['recall_at_10']:.4f}; the protocol's choice there: "
                     f"@5 {r['protocol_choice']['lived']['recall_at_5']:.4f}  "
                     f"@10 {r['protocol_choice']['lived']['recall_at_10']:.4f}")
    return "\n".join(lines)
