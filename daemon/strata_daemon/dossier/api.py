"""The dossier layer of a Memory: `mem.refresh_dossier("revenue")`, `show_dossier`, `list_dossiers`, ...

A refresh reads the topic's material (recall, facts, changes), makes the extractive
synthesis, and hashes it with the generator and template that would turn it into text. An
unchanged hash skips the work; otherwise the synthesizer runs (the LLM, when configured,
falling back to the extractive text) and a new version is stored.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import logging
import re
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from strata_daemon.base import stopping, timeutil
from strata_daemon.base.text import require_text
from strata_daemon.config import templates as templating
from strata_daemon.config.home import Home
from strata_daemon.dossier import about, extractive, grounding, relevance, salience, topics
from strata_daemon.dossier.llm import LlmFailed, LlmTimeout, LocalLlm, lines_schema
from strata_daemon.errors import InvalidInput, LlmUnavailable, NotFound, StrataError
from strata_daemon.facts.keys import normalise_key
from strata_daemon.store import dossiers as store
from strata_daemon.store.db import Database

log = logging.getLogger("strata.dossier")

LAYOUT, PROMPT = "dossier.md.j2", "dossier-prompt.j2"
LLM_SECTIONS = ("changes", "open", "context")
# rank(query, k, mode) -> (hits as recall returns them, mode used, warnings); reads only.
Ranker = Callable[[str, int, str], Awaitable[tuple[list[dict], str, list[str]]]]
# capsule_text() -> the namespace's capsule file, or None when there is none; blocking, and
# InvalidInput when unreadable. A callable from whoever composes the layers, because the capsule
# layer renders dossiers and imports this one: it cannot be imported back.
CapsuleText = Callable[[], str | None]


def _title(name: str) -> str:
    words = topics.default_query(name)
    return words[:1].upper() + words[1:]


class Dossiers:
    def __init__(self, db: Database, agent: str, config, actor: str, home: Home, rank: Ranker,
                 capsule_text: CapsuleText):
        self.db, self.agent, self.config, self.actor, self.home, self._rank = db, agent, config, actor, home, rank
        self._capsule_text = capsule_text
        self.patterns = extractive.Patterns(re.compile(config.tuning.dossier.open_pattern),
                                            re.compile(config.tuning.dossier.closed_pattern))
        self.config_topics = topics.from_config(config["dossier.topics"])
        self._llm: LocalLlm | None = None
        self.templates = templating.Templates(home)

    # -- topics ----------------------------------------------------------------------------

    def _capsule_topics(self, warnings: list[str]) -> list[topics.Topic]:
        if not self.config["dossier.capsule_topics"]:
            return []
        try:
            text = self._capsule_text()
        except InvalidInput as e:
            warnings.append(f"could not read topics from the capsule: {e.message}")
            return []
        return [] if text is None else topics.from_capsule(text)

    async def _topics(self, warnings: list[str], *, discover: bool = True
                      ) -> tuple[list[topics.Topic], dict[str, dict]]:
        capsule = await asyncio.to_thread(self._capsule_topics, warnings)
        now = timeutil.now()
        min_mentions = int(self.config.tuning.dossier.discover_min_mentions)

        def read(conn):
            found = store.discovery_inputs(conn, self.agent, min_mentions, now) if discover else ([], [])
            return about.choices(conn, self.agent), store.states(conn, self.agent), found

        choices, states, (entities, keys) = await self.db.run(read)
        proposals = topics.discovered(entities, keys, min_mentions=min_mentions,
                                      min_keys=int(self.config.tuning.dossier.discover_min_keys),
                                      limit=int(self.config.tuning.dossier.discover_limit),
                                      enabled=bool(self.config["dossier.enable_discovered"]))
        return topics.merged(self.config_topics, capsule, proposals, choices), states

    async def list(self) -> dict:
        """Every topic (kept and proposed) with its state; `due` marks those a scheduled refresh takes."""
        warnings: list[str] = []
        found, states = await self._topics(warnings)
        now = timeutil.now()
        kept = {t.name: states.get(t.name, {}).get("checked_at") for t in found if t.enabled}
        due = set(topics.due(kept, now, min_hours=float(self.config.tuning.dossier.min_interval_hours)))
        out = []
        for t in found:
            s = states.get(t.name, {})
            out.append({**t.as_dict(), "version": s.get("version"), "refreshed_at": s.get("refreshed_at"),
                        "refreshed_at_iso": timeutil.iso(s.get("refreshed_at")), "checked_at": s.get("checked_at"),
                        "due": t.name in due})
        return {"topics": out, "warnings": warnings, **self.schedule()}

    def schedule(self) -> dict:
        """The refresh cadence the daemon follows (by default: every topic every 4 h, any one
        at most every 2 h)."""
        return {"refresh_interval_hours": float(self.config["dossier.refresh_interval_hours"]),
                "min_interval_hours": float(self.config.tuning.dossier.min_interval_hours)}

    async def topic(self, name: str) -> topics.Topic:
        key = topics.normalise_topic(name)
        for discover in (False, True):  # discovery reads every fact key: only when needed
            found, _ = await self._topics([], discover=discover)
            for t in found:
                if t.name == key:
                    return t
        raise await self._nearest(NotFound(f"no topic {key!r} in this namespace", hint=f"`strata dossier add {key}` "
                                           "starts one; `strata dossier list` shows the topics"), key)

    async def _nearest(self, e: NotFound, key: str) -> NotFound:
        """E, its hint naming the kept topics nearest KEY when there are (`bakup`: backup_job)."""
        found, _ = await self._topics([], discover=False)
        names = [t.name for t in found]
        near = difflib.get_close_matches(key, names, n=2, cutoff=0.6) or [
            n for n in names if n.startswith(key) or key.startswith(n)][:2]
        if not near or key in names:  # a topic kept with no version yet: the store's hint says what to do
            return e
        return NotFound(e.message, hint=f"did you mean {' or '.join(near)}? (`strata dossier list` shows the topics)")

    async def add(self, name: str, *, query: str | None = None, facts: list[str] | None = None) -> dict:
        key = topics.normalise_topic(name)
        if query is not None and not query.strip():
            raise InvalidInput("the query is empty", hint="say what words recall should look for")
        require_text(query or "", "the query")
        require_text(facts or [], "--facts")
        prefixes = None if facts is None else [f.strip() for f in facts if f.strip()]
        if facts is not None and not prefixes:
            raise InvalidInput("--facts needs at least one fact-key prefix")
        now = timeutil.now()
        await self.db.transact(lambda c: store.choose(c, self.agent, key, now=now, enabled=True, added=True,
                                                      query=query.strip() if query else None, fact_prefixes=prefixes))
        return (await self.topic(key)).as_dict()

    async def remove(self, name: str) -> dict:
        """Stop keeping the topic; its versions stay, and `add` brings it back."""
        t = await self.topic(name)
        now = timeutil.now()
        await self.db.transact(lambda c: store.choose(c, self.agent, t.name, now=now, enabled=False))
        return {**t.as_dict(), "enabled": False}

    # -- reading versions ------------------------------------------------------------------

    async def show(self, name: str, *, version: int | None = None) -> dict:
        key = topics.normalise_topic(name)
        try:
            return await self.db.run(store.require_version, self.agent, key, version)
        except NotFound as e:
            raise (e if version is not None else await self._nearest(e, key)) from None

    async def history(self, name: str) -> dict:
        key = topics.normalise_topic(name)
        found = await self.db.run(store.versions, self.agent, key)
        if not found:
            await self.db.run(store.require_version, self.agent, key, None)
        return {"topic": key, "versions": found}

    async def diff(self, name: str, *, old: int | None = None, new: int | None = None) -> dict:
        """A unified diff between two versions (default: the one before the current, and the current)."""
        key = topics.normalise_topic(name)

        def read(conn):
            b = store.require_version(conn, self.agent, key, new)
            a = store.require_version(conn, self.agent, key, old if old is not None else max(1, b["version"] - 1))
            return a, b

        a, b = await self.db.run(read)
        lines = list(difflib.unified_diff(a["text"].splitlines(), b["text"].splitlines(),
                                          f"{key} v{a['version']}", f"{key} v{b['version']}", lineterm=""))
        return {"topic": key, "from": a["version"], "to": b["version"], "diff": "\n".join(lines),
                "changed": bool(lines)}

    # -- refreshing ------------------------------------------------------------------------

    async def _material(self, t: topics.Topic, now: float, warnings: list[str]) -> extractive.Material:
        k = int(self.config.tuning.dossier.sources)
        hits, _, said = await self._rank(t.query, k, self.config.tuning.dossier.recall_mode)
        warnings.extend(said)
        recent_after = now - float(self.config.tuning.dossier.recent_days) * 86400.0
        terms = relevance.terms_of(t)
        found = [{"id": h["id"], "kind": h["kind"], "content": h["content"], "event_at": h["event_at"],
                  "importance": h["explain"]["features"]["importance"],
                  "relevance": h["explain"]["signals"]["relevance"]} for h in hits]
        # Memories linked to the topic's entities join with the weakest relevance recall gave.
        weakest = min((f["relevance"] for f in found), default=1.0)
        linked = await self.db.run(about.linked_to_topic, self.agent, terms, {f["id"] for f in found}, k)
        found += [{**row, "relevance": weakest} for row in linked]
        sources = salience.ranked(found, now, float(self.config.tuning.dossier.half_life_hours))

        def read(conn):
            # Prefixes are kept as a person typed them; fact keys are normalised (`Bridge` finds `bridge ...`).
            facts = store.topic_facts(conn, self.agent, tuple(normalise_key(p) for p in t.fact_prefixes), now)
            changes = store.topic_changes(conn, self.agent, [f["fact_id"] for f in facts], recent_after,
                                          limit=4 * int(self.config["dossier.max_lines"]),
                                          window=float(self.config.tuning.facts.conflict_window_seconds))
            # Recall hands the nearest memories, not only those about the topic: the others
            # may still close one of its tasks, but never fill a line.
            topical = about.about_topic(conn, self.agent, sources, terms, [f["key"] for f in facts])
            on, off = [s for s in sources if s["id"] in topical], [s for s in sources if s["id"] not in topical]
            closers = {s["id"]: [m for ident in extractive.identifiers(s["content"])
                                 for m in store.later_mentions(conn, self.agent, ident, s["event_at"])]
                       for s in on if extractive.is_open(s, self.patterns)}
            return facts, changes, on, off, {i: found for i, found in closers.items() if found}

        facts, changes, on, off, closers = await self.db.run(read)
        return extractive.Material(t, facts, changes, on, closers, recent_after, off)

    def _generator(self) -> str:
        """What should write the dossier: `extractive`, or `llm:NAME` when a model is configured."""
        choice, model = self.config["dossier.synthesizer"], self.config["llm.model"]
        if choice == "extractive" or (choice == "auto" and not model):
            return "extractive"
        return f"llm:{Path(model).expanduser().stem}" if model else "llm:(no model)"

    def llm(self) -> LocalLlm:
        model = self.config["llm.model"]
        if not model:
            raise LlmUnavailable("dossier.synthesizer is llm but [llm] model is not set",
                                 hint="set [llm] model to a GGUF file, or dossier.synthesizer to auto")
        if self._llm is None:
            self._llm = LocalLlm(model, threads=int(self.config["llm.threads"]),
                                 context=int(self.config.tuning.llm.context_tokens))
        return self._llm

    def release(self) -> None:
        """Unload the LLM; the next synthesis loads it again."""
        self._llm = None

    async def refresh(self, name: str, *, force: bool = False, now: float | None = None) -> dict:
        """Bring one topic's dossier up to date. Returns what happened: `unchanged` (the input
        hash matched the current version's) or `refreshed` (a new version)."""
        t = await self.topic(name)
        started = time.perf_counter()
        now = timeutil.now() if now is None else now
        warnings: list[str] = []
        layout, layout_source = self.templates.load(LAYOUT)
        material = await self._material(t, now, warnings)
        limits = {"max_lines": int(self.config["dossier.max_lines"]), "line_chars": int(self.config.tuning.dossier.line_chars)}
        sections = extractive.synthesize(material, self.patterns, **limits)
        generator = self._generator()
        prompt_source = ""
        if generator.startswith("llm:"):
            prompt_source = self.templates.load(PROMPT)[1]
        input_hash = hashlib.sha256(json.dumps(
            {"topic": t.as_dict(), "sections": extractive.as_data(sections), "generator": generator,
             "layout": layout_source, "prompt": prompt_source, "limits": limits,
             "llm": {f"llm.{k}": getattr(self.config.tuning.llm, k) for k in ("max_tokens", "temperature", "min_lines")}
             if prompt_source else None}, sort_keys=True).encode()).hexdigest()
        current = await self.db.run(store.version, self.agent, t.name, None)
        if not force and current is not None and current["input_hash"] == input_hash \
                and current["generator"] == generator:
            await self.db.transact(store.checked, self.agent, t.name, now)
            return {"topic": t.name, "status": "unchanged", "version": current["version"], "generator": generator,
                    "input_hash": input_hash, "warnings": warnings,
                    "elapsed_ms": round((time.perf_counter() - started) * 1000, 3)}
        notes: dict[str, Any] = {"off_topic": len(material.off_topic)}  # why a dossier may be short
        used = "extractive"
        if generator.startswith("llm:"):
            written = await self._llm_sections(t, material, sections, notes)
            if written is not None:
                sections, used = written, generator
            warnings.extend(notes.pop("warnings", []))
        text = templating.render(layout, topic={"name": t.name, "title": _title(t.name), "query": t.query},
                                 as_of=timeutil.iso(now), generator=used, sections=extractive.as_data(sections))
        by_id = {s["id"]: s for s in material.sources}
        cited = extractive.cited_ids(sections)
        # A fact value (`f11`) has no memory to show: its source names the line that cites it.
        fact_lines = {c: ln.text for s in reversed(sections) for ln in s.lines for c in ln.cites if c[0] == "f"}
        sources = [{"id": c, "salience": by_id[int(c[1:])]["salience"]} if c[0] == "e" and int(c[1:]) in by_id
                   else {"id": c, "line": fact_lines[c]} if c in fact_lines else {"id": c} for c in cited]
        version = await self.db.transact(lambda c: store.store(
            c, self.agent, t.name, text=text, sources=sources, generator=used if used == generator else
            "extractive (llm fell back)", input_hash=input_hash, notes=notes, now=now, actor=self.actor))
        if used != generator:
            log.warning("dossier %s: the LLM's text was not used: %s", t.name, notes.get("fallback"))
        return {"topic": t.name, "status": "refreshed", "version": version, "generator": used,
                "intended_generator": generator, "input_hash": input_hash, "lines": sum(len(s.lines) for s in sections),
                "sources": len(sources), "notes": notes, "warnings": warnings,
                "elapsed_ms": round((time.perf_counter() - started) * 1000, 3)}

    async def refresh_due(self, *, now: float | None = None) -> dict:
        """What the daemon's dossier phase runs: every kept topic not checked within
        dossier.min_interval_hours. One topic failing does not stop the others."""
        listing = await self.list()
        due = [t["topic"] for t in listing["topics"] if t["enabled"] and t["due"]]
        results, failed = [], []
        for name in due:
            stopping.check()  # each topic is its own transaction: the refreshed ones stay
            try:
                results.append(await self.refresh(name, now=now))
            except StrataError as e:
                log.error("dossier %s: refresh failed: %s", name, e.message)
                failed.append({"topic": name, **e.as_dict()})
        return {"due": due, "results": results, "failed": failed}

    # -- the LLM synthesizer -----------------------------------------------------------------

    def _prompt_parts(self, t: topics.Topic, material: extractive.Material, sections: list[extractive.Section]
                      ) -> tuple[list[dict], list[dict], dict[str, str]]:
        """Known facts, the sources the prompt offers (those the extractive synthesis quoted,
        then the other recalled memories by salience), and each source's checkable text."""
        limit = int(self.config.tuning.dossier.line_chars)
        facts = [{"text": ln.text, "cites": list(ln.cites)} for s in sections if s.name in ("facts", "contradictions")
                 for ln in s.lines]
        quoted = [int(c[1:]) for s in sections if s.name in LLM_SECTIONS for ln in s.lines for c in ln.cites
                  if c.startswith("e")]
        behind_facts = {int(c[1:]) for f in facts for c in f["cites"] if c.startswith("e")}
        by_id = {s["id"]: s for s in material.sources}
        order = [*dict.fromkeys(quoted), *(s["id"] for s in material.sources)]
        offered, checkable = [], {}
        for i in dict.fromkeys(order):
            s = by_id.get(i)
            if s is None or i in behind_facts:  # a fact change's memory that recall did not return
                continue
            offered.append({"id": f"e{i}", "when": extractive.when(s["event_at"]), "kind": s["kind"],
                            "text": extractive.quote(s["content"], limit)})
            checkable[f"e{i}"] = grounding.source_text(s["content"], s["event_at"])
        return facts, offered, checkable

    async def _llm_sections(self, t: topics.Topic, material: extractive.Material,
                            sections: list[extractive.Section], notes: dict) -> list[extractive.Section] | None:
        """The LLM's sections (facts and contradictions stay extractive), or None with the reason
        in notes["fallback"] when the extractive text must be used."""
        notes["warnings"] = []
        try:
            llm = self.llm()
            await asyncio.to_thread(llm.load)
        except LlmUnavailable as e:
            notes["fallback"] = e.message if not e.hint else f"{e.message}; {e.hint}"
            notes["warnings"].append(f"extractive dossier used: {notes['fallback']}")
            return None
        facts, offered, checkable = self._prompt_parts(t, material, sections)
        if not offered:
            notes["fallback"] = "no sources to write from"
            return None
        template, _ = self.templates.load(PROMPT)
        max_lines = int(self.config["dossier.max_lines"])
        max_tokens = int(self.config.tuning.llm.max_tokens)
        topic = {"name": t.name, "title": _title(t.name), "query": t.query}

        def messages(n: int) -> list[dict]:
            values = dict(topic=topic, facts=facts, sources=offered[:n], sections=LLM_SECTIONS, max_lines=max_lines)
            return [{"role": "system", "content": templating.render(template, "system", **values).strip()},
                    {"role": "user", "content": templating.render(template, "user", **values).strip()}]

        budget = llm.context - max_tokens - 64  # the chat template's own tokens
        n = len(offered)
        while n > 1 and await asyncio.to_thread(llm.count_tokens, "\n".join(m["content"] for m in messages(n))) > budget:
            n = max(1, n * 3 // 4)
        notes["prompt_sources"] = n
        notes["prompt"] = messages(n)  # kept with the version: what the model was told, to explain its text
        ids = [s["id"] for s in offered[:n]]
        deadline = time.monotonic() + float(self.config["llm.timeout_seconds"])
        try:
            gen = await asyncio.to_thread(llm.generate, messages(n), lines_schema(
                ids, LLM_SECTIONS, max_lines=max_lines, max_chars=int(self.config.tuning.dossier.line_chars)),
                max_tokens=max_tokens, temperature=float(self.config.tuning.llm.temperature), deadline=deadline)
        except LlmTimeout as e:
            notes["fallback"] = f"timed out after llm.timeout_seconds: {e}"
            return None
        except LlmFailed as e:
            notes["fallback"] = str(e)
            notes["raw"] = e.raw[:4000]
            return None
        notes["llm"] = {"model": llm.name, **gen.stats()}
        kept: dict[str, list[extractive.Line]] = {name: [] for name in LLM_SECTIONS}
        rejected, seen = [], set()
        for line in gen.lines:
            text = grounding.strip_marker(str(line.get("text", "")))
            cites = [str(c) for c in line.get("sources", [])]
            if text.casefold() in seen:
                continue  # small models repeat themselves
            seen.add(text.casefold())
            verdict = grounding.check(text, cites, {i: checkable[i] for i in ids})
            section = line.get("section") if line.get("section") in kept else "context"
            if verdict.kept and len(kept[section]) < max_lines:
                kept[section].append(extractive.Line(" ".join(text.split()), tuple(dict.fromkeys(cites))))
            elif not verdict.kept:
                rejected.append({"text": text, "cites": cites, "reason": verdict.reason})
        notes["rejected"] = rejected
        total = sum(len(v) for v in kept.values())
        notes["kept_lines"] = total
        if total < int(self.config.tuning.llm.min_lines):
            notes["fallback"] = (f"only {total} of {len(gen.lines)} lines passed the grounding check "
                                 f"(llm.min_lines is {self.config.tuning.llm.min_lines})")
            return None
        return [s if s.name not in kept else extractive.Section(s.name, s.title, kept[s.name]) for s in sections]
