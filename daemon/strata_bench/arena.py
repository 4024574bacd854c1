"""`strata bench arena`: does the arena's choice beat the fixed default on questions it never saw?

Each LoCoMo conversation goes into its own temporary home (as in `bench locomo`). Half its
questions (every other one) are training: asked through recall with the default strategy, and
answered with feedback naming the evidence turns as the memories used, as an agent that found
them would. Then the arena phase runs once. The other half is held out: each question asked
with no mode (the arena's choice) and with the configured mode (the fixed default); scored by
LoCoMo evidence recall. Every arm is also scored on the held-out half, to show the best choice
the arena could have made.

The homes are configured as a user's would be: the training feedback takes them into the
active learning phase, where the stale (every memory of a 2023 conversation, today) rank lower
and are still recalled.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench.locomo_data import KS, Conversation, Question, dia_ranking, evidence_recall, turn_text
from strata_bench.locomo_home import home_toml, store_turns
from strata_bench.stats import ratio, summary_ms
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home


def split(questions: Sequence[Question]) -> tuple[list[Question], list[Question]]:
    """(training, held out): alternate questions, so both halves span the conversation's categories."""
    return list(questions[0::2]), list(questions[1::2])


def _scores(hits: Sequence[int], q: Question, dia_ids: Mapping[int, Sequence[str]]) -> dict[str, float]:
    ranked = dia_ranking(hits, dia_ids)
    return {f"recall_at_{k}": evidence_recall(q.evidence, ranked, k) for k in KS}


def _mean(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    return {f"recall_at_{k}": round(statistics.fmean(r[f"recall_at_{k}"] for r in rows), 4) if rows else 0.0
            for k in KS}


async def run_conversation(conv: Conversation, settings: Mapping[str, Any],
                           progress: Callable[[int], None] | None = None) -> dict:
    texts = [turn_text(t.raw) for t in conv.turns]
    train, held = split(conv.questions)
    with tempfile.TemporaryDirectory(prefix="strata-arena-") as tmp:
        home, _ = init_home(Path(tmp) / "home")
        home.config_path.write_text(home_toml(settings), encoding="utf-8")
        async with await Memory.open(home, actor="bench") as mem:
            stored = await store_turns(mem, conv, texts, "balanced", None)
            episode_of = {d: e for e, ds in stored.dia_ids.items() for d in ds}
            for q in train:
                r = await mem.recall(q.text, k=max(KS))
                used = sorted({episode_of[d] for d in q.evidence if d in episode_of})
                found = evidence_recall(q.evidence, dia_ranking([h["id"] for h in r["hits"]], stored.dia_ids),
                                        max(KS)) > 0
                await mem.feedback(r["recall_id"], "success" if found else "failure", used=used or None)
                if progress:
                    progress(1)
            run = await mem.run_arena()
            chosen = {"arena": [], "default": []}
            for q in held:
                for name, mode in (("arena", None), ("default", mem.config["recall.mode"])):
                    r = await mem.recall(q.text, k=max(KS), mode=mode)
                    chosen[name].append(_scores([h["id"] for h in r["hits"]], q, stored.dia_ids))
                if progress:
                    progress(1)
            arms = {}
            for arm in mem.arena_arms:
                rows = []
                for q in held:
                    hits, _ = await mem.rank(q.text, max(KS), arm=arm)
                    rows.append(_scores([h["id"] for h in hits], q, stored.dia_ids))
                arms[arm.name] = _mean(rows)
                if progress:
                    progress(len(held))
    return {"name": conv.name, "training": len(train), "held_out": len(held), "episodes": run["episodes"]["total"],
            "decision": run["decision"], "leader": run["leader"], "strategy": run["strategy"]["arm"],
            "arena_seconds": run["seconds"], "pulls": {a["arm"]: a["pulls"] for a in run["arms"]},
            "arena": chosen["arena"], "default": chosen["default"], "arms": arms}


def steps(conversations: Sequence[Conversation], arms: int) -> int:
    return sum(len(c.questions) + len(split(c.questions)[1]) * arms for c in conversations)


async def bench_arena(data: str | Path, conversations: Sequence[Conversation], *,
                      settings: Mapping[str, Any] | None = None,
                      progress: Callable[[int], None] | None = None) -> dict:
    settings = {**(settings or {}), "store.attention_window_seconds": 0}
    runs = [await run_conversation(c, settings, progress) for c in conversations]
    arena = _mean([s for r in runs for s in r["arena"]])
    default = _mean([s for r in runs for s in r["default"]])
    held = sum(r["held_out"] for r in runs)
    arms = {name: {m: round(sum(r["arms"][name][m] * r["held_out"] for r in runs) / held, 4) for m in arena}
            for name in runs[0]["arms"]}
    seconds = [r["arena_seconds"] for r in runs]
    return {
        "benchmark": "arena", "data": str(data), "conversations": len(runs),
        "training_questions": sum(r["training"] for r in runs), "held_out_questions": held,
        "arena_recall_at_5": arena["recall_at_5"], "arena_recall_at_10": arena["recall_at_10"],
        "default_recall_at_5": default["recall_at_5"], "default_recall_at_10": default["recall_at_10"],
        "ratio_at_5": ratio(arena["recall_at_5"], default["recall_at_5"], 4),
        "ratio_at_10": ratio(arena["recall_at_10"], default["recall_at_10"], 4),
        "best_arm_at_5": max(arms, key=lambda a: arms[a]["recall_at_5"]),
        "arms_held_out": arms,
        "arena_phase_ms": {**summary_ms(seconds), "max_ms": round(max(seconds) * 1000, 3)},
        "per_conversation": [{k: r[k] for k in ("name", "training", "held_out", "episodes", "decision", "leader",
                                                 "strategy", "arena_seconds", "pulls")} for r in runs],
    }


def format_table(r: Mapping[str, Any]) -> str:
    lines = [f"arena on LoCoMo: {r['conversations']} conversations, {r['training_questions']} training questions "
             f"(feedback naming the evidence), {r['held_out_questions']} held out",
             f"  held-out recall@5   arena {r['arena_recall_at_5']:.4f}   default {r['default_recall_at_5']:.4f}   "
             f"ratio {r['ratio_at_5']}",
             f"  held-out recall@10  arena {r['arena_recall_at_10']:.4f}   default {r['default_recall_at_10']:.4f}   "
             f"ratio {r['ratio_at_10']}",
             "  each arm on the held-out half (@5, @10):"]
    lines += [f"    {name:<22} {v['recall_at_5']:.4f}  {v['recall_at_10']:.4f}" for name, v in r["arms_held_out"].items()]
    p = r["arena_phase_ms"]
    lines.append(f"  arena phase: p50 {p['p50_ms']:.0f} ms, max {p['max_ms']:.0f} ms per conversation")
    lines += [f"    {c['name']:<10} {c['decision']:<8} strategy {c['strategy']:<22} leader {c['leader']}  "
              f"{c['episodes']} episodes  {c['arena_seconds']} s" for c in r["per_conversation"]]
    return "\n".join(lines)
