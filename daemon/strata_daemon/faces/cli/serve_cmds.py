"""`strata serve`: the HTTP API for one namespace (Starlette and uvicorn are loaded only here)."""

from __future__ import annotations

import asyncio
import json
import signal

from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.parsers import integer

COMMANDS = ("serve",)


async def cmd_serve(args) -> int:
    if args.openapi:
        from strata_daemon.faces.http.openapi import document

        print(json.dumps(document(), indent=2))
        return 0
    from strata_daemon.base import logs
    from strata_daemon.config.home import resolve_home
    from strata_daemon.faces.http.serve import serve

    logs.setup(resolve_home(args.home).config()["daemon.log_level"])
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with opened(args, actor="http") as mem:
        await serve(mem, stop, socket_file=args.socket, port=args.port)
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("serve", parents=[common], help="Serve this namespace over HTTP on a Unix socket.",
                       description="The HTTP API (GET /openapi.json describes it) for one agent namespace, on "
                                   "the Unix socket http.socket (state/strata.sock, mode 0600); with http.port "
                                   "also on loopback TCP, where every request needs the bearer token in "
                                   "state/http-token. `strata run` serves it too when http.enabled is true.")
    p.add_argument("--socket", metavar="PATH", help="the Unix socket (default: http.socket)")
    p.add_argument("--port", type=integer, metavar="PORT",
                   help="also listen on this loopback port (default: http.port)")
    p.add_argument("--openapi", action="store_true", help="print the OpenAPI document and exit")
    p.set_defaults(handler=cmd_serve)
