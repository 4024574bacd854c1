"""strata processes for the benchmarks: each on one home, with none of the caller's own
STRATA_ settings leaking into it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from strata_daemon.errors import StrataError


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


def serving(home: Path, command: str) -> tuple[subprocess.Popen, Path]:
    """`strata COMMAND` (run, serve) on the home, once its socket answers; its log beside the
    home (never in it: bench forget reads every file of a home), read when it fails to start."""
    path, log = home / "state" / "strata.sock", home.parent / f".{home.name}-{command}.log"
    with log.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen([sys.executable, "-m", "strata_daemon", "--home", str(home), command],
                                stdout=subprocess.DEVNULL, stderr=err, env=child_env())
    deadline = time.monotonic() + 300
    while not path.is_socket():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise StrataError(f"strata {command} did not start: {log.read_text(encoding='utf-8')[-500:]}")
        time.sleep(0.05)
    return proc, path


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, and SIGKILL if it is not gone in two minutes."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
