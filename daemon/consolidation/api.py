"""A consolidation run: read the namespace, let each enabled rule propose its changes in
order (each rule sees what the ones before it changed), then write them all in one
transaction, or (dry run) only report them."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from .. import timeutil
from ..errors import InvalidInput
from . import rules as R, similar, store

DAY = 86400.0


def _merge_groups(ids: list[int], matrix: np.ndarray, mems: dict[int, dict], excluded: set[int],
                  newer_than: int | None, s: R.Settings) -> tuple[list[list[int]], dict]:
    """Near-duplicate groups: memories of one kind with the same key tokens whose vectors are
    close. Vectors are compared only within such a set (near-duplicates must share their key
    tokens anyway), which keeps a first pass over a million memories from comparing every pair
    of a kind; after a first full pass only new vectors are compared (against their set)."""
    groups, sims = [], {}
    candidates: dict[tuple[str, frozenset], list[int]] = {}
    for pos, i in enumerate(ids):
        m = mems.get(i)
        if m is not None and i not in excluded and not m["factual"]:
            candidates.setdefault((m["kind"], R.key_tokens(m["content"])), []).append(pos)
    for positions in candidates.values():
        if len(positions) < 2:
            continue
        sub_ids = [ids[p] for p in positions]
        rows = None if newer_than is None else np.array(
            [k for k, i in enumerate(sub_ids) if mems[i]["embedded"] > newer_than], dtype=np.int64)
        if rows is not None and not len(rows):
            continue
        pairs = similar.close_pairs(matrix[positions], s.merge_threshold, rows=rows)
        for a, b, cos in pairs:
            sims[(min(sub_ids[a], sub_ids[b]), max(sub_ids[a], sub_ids[b]))] = cos
        groups += [[sub_ids[k] for k in g] for g in similar.components(len(sub_ids), pairs)]
    return groups, sims


def _associations(ids: list[int], matrix: np.ndarray, mems: dict[int, dict], done: set[tuple[int, int]],
                  now: float, s: R.Settings) -> list[R.Action]:
    """Seed 001 step 4: recent memories close in meaning get a spiderweb edge (each at most
    `associate_max_cluster - 1` of its strongest), once per pair."""
    recent = [p for p, i in enumerate(ids) if i in mems and mems[i]["event_at"] >= now - s.associate_days * DAY]
    if len(recent) < 2:
        return []
    sub_ids = [ids[p] for p in recent]
    pairs = [(sub_ids[a], sub_ids[b], cos) for a, b, cos in similar.close_pairs(matrix[recent], s.associate_threshold)]
    # The cap counts the pairs associated before, so a second run does not reach for the next closest.
    kept = similar.strongest([p for p in pairs if p[2] < s.merge_threshold or (p[0], p[1]) in done],
                             max(1, s.associate_max_cluster - 1))
    return [R.Action("associate", a, {}, f"recent and close in meaning to {b} (cosine {cos:.3f} >= "
                                         f"{s.associate_threshold:g})", {"with": b})
            for a, b, cos in kept if (a, b) not in done]


class Consolidation:
    def __init__(self, db, agent: str, config, actor: str, web):
        self.db, self.agent, self.actor, self.web = db, agent, actor, web
        self.settings = R.Settings.from_config(config)

    def _plan(self, mems, ids, matrix, excluded, mark, contradicted, done_assoc, replayed, now, rules):
        s = self.settings
        actions: list[R.Action] = []

        def take(found: list[R.Action]) -> None:
            actions.extend(found)
            for a in found:  # later rules see the changes of earlier ones
                if a.episode in mems:
                    mems[a.episode] = {**mems[a.episode], **a.set}

        if "merge" in rules and len(ids):
            groups, sims = _merge_groups(ids, matrix, mems, excluded, mark, s)
            take(R.merge(groups, mems, sims, s))
            for a in actions:
                if a.set.get("state") == "superseded":
                    mems.pop(a.episode, None)
        active = lambda: [m for m in mems.values() if m.get("state", "active") == "active"]  # noqa: E731
        if "replay" in rules:
            take(R.replay(active(), now, s, replayed))
        for name, rule in (("potentiate", R.potentiate), ("promote", R.promote), ("stale", R.stale)):
            if name in rules:
                take(rule(active(), now, s))
        if "interference" in rules:
            pairs = []
            for x, y, how in contradicted:
                if x in mems and y in mems:
                    older, newer = sorted((x, y), key=lambda i: (mems[i]["event_at"], i))
                    pairs.append((older, newer, how))
            take(R.interference(mems, pairs, now, s))
        if "archive" in rules:
            take(R.archive(active(), now, s))
        if "associate" in rules and len(ids):
            live = {i: m for i, m in mems.items() if m.get("state", "active") == "active"}
            take(_associations(ids, matrix, live, done_assoc, now, s))
        return actions

    async def run(self, *, dry_run: bool = False, rules: list[str] | None = None, now: float | None = None) -> dict:
        """One pass. Returns {"run", "dry_run", "counts": {rule: n}, "actions": [...], "seconds"}."""
        chosen = tuple(rules) if rules else self.settings.rules
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
            needs_vectors = "merge" in chosen or "associate" in chosen
            ids, matrix = store.vectors(conn, self.agent) if needs_vectors else ([], np.zeros((0, 0)))
            newest = conn.execute("SELECT max(embedded) FROM episodes WHERE agent = ?", (self.agent,)).fetchone()[0]
            return (store.memories(conn, self.agent), ids, matrix, store.fact_sources(conn, self.agent),
                    store.merge_mark(conn), contradicted, store.done_pairs(conn, self.agent, "associate"),
                    store.replay_times(conn, self.agent), newest)

        mems, ids, matrix, excluded, mark, contradicted, done_assoc, replayed, newest = await self.db.run(read)
        # The rules replace a memory's dict rather than change it, so the originals stay as read
        # without a copy of each (a copy of a million memories is a gigabyte).
        before = dict(mems)
        actions = await asyncio.to_thread(self._plan, mems, ids, matrix, excluded, mark, contradicted, done_assoc,
                                          replayed, now, chosen)
        run = None
        if not dry_run:
            def write(conn):
                number = store.next_run(conn)
                store.apply(conn, self.agent, actions, before, self.web.rules, now, actor=self.actor, run=number)
                if "merge" in chosen and newest:
                    store.set_merge_mark(conn, newest)
                return number
            run = await self.db.transact(write)
        counts = {r: 0 for r in chosen}
        for a in actions:
            if a.rule != "merge" or "into" in a.extra:  # a merge counts the memories it superseded
                counts[a.rule] += 1
        return {"run": run, "dry_run": dry_run, "counts": counts, "memories": len(before),
                "actions": [a.as_dict(before.get(a.episode)) for a in actions],
                "seconds": round(time.perf_counter() - started, 3)}

    async def undo(self, run: int) -> dict:
        """Put back what run `run` changed. Edges it carried or added in the spiderweb stay: they
        only say the memories went together, and decay takes them if unused."""
        if run < 1:
            raise InvalidInput("a run number is 1 or more", hint="`strata consolidate --json` prints a run's number")
        now = timeutil.now()
        changes = await self.db.transact(lambda conn: store.undo(conn, self.agent, run, now, actor=self.actor))
        if not changes:
            raise InvalidInput(f"consolidation run {run} changed nothing in namespace {self.agent!r}")
        return {"run": run, "undone": changes}
