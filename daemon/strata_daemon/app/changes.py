"""Changing memories one at a time, and through what names them: archive, restore and purge,
the flags a person sets, feedback on a recall, and folding the access events into features."""

from __future__ import annotations

from typing import Any, Iterable

from strata_daemon.base import timeutil
from strata_daemon.base.text import require_text
from strata_daemon.base.wording import quoted
from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.store import episode_reads as reads, episodes as writes


MAX_REASON = 1000  # why a memory was archived, in the audit trail: a sentence, not a document


def checked_id(value: Any, what: str, agent: str) -> int:
    """An id as SQLite stores it; anything else names nothing in the namespace."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise NotFound(f"no {what} {value!r} in namespace {agent!r}")
    return value


class Changes:
    """The facade's changes to memories (memory.py assembles the facade)."""

    async def forget(self, episode_id: int, *, purge: bool = False, reason: str | None = None) -> dict:
        """Archive a memory (undone by `restore`), or purge it: its words leave every layer and
        the file, for good (strata_daemon/forgetting/)."""
        episode_id = checked_id(episode_id, "memory", self.agent)
        if purge:
            return {"id": episode_id, "purged": True, **await self.layers.forgetting.purge(ids=[episode_id])}
        if reason is not None:  # kept in the audit trail, as every face but the CLI and HTTP let it through
            if not isinstance(reason, str) or "\x00" in reason or len(reason) > MAX_REASON:
                raise InvalidInput(f"the reason must be text of at most {MAX_REASON:,} characters, not "
                                   f"{quoted(reason)}", hint="say why in a sentence")
            require_text(reason, "the reason")
        now = timeutil.now()
        async with self.db.write() as w:
            before = await writes.set_state(w, self.agent, episode_id, "archived", actor=self.actor, now=now,
                                            reason=reason)
            # The near-duplicates consolidation merged with it hold the same words: they go too.
            twins = [t["id"] for t in await w.run(lambda c: reads.merge_group(c, self.agent, episode_id))]
            for twin in twins:
                await writes.set_state(w, self.agent, twin, "archived", actor=self.actor, now=now, reason=reason)
        return {"id": episode_id, "state": "archived", "previous_state": before, "merged_archived": twins}

    async def forget_matching(self, text: str, *, purge: bool = False, apply: bool = False) -> dict:
        """What holds TEXT (memories, facts, dossier topics, entities) and what goes with it; with
        APPLY, the memories are archived and the facts retracted (both undoable), or with PURGE all
        of it is purged."""
        found = await self.layers.forgetting.matching(text)
        asked = found["asked"]
        plan = await self.layers.forgetting.plan(**asked)
        out = {"text": found["text"], "spellings": found["spellings"], "purge": purge, "applied": apply, **plan}
        if not apply:
            return out
        if purge:
            out["result"] = await self.layers.forgetting.purge(**asked)
            return out
        archived = []
        for i in asked["ids"]:
            r = await self.forget(i)
            archived += [r["id"], *r["merged_archived"]]
        retracted = []
        for key in [*asked["keys"], *asked["whole"]]:
            try:
                retracted.append((await self.layers.facts.retract(key))["key"])
            except NotFound:
                pass  # retracted already: its history holds the text until a purge
        out["result"] = {"archived": list(dict.fromkeys(archived)), "retracted": retracted}
        return out

    async def forget_fact(self, key: str | None = None, *, matching: str | None = None,
                          apply: bool = False) -> dict:
        """A fact's values leave its history, the audit, dossiers and the capsule; the fact is
        left retracted. With MATCHING instead of a key, every fact whose key, label, value or
        source holds those words: one named by them goes whole, key and all. Without APPLY, what
        would go."""
        if (key is None) == (matching is None):
            raise InvalidInput("name a fact key, or the words to match",
                               hint="strata fact forget KEY | --matching TEXT")
        if matching is None:
            asked = {"keys": [await self.layers.facts.known_key(key)]}  # `Dana's email` is dana.email
        else:
            found = (await self.layers.forgetting.matching(matching))["asked"]
            asked = {"keys": found["keys"], "whole": found["whole"], "texts": found["texts"]}
            if not asked["keys"] and not asked["whole"]:
                raise NotFound(f"no fact holds {quoted(matching)}", hint="`strata fact list` shows the facts")
        plan = await self.layers.forgetting.plan(**asked)
        named = {"key": key} if matching is None else {"matching": " ".join(matching.split())}
        if not apply:
            return {**named, "applied": False, **plan}
        return {**named, "applied": True, **plan, "result": await self.layers.forgetting.purge(**asked)}

    async def forget_topic(self, topic: str | None = None, *, matching: str | None = None,
                           apply: bool = False) -> dict:
        """A dossier topic leaves with every version of it, and its lines leave the capsule: asked
        by name, or by words (every topic whose name or query holds them). Without APPLY, what
        would go."""
        if (topic is None) == (matching is None):
            raise InvalidInput("name a topic, or the words to match", hint="strata dossier remove TOPIC --purge | "
                                                                          "--matching TEXT --purge")
        if matching is None:
            name = (await self.layers.dossiers.topic(topic)).name
            asked = {"topics": [name]}
            named = {"topic": name}
        else:
            found = await self.layers.forgetting.matching(matching)
            if not found["asked"]["topics"]:
                raise NotFound(f"no dossier topic holds {quoted(matching)}", hint="`strata dossier list` shows them")
            asked = {"topics": found["asked"]["topics"], "texts": found["asked"]["texts"]}
            named = {"matching": found["text"]}
        plan = await self.layers.forgetting.plan(**asked)
        if not apply:
            return {**named, "applied": False, **plan}
        return {**named, "applied": True, **plan, "result": await self.layers.forgetting.purge(**asked)}

    async def restore(self, episode_id: int) -> dict:
        episode_id = checked_id(episode_id, "memory", self.agent)
        now = timeutil.now()
        async with self.db.write() as w:
            group = await w.run(lambda c: reads.merge_group(c, self.agent, episode_id))
            before = await writes.set_state(w, self.agent, episode_id, "active", actor=self.actor, now=now)
            # The near-duplicates an archive took with it come back as they were: the survivor
            # active, the others merged into it.
            twins = [t for t in group if t["state"] == "archived"]
            for t in twins:
                await writes.set_state(w, self.agent, t["id"], "superseded" if t["superseded_by"] else "active",
                                       actor=self.actor, now=now)
        return {"id": episode_id, "state": "active", "previous_state": before,
                "merged_restored": [t["id"] for t in twins]}

    async def mark(self, episode_id: int, *, factual: bool | None = None, irrelevant: bool | None = None) -> dict:
        if factual and irrelevant:
            raise InvalidInput("a memory cannot be both factual (always eligible for recall) and irrelevant "
                               "(never recalled)", hint="mark it one of the two")
        episode_id = checked_id(episode_id, "memory", self.agent)
        now = timeutil.now()
        async with self.db.write() as w:
            changed = await writes.set_flags(w, self.agent, episode_id, actor=self.actor, now=now,
                                             factual=factual, irrelevant=irrelevant)
        return {"id": episode_id, "changed": {k: bool(v) for k, v in changed.items()}}

    async def feedback(self, recall_id: int, outcome: str, *, used: Iterable[int] | None = None) -> dict:
        """Feedback on a recall. `used` names the memories the agent actually used (found by the
        recall or not): a success goes to them alone, a failure to the hits offered in their
        place; without it, every memory the recall returned shares the outcome. With
        `used`, or with memories the agent put in the working set since the recall, or
        (arena.shared_feedback) with a success alone, the recall becomes an evaluation episode
        for the arena."""
        recall_id = checked_id(recall_id, "recall", self.agent)
        used_ids = None if used is None else list(dict.fromkeys(checked_id(i, "memory", self.agent) for i in used))
        if used_ids is not None and len(used_ids) > 1000:
            raise InvalidInput("used names more than 1000 memories")
        now = timeutil.now()
        async with self.db.write() as w:
            if used_ids:
                known = await w.run(lambda c: reads.existing_ids(c, self.agent, used_ids))
                missing = [i for i in used_ids if i not in known]
                if missing:
                    raise NotFound(f"no memory {missing[0]} in namespace {self.agent!r}",
                                   hint="`strata timeline` lists what this namespace holds")
            ids = await writes.feedback(w, self.agent, recall_id, outcome, actor=self.actor, now=now, used=used_ids)
            episode = await w.run(lambda c: self.layers.arena.episode_from_feedback(c, recall_id, outcome, used_ids,
                                                                                    ids, now))
        return {"recall_id": recall_id, "outcome": outcome, "episodes": ids, "used": used_ids,
                "arena_episode": episode}

    async def fold(self) -> dict:
        """Fold pending access events into features. Maintenance: covers every namespace."""
        async with self.db.write() as w:
            return await writes.fold_access_events(w)
