"""Commands on the memories a namespace holds: recall, feedback, show, timeline, forget, restore,
mark; and `opened`, the namespace every command module works on. Bringing memories in and out
(observe, import, export) is in io_cmds."""

from __future__ import annotations

import textwrap

import contextlib
import sys

from strata_daemon.base import timeutil
from strata_daemon.base.wording import counted, plain, record
from strata_daemon.config.home import resolve_home
from strata_daemon.config.settings import MODES
from strata_daemon.errors import InvalidInput
from strata_daemon.faces.cli import daemon
from strata_daemon.faces.cli.output import columns, count, emit, note, one_line, short_time, show_fact
from strata_daemon.faces.cli.parsers import adder, integer

COMMANDS = ("recall", "feedback", "show", "timeline", "forget", "restore", "mark")


@contextlib.asynccontextmanager
async def opened(args, actor: str = "cli"):
    """The namespace named by --agent, or with --scope a shared namespace it may only read."""
    from strata_daemon.app.memory import Memory

    home = resolve_home(args.home)
    fresh = not home.named and not home.exists()
    mem = await Memory.open(args.home, agent=args.agent, actor=actor)
    if fresh:  # a forgotten `export STRATA_HOME` would otherwise look like every memory gone
        note(f"strata: made a new home at {home.root}, the per-user default (no --home or STRATA_HOME named one)")
    try:
        scope = getattr(args, "scope", None)
        yield await mem.shared(scope) if scope else mem
    finally:
        await mem.close()


def _show_recall(r: dict, explain: bool) -> str:
    s = r["strategy"]
    how = "" if s["chosen_by"] == "mode" else f" (strategy {s['arm']}, chosen by {s['chosen_by']})"
    logged = f"recall {r['recall_id']}" if r["recall_id"] is not None else "recall (read-only namespace: not logged)"
    lines = _wrapped(f"{logged} · {r['mode_used']}{how} · {counted(len(r['hits']), 'hit')} of "
                     f"{counted(r['candidates'], 'candidate')} · phase {r['phase']}", indent="  ", first="")
    lines += [f"warning: {w}" for w in r["warnings"]]
    lines += [f"fact  {show_fact(f)}" for f in r.get("facts", ())]
    if r["filtered"]:
        lines.append(f"({r['filtered']} filtered out by the stability/success thresholds: scoring.thresholds "
                     "is filter)")
    if r.get("cold_matched"):
        lines.append(f"({r['cold_matched']} of the candidates are in the cold tier, ranked x"
                     f"{r['cold_factor']:g})")
    lines += _out_of_order(r["hits"])
    for h in r["hits"]:
        cold = (" cold" if h.get("tier") == "cold" else "") + (" archived" if h.get("state") == "archived" else "")
        mark = "↑" if "moved_above" in h else "^" if h.get("led") else " "  # the move says more of its place
        # The text on a line of its own: beside the columns it would keep a third of an 80-column line.
        lines.append(f"{h['rank']:>3}. #{h['id']:<7}{mark}{h['score']:.3f}  {h['kind']:<11} "
                     f"{short_time(h['event_at'])}{cold}")
        lines.append(f"        {one_line(h['content'], columns() - 8)}")
        lines += _wrapped(f"match {h['match']:.2f} · {h['why']}")
        if h.get("times"):
            lines.append(f"        times: {_times(h['times'])}")
        if explain:
            m = h["explain"]["match"]
            lines += _wrapped("match: " + " · ".join(f"{k} {v:.3f}" for k, v in m.items() if v is not None)
                              + "; relevance below is relative to the best candidate, as ranking weighs it")
            lines += _wrapped(" · ".join(f"{k} {v:.3f}" for k, v in h["explain"]["signals"].items()))
            lines += _wrapped(" · ".join(f"{name} " + ", ".join(f"{k} {plain(v)}" for k, v in info.items())
                                         for name, info in h["explain"]["retrievers"].items()))
            if "penalised" in h["explain"]:
                lines.append(f"        penalised: {h['explain']['penalised']}")
            if "superseded_by" in h["explain"]:
                newer = ", ".join(f"#{i}" for i in h["explain"]["superseded_by"])
                lines.append(f"        superseded by {newer}: a newer memory replaces it (a supersedes link)")
    if explain and r.get("stages"):
        lines += _wrapped("stages: " + " → ".join(_stage(st) for st in r["stages"]), indent="  ", first="")
    if not r["hits"]:
        lines.append("no memories matched")
    return "\n".join(lines)


def _wrapped(text: str, *, indent: str = "          ", first: str = "        ") -> list[str]:
    """TEXT in lines as wide as the terminal at most (a signal or a stage is never cut)."""
    return textwrap.wrap(text, columns(), initial_indent=first, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def _out_of_order(hits: list[dict]) -> list[str]:
    """Why the printed order is not the scores' order, when it is not."""
    led = sum(1 for h in hits if h.get("led"))
    moved = any("moved_above" in h for h in hits)
    if not led and not moved:
        return []
    parts = [f"the first {led} state a fact the question names and lead, marked ^" if led > 1 else
             "the first states a fact the question names and leads, marked ^"] if led else []
    if moved:
        parts.append("a newer memory alike an older one ranks just above it, marked ↑")
    return [f"({'; '.join(parts)}; the rest follow their scores)"]


def _times(times: list[dict]) -> str:
    return "; ".join(f"{t['phrase']} = {t['date']}" for t in times)


def _stage(st: dict) -> str:
    """One pipeline stage as `name n (±change, what it says) ms`."""
    said = ", ".join(f"{k} {plain(v)}" for k, v in st.items() if k not in ("stage", "candidates", "change", "ms"))
    change = f"{st['change']:+d}" if st["stage"] != "full_text" else ""
    inner = ", ".join(x for x in (change, said) if x)
    return f"{st['stage']} {st['candidates']}" + (f" ({inner})" if inner else "") + f" {st['ms']:g} ms"


async def cmd_recall(args) -> int:
    from strata_daemon.app.public import parse_context_pairs

    if args.query == "-":
        args.query = sys.stdin.read()
    result = daemon.recall(args)  # the running daemon's loaded model answers at once
    if result is None:
        async with opened(args) as mem:
            result = await mem.recall(args.query, k=args.k, mode=args.mode,
                                      context=parse_context_pairs(args.context), kinds=args.kind or (),
                                      include_archived=args.include_archived, explain=args.explain,
                                      hop=args.hop or None)
    emit(result, args.json, lambda r: _show_recall(r, args.explain))
    return 0


async def cmd_feedback(args) -> int:
    async with opened(args) as mem:
        result = await mem.feedback(args.recall_id, args.outcome, used=args.used)
    emit(result, args.json, lambda r: f"recorded {r['outcome']} for {counted(len(r['episodes']), 'memory')} of recall "
                                      f"{r['recall_id']}" + (f"; arena episode {r['arena_episode']}"
                                                             if r["arena_episode"] else ""))
    return 0


def _show_episode(ep: dict) -> str:
    lines = [f"memory #{ep['id']} · {ep['kind']} · {ep['state']} · namespace {ep['agent']}", "", ep["content"], ""]
    for key in ("event_at_iso", "recorded_at_iso", "last_seen_at_iso", "occurrences", "source", "session",
                "importance", "factual", "irrelevant", "context", "access_count", "last_access_at_iso",
                "pending_access_events", "success_count", "failure_count", "content_hash", "superseded_by"):
        lines.append(f"  {key.removesuffix('_iso'):<22} {plain(ep[key])}")
    if ep.get("times"):
        lines.append(f"  {'times':<22} {_times(ep['times'])}")
    for name, ids in ep["supersession"].items():
        if ids:
            lines.append(f"  {name.replace('_', ' '):<22} {', '.join(f'#{i}' for i in ids)}")
    lines.append("  scores (now):")
    lines += [f"    {k:<20} {plain(v)}" for k, v in ep["scores"].items()]
    lines.append("  history:")
    lines += [f"    {short_time(h['at'])}  {h['action']:<8} {h['actor']:<7} {record(h['data'])}" for h in ep["history"]]
    return "\n".join(lines)


async def cmd_show(args) -> int:
    async with opened(args) as mem:
        emit(await mem.get(args.id), args.json, _show_episode)
    return 0


async def cmd_timeline(args) -> int:
    from strata_daemon.app.public import STATES

    states = STATES if args.all_states else ("active",)
    async with opened(args) as mem:
        rows = await mem.timeline(
            since=timeutil.parse_time(args.since) if args.since else None,
            until=timeutil.parse_time(args.until) if args.until else None,
            kinds=tuple(args.kind or ()), states=states, limit=args.limit, offset=args.offset,
            newest_first=not args.oldest_first)
    nothing = "no memories" + (" in that range" if args.since or args.until else "") + \
        ("" if args.all_states else " (active; --all-states shows forgotten ones too)")
    emit(rows, args.json, lambda rs: _timeline_text(rs, args.all_states) or nothing)
    return 0


def _timeline_text(rows: list[dict], states: bool) -> str:
    """One memory a line, its text cut to what the terminal has left after the columns before it."""
    if not rows:
        return ""
    ids = max(len(str(r["id"])) for r in rows) + 1
    kinds = max(len(r["kind"]) for r in rows)
    lines = []
    for r in rows:
        head = f"{'#' + str(r['id']):<{ids}} {short_time(r['event_at'])} {r['kind']:<{kinds}} " \
            + (f"{r['state']:<9} " if states else "")
        lines.append(head + one_line(r["content"], max(20, columns() - len(head))))
    return "\n".join(lines)


def _fact_fate(f: dict) -> str:
    return "removed, key and all" if f.get("removed") else "retracted" if f["retracted"] else \
        "kept on its other sources"


def purge_text(r: dict) -> str:
    """A purge's result as a person reads it: what went, and what still holds it."""
    facts = [f"{f['key']} ({_fact_fate(f)})" for f in r["facts"]]
    lines = [f"purged memor{'y' if len(r['memories']) == 1 else 'ies'} {', '.join(map(str, r['memories']))}"
             if r["memories"] else "purged"]
    if facts:
        lines.append(f"  facts: {', '.join(facts)}")
    if r["topics_removed"]:
        lines.append(f"  dossier topics: {', '.join(r['topics_removed'])} ({counted(r['dossier_versions_removed'], 'version')})")
    derived = [f"{counted(r[k], what)} redacted" for k, what in (("audit_redacted", "audit entry"),
                                                             ("dossier_lines_redacted", "dossier line"),
                                                             ("capsule_lines_redacted", "capsule line"),
                                                             ("recalls", "recall log")) if r[k]]
    if derived:
        lines.append("  " + ", ".join(derived))
    lines.append("  the audit trail keeps that it happened (a hash), not the words")
    if not r["heap_cleared"]:
        lines.append("  this role may not rewrite every table: their files keep the old rows until the tables' owner "
                     "runs VACUUM FULL (the daemon's log names them)")
    if not r["wal_cleared"]:
        lines.append("  the server's write-ahead log keeps part of it until the server recycles it (docs/forgetting.md)"
                     if r.get("store") == "postgres" else
                     "  the write-ahead log keeps part of it until the next checkpoint (another process was reading)")
    for path in r["backups_holding"]:
        lines.append(f"  still held by the backup {path}")
    if r["backups_holding"]:
        lines.append(f"  `strata backup --prune-containing {r['memories'][0]} --yes` removes those backups")
    return "\n".join(lines)


def plan_text(p: dict, action: str) -> str:
    """What a forget would take (a dry run): memories, facts, derived lines."""
    lines = [f"#{m['id']:<7} {one_line(m['text'], 90)}" + (f"  (merged into {m['merged_into']})" if m["merged_into"]
                                                          else "") for m in p["memories"]]
    lines += [f"fact {f['key']}: " + ("the fact itself, key and all" if f["removed_whole"] else
                                     counted(len(f['values']), 'value')) for f in p["facts"]]
    lines += [f"dossier topic {t}, every version" for t in p["topics"]]
    lines += [f"entity {e}" for e in p["entities"]]
    lines += [f"dossier {d['topic']} v{d['version']}: {one_line(d['line'], 80)}" for d in p["dossier_lines"]]
    lines += [f"capsule: {one_line(line, 90)}" for line in p["capsule_lines"]]
    return "\n".join(lines + ["nothing matched" if not lines else f"to {action}, run again with --yes"])


async def cmd_forget(args) -> int:
    if (args.id is None) == (args.matching is None):
        raise InvalidInput("name a memory id or --matching TEXT" + (", not both" if args.id is not None else ""),
                           hint="strata forget 12, or strata forget --matching 'my phone number'")
    async with opened(args) as mem:
        if args.matching is not None:
            r = await mem.forget_matching(args.matching, purge=args.purge, apply=args.yes)
        else:
            r = await mem.forget(args.id, purge=args.purge, reason=args.reason)
    if args.matching is not None:
        action = "purge all of the above" if args.purge else "archive these memories and retract these facts"
        emit(r, args.json, lambda r: plan_text(r, action) if not r["applied"] else
             purge_text(r["result"]) if r["purge"] else
             f"archived {counted(len(r['result']['archived']), 'memory')}, "
             f"retracted {counted(len(r['result']['retracted']), 'fact')} "
             "(`strata restore ID` brings a memory back)")
    else:
        emit(r, args.json, lambda r: purge_text(r) if r.get("purged") else f"memory {r['id']} was already archived"
             if r["previous_state"] == "archived" else f"memory {r['id']} archived")
    return 0


async def cmd_restore(args) -> int:
    async with opened(args) as mem:
        result = await mem.restore(args.id)
    emit(result, args.json, lambda r: f"memory {r['id']} was already active" if r["previous_state"] == "active"
         else f"memory {r['id']} is active again (was {r['previous_state']})")
    return 0


async def cmd_mark(args) -> int:
    if args.factual is None and args.irrelevant is None:
        raise InvalidInput("nothing to mark", hint="give --factual/--not-factual or --irrelevant/--relevant")
    async with opened(args) as mem:
        result = await mem.mark(args.id, factual=args.factual, irrelevant=args.irrelevant)
    emit(result, args.json, lambda r: f"memory {r['id']}: " + (", ".join(
        f"{k} = {plain(v)}" for k, v in r["changed"].items()) or "unchanged"))
    return 0


def register(sub, common) -> None:
    add = adder(sub, common)

    p = add("recall", cmd_recall, "Find memories for a query, ranked by the composite score.")
    p.add_argument("query", help="what to look for (- reads stdin)")
    p.add_argument("-k", "--k", type=integer, help="how many results (default recall.k)")
    p.add_argument("--mode", choices=MODES,
                   help="fast (full text), balanced (+ meaning), deep (+ spiderweb and cross-encoder; slower) "
                        "(default recall.mode)")
    p.add_argument("--hop", action="store_true",
                   help="with --mode fast, also bring in what the best hits' own words find (the second hop; "
                        "the other modes always do)")
    p.add_argument("--context", action="append", metavar="KEY=VALUE", help="current context, boosts matches")
    p.add_argument("--kind", action="append", help="only these kinds (repeatable)")
    p.add_argument("--include-archived", action="store_true",
                   help="also recall memories explicitly forgotten (`strata forget`); the cold tier is always recalled")
    p.add_argument("--explain", action="store_true", help="show every signal of every hit")
    p.add_argument("--no-daemon", action="store_true",
                   help="answer in this process even when a daemon serves the namespace (the daemon has the "
                        "model loaded; this process loads it, a second or two)")

    # With --used the outcome is not shared: a success goes to those alone, a failure to the others.
    p = add("feedback", cmd_feedback, "Record whether a recall helped: every memory it returned shares the "
                                      "outcome, unless --used names the ones that mattered.")
    p.add_argument("recall_id", type=integer, help="the recall's id (its first line; recall_id in JSON)")
    p.add_argument("outcome", choices=("success", "failure"))
    p.add_argument("--used", type=integer, action="append", metavar="ID",
                   help="a memory you actually used (repeatable): a success goes to these alone, a failure to "
                        "the hits offered in their place; makes the recall an arena evaluation episode")

    p = add("show", cmd_show, "Everything about one memory: fields, scores, history.")
    p.add_argument("id", type=integer)

    p = add("timeline", cmd_timeline, "Memories in time order, newest first.")
    p.add_argument("--since", help="from this time (ISO 8601, unix seconds, '2d ago')")
    p.add_argument("--until", help="up to this time")
    p.add_argument("--kind", action="append", help="only these kinds (repeatable)")
    p.add_argument("--all-states", action="store_true", help="include archived, superseded, quarantined")
    p.add_argument("--limit", type=count, default=50, help="at most this many (default 50)")
    p.add_argument("--offset", type=integer, default=0, help="skip this many first (default 0)")
    p.add_argument("--oldest-first", action="store_true", help="oldest first")

    p = add("forget", cmd_forget, "Archive a memory (kept, not recalled); --purge deletes it for good, with "
                                  "what was derived from it.")
    p.add_argument("id", type=integer, nargs="?", help="the memory (or --matching TEXT)")
    p.add_argument("--matching", metavar="TEXT", help="everything holding TEXT (any case, any accents): memories "
                                                      "by text, source, session or context; facts; dossier "
                                                      "topics; entities. Lists them unless --yes")
    p.add_argument("--purge", action="store_true", help="delete the words for good: from facts, dossiers, the "
                                                        "capsule, the audit trail and the file (the audit keeps "
                                                        "that it happened)")
    p.add_argument("--yes", action="store_true", help="with --matching: do it (without, only list)")
    p.add_argument("--reason", help="why, kept in the audit trail")

    p = add("restore", cmd_restore, "Make an archived memory active again.")
    p.add_argument("id", type=integer)

    p = add("mark", cmd_mark, "Pin a memory as factual or mark it irrelevant (or undo either).")
    p.add_argument("id", type=integer)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--factual", dest="factual", action="store_true", default=None,
                   help="always eligible for recall, never decays")
    g.add_argument("--not-factual", dest="factual", action="store_false", help="undo --factual")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--irrelevant", dest="irrelevant", action="store_true", default=None,
                   help="never recalled, and left out of the capsule")
    g.add_argument("--relevant", dest="irrelevant", action="store_false", help="undo --irrelevant")
