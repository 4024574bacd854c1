"""Commands about the home and the daemon: init, config, status, fold, run."""

from __future__ import annotations

import asyncio
import shlex
import textwrap
from pathlib import Path

from strata_daemon.base import logs
from strata_daemon.base.timeutil import duration
from strata_daemon.base.wording import counted, field, plain
from strata_daemon.config.home import Home, check_store_url, init_home, resolve_home
from strata_daemon.config.settings import BY_KEY
from strata_daemon.errors import ConfigError, InvalidInput
from strata_daemon.faces.cli import seal_cmds
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import Progress, columns, emit, error, note, outline, short_time

COMMANDS = ("init", "config", "status", "fold", "embed", "reindex", "run", "phase")


def cmd_init(args) -> int:
    path = args.dir if args.dir is not None else resolve_home(args.home).root
    if args.encrypt and args.store_url is not None:
        raise InvalidInput("--encrypt seals the home's own SQLite file; a PostgreSQL store is sealed by its server",
                           hint="leave out one of --encrypt and --store-url (docs/sealing.md#postgresql)")
    store = None
    if args.store_url is not None:  # reach the server and lay out its schema first: a failure writes nothing
        from strata_daemon.app.memory import Memory

        check_store_url(Home(Path(path).expanduser().resolve()), args.store_url)
        store = asyncio.run(Memory.reach_store(args.store_url))
    home, wrote = init_home(path, store_url=args.store_url)
    out = {"home": str(home.root), "config": str(home.config_path), "wrote_config": wrote}
    if store is not None:
        out["store"] = store
    if args.encrypt:
        from strata_daemon.app import sealing

        out["sealing"] = sealing.seal(home, args.key_file)
    emit(out, args.json,
         lambda r: f"home ready at {r['home']}" + (f"; settings in {r['config']}" if wrote else
                                                   f" ({r['config']} kept as it was)")
         + (f"\nmemories kept in {r['store']}" if "store" in r else "")
         + (f"\n{seal_cmds.shown(r['sealing'])}" if "sealing" in r else "")
         + f"\nuse it with: export STRATA_HOME={shlex.quote(r['home'])}   (or --home on each command)")
    return 0


def cmd_config_show(args) -> int:
    from strata_daemon.app import wiring

    home = resolve_home(args.home)
    broken = None
    try:
        cfg = wiring.configuration(home)
    except ConfigError as e:  # the list a hint points to must show while the file is broken
        from strata_daemon.config.load import load_config

        broken, cfg = e, load_config(None)
        error(e, False)
        note("strata: the settings below are the defaults, not the file's")
    every = cfg.constants() if args.experimental else cfg.rows()
    rows = every
    if args.key:  # one setting, or a section's (`recall.k`, `recall`)
        rows = [r for r in rows if r["key"] == args.key or r["key"].startswith(args.key.rstrip(".") + ".")]
        if not rows:
            import difflib

            near = difflib.get_close_matches(args.key, [r["key"] for r in every], n=2, cutoff=0.6)
            what = "tuned constant" if args.experimental else "setting"
            raise InvalidInput(f"no {what} {args.key!r}", hint=(f"did you mean {' or '.join(near)}? " if near else "")
                               + f"`strata config show{' --experimental' if args.experimental else ''}` lists "
                                 f"every {what}")
    if args.json:
        emit({"home": str(home.root), "config_file": str(home.config_path),
              "config_file_exists": home.config_path.exists(),
              **({} if broken is None else {"config_error": broken.as_dict()}),
              "constants" if args.experimental else "settings": rows}, True)
        return 0 if broken is None else broken.exit_code
    width = max(len(r["key"]) for r in rows)
    # An [experimental] row is a tuned constant, shown as its value and marked so; an empty value is nothing.
    shown = [(_setting_value(BY_KEY[r["key"]], r["value"]) if r["key"] in BY_KEY else plain(r["value"])) or "—"
             for r in rows]
    if args.experimental:  # no promise: a constant may be renamed or go in any release
        print("# tuned constants: config/tuning.py says why each has its value; [experimental]\n"
              "# in strata.toml changes one for an experiment, with no promise")
    # The values' column fits the common ones; a longer one (a list of kinds) keeps two spaces before
    # its source rather than running into it.
    room = max((len(v) for v in shown if len(v) <= 32), default=14)
    print(f"# home {home.root}\n# file {home.config_path}" + ("" if home.config_path.exists() else " (absent)"))
    for r, value in zip(rows, shown):
        # The file is named in the header: its rows say `strata.toml`.
        source = ("strata.toml" if r["source"] == str(home.config_path) else r["source"]) + \
            ("" if r["key"] in BY_KEY or args.experimental else " (experimental)")
        # A value too long for the line (a list) wraps in its own column, its source after the first part.
        parts = textwrap.wrap(value, max(24, columns() - width - len(source) - 4), break_long_words=False,
                              break_on_hyphens=False) or [value]
        print(f"{r['key']:<{width}}  {parts[0]:<{room}}  {source}")
        for part in parts[1:]:
            print(f"{'':<{width}}  {part}")
    return 0 if broken is None else broken.exit_code


def _setting_value(setting, value) -> str:
    if value is None:
        return f"unset ({setting.unset_meaning})"
    unit = setting.unit_seconds
    return f"{value} ({duration(value * unit)})" if unit else plain(value)


async def cmd_status(args) -> int:
    async with opened(args) as mem:
        st = await mem.status()
    emit(st, args.json, _show_status)
    return 0


def _show_status(s: dict) -> str:
    nested = ("daemon", "strength", "capsule", "by_state", "by_tier", "embedding_model", "recall_strategy")
    lines = [f"{k:<22} {field(k, v)}" for k, v in s.items() if k not in nested]
    lines.insert(1, f"{'by_state':<22} " + (", ".join(f"{k} {v}" for k, v in s["by_state"].items()) or "—"))
    tiers = s["by_tier"]
    lines.insert(2, f"{'by_tier':<22} hot {tiers['hot']}, cold {tiers['cold']} (recall reaches both; the cold "
                    "rank lower)")
    model = s["embedding_model"]
    lines.append(f"{'embedding_model':<22} " + ("none yet" if model is None else f"{model['name']} ({model['dimension']}-d)"))
    strategy = s["recall_strategy"]
    lines.append(f"{'recall_strategy':<22} {strategy['arm']} (chosen by {strategy['chosen_by']}; `strata arena status`)")
    cap = s["capsule"]
    lines.append(f"{'capsule':<22} {cap['path']}: {counted(cap['lines'], 'line')}, "
                 + ("ok" if cap["ok"] else f"{counted(cap['errors'], 'error')} (`strata capsule check`)"))
    snap = s["strength"]
    lines.append(f"{'strength':<22} " + ("no snapshot yet (the decay phase takes one)" if snap is None else
                 f"p10 {snap['p10']:.3f}, median {snap['p50']:.3f}, p90 {snap['p90']:.3f}; {snap['weak']} weak, "
                 f"{snap['potentiated']} potentiated, {counted(snap['edges'], 'edge')} ({short_time(snap['taken_at'])})"))
    return "\n".join(lines) + "\n" + _show_phases(s["daemon"])


def _show_phases(d: dict) -> str:
    from strata_daemon.app import listeners

    running = f"running (pid {d['running']})" if d["running"] else "not running"
    age = d["heartbeat_age_seconds"]
    lines = [f"daemon {running}; loop {d['loop_count']}; heartbeat "
             + ("never" if age is None else f"{duration(age)} ago")]
    if d.get("listeners"):
        lines.append("  api         " + listeners.line(d["listeners"]))
    for p in d["phases"]:
        last = p["last"]
        state = "never run" if last is None else f"{last['status']} at {short_time(last['started_at'])}"
        if last and last["error"]:
            state += f" ({last['error']})"
        if p["next_at"]:
            due = short_time(p["next_at"])
        else:
            due = "at start" if p["at_start"] else f"after {p['after']}" if p["after"] else "one interval after start"
        lines.append(f"  {p['phase']:<11} every {duration(p['every_seconds']):>7}  last {state}  next {due}")
    return "\n".join(lines)


async def cmd_phase_list(args) -> int:
    async with opened(args) as mem:
        emit(await mem.daemon_status(), args.json, _show_phases)
    return 0


async def cmd_phase_run(args) -> int:
    async with opened(args, actor="cli") as mem:
        r = await mem.run_phase(args.phase)
    emit(r, args.json, lambda r: f"{r['phase']}: {r['status']} in {r['seconds']:g} s"
                                 + (f": {r['error']}" if r["status"] == "failed" else
                                    f"\n{outline(r['result'])}" if r.get("result") is not None else ""))
    return 0 if r["status"] == "ok" else 1


async def cmd_fold(args) -> int:
    async with opened(args, actor="cli") as mem:
        emit(await mem.fold(), args.json, lambda r: f"folded {counted(r['events'], 'access event')} into {counted(r['episodes'], 'memory')}")
    return 0


async def cmd_embed(args) -> int:
    async with opened(args) as mem:
        bar = Progress(await mem.embedding_backlog(), "embedding", unit="memories")
        result = await mem.embed_pending(progress=bar.advance)
        bar.close()
    emit(result, args.json, lambda r: f"embedded {counted(r['embedded'], 'memory')} with {r['model']}; {r['backlog']} waiting")
    return 0


async def cmd_reindex(args) -> int:
    async with opened(args) as mem:
        bar = Progress(0, "reindexing", unit="memories")
        result = await mem.reindex(force=args.force, progress=bar.advance)
        bar.close()
    emit(result, args.json, lambda r: ("index reset; " if r["reset"] else "") +
         f"embedded {counted(r['embedded'], 'memory')} with {r['model']} ({r['dimension']}-d); {r['backlog']} waiting")
    return 0


async def cmd_run(args) -> int:
    from strata_daemon.app import runner

    home = resolve_home(args.home)
    logs.setup("debug" if args.verbose else home.config()["daemon.log_level"])
    from strata_daemon.faces.http.serve import serve  # the daemon serves the HTTP face when http.enabled

    return await runner.run(home, agent=args.agent, verbose=args.verbose, serve_http=serve)


def register(sub, common) -> None:
    p = sub.add_parser("init", parents=[common], help="Lay out a new home (capsule/, templates/, state/, strata.toml).")
    p.add_argument("dir", nargs="?", help="the home's folder (default: --home, else STRATA_HOME, else "
                                          "~/.local/share/strata)")
    p.add_argument("--store-url", metavar="URL",
                   help="keep the memories in this PostgreSQL database (postgresql://USER:PASSWORD@HOST/DB), "
                        "shared with other hosts' daemons, instead of the home's own SQLite file")
    p.add_argument("--encrypt", action="store_true",
                   help="seal the home's database at rest (docs/sealing.md); the key is STRATA_KEY's when set, "
                        "else --key-file's")
    p.add_argument("--key-file", help=seal_cmds.KEY_FILE_HELP + " (with --encrypt)")
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("config", help="Show the effective settings.")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    q = csub.add_parser("show", parents=[common], help="Every setting, its value and where it came from.")
    q.add_argument("key", nargs="?", help="only this setting, or a section's (`recall.k`, `recall`)")
    q.add_argument("--experimental", action="store_true",
                   help="the tuned constants instead, each with its value and default: the names messages and "
                        "[experimental] use (arena.min_episodes, facts.conflict_window_seconds, ...)")
    q.set_defaults(handler=cmd_config_show)

    p = sub.add_parser("status", parents=[common], help="Counts, backlog and phase of the namespace.")
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser("fold", parents=[common], help="Fold pending access events into memory features now.")
    p.set_defaults(handler=cmd_fold)

    p = sub.add_parser("embed", parents=[common], help="Embed memories that have no vector yet (progress bar).")
    p.set_defaults(handler=cmd_embed)

    p = sub.add_parser("reindex", parents=[common],
                       help="Embed every memory with the configured model; resumes if interrupted.")
    p.add_argument("--force", action="store_true", help="drop every vector first, even for the same model")
    p.set_defaults(handler=cmd_reindex)

    from strata_daemon.app.phases.registry import PHASES

    p = sub.add_parser("phase", parents=[common], help="The daemon's phases: list them, or run one now.")
    ps = p.add_subparsers(dest="phase_command", metavar="ACTION", required=True)
    q = ps.add_parser("list", parents=[common], help="Each phase's interval, last run and next run; the daemon's state.")
    q.set_defaults(handler=cmd_phase_list)
    q = ps.add_parser("run", parents=[common], help="Run one phase now and record it: "
                      + "; ".join(f"{x.name}: {x.doc}" for x in PHASES))
    q.add_argument("phase", choices=[x.name for x in PHASES], metavar="PHASE",
                   help=", ".join(x.name for x in PHASES))
    q.set_defaults(handler=cmd_phase_run)

    p = sub.add_parser("run", parents=[common], help="Run the daemon in the foreground until interrupted.",
                       description="Run the daemon in the foreground: the phases on their schedule, the loop steps, "
                                   "the capsule watcher. SIGTERM or Ctrl-C stops it cleanly; SIGHUP reloads "
                                   "strata.toml.")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log at debug level (every phase run, idle ones too), whatever daemon.log_level says")
    p.set_defaults(handler=cmd_run)

