"""The capsule layer of a Memory (`mem.check_capsule()`, `render_capsule()`, `show_capsule()`, ...).

A render reads the file and works out, reading only, what a person changed inside the
rendered blocks since the last render (a fact line becomes a fact; other added lines are
pinned, removed ones hidden) and the blocks rendered from the layers with those edits in,
cut by salience when over budget: a plan, which a dry run returns as it is. The render then
replaces the file only if nobody changed it meanwhile (else it reads and plans again), and
records the plan's facts, pins, hides and blocks in one transaction.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
from pathlib import Path
from typing import Callable

from strata_daemon.base import numbers, timeutil, wording
from strata_daemon.capsule import document, files, merge, restored
from strata_daemon.config import templates as templating
from strata_daemon.config.home import Home, shipped
from strata_daemon.dossier import extractive, salience
from strata_daemon.errors import InvalidInput, StorageError
from strata_daemon.store import capsule as store, dossiers as dossier_store
from strata_daemon.store.db import Database

log = logging.getLogger("strata.capsule")

TEMPLATE = "capsule.md.j2"
EXAMPLE = shipped("capsule", "CAPSULE.md")
# When over budget, rendered lines go in this order: least salient recent work first.
CUT_ORDER = ("recent", "tasks", "facts", "topics", "priorities")
_DEADLINE = re.compile(r"\b(?:before|by|due|until)\s+(\d{4}-\d{2}-\d{2})\b", re.IGNORECASE)
MERGE_TRIES = 5
BASE_CANDIDATES = 5  # recent renders an edited file is compared with


class CapsuleInvalid(InvalidInput):
    """The capsule file has errors; the last good render stays in place."""

    def __init__(self, path: Path, problems: list[document.Problem]):
        errors = [p for p in problems if p.level == "error"]
        super().__init__(f"{path} has {wording.counted(len(errors), 'problem')}: " + "; ".join(str(p) for p in errors[:3]),
                         hint="`strata capsule check` lists them with line numbers; fix the file, and strata "
                              "renders again")
        self.problems = problems


class Capsule:
    def __init__(self, db: Database, agent: str, config, actor: str, home: Home, facts, dossiers):
        self.db, self.agent, self.config, self.actor, self.home = db, agent, config, actor, home
        self.facts, self.dossiers = facts, dossiers
        self.path = home.capsule_file(agent, config["agent.namespace"])
        self.versions_dir = home.state_dir / "capsule" / agent
        self.templates = templating.Templates(home)
        self.last_problems: list[dict] = []  # what the watcher last found wrong with the file
        # The hash of this process's latest write, known before the file changes: the watcher may
        # see the write before its render is recorded in the database.
        self.written_sha256: str | None = None

    # -- reading -----------------------------------------------------------------------------

    def read_text(self) -> str | None:
        """The file's text, or None when there is none; blocking (call from a thread). What the
        dossiers read their topics from, handed to them as a callable where the layers are composed."""
        return files.read(self.path)

    async def _read(self) -> str | None:
        return await asyncio.to_thread(self.read_text)

    async def check(self, text: str | None = None) -> dict:
        """Problems with line numbers: missing, duplicated or misordered sections, damaged
        markers, misplaced blocks, the line budget. `ok` is false when any is an error."""
        if text is None:
            try:
                text = await self._read()
            except InvalidInput as e:
                return {"path": str(self.path), "exists": True, "ok": False, "lines": 0,
                        "problems": [document.Problem(0, "error", "unreadable", f"{e.message}; {e.hint}").as_dict()]}
        if text is None:
            return {"path": str(self.path), "exists": False, "ok": False, "lines": 0,
                    "problems": [document.Problem(0, "error", "missing-file",
                                                  "there is no capsule yet; `strata capsule render` writes one "
                                                  "from the example").as_dict()]}
        doc = document.parse(text)
        return {"path": str(self.path), "exists": True, "ok": doc.ok, "lines": len(doc.lines),
                "problems": [p.as_dict() for p in doc.problems]}

    async def show(self, *, last_good: bool = False, render_missing: bool = False) -> dict:
        """The capsule as it is, or (`last_good`) strata's newest kept render: what an agent
        should read while the file has errors. A namespace with no capsule file yet is rendered
        first (`render_missing`, for a namespace the caller may write), or shown as the shipped
        example, so that reading the capsule first never fails on a new home or agent."""
        if last_good:
            kept = await asyncio.to_thread(self._kept)
            if not kept:
                raise InvalidInput(f"no render of {self.path} is kept yet", hint="`strata capsule render` writes one")
            text = await asyncio.to_thread(kept[-1].read_text, encoding="utf-8")
            return {"path": str(kept[-1]), "text": text, "ok": True, "problems": []}
        text = await self._read()
        if text is None and render_missing:
            await self.render()
            text = await self._read()
        if text is None:
            example = await asyncio.to_thread(EXAMPLE.read_text, encoding="utf-8")
            return {"path": str(self.path), "text": example, "ok": True, "problems": [], "example": True}
        doc = document.parse(text)
        return {"path": str(self.path), "text": text, "ok": doc.ok, "problems": [p.as_dict() for p in doc.problems]}

    async def since_render(self) -> dict:
        """What changed in the file since strata's newest kept render (a person's edits, or a
        damaged file), as a unified diff."""
        kept = await asyncio.to_thread(self._kept)
        text = await self._read()
        if not kept:
            return {"path": str(self.path), "render": None, "diff": "", "changed": text is not None}
        old = await asyncio.to_thread(kept[-1].read_text, encoding="utf-8")
        lines = list(difflib.unified_diff(old.splitlines(), (text or "").splitlines(), f"last render ({kept[-1].name})",
                                          "capsule (now)", lineterm=""))
        return {"path": str(self.path), "render": str(kept[-1]), "diff": "\n".join(lines), "changed": bool(lines)}

    async def stats(self) -> dict:
        text = await self._read() or ""
        episodes, archive = await self.db.run(store.archive_bytes, self.agent)
        size = len(text.encode("utf-8"))
        last = await self.db.run(store.last_render, self.agent)
        return {"path": str(self.path), "lines": len(text.splitlines()), "bytes": size,
                "budget_lines": document.BUDGET_LINES, "episodes": episodes, "archive_bytes": archive,
                "compression_ratio": round(archive / size, 1) if size else None,
                "last_render_at": None if last is None else last["created_at"],
                "last_render_at_iso": None if last is None else timeutil.iso(last["created_at"])}

    async def overrides(self) -> list[dict]:
        return await self.db.run(store.overrides, self.agent)

    async def clear_override(self, override_id: int) -> dict:
        now = timeutil.now()
        return await self.db.transact(store.clear, self.agent, numbers.whole(override_id, "the override id"), now)

    # -- rendering ---------------------------------------------------------------------------

    async def render(self, *, dry_run: bool = False, now: float | None = None) -> dict:
        """Render the blocks into the file. Returns {"status": "rendered" | "unchanged" |
        "dry-run", "diff", "absorbed", "pinned", "hidden", "cut", ...}."""
        started = time.perf_counter()
        if dry_run:
            return await self._render(dry_run=True, now=now, started=started)
        async with self.locked():
            return await self._render(dry_run=False, now=now, started=started)

    def locked(self):
        """This capsule's render lock, across processes."""
        return files.exclusive(self.versions_dir.parent / f"{self.agent}.lock")

    def redact_files(self, redact: Callable[[str], tuple[str, int]]) -> int:
        """Rewrite the capsule file and the renders kept of it with REDACT (text -> (text,
        lines changed)), under `locked()` and in step with the purge that redacted the stored
        renders: the next render then finds no edit where a purged line was, and neither takes
        the line back in as a fact nor pins it. Returns the lines changed."""
        n = 0
        for _ in range(MERGE_TRIES):
            text = files.read(self.path)
            new, changed = redact(text) if text is not None else (text, 0)
            if not changed or files.replace_if_unchanged(self.path, text, new):
                n += changed
                break
        for path in [*self._kept(), *sorted(self.versions_dir.glob(f"{restored.FOLDER}/*.md"))]:  # a restore's too
            new, changed = redact(path.read_text(encoding="utf-8"))
            if changed:
                files.overwrite(path, new)
                n += changed
        return n

    async def _render(self, *, dry_run: bool, now: float | None, started: float) -> dict:
        for _ in range(MERGE_TRIES):
            before = await self._read()
            when = timeutil.now() if now is None else now
            plan = await self._plan(before, when)
            result = {k: v for k, v in plan.items() if k in ("path", "lines", "cut", "diff", "created")}
            if dry_run:  # everything a render would write is in the plan: stop before writing it
                return {**result, **_taken(plan, plan["absorb"]), "status": "dry-run", "elapsed_ms": _ms(started)}
            if plan["text"] == before:
                status = "unchanged"
                # Still kept when it is newer than the last kept render: a hand edit the render
                # took in, or one that needed no line of strata's, is the last good capsule now.
                await asyncio.to_thread(self._keep, before)
            elif await asyncio.to_thread(self._write, before, plan["text"]):
                status = "rendered"
            else:
                log.info("capsule changed while rendering; reading it again")
                continue
            absorbed = await self.db.transact(self._commit, plan, when)
            for a in absorbed:
                log.info("capsule: fact %s taken from a hand edit", a["key"])  # the value stays out of the journal
            return {**result, **_taken(plan, absorbed), "status": status, "elapsed_ms": _ms(started)}
        raise StorageError(f"{self.path} kept changing while strata rendered it ({MERGE_TRIES} tries)",
                           hint="render again once the edits settle")

    async def _plan(self, before: str | None, now: float) -> dict:
        """Everything a render of the file holding BEFORE would write, as values, reading only:
        the new text and its diff, the facts to absorb (previewed), the lines to pin and hide,
        the blocks to record. A dry run returns it; a render writes the text and commits the rest."""
        text = before if before is not None else await asyncio.to_thread(self._last_good)
        doc = document.parse(text)
        if not doc.ok:
            self.last_problems = [p.as_dict() for p in doc.problems]
            raise CapsuleInvalid(self.path, doc.problems)
        found = {n: doc.block_lines(n) for n in doc.blocks}
        # An editor may save a copy opened before strata's latest render: compare with the
        # render the file is closest to, so strata's newer lines are not taken for deletions.
        # Another namespace's render of the same file is a base too (agent.namespace changed):
        # its lines are its own, not a person's edits to take in here.
        renders = await self.db.run(lambda c: store.recent_renders(c, self.agent, BASE_CANDIDATES,
                                                                   file=self.path.name))
        base = min((r["blocks"] for r in renders), default={},
                   key=lambda blocks: sum(merge.edits(blocks.get(n, []), found[n]).size for n in found))
        taken = merge.taken(base, found, self.facts.redactor.clean if self.facts.redactor else None)
        try:
            absorb = await self.facts.preview(taken.facts, source="capsule")
        except InvalidInput as e:
            raise InvalidInput(f"{self.path}: the facts block holds a line strata cannot take in as a fact: "
                               f"{e.message}", hint=(f"{e.hint}; " if e.hint else "") + "change or remove the "
                               "line and save again; nothing was written") from None
        overrides = merge.overridden(await self.db.run(store.overrides, self.agent), taken.pinned, taken.hidden)
        blocks, cut = await self._blocks(doc, now, overrides, absorb)
        new_text = document.splice(doc, blocks)
        diff = "\n".join(difflib.unified_diff(text.splitlines(), new_text.splitlines(), "capsule (now)",
                                              "capsule (rendered)", lineterm=""))
        return {"path": str(self.path), "lines": len(new_text.splitlines()), "cut": cut, "diff": diff,
                "created": before is None, "text": new_text, "blocks": blocks, "absorb": absorb,
                "pinned": taken.pinned, "hidden": taken.hidden}

    def _commit(self, conn, plan: dict, now: float) -> list[dict]:
        """A render's plan into the database, once its text is in the file: the absorbed facts,
        the pins and hides, the render's record. One transaction, on the database thread."""
        absorbed = self.facts.set_in(conn, plan["absorb"])
        for p in plan["pinned"]:
            store.drop_override(conn, self.agent, p["block"], "hide", p["line"], now)
            store.add_override(conn, self.agent, p["block"], "pin", p["line"], now)
        for h in plan["hidden"]:
            store.drop_override(conn, self.agent, h["block"], "pin", h["line"], now)
            store.add_override(conn, self.agent, h["block"], "hide", h["line"], now)
        store.record_render(conn, self.agent, plan["blocks"], files.sha256(plan["text"]), plan["lines"], now,
                            keep=BASE_CANDIDATES, file=self.path.name)
        return absorbed

    def _kept(self) -> list[Path]:
        return sorted(self.versions_dir.glob("CAPSULE-*.md")) if self.versions_dir.is_dir() else []

    def _last_good(self) -> str:
        """The text to start from when the file is missing: the newest kept render, else the
        shipped example."""
        kept = self._kept()
        return (kept[-1] if kept else EXAMPLE).read_text(encoding="utf-8")

    def _write(self, before: str | None, text: str) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.written_sha256 = files.sha256(text)
        if not files.replace_if_unchanged(self.path, before, text):
            return False
        self._keep(text)
        return True

    def _keep(self, text: str) -> None:
        """Keep TEXT as the newest render in versions_dir, unless it already is."""
        kept = self._kept()
        if not kept or kept[-1].read_text(encoding="utf-8") != text:
            files.keep_version(self.versions_dir, text, int(self.config["capsule.keep_versions"]))

    async def _blocks(self, doc: document.Document, now: float, overrides: list[dict], pending: list[dict]
                      ) -> tuple[dict[str, list[str]], dict[str, int]]:
        """Every block's lines, cut to the budget, with these OVERRIDES and the PENDING facts
        (previewed, not yet written). Returns (block -> lines, block -> lines cut)."""
        template, _ = self.templates.load(TEMPLATE)
        items = await self._items(now, pending)
        pins = {n: [o["line"] for o in overrides if o["block"] == n and o["kind"] == "pin"] for n in doc.blocks}
        hides = {n: {o["line"] for o in overrides if o["block"] == n and o["kind"] == "hide"} for n in doc.blocks}
        outside = len(doc.lines) - sum(b.end - b.begin - 1 for b in doc.blocks.values())
        cut = {n: 0 for n in doc.blocks}

        def build() -> dict[str, list[str]]:
            out = {}
            for name in doc.blocks:
                lines = templating.render(template, name, **items).strip("\n").splitlines() \
                    if name in template.blocks else []
                # inert here too, so the render's record holds the lines exactly as written
                out[name] = merge.apply([document.inert(ln) for ln in lines if ln.strip()], pins[name], hides[name])
            return out

        blocks = build()
        for name in CUT_ORDER:
            key = {"recent": "recent", "tasks": "tasks", "facts": "facts", "topics": "topics",
                   "priorities": "topics_active"}[name]
            ranked = list(items.pop(f"{key}_by_salience", items[key]))
            while (over := outside + sum(map(len, blocks.values())) - document.BUDGET_LINES) > 0 and ranked:
                # An item is a line in the shipped template: drop as many of the least salient
                # as there are lines too many, then measure again (an override may be a line).
                gone = {id(x) for x in ranked[-over:]}
                del ranked[-over:]
                items[key] = [x for x in items[key] if id(x) not in gone]
                cut[name] = cut.get(name, 0) + len(gone)
                blocks = build()
        return blocks, {k: v for k, v in cut.items() if v}

    async def _items(self, now: float, pending: list[dict]) -> dict:
        """What the blocks show, each list best first."""
        recent_after = now - float(self.config.tuning.capsule.recent_days) * 86400.0
        task_after = now - float(self.config.tuning.capsule.task_days) * 86400.0
        half_life = float(self.config.tuning.dossier.half_life_hours)
        patterns = self.dossiers.patterns
        scan = int(self.config.tuning.capsule.task_scan)

        def read(conn):
            # Newest first: any memory that could close an open task in the window is in it too.
            # The hot tier only: the capsule is what the agent reads first, not its cold storage.
            window = store.hot_window(conn, self.agent, min(task_after, recent_after), now, scan)
            kept = dossier_store.states(conn, self.agent)
            versions = {t: dossier_store.version(conn, self.agent, t) for t, s in kept.items() if s["version"]}
            older = still_pending(conn, self.agent, task_after, patterns)
            return window, versions, store.loop_count(conn), store.episode_count(conn, self.agent), older

        window, versions, loops, episodes, older = await self.db.run(read)
        recent = [m for m in window if m["event_at"] >= recent_after]
        opened = [m for m in window if m["event_at"] >= task_after and extractive.is_open(m, patterns)]
        facts = await self.facts.for_capsule(pending=pending)
        listing = await self.dossiers.list()
        limit = int(self.config.tuning.dossier.line_chars)
        ranked = salience.ranked([{**m, "relevance": 1.0} for m in recent], now, half_life)
        # The most salient, shown newest first; over budget the least salient go first.
        chosen = [m for m in ranked if not extractive.is_open(m, patterns)][:int(self.config["capsule.recent_lines"])]
        order = {m["id"]: i for i, m in enumerate(chosen)}
        recent_items = sorted(({"id": m["id"], "when": extractive.when(m["event_at"]), "kind": m["kind"],
                                "text": extractive.quote(m["content"], limit), "event_at": m["event_at"]}
                               for m in chosen), key=lambda m: -m["event_at"])
        tasks = []
        for m in [*extractive.still_open(opened, window, patterns), *older]:
            due = _DEADLINE.search(m["content"])
            days = int((now - m["event_at"]) // 86400)
            tasks.append({"id": m["id"], "when": extractive.when(m["event_at"]), "due": due.group(1) if due else None,
                          "text": extractive.quote(m["content"], limit), "event_at": m["event_at"],
                          "age": f"{days} day{'s' if days != 1 else ''}" if days >= 1 else None})
        tasks.sort(key=lambda t: (t["due"] is None, t["due"] or "", -t["event_at"]))
        kept = [t for t in listing["topics"] if t["enabled"]]
        active = sorted(((sum(s.get("salience", 0) for s in versions[t["topic"]]["sources"]), t) for t in kept
                         if t["topic"] in versions), key=lambda p: (-p[0], p[1]["topic"]))
        return {
            "now": timeutil.iso(now), "loop": loops, "episodes": episodes, "agent": self.agent,
            "facts": [{"label": f["label"], "value": " ".join(str(f["value"]).split()), "key": f["key"]}
                      for f in facts],
            "recent": recent_items, "recent_by_salience": sorted(recent_items, key=lambda m: order[m["id"]]),
            "tasks": tasks[:int(self.config["capsule.task_lines"])],
            "topics": [{"topic": t["topic"], "version": t["version"], "origin": t["origin"]} for t in kept],
            "topics_active": [{"topic": t["topic"], "version": t["version"],
                               "refreshed": extractive.when(t["refreshed_at"]) if t["refreshed_at"] else None}
                              for _, t in active[:int(self.config.tuning.capsule.priority_topics)]],
        }


CLOSERS = 200  # memories read that may close one old task: a closing word and its words, newest first
_SHOWN_ID = re.compile(r"\[e(\d+)\]\s*$")


# Older memories a home's first render reads for open tasks: once, so more than `task_scan`;
# read and matched in 0.51 s (median of 5) at 100,000 corpus memories, 2026-12-07.
FIRST_SCAN = 50_000


def still_pending(conn, agent: str, before: float, patterns: extractive.Patterns) -> list[dict]:
    """The tasks the last render showed as pending (on a home's first render, every open task)
    that are older than BEFORE (the window the render reads) and that no memory has closed
    since: a task stays pending however old it grows. Each one's closers are looked up by its
    own identifier or words."""
    last = store.last_render(conn, agent)
    if last is None:  # a home's first render: its open tasks of any age, not only the window's
        carried = [m for m in store.hot_window(conn, agent, 0.0, before, FIRST_SCAN) if extractive.is_open(m, patterns)]
    else:
        carried = store.active(conn, agent, [int(m.group(1)) for line in last["blocks"].get("tasks", [])
                                             if (m := _SHOWN_ID.search(line))])
    out = []
    for m in carried:
        if m["event_at"] >= before or not extractive.is_open(m, patterns):
            continue  # the window reads it itself
        query = extractive.closing_query(m, patterns)
        later = store.closers(conn, agent, m["event_at"], query, CLOSERS) if query else []
        if extractive.still_open([m], later, patterns):
            out.append(m)
    return out


def _taken(plan: dict, absorbed: list[dict]) -> dict:
    """What a render took in (or a dry run would): the same shape for both."""
    return {"absorbed": [{"key": a["key"], "value": a["value"], "status": a["status"]} for a in absorbed],
            "pinned": plan["pinned"], "hidden": plan["hidden"]}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
