"""`strata store`: the store a home keeps its memories in, and on PostgreSQL who may reach
which namespace."""

from __future__ import annotations

from strata_daemon.base.wording import counted
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import emit

COMMANDS = ("store",)


def _show_copy(r: dict) -> str:
    bad = [t for t, c in r["tables"].items() if not c["same"]]
    then = ("\nthe home still uses its own file: set store.url in strata.toml to the URL given to use the copy"
            if r["to"] == "postgresql" else "\nthe home uses its own file again once store.url in strata.toml is "
            "empty (or removed)")
    return (f"copied {counted(r['memories'], 'memory')} from {r['from']} to {r['to']}; "
            + (f"{counted(len(r['tables']), 'table')} checked, every row the same{then}" if not bad
               else f"tables that differ: {', '.join(bad)} (run the copy again)"))


async def cmd_store(args) -> int:
    async with opened(args) as mem:
        if args.action == "copy":
            from strata_daemon.faces.cli.output import Progress

            bar = Progress(0, "copy", unit="rows")  # the total is unknown: a count of rows
            r = await mem.copy_store(args.target, lambda table, n: bar.advance(n))
            bar.close()
            emit(r, args.json, _show_copy)
            return 0 if r["same"] else 1
        if args.action == "grant":
            r = await mem.grant_role(args.role, args.agent)
            emit(r, args.json, lambda r: f"role {r['role']} reaches namespace {r['agent']}"
                                         + (f"; reads {', '.join(r['shared'])}" if r["shared"] else "")
                                         + ("" if r["may_rewrite"] else "\nthe server is older than 17: this "
                                            "role's purges cannot rewrite the tables (docs/forgetting.md)"))
        elif args.action == "revoke":
            r = await mem.revoke_role(args.role)
            emit(r, args.json, lambda r: f"role {r['role']} reaches no namespace (it had {r['agent']})")
        else:
            rows = await mem.bound_roles()
            emit(rows, args.json, lambda rows: "\n".join(f"{r['role']:<24} {r['agent']}" for r in rows)
                 or "no role is bound to a namespace")
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("store", parents=[common], help="Roles bound to namespaces on a PostgreSQL store.",
                       description="On a PostgreSQL store (store.url), bind the server's login roles to "
                                   "namespaces: the server's row-level security then lets a role read and change "
                                   "its namespace's rows and read those in agent.shared, and nothing else, "
                                   "whatever SQL it sends. Run as the tables' owner; give each host's daemon "
                                   "its role in store.url. docs/operations.md says how.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    g = actions.add_parser("grant", parents=[common], help="bind ROLE to a namespace (default: --agent's)")
    g.add_argument("role", help="a login role on the server (CREATE ROLE NAME LOGIN PASSWORD '...')")
    r = actions.add_parser("revoke", parents=[common], help="unbind ROLE; it reaches no namespace")
    r.add_argument("role")
    actions.add_parser("roles", parents=[common], help="the roles bound, and to which namespace")
    c = actions.add_parser("copy", parents=[common], help="copy this home's store into another and check it",
                           description="Copies every table of this home's store (its SQLite file, or its "
                                       "PostgreSQL database) into TARGET, then counts and hashes each table on both "
                                       "sides. Cut short, run it again: rows already there are kept. Then point "
                                       "store.url at the copy (or empty it for the home's own file).")
    c.add_argument("target", help="`sqlite` (this home's own state/memory.db) or a postgresql:// URL")
    p.set_defaults(handler=cmd_store)
