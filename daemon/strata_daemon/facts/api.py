"""The facts layer of a Memory: `mem.set_fact(...)`, `get_fact`, `cas_fact`, ... Each call is one
database hop; writes are one short transaction."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Iterable

from strata_daemon.base import timeutil
from strata_daemon.base.credentials import Redactor
from strata_daemon.base.numbers import whole
from strata_daemon.errors import CasMismatch, InvalidInput, NotFound
from strata_daemon.facts import ranking, rekey
from strata_daemon.facts.attributes import key_of
from strata_daemon.facts.judge import judge
from strata_daemon.facts.keys import Source, clean_value, label_of, normalise_key, parse_duration
from strata_daemon.facts.rules import Capture, capture, compile_rules
from strata_daemon.facts.superseding import Held, canonical_key, linked_in, resolved, resolved_key, settle, updates_in
from strata_daemon.facts.vocabulary import Vocabulary
from strata_daemon.store import fact_lookups as lookups
from strata_daemon.store import facts as store
from strata_daemon.store.db import Database

if TYPE_CHECKING:
    from strata_daemon.embedding.models import Models

log = logging.getLogger("strata.facts")

_UNSET: Any = object()


def _confidence(value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidInput(f"confidence must be a number between 0 and 1, not {value!r}")
    return float(value)


def _importance(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidInput(f"importance must be a number between 0 and 1, not {value!r}")
    return float(value)


class Facts:
    def __init__(self, db: Database, agent: str, config, actor: str, models: Models, redactor: Redactor | None = None):
        self.db, self.agent, self.actor, self.models = db, agent, actor, models
        self.redactor = redactor  # a value a person or the capsule gives is stored as an observation's text is
        self.alike_floor = float(config.tuning.facts.alike_floor)
        self.loose_floor = float(config.tuning.facts.loose_floor)
        self.near_floor = float(config.tuning.facts.near_floor)
        self.max_value_bytes = int(config["facts.max_value_bytes"])
        self.window = float(config.tuning.facts.conflict_window_seconds)
        self.capture_on = bool(config["facts.capture"])
        self.sentences = bool(config.tuning.facts.statements)
        self.rules = compile_rules(config["facts.rules"], tuple(config["store.kinds"]))
        self.vocab = Vocabulary.build(config["facts.attributes"])
        self.capsule_limit = int(config["facts.capsule_limit"])
        self.capsule_half_life = float(config.tuning.facts.capsule_half_life_hours)

    def _assertion(self, key: str, value: str | None, *, at, source, confidence, importance=None,
                   ttl=_UNSET, rule=None, now: float) -> store.Assertion:
        label = label_of(key)
        normalise_key(label)
        return store.Assertion(
            label=label, value=None if value is None else clean_value(self._redacted(label, value),
                                                                      self.max_value_bytes),
            valid_from=None if at is None else timeutil.parse_time(at, reference=now),
            source=source if isinstance(source, Source) else Source.parse(source, default=Source("person", self.actor)),
            confidence=_confidence(confidence, 1.0), rule=rule, importance=_importance(importance),
            ttl_seconds=None if ttl is _UNSET else parse_duration(ttl), set_ttl=ttl is not _UNSET)

    def _redacted(self, label: str, value):
        """VALUE with its credentials replaced, read with its key: `bank pin` = `4711` is a
        password as `bank pin: 4711` would be in a memory (a colon: the redactor reads a short
        name such as `pin` as a password's only right before one)."""
        if self.redactor is None or not isinstance(value, str):
            return value
        said = self.redactor.clean(f"{label}: {value}")
        return said[len(label) + 2:] if said.startswith(f"{label}: ") else self.redactor.clean(value)

    def _shaped(self, result: dict, a: store.Assertion) -> dict:
        return {**result, "label": a.label, "value": a.value, "valid_from_iso": timeutil.iso(result["valid_from"]),
                "source": str(a.source)}

    async def _write(self, a: store.Assertion) -> dict:
        def body(conn):
            return store.write(conn, self.agent, normalise_key(a.label), a, actor=self.actor, now=timeutil.now(),
                               window=self.window)
        return self._shaped(await self.db.transact(body), a)

    async def set(self, key: str, value: str, *, at: str | float | None = None, source: str | Source | None = None,
                  confidence: float | None = None, importance: float | None = None, ttl: Any = _UNSET) -> dict:
        """Assert KEY = VALUE, true from `at` (default now). A value it already had then only
        re-confirms it; an older `at` than the current value's lands in history."""
        return await self._write(self._assertion(key, value, at=at, source=source, confidence=confidence,
                                                 importance=importance, ttl=ttl, now=timeutil.now()))

    async def preview(self, changes: list[tuple[str, str]], *, source: str) -> list[dict]:
        """What set(key, value, source=SOURCE) of each change would do now, reading only: each
        as store.preview() shapes it, with the assertion that set_in() writes. A key named twice
        counts once, with its last value. Bad keys and values raise here, before any write."""
        now = timeutil.now()
        assertions: dict[str, store.Assertion] = {}
        for key, value in changes:
            try:
                a = self._assertion(key, value, at=None, source=source, confidence=None, now=now)
            except InvalidInput as e:
                raise InvalidInput(f"{key!r}: {e.message}", hint=e.hint) from None
            assertions[normalise_key(a.label)] = a
        return await self.db.run(lambda c: [{**store.preview(c, self.agent, key, a, now=now), "assertion": a}
                                            for key, a in assertions.items()])

    def set_in(self, conn, previews: list[dict]) -> list[dict]:
        """Write what preview() planned, inside the caller's write transaction (on the database
        thread). Returns what set() returns for each."""
        now = timeutil.now()
        return [self._shaped(store.write(conn, self.agent, normalise_key(p["assertion"].label), p["assertion"],
                                         actor=self.actor, now=now, window=self.window), p["assertion"])
                for p in previews]

    async def retract(self, key: str, *, at: str | float | None = None, source: str | None = None) -> dict:
        """KEY has no value from `at` on; its history stays. KEY is found as `get` finds it (a
        subject alone, its one attribute)."""
        key = await self.known_key(key)
        return await self._write(self._assertion(key, None, at=at, source=source, confidence=None,
                                                 now=timeutil.now()))

    async def cas(self, key: str, expected: str | None, new: str, *, source: str | None = None,
                  confidence: float | None = None) -> dict:
        """Set KEY to NEW now, only if its current value is EXPECTED (None: only if it has none).
        The check and the write are one transaction, so of two racing callers exactly one wins."""
        a = self._assertion(key, new, at=None, source=source, confidence=confidence, now=timeutil.now())
        want = None if expected is None else clean_value(expected, self.max_value_bytes)

        def body(conn):
            now = timeutil.now()  # under the write lock, like the comparison
            _, current = store.current_value(conn, self.agent, normalise_key(a.label), now)
            held = None if current is None else current["value"]
            if held != want:
                shown = "no value" if held is None else repr(held)
                # An absent value was expected: "holds 'v1', not no value" said it backwards.
                said = f"already holds {shown}" if want is None else f"holds {shown}, not {want!r}"
                raise CasMismatch(f"{normalise_key(a.label)!r} {said}; nothing changed",
                                  current=held, hint="read it again and retry with the value it holds now")
            return store.write(conn, self.agent, normalise_key(a.label), a, actor=self.actor, now=now,
                               window=self.window)

        return self._shaped(await self.db.transact(body), a)

    def _names(self, conn, key: str) -> list[str]:
        """The keys a name of a fact may stand for, the key as written first: a statement's
        subject (`Dana's email address`), a status line's name (`gateway port`), a subject named
        another way (`dana.email` for `Dana Whitfield.email`)."""
        tried = [normalise_key(key)]
        other = key_of(key) if isinstance(key, str) else None
        if other is not None:
            tried.append(normalise_key(other))
        tried += [k for k in (canonical_key(t, self.vocab) for t in list(tried)) if k]
        tried += [k for k in (resolved_key(conn, self.agent, t) for t in tried) if k]
        return list(dict.fromkeys(tried))

    def _one_attribute(self, conn, key: str, tried: list[str]) -> str | None:
        """A subject alone (`database migration ticket`): the key of its one attribute; None when
        it has none; NotFound naming them when it has several."""
        subjects = [*tried, *(k.split(" ", 1)[1] for k in tried if k.startswith(("the ", "our ")))]
        under = next((u for u in (lookups.attributes_of(conn, self.agent, k) for k in subjects) if u), [])
        if len(under) > 1:
            raise NotFound(f"{key!r} is a subject with {len(under)} facts: {', '.join(under)}",
                           hint=f'name one: strata fact get "{under[0]}"')
        longer = [] if under else next((k for k in (lookups.keys_of_longer_names(conn, self.agent, s)
                                                    for s in subjects) if k), [])
        if longer:  # `dana` of `dana whitfield.email`: named, not guessed
            raise NotFound(f"no fact {key!r} in this namespace", hint=f"did you mean {', '.join(longer[:3])}? "
                           f'(strata fact get "{longer[0]}")')
        return under[0] if under else None

    async def known_key(self, key: str) -> str:
        """The key of the fact a name finds (as `get` finds it, a subject alone included), else the
        name as a key."""
        def read(conn):
            names = self._names(conn, key)
            found = next((k for k in names if lookups.label_of(conn, self.agent, k) is not None), None)
            return found or self._one_attribute(conn, key, names) or names[0]

        return await self.db.run(read)

    async def get(self, key: str, *, at: str | float | None = None, known_at: str | float | None = None) -> dict:
        """KEY's value now, or as it was at `at` (world time); with `known_at`, as strata knew it then.
        A key worded as a statement's subject finds what the statement set: `Dana's email
        address` reads `dana.email`, `my phone number` reads `my phone`, `oskar.office` reads
        `oskar.location`; a subject named another way finds its key (`dana.email` for `Dana
        Whitfield.email`)."""
        now = timeutil.now()
        when = now if at is None else timeutil.parse_time(at, reference=now)
        known = None if known_at is None else timeutil.parse_time(known_at, reference=now)

        def read(conn):
            tried = self._names(conn, key)
            for k in tried:
                try:
                    return store.get(conn, self.agent, k, at=when, known_at=known, now=now)
                except NotFound:
                    continue
            # A subject alone (`database migration ticket`) reads its one attribute, or names them.
            one = self._one_attribute(conn, key, tried)
            return store.get(conn, self.agent, one or tried[0], at=when, known_at=known, now=now)  # its message names it

        return await self.db.run(read)

    async def list(self, *, stale: bool = False, prefix: str | None = None) -> list[dict]:
        now = timeutil.now()
        start = normalise_key(prefix) if prefix else None
        return await self.db.run(lambda c: store.listing(c, self.agent, now=now, stale_only=stale, prefix=start))

    async def history(self, key: str) -> dict:
        now = timeutil.now()
        found = await self.known_key(key)
        return await self.db.run(lambda c: store.history(c, self.agent, found, now=now))

    async def conflicts(self, *, flagged: bool = False, since: str | float | None = None, limit: int = 50) -> list[dict]:
        """The changes of value that are conflicts (store.CONFLICT_REASON), newest first;
        `flagged`: only those nobody has acknowledged yet."""
        limit = whole(limit, "limit")
        if not 1 <= limit <= 10000:
            raise InvalidInput(f"limit must be between 1 and 10000, not {limit}", hint="ask for 1 to 10000 (default 50)")
        start = None if since is None else timeutil.parse_time(since)
        return await self.db.run(lambda c: store.conflicts(c, self.agent, window=self.window, open_only=flagged,
                                                           since=start, limit=limit))

    async def acknowledge(self, conflict_id: int) -> dict:
        now = timeutil.now()
        conflict = whole(conflict_id, "the conflict id")
        return await self.db.transact(lambda c: store.acknowledge(c, self.agent, conflict, now, window=self.window))

    async def for_capsule(self, limit: int | None = None, *, pending: Iterable[dict] = ()) -> list[dict]:
        """The facts a capsule shows within its budget (facts.capsule_limit), best first; with
        `pending` (from preview()), as they will be once those are written."""
        now = timeutil.now()
        listed = {f["key"]: f for f in await self.list()}
        for p in pending:
            if not p["current"] or p["status"] not in ("created", "changed", "retracted"):
                continue  # no new current value
            if p["value"] is None:
                listed.pop(p["key"], None)
            else:
                listed[p["key"]] = {k: p[k] for k in ("key", "label", "value", "importance", "valid_from")}
        return ranking.for_capsule(listed.values(), now, limit=self.capsule_limit if limit is None else limit,
                                   half_life_hours=self.capsule_half_life)

    async def rejudge(self, *, apply: bool = False, undo: bool = False) -> dict:
        """Judge again the facts that a judging rule (the built-in status-line) captured before it
        judged: the current values that read as events. A dry run lists them; `apply` retracts
        them (history keeps every value, the retraction is recorded under the rule `rejudge`);
        `undo` restores what a re-judge retracted."""
        if apply and undo:
            raise InvalidInput("choose --apply or --undo, not both")
        judging = [r.name for r in self.rules if r.judge]
        source = Source("rule", store.REJUDGE)

        def body(conn):
            now = timeutil.now()
            if undo:
                found = store.rejudged(conn, self.agent, now)
                for f in found:
                    store.write(conn, self.agent, normalise_key(f["label"]), store.Assertion(
                        label=f["label"], value=f["value"], valid_from=None, source=Source.parse(f["source"],
                        default=source), confidence=f["confidence"], rule=f["rule"]),
                        actor=self.actor, now=now, window=self.window)
                return found
            found = [{**f, "reason": why} for f in store.judged_values(conn, self.agent, judging, now)
                     if (why := judge(f["key"], f["value"], f["label"])) is not None]
            if apply:
                for f in found:
                    store.write(conn, self.agent, normalise_key(f["label"]), store.Assertion(
                        label=f["label"], value=None, valid_from=None, source=source, rule=store.REJUDGE),
                        actor=self.actor, now=now, window=self.window)
            return found

        found = await (self.db.transact(body) if apply or undo else self.db.run(body))
        return {"action": "undo" if undo else "apply" if apply else "dry-run", "count": len(found), "facts": found}

    async def rekey(self, *, apply: bool = False) -> dict:
        """The captured facts that now land on another key (one key per subject and attribute);
        `apply` moves them (facts/rekey.py)."""
        def body(conn):
            return rekey.rekey_in(conn, self.agent, self.rules, self.vocab, timeutil.now(), actor=self.actor,
                                  window=self.window, apply=apply)
        found = await (self.db.transact(body) if apply else self.db.run(body))
        return {"action": "apply" if apply else "dry-run", "count": len(found), "moves": found}

    async def pay_owed_keys(self) -> int:
        """Once, when a home's facts were captured before canonical keys (migration 30): every
        namespace's moved to their keys. Returns how many moved."""
        if self.db.read_only is not None or not await self.db.run(rekey.owed):
            return 0
        return await self.db.transact(lambda c: rekey.pay_owed_in(c, self.rules, self.vocab, timeutil.now(),
                                                                  actor=self.actor, window=self.window))

    def linked_in(self, conn, newer: int, older: int, now: float, *, remove: bool = False) -> list[dict]:
        """Inside a `supersedes` link's write transaction: the facts memory OLDER gave follow
        NEWER (facts/superseding.py); removing the link gives them back."""
        return linked_in(conn, self.agent, newer, older, now, remove=remove, vocab=self.vocab, actor=self.actor,
                         window=self.window, max_bytes=self.max_value_bytes)

    def capture_in(self, conn, rows: Iterable[dict], results: Iterable[dict], now: float
                   ) -> tuple[list[dict], list[Held]]:
        """Apply the capture rules to stored observations, inside their write transaction (on the
        database thread). A repeat re-confirms; a duplicate was captured when first stored, and
        a row left out as purged was not stored. Returns the facts written and the updates held
        for weigh() and settle_in()."""
        if not self.capture_on or not (self.rules or self.sentences):
            return [], []
        out = []
        for row, result in zip(rows, results):
            if result["status"] not in ("created", "repeat"):
                continue
            try:
                found = capture(self.rules, row["content"], row["kind"], source=row.get("source"),
                                sentences=self.sentences, vocab=self.vocab)
            except Exception as e:  # a fault in a pattern must not cost the observation itself
                log.exception("fact capture failed on episode %s; stored without facts", result["id"])
                out.append({"key": None, "rule": None, "status": "skipped",
                            "reason": f"capture failed: {type(e).__name__}", "episode_id": result["id"]})
                continue
            out.extend(self._captured(conn, resolved(conn, self.agent, c), row, result["id"], now) for c in found)
        if not self.sentences:
            return out, []
        changed, held = updates_in(conn, self.agent, rows, results, out, now, vocab=self.vocab, actor=self.actor,
                                   window=self.window, max_bytes=self.max_value_bytes)
        return out + changed, held

    async def weigh(self, held: list[Held]) -> list[Held]:
        """The held updates whose two memories speak alike (tuning facts.alike_floor, loose_floor;
        of a memory's near updates only the most alike, near_floor), by the packaged MiniLM
        whatever embeds the memories, so that one floor holds."""
        emb = await self.models.minilm()
        texts = list(dict.fromkeys(t for h in held for t in h.texts))  # a memory near many facts: once
        at = {t: i for i, t in enumerate(texts)}
        vectors = await asyncio.to_thread(emb.embed, texts)
        alike = [float(vectors[at[h.texts[0]]] @ vectors[at[h.texts[1]]]) for h in held]
        best: dict[int, int] = {}  # a near update: only the fact the newer memory is most alike, per memory
        for i, h in enumerate(held):
            if h.near and alike[i] >= self.near_floor and (h.episode not in best or alike[i] > alike[best[h.episode]]):
                best[h.episode] = i
        return [h for i, h in enumerate(held) if best.get(h.episode) == i] + [
            h for i, h in enumerate(held)
            if not h.near and alike[i] >= (self.loose_floor if h.loose else self.alike_floor)]

    def settle_in(self, conn, held: list[Held], now: float) -> list[dict]:
        """Inside a write transaction: the updates weigh() found alike, as changes of the facts."""
        return settle(conn, self.agent, held, now, actor=self.actor, window=self.window,
                      max_bytes=self.max_value_bytes)

    def _captured(self, conn, c: Capture, row: dict, episode_id: int, now: float) -> dict:
        try:
            value = clean_value(c.value, self.max_value_bytes)
        except InvalidInput as e:
            return {"key": c.key, "rule": c.rule, "status": "skipped", "reason": e.message, "episode_id": episode_id}
        a = store.Assertion(label=c.label, value=value, valid_from=row["event_at"],
                            source=Source("episode", str(episode_id)), confidence=c.confidence, rule=c.rule)
        # c.key is normalise_key(c.label), worked out when the rules captured it.
        result = store.write(conn, self.agent, c.key, a, actor=self.actor, now=now, window=self.window)
        return {**result, "value": value, "rule": c.rule, "episode_id": episode_id}
