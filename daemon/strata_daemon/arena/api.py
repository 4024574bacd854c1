"""The arena of one namespace: which strategy its recalls use by default, runs of the bandit over
its evaluation episodes, and the record of every choice (to explain it and undo it)."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any, Awaitable, Callable, Iterable

from strata_daemon.arena.arms import Arm
from strata_daemon.arena.bandit import ArmStats, choose, clearly_better, held_apart, leader, ucb
from strata_daemon.arena.reward import episode_reward
from strata_daemon.arena.wording import worded_apart
from strata_daemon.base import stopping, timeutil
from strata_daemon.config import tuning
from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.store import arena as store
from strata_daemon.store.episode_reads import existing_ids, ids_by_source, worked_on_since

# rank(query, k, arm, context, at) -> (hits as dicts with id and session, seconds); `at`: rank with
# the memories' use as it stood then (None: as it stands now)
Rank = Callable[[str, int, Arm, dict, float | None], Awaitable[tuple[list[dict], float]]]
MAX_QUESTIONS = 10_000
# A choice changes at most once a run; reading it on every recall would add a database hop to
# the recall's path. A change made elsewhere (the daemon's run, another process's undo) is
# seen within this many seconds; one made through this object at once.
CHOICE_TTL_SECONDS = 10.0


class Arena:
    def __init__(self, db, agent: str, actor: str, rank: Rank, *, enabled: bool, arms: list[Arm],
                 latency_budget_ms: float, tuned: tuning.Arena):
        self.db, self.agent, self.actor, self._rank = db, agent, actor, rank
        self.enabled, self.arms, self.latency_budget_ms = enabled, arms, latency_budget_ms
        self.tuned = tuned
        self.by_name = {a.name: a for a in arms}
        self.default = arms[0]
        self._choices: tuple[float, dict | None, dict | None] | None = None

    # -- which strategy a recall without a mode uses -----------------------------------------

    async def strategy(self) -> tuple[Arm, dict]:
        """The arm a recall without an explicit mode uses, and why: the namespace's own choice,
        else the home-wide one, else the configured default."""
        if not self.enabled:
            return self._resolve(None, None)
        if self._choices is None or time.monotonic() - self._choices[0] > CHOICE_TTL_SECONDS:
            self._choices = (time.monotonic(), *await self.db.run(store.current, self.agent))
        return self._resolve(*self._choices[1:])

    def _resolve(self, own: dict | None, home: dict | None) -> tuple[Arm, dict]:
        configured = self.default, {"arm": self.default.name, "chosen_by": "config"}
        if not self.enabled:
            return configured
        for choice, by in ((own, "arena"), (home, "home arena")):
            if choice is None or choice["kind"] == "clear":
                continue
            arm = self.default if choice["kind"] == "keep" else self.by_name.get(choice["arm"])
            if arm is None:  # arena.arms changed since: the configured default until the next run
                return self.default, {**configured[1], "warning": f"the arena chose {choice['arm']!r}, which "
                                                                  "arena.arms no longer lists; used the configured "
                                                                  "default"}
            return arm, {"arm": arm.name, "chosen_by": by, "choice": choice["id"]}
        return configured

    # -- evaluation episodes -----------------------------------------------------------------

    def episode_from_feedback(self, conn, recall_id: int, outcome: str, used: list[int] | None,
                              hits: list[int], now: float) -> int | None:
        """Inside the feedback's transaction: the recall as an evaluation episode, its useful
        memories being those the agent named, else those it put in the working set since the
        recall, else (a success, arena.shared_feedback) all its hits; None when none apply."""
        recall = store.recall_asked(conn, recall_id)
        origin, useful = "used", used or worked_on_since(conn, self.agent, recall["at"])
        if not useful and outcome == "success" and self.tuned.shared_feedback:
            origin, useful = "shared", hits
        if not useful:
            return None
        return store.add_episode(conn, self.agent, recall["query"], recall["context"], useful, origin, recall_id,
                                 recall["at"], now)

    # -- evaluation --------------------------------------------------------------------------

    async def _mean_reward(self, arm: Arm, episodes: Iterable[dict]) -> float:
        rewards = await self._rewards(arm, episodes)
        return sum(rewards) / len(rewards) if rewards else 0.0

    async def _rewards(self, arm: Arm, episodes: Iterable[dict]) -> list[float]:
        return (await self._scored(arm, episodes))[0]

    async def _scored(self, arm: Arm, episodes: Iterable[dict]) -> tuple[list[float], list[float]]:
        """Each episode's reward, and the milliseconds each recall took."""
        rewards, elapsed = [], []
        for e in episodes:
            stopping.check()  # an arena run writes at its end: stopped, it leaves nothing half done
            # As of the question: the feedback that made an episode lifted its own answers, and with
            # today's counts an arm that weights recent use would win on evidence it created.
            hits, seconds = await self._rank(e["query"], self.tuned.k, arm, e["context"], e["at"])
            rewards.append(episode_reward([(h["id"], h["session"]) for h in hits], e["useful"], seconds * 1000,
                                          k=self.tuned.k, latency_budget_ms=self.latency_budget_ms,
                                          weights=self.tuned.weights)["reward"])
            elapsed.append(seconds * 1000)
        return rewards, elapsed

    async def run(self, *, progress: Callable[[int], None] | None = None, if_new: bool = False) -> dict:
        """One arena run: `arena.pulls` pulls chosen by UCB1, each scoring an arm on a sample of
        the episodes of even id; then the leader, if it is not the default, must beat the default
        on the newest `arena.confirm_episodes` of odd id (`_decide`). With `if_new` (the daemon's
        nightly phase) the work follows the new evidence, not the home's age: a night runs once
        `arena.sample` evaluation episodes have arrived since the last run (fewer would not move
        the choice; returns {"skipped": reason}), and pulls once per `arena.sample` new episodes,
        up to `arena.pulls` (the statistics carry over from run to run), so that its evaluation
        recalls are about as many as the episodes that arrived."""
        s = self.tuned
        started, now = time.perf_counter(), timeutil.now()
        newest_id, seen = await self.db.run(store.newest_episode, self.agent)
        if if_new and seen is not None and (newest_id is None or newest_id <= seen):
            return {"skipped": f"no evaluation episode since the last run (newest {seen})"}
        episodes = await self.db.run(store.episodes, self.agent, s.max_episodes)
        fresh = sum(e["id"] > seen for e in episodes) if if_new and seen is not None else None
        if fresh is not None and fresh < s.sample:
            return {"skipped": f"{fresh} evaluation episodes since the last run, fewer than arena.sample "
                               f"({s.sample}): they would not change the choice"}
        order = [a.name for a in self.arms]
        if len(episodes) < s.min_episodes:
            reason = (f"{len(episodes)} evaluation episodes, fewer than arena.min_episodes ({s.min_episodes}): "
                      f"nothing changes")
            run_id = await self.db.transact(lambda c: store.add_run(
                c, self.agent, now, len(episodes), [], None, None, "too_few", reason,
                round(time.perf_counter() - started, 3), newest_id))
            return await self._report(run_id, "too_few", reason, [], None, None)
        stats = {name: ArmStats(*st) for name, st in (await self.db.run(store.stats, self.agent)).items()
                 if name in order}
        stats.update({name: ArmStats() for name in order if name not in stats})
        rng = random.Random(f"{self.agent}:{len(episodes)}:{sum(st.pulls for st in stats.values())}")
        pool, held = held_apart(episodes, s.confirm_episodes)
        pulls = []
        for _ in range(s.pulls if fresh is None else min(s.pulls, fresh // s.sample)):
            name = choose(order, stats, s.exploration)
            reward = await self._mean_reward(self.by_name[name], rng.sample(pool, min(s.sample, len(pool))))
            stats[name].add(reward)
            pulls.append([name, round(reward, 4)])
            if progress:
                progress(1)
        lead = leader(order, stats, s.min_pulls)
        decision, reason, confirm = await self._decide(lead, stats, held, if_new)
        seconds = round(time.perf_counter() - started, 3)

        def record(conn) -> int:
            store.save_stats(conn, self.agent, stats, now)
            run_id = store.add_run(conn, self.agent, now, len(episodes), pulls, lead, confirm, decision, reason,
                                   seconds, newest_id)
            arm = lead if decision == "adopt" else None
            self._choose(conn, self.agent, decision, arm, reason, run_id, now)
            self._home_choice(conn, run_id, now)
            return run_id

        run_id = await self.db.transact(record)
        self._choices = None
        return await self._report(run_id, decision, reason, pulls, lead, confirm)

    async def _decide(self, lead: str | None, stats: dict[str, ArmStats], held: list[dict], if_new: bool
                      ) -> tuple[str, str, dict | None]:
        """(decision, reason, the confirmation's mean rewards or None). A leader that is not the
        default is adopted only if, on confirmation episodes no pull used, it beats the default by
        `arena.min_gain` and `arena.confirm_z` standard errors (bandit.clearly_better). A leader
        that searches less than the default is never adopted while the default answers within
        arena.latency_budget_ms; past it, it is confirmed only on those of them worded apart from
        their memories (wording.worded_apart): it must find more where an agent's words differ
        from what it stored, not only where they repeat it. At night, the leader the last
        comparison judged is judged again only once half as many confirmation episodes as it
        was judged on are new: a comparison costs two recalls an episode (deep's take ~0.2 s
        each), and a few new episodes would not overturn it."""
        s, default = self.tuned, self.default.name
        if lead is None:
            return "keep", f"no arm pulled arena.min_pulls ({s.min_pulls}) times yet: the default stays", None
        if lead == default:
            return "keep", (f"the default {lead} leads with mean reward {stats[lead].mean:.4f} over "
                            f"{stats[lead].pulls} pulls"), None
        if if_new and (last := await self.db.run(store.last_confirmation, self.agent)) is not None \
                and last["leader"] == lead:
            new = sum(e["id"] > (last["newest_episode"] or 0) for e in held)
            if new < len(held) / 2:
                return ("adopt" if last["decision"] == "adopt" else "keep"), (
                    f"{lead} leads again; run {last['id']} compared it with the default and {new} of "
                    f"{len(held)} confirmation episodes are new since: its decision stands"), None
        cheaper = self.by_name[lead].searches_less_than(self.default)
        if cheaper and held:
            # Searching less buys only speed; while the default answers within the budget a person
            # set, no agent feels it, and what an arm that searches less misses shows only later.
            rewards, elapsed = await self._scored(self.default, held)
            typical = statistics.median(elapsed)
            if typical <= self.latency_budget_ms:
                return "keep", (
                    f"{lead} leads ({stats[lead].mean:.4f} over {stats[lead].pulls} pulls) but searches less than the "
                    f"default {default}, which answered the {len(held)} confirmation episodes in a median "
                    f"{typical:.0f} ms, within arena.latency_budget_ms ({self.latency_budget_ms:g}): the default "
                    f"stays"), {default: round(sum(rewards) / len(rewards), 4)}
        on = worded_apart(held) if cheaper else held
        rewards = {name: await self._rewards(self.by_name[name], on) for name in (lead, default)}
        confirm = {name: round(sum(r) / len(r), 4) for name, r in rewards.items()}
        gain, error, adopt = clearly_better(rewards[lead], rewards[default], s.min_gain, s.confirm_z)
        episodes = (f"the {len(on)} of {len(held)} confirmation episodes worded furthest from their memories "
                    f"({lead} searches less than {default})" if cheaper else f"{len(on)} confirmation episodes")
        return ("adopt" if adopt else "keep"), (
            f"{lead} leads ({stats[lead].mean:.4f} over {stats[lead].pulls} pulls); on {episodes} it scored "
            f"{confirm[lead]:.4f} against the default {default}'s {confirm[default]:.4f} ({gain:+.4f}, standard "
            f"error {error:.4f}; arena.min_gain {s.min_gain:g}, arena.confirm_z {s.confirm_z:g}): "
            + ("adopted" if adopt else "the default stays")), confirm

    def _choose(self, conn, agent: str, kind: str, arm: str | None, reason: str, run_id: int | None,
                now: float) -> None:
        """Record a choice unless it is the one already in force."""
        latest = store.choices(conn, agent, 1)
        if latest and (latest[0]["kind"], latest[0]["arm"]) == (kind, arm):
            return
        store.add_choice(conn, agent, kind, arm, reason, run_id, self.actor, now)

    def _home_choice(self, conn, run_id: int, now: float) -> None:
        """The home-wide choice: the decision carrying the most episodes across the namespaces
        that decided (the default wins ties)."""
        weight: dict[str | None, int] = {}
        for arm, episodes in store.votes(conn):
            weight[arm] = weight.get(arm, 0) + (episodes or 0)
        if not weight:
            return
        best = max(weight, key=lambda a: (weight[a], a is None))
        n, total = weight[best], sum(weight.values())
        reason = (f"{best or 'the default'} is the choice of namespaces holding {n} of {total} evaluation episodes "
                  f"across the home")
        self._choose(conn, store.HOME, "keep" if best is None else "adopt", best, reason, run_id, now)

    async def _report(self, run_id: int, decision: str, reason: str, pulls: list, lead: str | None,
                      confirm: dict | None) -> dict:
        status = await self.status()
        return {"run": run_id, "decision": decision, "reason": reason, "pulls": pulls, "leader": lead,
                "confirm": confirm, **{k: status[k] for k in ("strategy", "arms", "episodes")},
                "seconds": status["last_run"]["seconds"]}

    # -- looking and undoing -----------------------------------------------------------------

    async def status(self) -> dict:
        def read(conn):
            return (store.stats(conn, self.agent), store.episode_counts(conn, self.agent),
                    store.last_run(conn, self.agent), store.current(conn, self.agent))

        stats, counts, last, (own, home) = await self.db.run(read)
        order = [a.name for a in self.arms]
        known = {n: ArmStats(*stats[n]) if n in stats else ArmStats() for n in order}
        scores = ucb(known, self.tuned.exploration)
        arm, why = self._resolve(own, home)
        return {
            "agent": self.agent, "enabled": self.enabled,
            "strategy": {**why, "mode": arm.mode, "preset": arm.preset,
                         "reason": next((c["reason"] for c in (own, home) if c and c.get("id") == why.get("choice")),
                                        "the configured default (recall.mode)")},
            "default": self.default.name,
            "arms": [{"arm": n, "mode": self.by_name[n].mode, "preset": self.by_name[n].preset,
                      "pulls": known[n].pulls, "mean_reward": round(known[n].mean, 4),
                      "ucb": None if scores[n] == float("inf") else round(scores[n], 4)} for n in order],
            "retired_arms": sorted(set(stats) - set(order)),
            "episodes": {"total": sum(counts.values()),
                         **{o: counts.get(o, 0) for o in ("used", "shared", "questions")}},
            "min_episodes": self.tuned.min_episodes, "last_run": last,
            "own_choice": own, "home_choice": home,
        }

    async def history(self, *, limit: int = 50) -> dict:
        if not 1 <= limit <= 1000:
            raise InvalidInput(f"limit must be between 1 and 1000, not {limit}", hint="ask for 1 to 1000 runs")
        runs, choices = await self.db.run(
            lambda conn: (store.runs(conn, self.agent, limit), store.choices(conn, self.agent, limit)))
        return {"agent": self.agent, "runs": runs, "choices": choices}

    async def reset(self) -> dict:
        """Forget the bandit's statistics and the namespace's own choice (it inherits again).
        The episodes, runs and the record of choices stay."""
        now = timeutil.now()

        def write(conn):
            dropped = store.reset(conn, self.agent)
            self._choose(conn, self.agent, "clear", None, "reset", None, now)
            return dropped

        dropped = await self.db.transact(write)
        self._choices = None
        return {"agent": self.agent, "arms_reset": dropped, **{"strategy": (await self.status())["strategy"]}}

    async def undo(self) -> dict:
        """Go back to the choice in force before the latest one (recorded as a new choice)."""
        now = timeutil.now()

        def write(conn):
            latest = store.choices(conn, self.agent, 2)
            if not latest:
                raise NotFound(f"namespace {self.agent!r} has no arena choice to undo")
            before = latest[1] if len(latest) > 1 else {"kind": "clear", "arm": None}
            store.add_choice(conn, self.agent, before["kind"], before["arm"], f"undo of choice {latest[0]['id']}",
                             None, self.actor, now)
            return latest[0]["id"]

        undone = await self.db.transact(write)
        self._choices = None
        return {"agent": self.agent, "undone": undone, "strategy": (await self.status())["strategy"]}

    async def add_questions(self, questions: Iterable[Any]) -> dict:
        """Evaluation episodes from a question set: each {"question": text, "evidence": [memory
        ids, or sources naming memories]} (LoCoMo's qa shape; a LoCoMo file's conversations are
        read for their qa lists). Questions none of whose evidence names a memory are skipped."""
        items = _qa_items(questions)
        now = timeutil.now()

        def write(conn):
            added, skipped = [], 0
            for q, ids in zip(items, _evidence_ids(conn, self.agent, items)):
                if not ids:
                    skipped += 1
                    continue
                added.append(store.add_episode(conn, self.agent, q["question"], "{}", ids, "questions", None, None, now))
            return added, skipped

        added, skipped = await self.db.transact(write)
        return {"agent": self.agent, "added": len(added), "skipped": skipped, "ids": added}


def _qa_items(data: Any) -> list[dict]:
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InvalidInput("a question set must be a JSON list", hint='[{"question": "...", "evidence": [12, 40]}]')
    items = []
    for entry in data:
        qa = entry.get("qa") if isinstance(entry, dict) and "qa" in entry else [entry]
        if not isinstance(qa, list):
            raise InvalidInput("a conversation's qa must be a list of questions")
        items.extend(qa)
    if len(items) > MAX_QUESTIONS:
        raise InvalidInput(f"{len(items)} questions is more than {MAX_QUESTIONS} at once", hint="split the file")
    for n, q in enumerate(items, 1):
        if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not q["question"].strip():
            raise InvalidInput(f"question {n} has no question text",
                               hint='each is {"question": ..., "evidence": [...]}')
        ev = q.get("evidence")
        if not isinstance(ev, list) or not all(isinstance(e, (int, str)) and not isinstance(e, bool) for e in ev):
            raise InvalidInput(f"question {n}: evidence must be a list of memory ids or sources")
    return items


def _evidence_ids(conn, agent: str, items: list[dict]) -> list[list[int]]:
    """Each question's evidence as memory ids of the namespace: ids as given, sources looked up
    (all questions' sources in a few reads, since source has no index)."""
    ids = {e for q in items for e in q["evidence"] if isinstance(e, int) and 0 < e < 2**63}
    sources = list({e for q in items for e in q["evidence"] if isinstance(e, str)})
    known = existing_ids(conn, agent, list(ids))
    by_source: dict[str, list[int]] = {}
    for i, source in ids_by_source(conn, agent, sources):
        by_source.setdefault(source, []).append(i)
    out = []
    for q in items:
        found: list[int] = []
        for e in q["evidence"]:
            for i in ([e] if isinstance(e, int) and e in known else by_source.get(e, []) if isinstance(e, str) else []):
                if i not in found:
                    found.append(i)
        out.append(found)
    return out
