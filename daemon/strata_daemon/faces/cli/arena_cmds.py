"""`strata arena`: the retrieval arena of one namespace: run it, see it, add questions, undo."""

from __future__ import annotations

import json
from pathlib import Path

from strata_daemon.base import bounded
from strata_daemon.base.wording import counted
from strata_daemon.errors import InvalidInput, shortened
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import Progress, count, emit, short_time

COMMANDS = ("arena run", "arena status", "arena history", "arena undo", "arena reset", "arena questions")


def _strategy(s: dict) -> str:
    return f"strategy {s['arm']} (chosen by {s['chosen_by']}): {s['reason']}"


def _show_status(r: dict) -> str:
    e = r["episodes"]
    lines = [f"arena of namespace {r['agent']}" + ("" if r["enabled"] else " (arena.enabled is false)"),
             _strategy(r["strategy"]),
             f"evaluation episodes: {e['total']} ({e['used']} used, {e['shared']} shared, {counted(e['questions'], 'question')};"
             f" {r['min_episodes']} needed)",
             f"  {'arm':<24}{'pulls':>6}{'mean':>9}{'ucb':>9}"]
    for a in r["arms"]:
        ucb = "—" if a["ucb"] is None else f"{a['ucb']:.4f}"
        mark = " <" if a["arm"] == r["strategy"]["arm"] else ""
        lines.append(f"  {a['arm']:<24}{a['pulls']:>6}{a['mean_reward']:>9.4f}{ucb:>9}{mark}")
    last = r["last_run"]
    if last:
        lines.append(f"last run {last['id']} {short_time(last['at'])} ({last['seconds']:g} s): {last['reason']}")
    return "\n".join(lines)


def _show_run(r: dict) -> str:
    return f"arena run {r['run']} ({r['seconds']:g} s, {counted(len(r['pulls']), 'pull')}): {r['reason']}\n" \
           + _strategy(r["strategy"])


def _show_history(r: dict) -> str:
    lines = ["choices:" if r["choices"] else "choices: none yet (the strategy was never changed)"]
    lines += [f"  {c['id']:>5} {short_time(c['at'])} {c['kind']:<6} {c['arm'] or '—':<22} "
              f"{c['actor']}: {c['reason']}" for c in r["choices"]]
    lines += ["runs:" if r["runs"] else "runs: none yet (`strata arena run`, or the daemon's daily arena phase)"]
    lines += [f"  {x['id']:>5} {short_time(x['at'])} {x['decision']:<8} {counted(x['episodes'], 'episode'):>14} "
              f"{x['seconds']:g} s" for x in r["runs"]]
    return "\n".join(lines)


async def cmd_arena(args) -> int:
    async with opened(args) as mem:
        if args.action == "run":
            bar = Progress(mem.config.tuning.arena.pulls, "arena", unit="pulls")
            r = await mem.run_arena(progress=bar.advance)
            bar.close()
            emit(r, args.json, _show_run)
        elif args.action == "status":
            emit(await mem.arena_status(), args.json, _show_status)
        elif args.action == "history":
            emit(await mem.arena_history(limit=args.limit), args.json, _show_history)
        elif args.action == "reset":
            emit(await mem.reset_arena(), args.json,
                 lambda r: f"arena reset ({counted(r['arms_reset'], 'arm')} forgotten); " + _strategy(r["strategy"]))
        elif args.action == "undo":
            emit(await mem.undo_arena(), args.json,
                 lambda r: f"choice {r['undone']} undone; " + _strategy(r["strategy"]))
        else:
            r = await mem.add_arena_questions(_read_questions(args.file))
            emit(r, args.json, lambda r: f"{counted(r['added'], 'evaluation episode')} added, {counted(r['skipped'], 'question')} "
                                         f"skipped (no evidence names a memory of this namespace)")
    return 0


QUESTIONS_LIMIT = 64 * bounded.MIB  # LoCoMo's ten conversations with their questions are 2.8 MB


def _read_questions(path: str):
    data = bounded.read_bytes(Path(path), QUESTIONS_LIMIT)
    if data is None:
        raise InvalidInput(f"cannot read {path}: no such file")
    try:
        return json.loads(data)
    except ValueError as e:  # not UTF-8, not JSON, or a number of more digits than Python reads
        raise InvalidInput(f"{path} is not JSON: {shortened(str(e), 120)}",
                           hint='a list of {"question": ..., "evidence": [...]}') from None
    except RecursionError:
        raise InvalidInput(f"{path} nests too deeply to be a question set") from None


def register(sub, common) -> None:
    p = sub.add_parser("arena", parents=[common], help="The retrieval arena: which recall strategy serves this "
                                                       "agent best, learnt from feedback.",
                       description="Arms (recall strategies, arena.arms) are scored on evaluation episodes: recalls "
                                   "whose feedback named the memories used (strata feedback --used), rated recalls, "
                                   "and question sets. A UCB1 bandit picks which arm to score; a leader that beats "
                                   "the default on episodes held apart from the pulls becomes the strategy of recalls that name no "
                                   "mode. The daemon runs it every arena.interval_hours.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("run", parents=[common], help="Run the arena now.")
    actions.add_parser("status", parents=[common], help="The strategy in force and why; arms, pulls, mean reward.")
    h = actions.add_parser("history", parents=[common], help="Every run and every change of strategy.")
    h.add_argument("--limit", type=count, default=50, help="most of each to show (default 50)")
    actions.add_parser("reset", parents=[common], help="Forget the arms' statistics and this namespace's choice "
                                                      "(it inherits the home-wide one again).")
    actions.add_parser("undo", parents=[common], help="Go back to the strategy in force before the last change.")
    q = actions.add_parser("questions", parents=[common], help="Add evaluation episodes from a question set.")
    q.add_argument("file", help='JSON: [{"question": ..., "evidence": [memory ids or sources]}], or a LoCoMo file')
    p.set_defaults(handler=cmd_arena)
