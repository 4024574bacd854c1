"""A real MCP client from the SDK, talking to `strata mcp` started as a subprocess over stdio."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import AsyncIterator

from mcp import Client, StdioServerParameters


@contextlib.asynccontextmanager
async def mcp_client(home: Path, agent: str | None = None, *, flags: tuple[str, ...] = ()) -> AsyncIterator["Tools"]:
    args = ["-m", "strata_daemon", "--home", str(home)] + (["--agent", agent] if agent else []) + ["mcp", *flags]
    # The store a test chose (STRATA_DATABASE_URL) goes with it; any other STRATA_ variable does not.
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_") or k in ("STRATA_DATABASE_URL", "STRATA_KEY")}
    params = StdioServerParameters(command=sys.executable, args=args, env=env,
                                   cwd=str(Path(__file__).resolve().parent.parent))
    async with Client(params, cache=None, read_timeout_seconds=120) as client:
        yield Tools(client)


class Tools:
    def __init__(self, client: Client):
        self.client = client

    async def call(self, name: str, **arguments):
        """A tool's result as JSON; fails the test on a tool error."""
        r = await self.client.call_tool(name, arguments)
        assert not r.is_error, f"{name}: {r.content[0].text}"
        assert json.loads(r.content[0].text) == r.structured_content  # text and structure agree
        return r.structured_content

    async def error(self, name: str, **arguments) -> str:
        """The text of a tool error; fails the test if the call succeeded."""
        r = await self.client.call_tool(name, arguments)
        assert r.is_error, f"{name} succeeded: {r.content}"
        return r.content[0].text
