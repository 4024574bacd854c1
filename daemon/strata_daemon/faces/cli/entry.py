"""The `strata` command's entry point: a Ctrl-C while the command's modules load, or while its
arguments are read, ends it as one during the command does (`strata: interrupted`, exit 130),
not with a traceback."""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from strata_daemon.faces.cli.main import main as run

        return run()
    except KeyboardInterrupt:
        sys.stderr.write("strata: interrupted\n")
        return 130
