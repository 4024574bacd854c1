"""`strata doctor` and `strata backup [--list | --restore PATH]`: keeping a home healthy."""

from __future__ import annotations

from pathlib import Path

from strata_daemon.base.wording import counted
from strata_daemon.config.home import resolve_home
from strata_daemon.errors import EXIT_DOCTOR
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import emit, note
from strata_daemon.faces.cli.parsers import integer

COMMANDS = ("doctor", "backup")
MARK = {"ok": "ok   ", "warn": "warn ", "error": "ERROR"}


def _show(r: dict) -> str:
    lines = [f"{MARK[f['status']]} {f['check']}: {f['message']}" + (f"\n      fix: {f['fix']}" if f["fix"] and
                                                                   f["status"] != "ok" else "")
             for f in r["findings"]]
    return "\n".join(lines + [f"{r['home']}: " + ("healthy" if r["ok"] else "problems found, each with its fix")])


async def cmd_doctor(args) -> int:
    from strata_daemon.app.doctor import examine

    r = await examine(resolve_home(args.home))
    emit(r, args.json, _show)
    return 0 if r["ok"] else EXIT_DOCTOR


async def cmd_backup(args) -> int:
    if args.restore is not None:  # `--restore ""` names no backup, and is refused as one
        return await _restore(args)
    if args.prune_containing is not None:
        return await _prune(args)
    if args.list:
        from strata_daemon.app.public import copies

        folder = resolve_home(args.home).state_dir / "backups"
        found = [{"path": str(p), "bytes": p.stat().st_size} for p in copies.newest_last(
            [*folder.glob("*.db"), *folder.glob("*.dump")])] \
            if folder.is_dir() else []
        emit(found, args.json, lambda rs: "\n".join(f"{r['path']}  {r['bytes']:,} bytes" for r in rs) or "no backups")
        return 0
    async with opened(args, actor="cli") as mem:
        r = await mem.run_phase("backup")
    if r["status"] != "ok" and not args.json:  # a failure is said where errors are, not as the output
        note(f"strata: backup failed: {r['error']}")
        return 1
    emit(r, args.json, lambda r: f"backup: {r['result']['skipped']}" if "skipped" in r["result"] else
         f"backup: {r['result']['path']} ({r['result']['bytes']:,} bytes)")
    return 0 if r["status"] == "ok" else 1


async def _prune(args) -> int:
    async with opened(args, actor="cli") as mem:
        r = await mem.backups_holding(args.prune_containing, remove=args.yes)
    emit(r, args.json, lambda r: "\n".join(
        [f"{'removed' if r['removed'] else 'holds it'}: {p}" for p in r["backups"]]
        + ([f"no backup holds memory {r['id']}"] if not r["backups"] else [] if r["removed"]
           else ["run again with --yes to remove these backups"])))
    return 0


async def _restore(args) -> int:
    from strata_daemon.app.restore import restore_home

    home, given = resolve_home(args.home), Path(args.restore).expanduser()
    if not given.is_absolute() and not given.exists() and (home.root / given).exists():
        given = home.root / given  # `state/backups/memory-...db`, as `backup --list` and the docs name it
    r = await restore_home(home, given)
    again = r["purged_again"]
    emit(r, args.json, lambda r: f"restored {r['database']} from {r['restored_from']}"
         + (f"; the database it replaced is kept as {r['previous_kept_as']}" if r["previous_kept_as"] else "")
         + (f"\npurged again what was purged after the backup was made: {counted(again['memories'], 'memory')}, "
            f"{counted(again['facts'], 'fact')}" if again["memories"] or again["facts"] else "")
         + "".join(f"\nthe capsule's blocks are as the backup rendered them; the file as it was is kept as {c}"
                   for c in r.get("capsules_kept_as", ())))
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("doctor", parents=[common], help="Check the home and say how to fix each problem.",
                       description="Checks permissions, the configuration, the database (integrity and schema), "
                                   "the model files, free disk, the daemon's heartbeat and the capsule. Only "
                                   f"reads. Exit 0 when nothing is an error, {EXIT_DOCTOR} otherwise.")
    p.set_defaults(handler=cmd_doctor)
    p = sub.add_parser("backup", parents=[common], help="Back the database up now into state/backups/; list or "
                                                        "restore backups.",
                       description="SQLite's online backup (safe while the daemon runs); keeps the newest "
                                   "daemon.backup_keep. The daemon does this nightly. --restore checks the backup, "
                                   "keeps the current database as state/backups/before-restore-TIME.db, then "
                                   "copies the backup in and purges again what was purged after it was made; "
                                   "it is refused while a daemon runs. On a PostgreSQL store a backup is a "
                                   "pg_dump file (memory-TIME.dump), which --restore puts back with pg_restore, "
                                   "refused while any other session uses the database.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the backups")
    what.add_argument("--restore", metavar="PATH", help="put this backup back as the database (daemon stopped)")
    what.add_argument("--prune-containing", type=integer, metavar="ID",
                      help="the backups (and databases a restore replaced) that still hold purged memory ID; "
                           "removed with --yes. A backup is a snapshot: it is removed, never rewritten")
    p.add_argument("--yes", action="store_true", help="with --prune-containing: remove them (without, only list)")
    p.set_defaults(handler=cmd_backup)
