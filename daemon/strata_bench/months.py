"""`strata bench lived`: a home that lives for months, against a fresh home holding the same memories.

Each LoCoMo conversation is lived day by day on a clock the benchmark moves, from its first
session to `tail_days` after its last. Every day at noon the sessions of that day are observed
(turns at their real times, embedded as the daemon's embed phase would within the minute);
with the statements of knowledge updates due that day (`months_probes`); the agent then asks
every training question (every other one) whose evidence has all arrived and not been asked
yet, and one earlier training question again, each with the feedback an agent gives
(`lived.answer_as_agent`), naming no mode unless the run names one (so it gets the strategy
the arena chose); every tenth day it explicitly forgets one memory that no question needs. At
23:00 every daemon phase runs once, in the daemon's order (`lived.night`). The fresh home
receives the same memories and forgets the same ones, and nothing else.

Every `checkpoint_days`, and on the last day, both homes are copied (SQLite's online backup)
and measured on the copies, so measuring leaves no trace in the home that goes on living:
- the held-out questions (the other half) whose evidence has arrived, by the age of their
  newest evidence (under 30 days, 30 to 90, over 90): evidence recall@1/@5/@10;
- memories looked for by their own words: the share found in the top 10 (the memory, or one
  with the very same text), of every memory on the last day and of a sample before;
- the explicitly forgotten memories: how many times one was returned (must be 0).
The held-out questions are also asked worded apart from the agent's and from their evidence
(tests/data/locomo_dev_reworded.tsv), and on the last day the knowledge updates: is the
newest statement the first hit?
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from strata_bench.lived import answer_as_agent, night, split
from strata_bench.locomo_data import (
    KS,
    Conversation,
    Question,
    dia_ranking,
    evidence_recall,
    question_scores,
    turn_text,
)
from strata_bench.locomo_home import Stored, home_toml, turn_rows
from strata_bench.months_probes import ask_updates, load_reworded, mean_shared, reworded, schedule, update_pairs
from strata_bench.months_report import summarise_life
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
    nights: list[dict] = field(default_factory=list)  # {"seconds", "arena_seconds", "arena_ran", "strategy"}
    updates: list[dict] = field(default_factory=list)  # knowledge updates (months_probes), statements in order
    update_days: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    update_ids: dict[int, list[int]] = field(default_factory=dict)  # pair -> its statements' ids so far
    own_words_habit: bool = False  # the agent asks in its memories' words (in_own_words)
    turn_texts: dict[str, str] = field(default_factory=dict)  # dia id -> the turn's text

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


async def _observe_updates(life: Life, day: int, at: float) -> None:
    """The knowledge-update statements due on `day`, in both homes under the same ids."""
    due = life.update_days.get(day, [])
    if not due:
        return
    rows = [{"content": life.updates[p]["said"][n], "event_at": at + i} for i, (p, n) in enumerate(due)]
    ids = [(await mem.observe_many(rows))["ids"] for mem in (life.lived, life.fresh)]
    if ids[0] != ids[1]:
        raise RuntimeError(f"the fresh home stored {life.conv.name}'s update statements under other ids")
    for (p, _), i in zip(due, ids[0], strict=True):
        life.update_ids.setdefault(p, []).append(i)
    for mem in (life.lived, life.fresh):
        await mem.embed_pending()


def in_own_words(q: Question, texts: Mapping[str, str], words: int = 12) -> Question:
    """The question as an agent asks that words its recalls like what it stored: the first
    `words` words of its first evidence turn."""
    text = " ".join(texts.get(q.evidence[0], q.text).split()[:words]) if q.evidence else q.text
    return Question(text, q.category, q.evidence, q.irregular, q.unreadable)


async def _ask(life: Life, training: Sequence[Question], rng: random.Random, mode: str | None) -> int:
    due = [i for i, q in enumerate(training) if i not in life.asked and life.arrived(q)]
    again = sorted(life.asked)
    if again:
        due.append(rng.choice(again))
    for i in due:
        q = in_own_words(training[i], life.turn_texts) if life.own_words_habit else training[i]
        await answer_as_agent(life.lived, q, life.stored(), mode=mode)
        life.asked.add(i)
    return len(due)


async def _forget_one(life: Life, needed: set[int], rng: random.Random, now: float) -> None:
    rows = await life.lived.db.fetchall("SELECT id FROM episodes WHERE agent = ? AND state != 'archived' "
                                        "AND event_at <= ? ORDER BY id", (life.lived.agent, now - 3 * DAY))
    statements = {i for ids in life.update_ids.values() for i in ids}
    choices = [r[0] for r in rows if r[0] not in needed and r[0] not in statements]
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
    texts = {i: e["content"] for i, e in (await mem.get_many(ids)).items()}
    found = leaks = 0
    for i in ids:
        hits = (await mem.recall(texts[i], k=K, mode="balanced", explain=False))["hits"]
        found += any(h["id"] == i or h["content"] == texts[i] for h in hits)
        leaks += sum(h["id"] in forgotten for h in hits)
    return (found / len(ids) if ids else 1.0), leaks


def _scores(q: Question, hits: list[dict], dia_ids: dict[int, list[str]]) -> dict:
    ranked = dia_ranking([h["id"] for h in hits], dia_ids)
    return {**question_scores(q.evidence, ranked), "recall_at_1": evidence_recall(q.evidence, ranked, 1)}


async def _by_age(life: Life, homes: Sequence[tuple[str, Memory]], questions: Sequence[Question], now: float,
                  mode: str | None) -> tuple[dict, int]:
    """{home: {age band: [(category, scores)]}} of the questions whose evidence has arrived, and
    how often a forgotten memory came back."""
    newest = {t.dia_id: t.at for t in life.conv.turns}
    scored: dict[str, dict[str, list[tuple[int, dict]]]] = {name: {} for name, _ in homes}
    leaks = 0
    for q in (q for q in questions if life.arrived(q)):
        bucket = _age_bucket((now - max(newest[e] for e in q.evidence)) / DAY)
        for name, mem in homes:
            hits = (await mem.recall(q.text, k=K, mode=mode, explain=False))["hits"]
            leaks += sum(h["id"] in life.forgotten for h in hits)
            scored[name].setdefault(bucket, []).append((q.category, _scores(q, hits, life.dia_ids)))
    return scored, leaks


async def _checkpoint(life: Life, held: Sequence[Question], apart: Sequence[Question], day: int, now: float,
                      tmp: Path, sample: int | None, rng: random.Random, mode: str | None, last: bool) -> dict:
    """Both homes measured on copies: the held-out questions as written and worded apart
    (`apart`); the knowledge updates on the last day."""
    lived = await _copy(life.lived, tmp / f"lived-{day}")
    fresh = await _copy(life.fresh, tmp / f"fresh-{day}")
    homes = (("lived", lived), ("fresh", fresh))
    out: dict[str, Any] = {"day": day, "memories": len(life.dia_ids), "forgotten": len(life.forgotten)}
    try:
        out["questions"], leaks = await _by_age(life, homes, held, now, mode)
        out["worded_apart"], more = await _by_age(life, homes, apart, now, mode)
        leaks += more
        if last:
            out["updates"] = {name: await ask_updates(mem, life.updates, life.update_ids, K, mode)
                              for name, mem in homes}
        live = [i for i in life.dia_ids if i not in life.forgotten]
        ids = live if sample is None or len(live) <= sample else sorted(rng.sample(live, sample))
        own = {}
        for name, mem in homes:
            share, leaked = await _own_words(mem, ids, life.forgotten)
            own[name] = share
            leaks += leaked
        out["by_tier"] = (await lived.status())["by_tier"]
    finally:
        await lived.close()
        await fresh.close()
    return {**out, "own_words": {"memories": len(ids), **own}, "forgotten_returned": leaks}


async def _night(life: Life) -> None:
    """Every daemon phase on the lived home; what it cost and the strategy the arena left."""
    started = time.perf_counter()
    phases = await night(life.lived)
    arena = phases["arena"]
    result = arena.get("result") if isinstance(arena.get("result"), dict) else {}
    before = life.nights[-1]["strategy"] if life.nights else None
    strategy = result.get("strategy") or before or (await life.lived.status())["recall_strategy"]["arm"]
    life.nights.append({"seconds": time.perf_counter() - started, "arena_seconds": arena["seconds"],
                        "arena_ran": "skipped" not in result, "strategy": strategy})


async def live_conversation(conv: Conversation, index: int, of: int, *, settings: Mapping[str, Any], tail_days: int,
                            checkpoint_days: int, own_words_sample: int, mode: str | None,
                            apart_table: dict[tuple[str, str], str], asking: str = "questions",
                            progress: Callable[[int], None] | None = None) -> dict:
    training, held = split(conv.questions)
    apart = reworded(conv, held, apart_table)
    needed = {d for q in conv.questions for d in q.evidence}
    start = _day(conv.turns[0].at)
    span = int((_day(conv.turns[-1].at) - start) / DAY) + 1
    days = span + tail_days
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
            life.own_words_habit = asking == "own-words"
            life.turn_texts = {t.dia_id: text for t, text in zip(conv.turns, life.texts)}
            life.updates = update_pairs(index, of)
            life.update_days = schedule(life.updates, span, random.Random(f"updates:{conv.name}"))
            for day in range(days):
                now = start + day * DAY + 12 * 3600
                await _observe_day(life, start + (day + 1) * DAY)
                await _observe_updates(life, day, now)
                await _ask(life, training, rng, mode)
                if day % FORGET_EVERY_DAYS == FORGET_EVERY_DAYS - 1:
                    ids_needed = {e for e, ds in life.dia_ids.items() if needed & set(ds)}
                    await _forget_one(life, ids_needed, rng, now)
                now = start + day * DAY + 23 * 3600
                await _night(life)
                last = day == days - 1
                if (day + 1) % checkpoint_days == 0 or last:
                    now = start + (day + 1) * DAY + 9 * 3600  # the next morning
                    checkpoints.append(await _checkpoint(life, held, apart, day + 1, now, Path(tmp),
                                                         None if last else own_words_sample, rng, mode, last))
                if progress:
                    progress(1)
    text_of = life.turn_texts
    return {"name": conv.name, "days": days, "checkpoints": checkpoints, "nights": life.nights,
            "shared_words": {"as_written": mean_shared(held, text_of), "worded_apart": mean_shared(apart, text_of),
                             "questions": len(apart)}}


async def bench_lived(data: str | Path, conversations: Sequence[Conversation], *, mode: str | None = None,
                      settings: Mapping[str, Any] | None = None, tail_days: int = 90, checkpoint_days: int = 30,
                      own_words_sample: int = 100, reworded: str | Path | None = None, asking: str = "questions",
                      progress: Callable[[int], None] | None = None) -> dict:
    started = time.perf_counter()
    settings = {**(settings or {}), "store.attention_window_seconds": 0}
    table = load_reworded(Path(reworded)) if reworded else load_reworded()
    lives = [await live_conversation(c, n, len(conversations), settings=settings, tail_days=tail_days,
                                     checkpoint_days=checkpoint_days, own_words_sample=own_words_sample, mode=mode,
                                     apart_table=table, asking=asking, progress=progress)
             for n, c in enumerate(conversations)]
    return {"benchmark": "lived", "data": str(data), "conversations": len(lives),
            "mode": mode or "none (the arena's)", "asking": asking,
            "tail_days": tail_days, "checkpoint_days": checkpoint_days, **summarise_life(lives),
            "per_conversation": [{"name": life["name"], "days": life["days"], "checkpoints": [
                {k: cp[k] for k in ("day", "memories", "forgotten", "by_tier", "own_words", "forgotten_returned")}
                for cp in life["checkpoints"]]} for life in lives],
            "seconds": round(time.perf_counter() - started, 3)}


def days_of(conversations: Sequence[Conversation], tail_days: int) -> int:
    return sum(int((_day(c.turns[-1].at) - _day(c.turns[0].at)) / DAY) + 1 + tail_days for c in conversations)
