"""`strata fact ...`: the persistent-facts layer (set, get, cas, retract, list, history, conflicts)."""

from __future__ import annotations

from strata_daemon.base.wording import counted
from strata_daemon.errors import InvalidInput
from strata_daemon.faces.cli.memory_cmds import opened, plan_text, purge_text
from strata_daemon.faces.cli.output import columns, count, emit, inline, short_time, show_fact
from strata_daemon.faces.cli.parsers import adder, integer, number

COMMANDS = ("fact",)


REASONS = {"disagree": "another source set a different value within facts.conflict_window_seconds",
           "late": "it arrived late: a different, newer value was already known",
           "ended": "a newer memory says it changed, with no value strata could read: look at it"}
_SHORT = {"late": "late", "disagree": "sources disagree", "ended": "ended by a newer memory"}


def _show_write(r: dict) -> str:
    words = {"created": "set", "changed": "changed", "confirmed": "confirmed", "recorded": "recorded in history",
             "retracted": "retracted", "unchanged": "already retracted"}
    line = f"{r['key']}: {words.get(r['status'], r['status'])}"
    if r["status"] in ("created", "changed", "recorded", "confirmed"):
        line += f" = {inline(r['value'])}"
    if r.get("previous") is not None and r["status"] != "confirmed":
        line += f" (was {inline(r['previous'])})"
    if r["status"] == "recorded":
        line += "; a newer value stays current"
    conflict = r.get("conflict")
    if conflict and conflict["flagged"]:
        line += f"\nconflict {conflict['id']}: {REASONS[conflict['reason']]} (`strata fact conflicts`)"
    return line


def _show_history(h: dict) -> str:
    head = show_fact(h) if h.get("value") is not None else f"{h['key']}: no current value"
    lines = [head, f"  {'valid from':<17} {'valid to':<17} {'recorded':<17} value"]
    for r in h["history"]:
        mark = "*" if r["current"] else " "
        line = (f"{mark} {short_time(r['valid_from']):<17} {short_time(r['valid_to']):<17} "
                f"{short_time(r['recorded_at']):<17} {inline(r['value'])}")
        source = f"[{r['source']}" + (f", rule {r['rule']}" if r["rule"] and r["source"] != f"rule:{r['rule']}"
                                      else "") + "]"
        # Where the terminal has no room left for the source, it goes under the value.
        fits = len(line) + 3 + len(source) <= columns()
        lines.append(f"{line}   {source}" if fits else f"{line}\n{source:>{columns()}}")
    return "\n".join(lines)


def _show_conflict(c: dict) -> str:
    """A conflict as a few short lines: the key and why, then each side on its own line."""
    def side(word, s):
        return f"  {word:<4} {inline(s['value'])}  (since {short_time(s['valid_from'])}, from {s['source']})" \
            if s else f"  {word:<4} (none)"
    lines = [f"#{c['id']} {c['key']}  [{_SHORT.get(c['reason'], c['reason'])}"
             + (", acknowledged]" if c["acknowledged_at"] else "]"), side("was", c["old"]), side("new", c["new"])]
    if c["next"]:
        lines.append(side("then", c["next"]))
    return "\n".join(lines)


async def cmd_set(args) -> int:
    async with opened(args) as mem:
        kw = {} if args.ttl is None else {"ttl": args.ttl}
        r = await mem.set_fact(args.key, args.value, at=args.at, source=args.source, confidence=args.confidence,
                                importance=args.importance, **kw)
    emit(r, args.json, _show_write)
    return 0


async def cmd_get(args) -> int:
    async with opened(args) as mem:
        r = await mem.get_fact(args.key, at=args.at, known_at=args.known_at)
    emit(r, args.json, lambda f: f["value"] if args.value_only else show_fact(f))
    return 0


async def cmd_retract(args) -> int:
    async with opened(args) as mem:
        r = await mem.retract_fact(args.key, at=args.at, source=args.source)
    emit(r, args.json, _show_write)
    return 0


async def cmd_cas(args) -> int:
    values = args.values
    if args.absent:
        if len(values) != 1:
            raise InvalidInput("with --absent give only the new value: strata fact cas --absent KEY NEW")
        expected, new = None, values[0]
    elif len(values) != 2:
        raise InvalidInput("give the expected and the new value: strata fact cas KEY EXPECTED NEW",
                           hint="use --absent KEY NEW to set a key only if it has no value")
    else:
        expected, new = values
    async with opened(args) as mem:
        r = await mem.cas_fact(args.key, expected, new, source=args.source, confidence=args.confidence)
    emit(r, args.json, _show_write)
    return 0


async def cmd_list(args) -> int:
    async with opened(args) as mem:
        if args.capsule:
            rows = await mem.capsule_facts(args.limit)
        else:
            rows = await mem.list_facts(stale=args.stale, prefix=args.prefix)
    emit(rows, args.json, lambda rs: "\n".join(map(show_fact, rs)) or
         ("no stale facts" if args.stale else "no facts"))
    return 0


async def cmd_history(args) -> int:
    async with opened(args) as mem:
        emit(await mem.fact_history(args.key), args.json, _show_history)
    return 0


async def cmd_conflicts(args) -> int:
    async with opened(args) as mem:
        if args.ack is not None:
            r = await mem.acknowledge_conflict(args.ack)
            emit(r, args.json, lambda r: f"conflict {r['id']} acknowledged")
            return 0
        rows = await mem.fact_conflicts(flagged=args.flagged, since=args.since, limit=args.limit)
    emit(rows, args.json, lambda rs: "\n".join(map(_show_conflict, rs)) or "no conflicts")
    return 0


def _show_rejudge(r: dict) -> str:
    if r["action"] == "undo":
        lines = [f"restored {counted(r['count'], 'fact')} a re-judge had retracted"]
        lines += [f"  {f['key']} = {inline(f['value'])}" for f in r["facts"]]
        return "\n".join(lines)
    verb = "retracted" if r["action"] == "apply" else "would retract"
    lines = [f"  {f['key']} = {inline(f['value'])}   ({f['reason']}; {f['source']})" for f in r["facts"]]
    lines.insert(0, f"{verb} {counted(r['count'], 'captured fact')} that read as events, not states")
    if r["action"] == "dry-run" and r["count"]:
        lines.append("nothing changed: run `strata fact rejudge --apply` to retract them (history keeps every value; "
                     "`--undo` restores them)")
    return "\n".join(lines)


async def cmd_rejudge(args) -> int:
    async with opened(args) as mem:
        r = await mem.rejudge_facts(apply=args.apply, undo=args.undo)
    emit(r, args.json, _show_rejudge)
    return 0


def _show_rekey(r: dict) -> str:
    verb = "moved" if r["action"] == "apply" else "would move"
    lines = [f"{verb} {counted(r['count'], 'captured fact')} to the key of their subject and attribute"]
    lines += [f"  {m['key']} -> {m['new_key']} = {inline(m['value'])}   (episode:{m['episode_id']})" for m in r["moves"]]
    if r["action"] == "dry-run" and r["count"]:
        lines.append("nothing changed: run `strata fact rekey --apply` to move them (the old keys keep their history)")
    return "\n".join(lines)


async def cmd_rekey(args) -> int:
    async with opened(args) as mem:
        r = await mem.rekey_facts(apply=args.apply)
    emit(r, args.json, _show_rekey)
    return 0


async def cmd_forget(args) -> int:
    async with opened(args) as mem:
        r = await mem.forget_fact(args.key, matching=args.matching, apply=args.yes)
    emit(r, args.json, lambda r: purge_text(r["result"]) if r["applied"] else
         plan_text(r, "remove every value of this fact (it is left retracted)" if args.matching is None else
                   "remove these facts (one whose key holds the words goes whole)"))
    return 0


def _reading_again(add) -> None:
    """The commands that read captured facts again: rejudge and rekey."""
    p = add("rejudge", cmd_rejudge, "Judge again the facts the status-line rule captured: list those that read as "
                                    "events (a dry run), retract them with --apply, restore them with --undo.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--apply", action="store_true", help="retract them (history keeps every value)")
    what.add_argument("--undo", action="store_true", help="restore the values a re-judge retracted")
    p = add("rekey", cmd_rekey, "Read again the memories behind captured facts: list those whose value now lands "
                                "on the key of its subject and attribute (`gateway.runs` -> `gateway.port`), move "
                                "them with --apply. A home captured before strata kept one key per subject and "
                                "attribute has them moved once, when it is first opened.")
    p.add_argument("--apply", action="store_true", help="move them (the old keys are retracted; history stays)")


def register(sub, common) -> None:
    top = sub.add_parser("fact", parents=[common], help="Persistent facts: key -> value with history.",
                         description="Persistent facts: one current value per key, with bitemporal history. "
                                     "Keys ignore case, spacing, '_' and '-'.")
    fs = top.add_subparsers(dest="fact_command", metavar="ACTION", required=True)

    add = adder(fs, common)

    def provenance(p, *, when: str | None = "became true"):
        if when:
            p.add_argument("--at", help=f"when it {when} in the world (ISO 8601, unix seconds, '3h ago'); "
                                        "default now")
        p.add_argument("--source", help="KIND[:REF], KIND one of person, episode, capsule, rule, agent, import "
                                        "(default person:cli)")

    p = add("set", cmd_set, "Set KEY to VALUE (from --at on). The same value again re-confirms it.")
    p.add_argument("key")
    p.add_argument("value")
    provenance(p)
    p.add_argument("--confidence", type=number, help="0-1 (default 1)")
    p.add_argument("--importance", type=number, help="0-1, ranks facts for the capsule (default 0.5)")
    p.add_argument("--ttl", help="re-confirm within this (e.g. 30m, 12h, 7d) or show as stale; 'none' clears "
                                 "(default: the fact keeps its TTL; a new fact has none)")

    p = add("get", cmd_get, "KEY's current value, or its value at a time.")
    p.add_argument("key")
    p.add_argument("--at", help="value as of this world time (default: now)")
    p.add_argument("--known-at", help="as strata knew it at this time, ignoring what it learned later "
                                      "(default: everything it knows)")
    p.add_argument("--value-only", action="store_true", help="print only the value")

    p = add("retract", cmd_retract, "KEY has no value from now (or --at) on; history stays.")
    p.add_argument("key")
    provenance(p, when="stopped being true")

    p = add("cas", cmd_cas, "Compare-and-set: KEY EXPECTED NEW sets NEW only if KEY holds EXPECTED "
                            "(exit 9 and the current value otherwise).")
    p.add_argument("key")
    p.add_argument("values", nargs="+", metavar="EXPECTED NEW")
    p.add_argument("--absent", action="store_true", help="expect no current value: strata fact cas --absent KEY NEW")
    provenance(p, when=None)
    p.add_argument("--confidence", type=number, help="0-1 (default 1)")

    p = add("list", cmd_list, "Current facts, by key.")
    p.add_argument("--stale", action="store_true", help="only facts not re-confirmed within their TTL")
    p.add_argument("--prefix", help="only keys that start with these words")
    p.add_argument("--capsule", action="store_true",
                   help="the facts the capsule shows, ranked by importance and recency of change")
    p.add_argument("--limit", type=count, help="with --capsule: how many (default facts.capsule_limit)")

    p = add("history", cmd_history, "Every value KEY has had: valid times, recorded times, sources.")
    p.add_argument("key")

    p = add("forget", cmd_forget, "Remove every value KEY has had, for good: from its history, the audit trail, "
                                  "dossiers and the capsule; the fact is left retracted. With --matching TEXT, "
                                  "every fact whose key, label, value or source holds TEXT (one whose key or label "
                                  "holds it goes whole). Lists what would go unless --yes. Memories that state it "
                                  "stay: `strata forget --matching` finds them.")
    p.add_argument("key", nargs="?", help="the fact (or --matching TEXT)")
    p.add_argument("--matching", metavar="TEXT", help="every fact holding TEXT (any case, any accents)")
    p.add_argument("--yes", action="store_true", help="do it (without, only list)")

    _reading_again(add)

    p = add("conflicts", cmd_conflicts, "Conflicts, newest first: a key given different values within "
                                        "facts.conflict_window_seconds by different sources, or a value that arrived "
                                        "late, older than a different one already known. Other changes are history "
                                        "(`strata fact history KEY`).")
    p.add_argument("--flagged", action="store_true", help="only those nobody has acknowledged yet")
    p.add_argument("--since", help="only changes recorded since this time")
    p.add_argument("--limit", type=count, default=50, help="at most this many, newest first (default 50)")
    p.add_argument("--ack", type=integer, metavar="ID", help="acknowledge a conflict: looked at")
