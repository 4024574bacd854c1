"""`strata mcp`: serve one namespace to an MCP client over stdio (the SDK is loaded only here)."""

from __future__ import annotations

COMMANDS = ("mcp",)


async def cmd_mcp(args) -> int:
    from strata_daemon.faces.mcp.server import serve

    await serve(args.home, args.agent, allow_purge=args.allow_purge)
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("mcp", parents=[common], help="Serve this namespace to an MCP client over stdio.",
                       description="An MCP server on stdin/stdout for one agent namespace (--agent, else "
                                   "agent.namespace): tools for observe, recall, feedback, facts, dossiers, the "
                                   "capsule, the spiderweb and status; the capsule and dossiers also as resources. "
                                   "Started by the MCP client; logs go to stderr. Safe beside the daemon.")
    p.add_argument("--allow-purge", action="store_true",
                   help="let the forget tool purge (final: the words leave every layer); without it, forget "
                        "only archives, which a person can undo")
    p.set_defaults(handler=cmd_mcp)
