"""A consolidation run: read the namespace, let each enabled rule propose its changes in
order (each rule sees what the ones before it changed), then write them in short
transactions, or (dry run) only report them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from functools import partial

import numpy as np

from strata_daemon.base import stopping, timeutil
from strata_daemon.config import tuning
from strata_daemon.consolidation import rules as R, similar
from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.graph import hebbian
from strata_daemon.store import consolidation as store

DAY = 86400.0
# Partners each memory keeps in the merge search: enough to join a group of near-duplicates
# into one, where all pairs of 26,000 copies of a few lines were 3.4 million tuples.
MERGE_PARTNERS = 16


class _Changed(Mapping):
    """A memory as the rules so far left it: what a rule set, over the memory as it was. Costs
    a reference where a copy of the row would cost a kilobyte (a first pass over a million
    memories changes about a million)."""
    __slots__ = ("before", "changes")

    def __init__(self, before, changes: dict):
        self.before, self.changes = before, changes

    def __getitem__(self, key: str):
        return self.changes[key] if key in self.changes else self.before[key]

    def __iter__(self):
        return iter(self.before.keys())

    def __len__(self) -> int:
        return len(self.before.keys())


def _merge_sets(mems: dict[int, dict], excluded: set[int], newer_than: int | None) -> list[list[int]]:
    """Ids of embedded memories of one kind with the same key tokens, in sets of two or more:
    the only memories that can be near-duplicates, so the only ones whose vectors merging
    compares (on 100,000 memories of the benchmark corpus, under 1%). After a first full pass
    only sets holding a vector newer than the last pass are left."""
    sets: dict[tuple[str, frozenset], list[int]] = {}
    for i, m in mems.items():
        if m["embedded"] and i not in excluded and not m["factual"]:
            sets.setdefault((m["kind"], R.key_tokens(m["content"])), []).append(i)
    return [sorted(ids) for ids in sets.values() if len(ids) > 1
            and (newer_than is None or any(mems[i]["embedded"] > newer_than for i in ids))]


def _recent(mems: dict[int, dict], now: float, s: tuning.Consolidation) -> list[int]:
    return [i for i, m in mems.items() if m["embedded"] and m["event_at"] >= now - s.associate_days * DAY]


def _merge_groups(sets: list[list[int]], pos: dict[int, int], matrix: np.ndarray, mems: dict[int, dict],
                  newer_than: int | None, s: tuning.Consolidation) -> tuple[list[list[int]], dict]:
    """Near-duplicate groups: within each set, memories whose vectors are close; once a first
    full pass is done, only pairs with a new vector are compared."""
    groups, sims = [], {}
    for members in sets:
        sub_ids = [i for i in members if i in pos]
        rows = None if newer_than is None else np.array(
            [k for k, i in enumerate(sub_ids) if mems[i]["embedded"] > newer_than], dtype=np.int64)
        if len(sub_ids) < 2 or (rows is not None and not len(rows)):
            continue
        pairs = similar.close_pairs(matrix[[pos[i] for i in sub_ids]], s.merge_threshold, rows=rows,
                                    per_row=MERGE_PARTNERS, between=stopping.check)
        pairs = [(a, b, cos) for a, b, cos in pairs
                 if not R.disagree(mems[sub_ids[a]]["content"], mems[sub_ids[b]]["content"])]
        for a, b, cos in pairs:
            sims[(min(sub_ids[a], sub_ids[b]), max(sub_ids[a], sub_ids[b]))] = cos
        groups += [[sub_ids[k] for k in g] for g in similar.components(len(sub_ids), pairs)]
    return groups, sims


def _associations(ids: list[int], matrix: np.ndarray, mems: dict[int, dict], done: set[tuple[int, int]],
                  now: float, s: tuning.Consolidation) -> list[R.Action]:
    """Association: recent memories close in meaning get a spiderweb edge (each at most
    `associate_max_cluster - 1` of its strongest), once per pair."""
    recent = [p for p, i in enumerate(ids) if i in mems and mems[i]["event_at"] >= now - s.associate_days * DAY]
    if len(recent) < 2:
        return []
    sub_ids = [ids[p] for p in recent]
    per_item = max(1, s.associate_max_cluster - 1)
    # Each memory's closest few are searched for (a margin over the cap, as both ends count).
    pairs = [(sub_ids[a], sub_ids[b], cos)
             for a, b, cos in similar.close_pairs(matrix[recent], s.associate_threshold, per_row=4 * per_item,
                                                 between=stopping.check)]
    # The cap counts the pairs associated before, so a second run does not reach for the next closest.
    kept = similar.strongest([p for p in pairs if p[2] < s.merge_threshold or (p[0], p[1]) in done], per_item)
    return [R.Action("associate", a, {}, f"recent and close in meaning to {b} (cosine {cos:.3f} >= "
                                         f"{s.associate_threshold:g})", {"with": b})
            for a, b, cos in kept if (a, b) not in done]


class Consolidation:
    def __init__(self, db, agent: str, actor: str, web, *, tuned: tuning.Tuning, rules: Iterable[str]):
        self.db, self.agent, self.actor, self.web = db, agent, actor, web
        self.settings = tuned.consolidation
        self.rules = tuple(rules)  # consolidation.rules: the rules a pass runs unless asked for others
        self.potentiation_accesses = tuned.scoring.potentiation_accesses

    def _wanted(self, mems, excluded, mark, now, rules) -> tuple[list[list[int]], list[int]]:
        """The merge sets, and the ids whose vectors the rules compare: the sets' members and
        the recent memories association looks at. A pass reads only those vectors: all of
        them would be 1.5 GB at a million memories."""
        sets = _merge_sets(mems, excluded, mark) if "merge" in rules else []
        recent = _recent(mems, now, self.settings) if "associate" in rules else []
        return sets, sorted({i for g in sets for i in g}.union(recent))

    def _plan(self, mems, sets, ids, matrix, mark, contradicted, done_assoc, replayed, now, rules):
        s = self.settings
        actions: list[R.Action] = []

        def take(found: list[R.Action]) -> None:
            stopping.check()  # between rules: a plan is thrown away whole, nothing was written
            actions.extend(found)
            for a in found:  # later rules see the changes of earlier ones
                if a.episode in mems:
                    mems[a.episode] = _Changed(mems[a.episode], a.set)

        if "merge" in rules and sets:
            groups, sims = _merge_groups(sets, {i: p for p, i in enumerate(ids)}, matrix, mems, mark, s)
            take(R.merge(groups, mems, sims, now, s))
            for a in actions:
                if a.set.get("state") == "superseded":
                    mems.pop(a.episode, None)
        active = lambda: [m for m in mems.values() if m["state"] == "active"]  # noqa: E731
        if "replay" in rules:
            take(R.replay(active(), now, s, replayed))
        if "potentiate" in rules:
            take(R.potentiate(active(), now, self.potentiation_accesses))
        if "promote" in rules:
            take(R.promote(active(), now, s))
        if "interference" in rules:
            pairs = []
            for x, y, how in contradicted:
                if x in mems and y in mems:
                    older, newer = sorted((x, y), key=lambda i: (mems[i]["event_at"], i))
                    pairs.append((older, newer, how))
            take(R.interference(mems, pairs, now, s))
        repeated = R.routine(active()) if "stale" in rules or "archive" in rules else {}
        if "stale" in rules:
            take(R.stale(active(), now, s, repeated))
        if "archive" in rules:
            take(R.archive(active(), now, s, repeated, self.potentiation_accesses))
        if "associate" in rules and len(ids):
            live = {i: m for i, m in mems.items() if m["state"] == "active"}
            take(_associations(ids, matrix, live, done_assoc, now, s))
        return actions

    async def run(self, *, dry_run: bool = False, rules: list[str] | None = None, now: float | None = None,
                  detail: bool = True) -> dict:
        """One pass. Returns {"run", "dry_run", "counts": {rule: n}, "actions": [...], "seconds"};
        without `detail`, no "actions" (the nightly phase keeps the counts, and a first pass over
        100,000 memories proposes about 130,000 changes)."""
        chosen = tuple(rules) if rules else self.rules
        unknown = [r for r in chosen if r not in R.RULES]
        if unknown:
            raise InvalidInput(f"unknown consolidation rule {unknown[0]!r}", hint=f"rules: {', '.join(R.RULES)}")
        now = timeutil.now() if now is None else now
        started = time.perf_counter()

        def read(conn):
            done = {p for p in store.done_pairs(conn, self.agent, "interference")}
            contradicted = [c for c in store.contradictions(conn, self.agent)
                            if (min(c[0], c[1]), max(c[0], c[1])) not in done and (c[0], c[1]) not in done
                            and (c[1], c[0]) not in done]
            newest = store.newest_embedded(conn, self.agent)
            return (store.memories(conn, self.agent), store.fact_sources(conn, self.agent),
                    store.merge_mark(conn), contradicted, store.done_pairs(conn, self.agent, "associate"),
                    store.replay_times(conn, self.agent), newest)

        mems, excluded, mark, contradicted, done_assoc, replayed, newest = await self.db.run(read)
        stopping.check()
        sets, wanted = await asyncio.to_thread(self._wanted, mems, excluded, mark, now, chosen)
        ids, matrix = await self.db.run(store.vectors, self.agent, wanted)
        stopping.check()
        # The rules wrap a changed memory rather than change it, so `before` keeps the rows as
        # read without a copy of each (a copy of a million memories is a gigabyte).
        before = dict(mems)
        actions = await asyncio.to_thread(self._plan, mems, sets, ids, matrix, mark, contradicted, done_assoc,
                                          replayed, now, chosen)
        run = None
        if not dry_run:
            # Written in short transactions with pauses: one transaction for a pass that changed
            # 26,000 memories held the write lock 35 s, and every other writer timed out. Each
            # action is whole in its transaction (the change and its audit row), so a stop between
            # two leaves a shorter run, recorded and undoable; the merge mark moves only at the end.
            run = await self.db.transact(store.next_run)
            done = 0
            while done < len(actions):
                stopping.check()
                done = await self.db.transact(store.apply, self.agent, actions, done, before,
                                              partial(hebbian.strengthened_level, self.web.rules), now,
                                              self.actor, run, store.APPLY_SECONDS)
                if done < len(actions):
                    await asyncio.sleep(store.APPLY_PAUSE)
            if "merge" in chosen and newest:
                await self.db.transact(store.set_merge_mark, newest)
        counts = {r: 0 for r in chosen}
        for a in actions:
            if a.rule != "merge" or "into" in (a.extra or ()):  # a merge counts the memories it superseded
                counts[a.rule] += 1
        out = {"run": run, "dry_run": dry_run, "counts": counts, "memories": len(before)}
        if detail:
            out["actions"] = [a.as_dict(before.get(a.episode)) for a in actions]
        return {**out, "seconds": round(time.perf_counter() - started, 3)}

    async def undo(self, run: int) -> dict:
        """Put back what run `run` changed. Edges it carried or added in the spiderweb stay: they
        only say the memories went together, and decay takes them if unused."""
        if run < 1:
            raise InvalidInput("a run number is 1 or more", hint="`strata consolidate --json` prints a run's number")
        now = timeutil.now()
        changes = await self.db.transact(lambda conn: store.undo(conn, self.agent, run, now, actor=self.actor))
        if not changes:
            newest = await self.db.run(store.last_run)
            if run > newest:  # a run never made is not found, not one that happened to change nothing
                raise NotFound(f"no consolidation run {run}: " + (f"the newest is run {newest}" if newest else
                                                                   "none has run yet"),
                               hint="`strata consolidate` prints the number of the run it makes")
            raise InvalidInput(f"consolidation run {run} changed nothing in namespace {self.agent!r}")
        return {"run": run, "undone": changes}
