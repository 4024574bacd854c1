"""strata processes for the benchmarks: each on one home, with none of the caller's own
STRATA_ settings leaking into it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def child_env(home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    return env if home is None else {**env, "STRATA_HOME": str(home)}


def spawn(args: list[str], home: Path, **kw) -> subprocess.Popen:
    """`python ARGS` on `home`, in a session of its own (a kill reaches its children)."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **kw}
    return subprocess.Popen([sys.executable, *args], env=child_env(home), start_new_session=True, **options)


def strata(home: Path, *args: str, timeout: float = 3600, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """`strata ARGS` on `home`, run to its end; output as bytes."""
    return subprocess.run([sys.executable, "-m", "strata_daemon", *args], input=stdin, capture_output=True,
                          env=child_env(home), timeout=timeout)
