"""`strata bench locomo`: retrieval quality on LoCoMo (Maharana et al., ACL 2024).

Each conversation goes into its own temporary home, one episode per dialogue turn, and every
question is asked through `Memory.recall`, the path users get. A question scores the share of
its evidence turns (dia ids such as "D3:5") among the top k hits, as the official evaluation
does, and the share of the evidence's sessions among the top k hits' sessions. Three baselines
rank the same turns in the same run: bare FTS5 BM25 over their texts, flat cosine over the
vectors the store holds for them, and plain reciprocal rank fusion of the two.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench.locomo_baselines import BASELINES, CANDIDATES, bm25_over, nearest_by_cosine, rrf
from strata_bench.locomo_data import (
    BUDGET_K,
    BUDGETS,
    KS,
    Conversation,
    Question,
    budget_ranking,
    data_issues,
    dia_ranking,
    question_scores,
    summarise,
    turn_text,
)
from strata_bench.locomo_home import Stored, recall_settings, stored_home
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory


@dataclass
class Run:
    """What one conversation adds to the result."""
    settings: dict[str, Any]
    embedding_model: str
    scored: dict[str, list[tuple[int, dict]]] = field(
        default_factory=lambda: {name: [] for name in ("strata", *BASELINES)})  # system -> (category, scores)
    latencies: list[float] = field(default_factory=list)
    context: list[tuple[int, dict]] = field(default_factory=list)  # (category, evidence within each budget)
    modes_used: set[str] = field(default_factory=set)
    warnings: set[str] = field(default_factory=set)

    def add(self, question: Question, rankings: Mapping[str, Sequence[int]], stored: Stored,
            longer: Mapping[str, Sequence[int]] | None = None):
        """Score each system's ranking; `longer` holds a longer list for the budget figures
        (strata is asked again for more hits; a baseline's list is already long)."""
        for name, ranking in rankings.items():
            full = (longer or {}).get(name, ranking)
            self.scored[name].append((question.category, question_scores(
                question.evidence, dia_ranking(ranking, stored.dia_ids),
                budget_ranking(full, stored.dia_ids, stored.tokens))))


async def through_context(mem: Memory, q: Question, stored: Stored, mode: str,
                          changes: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The share of the question's evidence in the block `strata context` gives for it at each
    budget: the capsule and the facts it names count inside the budget. Read only (no recall is
    logged), so the questions after it meet the same home."""
    out = {}
    for budget in BUDGETS:
        block = await mem.context(q.text, budget=budget, mode=mode, record=False, changes=changes)
        given = {d for m in block["parts"]["memories"] for d in stored.dia_ids.get(m["id"], ())}
        out[f"context_within_{budget}"] = sum(e in given for e in q.evidence) / len(q.evidence) if q.evidence else 0.0
        out[f"context_tokens_{budget}"] = block["tokens"]
    return out


def context_summary(rows: Sequence[tuple[int, Mapping[str, float]]]) -> dict:
    """Means of the context figures, overall and per category, and the evidence a block holds per
    100 of the tokens it uses (the budget is a ceiling: a block may use less)."""
    def means(part):
        out = {m: round(statistics.fmean(r[m] for r in part), 4) for m in part[0]} if part else {}
        for b in BUDGETS:
            if out.get(f"context_tokens_{b}"):
                out[f"evidence_per_100_tokens_{b}"] = round(100 * out[f"context_within_{b}"] / out[f"context_tokens_{b}"],
                                                            4)
        return out
    return {**means([r for _, r in rows]),
            "categories": {str(c): means([r for cat, r in rows if cat == c]) for c in sorted({c for c, _ in rows})}}


async def ask_all(mem: Memory, conv: Conversation, stored: Stored, mode: str, run: "Run",
                  progress: Callable[[int], None] | None = None,
                  store_progress: Callable[[int], None] | None = None) -> None:
    """Every question through recall, and through the three baselines over the same turns."""
    embedder = await mem.embedder()
    nearest = await nearest_by_cosine(embedder, stored, conv.questions, mem.embedded_text(), store_progress)
    with contextlib.closing(await bm25_over(mem, stored)) as bm25:
        for q, cosine in zip(conv.questions, nearest, strict=True):
            started = time.perf_counter()
            result = await mem.recall(q.text, k=max(KS), mode=mode)
            run.latencies.append(time.perf_counter() - started)
            run.modes_used.add(result["mode_used"])
            run.warnings.update(result["warnings"])
            longer, _ = await mem.rank(q.text, BUDGET_K, mode=mode)
            run.context.append((q.category, await through_context(mem, q, stored, mode)))
            lexical = bm25.search(q.text, CANDIDATES)
            run.add(q, {"strata": [h["id"] for h in result["hits"]], "bm25": lexical, "cosine": cosine,
                        "rrf": rrf([lexical, cosine])}, stored, {"strata": [h["id"] for h in longer]})
            if progress:
                progress(1)


async def run_conversation(conv: Conversation, *, mode: str, settings: Mapping[str, Any],
                           progress: Callable[[int], None] | None = None,
                           store_progress: Callable[[int], None] | None = None) -> Run:
    texts = [turn_text(t.raw) for t in conv.turns]
    with tempfile.TemporaryDirectory(prefix="strata-locomo-") as tmp:
        home, stored = await stored_home(Path(tmp) / "home", conv, texts, mode, settings, store_progress)
        async with await Memory.open(home, actor="bench") as mem:
            run = Run(recall_settings(mem.config), (await mem.embedder()).name)
            await ask_all(mem, conv, stored, mode, run, progress, store_progress)
    return run


def ratios(strata: Mapping[str, Any], baselines: Mapping[str, Mapping[str, Any]]) -> dict:
    return {name: {m: ratio(strata[m], b[m], 4) for m in ("recall_at_5", "recall_at_10")}
            for name, b in baselines.items()}


def result_of(data: str | Path, conversations: Sequence[Conversation], runs: Sequence[Run], mode: str,
              started: float) -> dict:
    scored = {name: [s for r in runs for s in r.scored[name]] for name in ("strata", *BASELINES)}
    strata = summarise(scored["strata"])
    baselines = {name: summarise(scored[name]) for name in BASELINES}
    return {
        "benchmark": "locomo", "data": str(data), "conversations": len(conversations),
        "questions": len(scored["strata"]), "mode": mode,
        "mode_used": "+".join(sorted(set().union(*(r.modes_used for r in runs)))),
        **strata, "baselines": baselines, "ratios": ratios(strata, baselines),
        "recall_latency_ms": summary_ms([t for r in runs for t in r.latencies]),
        "context": context_summary([row for r in runs for row in r.context]),
        "seconds": round(time.perf_counter() - started, 3),
        "settings": runs[0].settings,
        "turns": sum(len(c.turns) for c in conversations), "embedding_model": runs[0].embedding_model,
        "data_issues": data_issues(conversations), "warnings": sorted(set().union(*(r.warnings for r in runs))),
    }


async def bench_locomo(data: str | Path, conversations: Sequence[Conversation], *, mode: str = "balanced",
                       settings: Mapping[str, Any] | None = None,
                       progress: Callable[[int], None] | None = None,
                       store_progress: Callable[[int], None] | None = None) -> dict:
    started = time.perf_counter()
    settings = {**(settings or {}), "store.attention_window_seconds": 0}
    runs = [await run_conversation(c, mode=mode, settings=settings, progress=progress,
                                   store_progress=store_progress) for c in conversations]
    return result_of(data, conversations, runs, mode, started)


# -- the human table -------------------------------------------------------------------------

def _rows(result: Mapping[str, Any], prefix: str) -> list[str]:
    systems = [result, *(result["baselines"][b] for b in BASELINES)]
    rows = [("overall", result["questions"], systems)]
    rows += [(c["name"], c["questions"], [s["categories"][key] for s in systems])
             for key, c in result["categories"].items()]
    return [f"  {name:<12}{n:>5}  " + "".join(f"  {s[f'{prefix}recall_at_5']:.4f} {s[f'{prefix}recall_at_10']:.4f}"
                                               for s in cells)
            for name, n, cells in rows]


def format_table(result: Mapping[str, Any]) -> str:
    head = (" " * 21 + "".join(f"  {name:<13}" for name in ("strata", *BASELINES))).rstrip()
    ks = (" " * 21 + "  @5     @10   " * (1 + len(BASELINES))).rstrip()
    lat = result["recall_latency_ms"]
    lines = [f"LoCoMo retrieval: {result['conversations']} conversations, {result['turns']} turns, "
             f"{result['questions']} questions, mode {result['mode']} (used {result['mode_used']}), "
             f"{result['seconds']:.0f} s",
             "evidence recall (share of evidence turns in the top k)", head, ks, *_rows(result, ""),
             "session recall (share of evidence sessions in the top k)", head, ks, *_rows(result, "session_"),
             "evidence within a context budget (the hits' texts in rank order, cut at N tokens)",
             *(f"  {b:>4} tokens  " + "".join(f"  {name} {s[f'evidence_within_{b}']:.4f}" for name, s in
                                            (("strata", result), *result["baselines"].items()))
               for b in BUDGETS),
             "evidence in `strata context`'s block (capsule and facts inside the budget): "
             + ", ".join(f"{b} tokens {result['context'][f'context_within_{b}']:.4f}" for b in BUDGETS
                         if f"context_within_{b}" in result.get("context", {})),
             f"strata recall latency: p50 {lat['p50_ms']} ms, p95 {lat['p95_ms']} ms"]
    lines += [f"warning: {w}" for w in result["warnings"]]
    return "\n".join(lines)
