"""Storing observations: the rows, the facts they state and what they mention, in one
transaction a batch, so that a memory is never stored without its facts and links."""

from __future__ import annotations

import itertools
import json
import logging
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

from strata_daemon.base import timeutil
from strata_daemon.base.timeutil import iso
from strata_daemon.errors import StrataError
from strata_daemon.episodes import storing
from strata_daemon.episodes.model import normalize
from strata_daemon.store import episode_reads as reads, episodes as writes

IMPORT_BATCH = 2000
FUTURE_SLACK = 86400.0  # clocks and time zones disagree by hours; a day ahead is a date in the future
log = logging.getLogger("strata.observe")


class Observing:
    """The facade's writing of observations (memory.py assembles the facade)."""

    def validate(self, record: Mapping[str, Any], *, now: float | None = None, redact: bool = True) -> dict:
        limits = self.limits if redact else replace(self.limits, redactor=None)
        return normalize(record, limits, agent=self.agent, now=now or timeutil.now())

    async def observe(self, content: str | bytes, *, kind: str | None = None, importance: float | None = None,
                      context: Mapping | None = None, at: str | float | None = None, source: str | None = None,
                      session: str | None = None, factual: bool = False, redact: bool = True) -> dict:
        """Store one observation. Returns {"id", "status": created|repeat|duplicate, "occurrences"}.
        `redact=False` keeps the credentials in it, as a person may insist for one write; what it
        kept is recorded in the memory's history (its kinds, never the values)."""
        now = timeutil.now()
        row = self.validate({"content": content, "kind": kind, "importance": importance, "context": context,
                             "event_at": at, "source": source, "session": session, "factual": factual}, now=now,
                            redact=redact)
        kept = [] if redact or self.limits.redactor is None else \
            sorted({f.kind for f in self.limits.redactor.find(row["content"])})
        async with self.db.write() as w:
            results = await storing.insert(
                w, self.agent, [row], window=float(self.config["store.attention_window_seconds"]),
                actor=self.actor, now=now)
            if kept and results[0]["id"] is not None:
                await w.audit(self.agent, "episode", results[0]["id"], "kept_credentials", json.dumps({"kinds": kept}),
                              self.actor, now)
            facts, held = await w.run(self.layers.facts.capture_in, [row], results, now)
            await w.run(self.layers.web.mentions_in, [row], results, facts, now)
        out = {**results[0], "facts": facts + await self._settle(held, now)}
        if row["event_at"] > now + FUTURE_SLACK:  # a typo (2030 for 2020) would rank as recent for years
            out["warnings"] = [f"the memory is dated {iso(row['event_at'])[:10]}, in the future: recall and decay "
                               "count its age from then (--at sets when it happened)"]
        return out

    async def _settle(self, held: list, now: float) -> list[dict]:
        """The updates capture held (facts/superseding.py), taken where their two memories speak
        alike, in a transaction of their own: the memories are stored whatever the weighing says."""
        if not held:
            return []
        try:
            alike = await self.layers.facts.weigh(held)
        except StrataError as e:  # no embedder: the facts stay as they are, and the log says why
            log.warning("%d fact updates not weighed, the facts keep their values: %s", len(held), e.message)
            return []
        if not alike:
            return []
        async with self.db.write() as w:
            facts = await w.run(self.layers.facts.settle_in, alike, now)
            await w.run(self.layers.web.mentions_in, [], [], facts, now)
        return facts

    async def observe_many(self, rows: Iterable[dict], *, validated: bool = False,
                           progress: Callable[[int], None] | None = None,
                           input_sha256: str | None = None, skip_purged: bool = False) -> dict:
        """Store many observations in short transactions of IMPORT_BATCH rows.

        Rows are validated before the first write, so a bad row stores nothing. With
        `input_sha256` (the hash of the input the rows come from, in the same order each time)
        the rows an earlier run of that input stored are skipped and counted as duplicates: an
        import cut short and run again, or run twice, adds nothing. With `skip_purged` (an
        import) rows holding the words of a purged memory are counted as `purged`, not stored.
        `ids` are the ids of the rows this call stored, repeated and found already present.
        """
        now = timeutil.now()
        # Validated rows may come from a generator (a large import read a second time): taken a
        # batch at a time, never all at once.
        source = iter(rows) if validated else iter([self.validate(r, now=now) for r in rows])
        # `purged` only where it can happen: the API's batch answer keeps its documented shape.
        totals = {"created": 0, "repeat": 0, "duplicate": 0, **({"purged": 0} if skip_purged else {})}
        if input_sha256 is not None:
            done = await self.db.run(reads.import_progress, self.agent, input_sha256)
            skipped = sum(1 for _ in itertools.islice(source, done))
            totals["duplicate"] = skipped
            if progress and skipped:
                progress(skipped)
        ids: list[int] = []
        captured = 0
        window = float(self.config["store.attention_window_seconds"])
        while part := list(itertools.islice(source, IMPORT_BATCH)):
            async with self.db.write() as w:
                results = await storing.insert(w, self.agent, part, window=window,
                                              actor=self.actor, now=now, skip_purged=skip_purged)
                facts, held = await w.run(self.layers.facts.capture_in, part, results, now)
                await w.run(self.layers.web.mentions_in, part, results, facts, now)
                if input_sha256 is not None:
                    await writes.record_import(w, self.agent, input_sha256, len(part), now=now)
            captured += len(facts) + len(await self._settle(held, now))
            for r in results:
                totals[r["status"]] += 1
                if r["id"] is not None:
                    ids.append(r["id"])
            if progress:
                progress(len(part))
        if input_sha256 is not None:
            async with self.db.write() as w:
                await writes.record_import(w, self.agent, input_sha256, 0, now=now, finished=True)
        return {**totals, "ids": ids, "facts_captured": captured}
