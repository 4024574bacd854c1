"""Writing docs/reference/: each file generated, compared, and written when it changed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from strata_bench.reference.cli import cli_markdown
from strata_bench.reference.config import config_markdown
from strata_bench.reference.http import http_markdown
from strata_bench.reference.mcp import mcp_markdown

FILES: dict[str, Callable[[], str]] = {
    "cli.md": cli_markdown,
    "config.md": config_markdown,
    "http.md": http_markdown,
    "mcp.md": mcp_markdown,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_bench.reference",
                                     description="Write the reference documents generated from the code.")
    parser.add_argument("dir", nargs="?", default="docs/reference", help="where to write them (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    out = Path(args.dir)
    stale = []
    for name, generate in FILES.items():
        path, text = out / name, generate()
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(str(path))
        if not args.check:
            out.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    verb = "out of date" if args.check else "written"
    print(f"{verb}: {', '.join(stale)}" if stale else "up to date", file=sys.stderr)
    return 1 if args.check and stale else 0

