"""`strata dossier ...`: one synthesized document per topic, updated in place, with versions."""

from __future__ import annotations

from strata_daemon.base.wording import counted
from strata_daemon.errors import InvalidInput
from strata_daemon.faces.cli.memory_cmds import opened, plan_text, purge_text
from strata_daemon.faces.cli.output import Progress, emit, note, short_time
from strata_daemon.faces.cli.parsers import adder, integer

COMMANDS = ("dossier",)


def _show_list(r: dict) -> str:
    kept = [t for t in r["topics"] if t["enabled"]]
    other = [t for t in r["topics"] if not t["enabled"]]
    lines = [f"{counted(len(kept), 'topic')} kept (refresh every {r['refresh_interval_hours']:g} h, "
             f"a topic at most every {r['min_interval_hours']:g} h)"]
    for t in kept:
        state = f"v{t['version']}, {short_time(t['refreshed_at'])}" if t["version"] else "no dossier yet"
        lines.append(f"  {t['topic']:<24} {t['origin']:<10} {state}{'  (due)' if t['due'] else ''}")
    if other:
        lines.append("not kept (`strata dossier add TOPIC` keeps one):")
        for t in other:
            why = t.get("proposed_because")
            reason = (f"{counted(why['mentions'], 'mention')} of {why['entity']}" if why and "entity" in why
                      else f"{counted(why['fact_keys'], 'fact key')}" if why else "removed")
            lines.append(f"  {t['topic']:<24} {t['origin']:<10} {reason}")
    return "\n".join(lines + [f"warning: {w}" for w in r["warnings"]])


def _show_refresh(r: dict) -> str:
    if r["status"] == "unchanged":
        line = f"{r['topic']}: unchanged since version {r['version']} (same input; --force writes a new one)"
    else:
        line = (f"{r['topic']}: version {r['version']} by the {r['generator']} synthesizer, {counted(r['lines'], 'line')} "
                f"citing {counted(r['sources'], 'source')}, {r['elapsed_ms']:.0f} ms")
        if r["generator"] != r["intended_generator"]:
            line += f"\nthe LLM's text was not used: {r['notes'].get('fallback')}"
        rejected = r["notes"].get("rejected") or []
        if rejected:
            line += f"\n{counted(len(rejected), 'LLM line')} failed the grounding check, e.g. {rejected[0]['reason']}"
    return "\n".join([line] + [f"warning: {w}" for w in r["warnings"]])


def _show_history(r: dict) -> str:
    lines = [f"{r['topic']}: {counted(len(r['versions']), 'version')}"]
    for v in r["versions"]:
        lines.append(f"  v{v['version']:<4} {short_time(v['created_at'])}  {v['generator']:<11} "
                     f"{counted(v['lines'], 'line'):>9} {counted(v['sources'], 'source'):>11}  "
                     f"input {v['input_hash'][:8]}")
    return "\n".join(lines)


async def cmd_list(args) -> int:
    async with opened(args) as mem:
        emit(await mem.list_dossiers(), args.json, _show_list)
    return 0


async def cmd_show(args) -> int:
    async with opened(args) as mem:
        r = await mem.show_dossier(args.topic, version=args.version)
    emit(r, args.json, lambda r: r["text"], wrap=False)
    return 0


async def cmd_refresh(args) -> int:
    async with opened(args) as mem:
        if args.all or args.due:
            listing = await mem.list_dossiers()
            names = [t["topic"] for t in listing["topics"] if t["enabled"] and (args.all or t["due"])]
            bar = Progress(len(names), "dossiers", unit="topics")
            results = []
            for name in names:
                results.append(await mem.refresh_dossier(name, force=args.force))
                bar.advance(1)
            bar.close()
            emit({"results": results}, args.json,
                 lambda r: "\n".join(_show_refresh(x) for x in r["results"]) or "no topic to refresh")
            return 0
        if not args.topic:
            note("strata: name a TOPIC, or use --all or --due")
            return 2
        emit(await mem.refresh_dossier(args.topic, force=args.force), args.json, _show_refresh)
    return 0


async def cmd_add(args) -> int:
    facts = None if args.facts is None else args.facts.split(",")
    async with opened(args) as mem:
        r = await mem.add_topic(args.topic, query=args.query, facts=facts)
    emit(r, args.json, lambda t: f"keeping a dossier on {t['topic']} (recall looks for {t['query']!r}; facts under "
                                 f"{', '.join(t['facts'])}); `strata dossier refresh {t['topic']}` writes it")
    return 0


async def cmd_remove(args) -> int:
    if (args.topic is None) == (args.matching is None):
        raise InvalidInput("name a topic or --matching TEXT", hint="strata dossier remove TOPIC, or strata dossier "
                                                                   "remove --matching TEXT --purge")
    if args.matching is not None and not args.purge:
        raise InvalidInput("--matching removes for good: add --purge", hint="it lists what would go unless --yes")
    if args.yes and not args.purge:
        raise InvalidInput("--yes confirms --purge", hint="add --purge to remove the topic and its versions for good, "
                                                          "or drop --yes to stop keeping it (its versions stay)")
    async with opened(args) as mem:
        if not args.purge:
            r = await mem.remove_topic(args.topic)
        else:
            r = await mem.forget_topic(args.topic, matching=args.matching, apply=args.yes)
    if not args.purge:
        emit(r, args.json, lambda t: f"no longer keeping a dossier on {t['topic']}; its versions stay "
                                     "(`strata dossier add` brings it back)")
    else:
        emit(r, args.json, lambda r: purge_text(r["result"]) if r["applied"] else
             plan_text(r, "remove these topics and every version of them"))
    return 0


async def cmd_history(args) -> int:
    async with opened(args) as mem:
        emit(await mem.dossier_history(args.topic), args.json, _show_history)
    return 0


async def cmd_diff(args) -> int:
    async with opened(args) as mem:
        r = await mem.diff_dossier(args.topic, old=args.old, new=args.new)
    emit(r, args.json, lambda r: r["diff"] or (f"only version {r['to']} is kept yet: nothing to compare"
                                               if r["from"] == r["to"] == 1 and args.old is None else
                                               f"versions {r['from']} and {r['to']} are the same"), wrap=False)
    return 0


def register(sub, common) -> None:
    top = sub.add_parser("dossier", parents=[common], help="Dossiers: one synthesized document per topic.",
                         description="Dossiers: what strata currently understands about a topic, one document "
                                     "per topic, updated in place with every version kept.")
    ds = top.add_subparsers(dest="dossier_command", metavar="ACTION", required=True)

    add = adder(ds, common)

    add("list", cmd_list, "Topics (from the config, the capsule, people, and proposed ones) and their state.")
    p = add("show", cmd_show, "A topic's current dossier (or --version N).")
    p.add_argument("topic")
    p.add_argument("--version", type=integer, help="an older version (default: the current one)")
    p = add("refresh", cmd_refresh, "Bring a topic's dossier up to date; an unchanged input is skipped.")
    p.add_argument("topic", nargs="?")
    p.add_argument("--force", action="store_true", help="write a new version even if the input is unchanged")
    p.add_argument("--all", action="store_true", help="every kept topic")
    p.add_argument("--due", action="store_true", help="the kept topics not checked within dossier.min_interval_hours")
    p = add("add", cmd_add, "Keep a dossier on TOPIC (also: accept a proposed topic).")
    p.add_argument("topic")
    p.add_argument("--query", help="the words recall looks for (default: the topic's words)")
    p.add_argument("--facts", help="comma-separated fact-key prefixes whose facts it shows (default: the topic)")
    p = add("remove", cmd_remove, "Stop keeping TOPIC's dossier; its versions stay. With --purge, the topic and "
                                  "every version of it go for good, with the capsule's lines naming it (lists "
                                  "what would go unless --yes); --matching TEXT --purge: every topic whose name "
                                  "or query holds TEXT.")
    p.add_argument("topic", nargs="?", help="the topic (or --matching TEXT)")
    p.add_argument("--matching", metavar="TEXT", help="every topic whose name or query holds TEXT (any case, any "
                                                      "accents); with --purge")
    p.add_argument("--purge", action="store_true", help="remove it for good, every version with it")
    p.add_argument("--yes", action="store_true", help="with --purge: do it (without, only list)")
    p = add("history", cmd_history, "TOPIC's versions, newest first.")
    p.add_argument("topic")
    p = add("diff", cmd_diff, "What changed between two versions (default: the last two).")
    p.add_argument("topic")
    p.add_argument("--from", dest="old", type=integer, help="older version (default: the one before --to)")
    p.add_argument("--to", dest="new", type=integer, help="newer version (default: current)")
