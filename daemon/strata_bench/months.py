"""`strata bench lived`: a home that lives for months, against a fresh home holding the same memories.

Each LoCoMo conversation is lived day by day on a clock the benchmark moves, from its first
session to `tail_days` after its last. Every day at noon the sessions of that day are observed
(turns at their real times, embedded as the daemon's embed phase would within the minute);
the agent then asks every training question (every other one) whose evidence has all arrived
and not been asked yet, and one earlier training question again, each with the feedback an
agent gives (`lived.answer_as_agent`); every tenth day it explicitly forgets one memory that no
question needs. At 23:00 every daemon phase runs once, in the daemon's order (`lived.night`).
The fresh home receives the same memories and forgets the same ones, and nothing else.

Every `checkpoint_days`, and on the last day, both homes are copied (SQLite's online backup)
and measured on the copies, so measuring leaves no trace in the home that goes on living:
- the held-out questions (the other half) whose evidence has arrived, by the age of their
  newest evidence (under 30 days, 30 to 90, over 90): evidence recall@5/@10;
- memories looked for by their own words: the share found in the top 10 (the memory, or one
  with the very same text), of every memory on the last day and of a sample before;
- the explicitly forgotten memories: how many times one was returned (must be 0).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench.lived import answer_as_agent, night, split
from strata_bench.locomo_data import KS, Conversation, Question, dia_ranking, question_scores, turn_text
from strata_bench.locomo_home import Stored, home_toml, turn_rows
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import copy_database
from strata_daemon.base import timeutil
from strata_daemon.config.home import init_home

DAY = 86400.0
AGES = (("under_30_days", 0, 30), ("30_to_90_days", 30, 90), ("over_90_days", 90, float("inf")))
FORGET_EVERY_DAYS = 10
K = max(KS)


@dataclass
class Life:
    """One conversation's two homes and what has happened to them so far."""
    conv: Conversation
    texts: list[str]
    lived: Memory
    fresh: Memory
    start: float
    observed: int = 0  # turns stored so far, in the conversation's order
    dia_ids: dict[int, list[str]] = field(default_factory=dict)
    asked: set[int] = field(default_factory=set)  # training questions asked at least once
    forgotten: set[int] = field(default_factory=set)
    nights: list[dict] = field(default_factory=list)  # {"seconds", "arena_seconds"}

    def stored(self) -> Stored:
        return Stored(list(self.dia_ids), [], [], self.dia_ids)

    def arrived(self, q: Question) -> bool:
        known = {d for ds in self.dia_ids.values() for d in ds}
        return bool(q.evidence) and all(e in known for e in q.evidence)


def _day(at: float) -> float:
    return at - at % DAY


async def _observe_day(life: Life, day_end: float) -> None:
    turns = life.conv.turns
    n = life.observed
    while n < len(turns) and turns[n].at < day_end:
        n += 1
    if n == life.observed:
        return
    rows = turn_rows(turns[life.observed:n], life.texts[life.observed:n])
    ids = []
    for mem in (life.lived, life.fresh):
        ids.append((await mem.observe_many(rows))["ids"])
        await mem.embed_pending()
    if ids[0] != ids[1]:  # both homes must name each memory alike, or the comparison is void
        raise RuntimeError(f"the fresh home stored {life.conv.name}'s turns under other ids")
    for eid, turn in zip(ids[0], turns[life.observed:n], strict=True):
        life.dia_ids.setdefault(eid, []).append(turn.dia_id)
    life.observed = n


async def _ask(life: Life, training: Sequence[Question], rng: random.Random, mode: str) -> int:
    due = [i for i, q in enumerate(training) if i not in life.asked and life.arrived(q)]
    again = sorted(life.asked)
    if again:
        due.append(rng.choice(again))
    for i in due:
        await answer_as_agent(life.lived, training[i], life.stored(), mode=mode)
        life.asked.add(i)
    return len(due)


async def _forget_one(life: Life, needed: set[int], rng: random.Random, now: float) -> None:
    rows = await life.lived.db.fetchall("SELECT id FROM episodes WHERE agent = ? AND state != 'archived' "
                                        "AND event_at <= ? ORDER BY id", (life.lived.agent, now - 3 * DAY))
    choices = [r[0] for r in rows if r[0] not in needed]
    if choices:
        victim = rng.choice(choices)
        for mem in (life.lived, life.fresh):
            await mem.forget(victim, reason="bench: asked to forget")
        life.forgotten.add(victim)


async def _copy(mem: Memory, root: Path) -> Memory:
    """An open Memory on a consistent copy of `mem`'s home, sharing its loaded embedder."""
    home, _ = init_home(root)
    home.config_path.write_text(mem.home.config_path.read_text(encoding="utf-8"), encoding="utf-8")
    copy_database(mem.home.db_path, home.db_path)
    view = await Memory.open(home, actor="bench")
    view.embedder = mem.embedder  # one model in memory
    return view


def _age_bucket(days: float) -> str:
    return next(name for name, lo, hi in AGES if lo <= days < hi)


async def _own_words(mem: Memory, ids: list[int], forgotten: set[int]) -> tuple[float, int]:
    """(share of `ids` found in the top K by their own words, times a forgotten memory was returned)."""
    texts = {r[0]: r[1] for r in await mem.db.fetchall(
        f"SELECT id, content FROM episodes WHERE id IN ({', '.join('?' * len(ids))})", ids)} if ids else {}
    found = leaks = 0
    for i in ids:
        hits = (await mem.recall(texts[i], k=K, mode="balanced", explain=False))["hits"]
        found += any(h["id"] == i or h["content"] == texts[i] for h in hits)
        leaks += sum(h["id"] in forgotten for h in hits)
    return (found / len(ids) if ids else 1.0), leaks


async def _checkpoint(life: Life, held: Sequence[Question], day: int, now: float, tmp: Path, sample: int | None,
                      rng: random.Random, mode: str) -> dict:
    lived = await _copy(life.lived, tmp / f"lived-{day}")
    fresh = await _copy(life.fresh, tmp / f"fresh-{day}")
    try:
        newest = {t.dia_id: t.at for t in life.conv.turns}
        scored: dict[str, dict[str, list[tuple[int, dict]]]] = {"lived": {}, "fresh": {}}
        leaks = 0
        for q in (q for q in held if life.arrived(q)):
            bucket = _age_bucket((now - max(newest[e] for e in q.evidence)) / DAY)
            for name, mem in (("lived", lived), ("fresh", fresh)):
                hits = (await mem.recall(q.text, k=K, mode=mode, explain=False))["hits"]
                leaks += sum(h["id"] in life.forgotten for h in hits)
                ranked = dia_ranking([h["id"] for h in hits], life.dia_ids)
                scored[name].setdefault(bucket, []).append((q.category, question_scores(q.evidence, ranked)))
        live = [i for i in life.dia_ids if i not in life.forgotten]
        ids = live if sample is None or len(live) <= sample else sorted(rng.sample(live, sample))
        own = {}
        for name, mem in (("lived", lived), ("fresh", fresh)):
            share, leaked = await _own_words(mem, ids, life.forgotten)
            own[name] = share
            leaks += leaked
        tiers = (await lived.status())["by_tier"]
    finally:
        await lived.close()
        await fresh.close()
    return {"day": day, "memories": len(life.dia_ids), "forgotten": len(life.forgotten), "by_tier": tiers,
            "questions": scored, "own_words": {"memories": len(ids), **own}, "forgotten_returned": leaks}


async def live_conversation(conv: Conversation, *, settings: Mapping[str, Any], tail_days: int,
                            checkpoint_days: int, own_words_sample: int, mode: str,
                            progress: Callable[[int], None] | None = None) -> dict:
    training, held = split(conv.questions)
    needed = {d for q in conv.questions for d in q.evidence}
    start = _day(conv.turns[0].at)
    days = int((_day(conv.turns[-1].at) - start) / DAY) + 1 + tail_days
    rng = random.Random(conv.name)
    now = start
    checkpoints = []
    with tempfile.TemporaryDirectory(prefix="strata-months-") as tmp, timeutil.clock(lambda: now):
        homes = []
        for name in ("lived", "fresh"):
            home, _ = init_home(Path(tmp) / name)
            home.config_path.write_text(home_toml(settings), encoding="utf-8")
            homes.append(home)
        async with await Memory.open(homes[0], actor="bench") as lived, \
                await Memory.open(homes[1], actor="bench") as fresh:
            fresh.embedder = lived.embedder
            life = Life(conv, [turn_text(t.raw) for t in conv.turns], lived, fresh, start)
            for day in range(days):
                now = start + day * DAY + 12 * 3600
                await _observe_day(life, start + (day + 1) * DAY)
                await _ask(life, training, rng, mode)
                if day % FORGET_EVERY_DAYS == FORGET_EVERY_DAYS - 1:
                    ids_needed = {e for e, ds in life.dia_ids.items() if needed & set(ds)}
                    await _forget_one(life, ids_needed, rng, now)
                now = start + day * DAY + 23 * 3600
                started = time.perf_counter()
                phases = await night(lived)
                life.nights.append({"seconds": time.perf_counter() - started,
                                    "arena_seconds": phases["arena"]["seconds"]})
                last = day == days - 1
                if (day + 1) % checkpoint_days == 0 or last:
                    now = start + (day + 1) * DAY + 9 * 3600  # the next morning
                    checkpoints.append(await _checkpoint(life, held, day + 1, now, Path(tmp), None if last
                                                         else own_words_sample, rng, mode))
                if progress:
                    progress(1)
    return {"name": conv.name, "days": days, "checkpoints": checkpoints, "nights": life.nights}


def _mean(rows: list[tuple[int, dict]], metric: str) -> float | None:
    return round(statistics.fmean(s[metric] for _, s in rows), 4) if rows else None


def summarise_life(lives: Sequence[dict]) -> dict:
    """Over every conversation's checkpoints: lived and fresh per age of the evidence, the
    own-words shares (the last day's), forgotten memories returned, and what nights cost."""
    pooled: dict[str, dict[str, list]] = {"lived": {}, "fresh": {}}
    for life in lives:
        for cp in life["checkpoints"]:
            for name in pooled:
                for bucket, rows in cp["questions"][name].items():
                    pooled[name].setdefault(bucket, []).extend(rows)
    ages = {}
    for bucket, _, _ in (*AGES, ("all", 0, 0)):
        rows = {n: ([r for b in pooled[n].values() for r in b] if bucket == "all" else pooled[n].get(bucket, []))
                for n in pooled}
        ages[bucket] = {"questions": len(rows["lived"]),
                        **{f"{n}_recall_at_{k}": _mean(rows[n], f"recall_at_{k}") for n in pooled for k in KS}}
    finals = [life["checkpoints"][-1] for life in lives]
    own = {n: round(sum(f["own_words"][n] * f["own_words"]["memories"] for f in finals)
                    / max(1, sum(f["own_words"]["memories"] for f in finals)), 4) for n in ("lived", "fresh")}
    nights = [n["seconds"] for life in lives for n in life["nights"]]
    arena = [n["arena_seconds"] for life in lives for n in life["nights"]]
    by_age = [[round(statistics.fmean(n["seconds"] for n in life["nights"][i:i + 30]), 3)
               for i in range(0, len(life["nights"]), 30)] for life in lives]
    return {
        "by_evidence_age": ages,
        "own_words_top10": {"memories": sum(f["own_words"]["memories"] for f in finals), **own},
        "forgotten": sum(f["forgotten"] for f in finals),
        "forgotten_returned": sum(cp["forgotten_returned"] for life in lives for cp in life["checkpoints"]),
        "night_seconds": {"median": round(statistics.median(nights), 3),
                          "p95": round(sorted(nights)[int(0.95 * (len(nights) - 1))], 3),
                          "max": round(max(nights), 3), "arena_share": round(sum(arena) / sum(nights), 3),
                          "mean_by_month": by_age},
    }


async def bench_lived(data: str | Path, conversations: Sequence[Conversation], *, mode: str = "balanced",
                      settings: Mapping[str, Any] | None = None, tail_days: int = 90, checkpoint_days: int = 30,
                      own_words_sample: int = 100, progress: Callable[[int], None] | None = None) -> dict:
    started = time.perf_counter()
    settings = {**(settings or {}), "store.attention_window_seconds": 0}
    lives = [await live_conversation(c, settings=settings, tail_days=tail_days, checkpoint_days=checkpoint_days,
                                     own_words_sample=own_words_sample, mode=mode, progress=progress)
             for c in conversations]
    return {"benchmark": "lived", "data": str(data), "conversations": len(lives), "mode": mode,
            "tail_days": tail_days, "checkpoint_days": checkpoint_days, **summarise_life(lives),
            "per_conversation": [{"name": life["name"], "days": life["days"], "checkpoints": [
                {k: cp[k] for k in ("day", "memories", "forgotten", "by_tier", "own_words", "forgotten_returned")}
                for cp in life["checkpoints"]]} for life in lives],
            "seconds": round(time.perf_counter() - started, 3)}


def days_of(conversations: Sequence[Conversation], tail_days: int) -> int:
    return sum(int((_day(c.turns[-1].at) - _day(c.turns[0].at)) / DAY) + 1 + tail_days for c in conversations)


def format_months(r: Mapping[str, Any]) -> str:
    lines = [f"a home lived for months: {r['conversations']} conversations, each from its first session to "
             f"{r['tail_days']} days after its last; measured every {r['checkpoint_days']} days on copies",
             "held-out questions by the age of their evidence    lived @5 @10       fresh @5 @10"]
    for bucket, a in r["by_evidence_age"].items():
        if a["questions"]:
            lines.append(f"  {bucket:<16}{a['questions']:>6}                        "
                         f"{a['lived_recall_at_5']:.4f} {a['lived_recall_at_10']:.4f}    "
                         f"{a['fresh_recall_at_5']:.4f} {a['fresh_recall_at_10']:.4f}")
    o = r["own_words_top10"]
    lines.append(f"memories found by their own words in the top 10 (last day, {o['memories']} memories): "
                 f"lived {o['lived']:.4f}, fresh {o['fresh']:.4f}")
    lines.append(f"explicitly forgotten: {r['forgotten']} memories, returned {r['forgotten_returned']} times")
    n = r["night_seconds"]
    lines.append(f"nights: median {n['median']} s, p95 {n['p95']} s, max {n['max']} s; arena {n['arena_share']:.0%} "
                 f"of night time")
    return "\n".join(lines)
