"""How busy the machine is with other work, for choosing how many threads llama.cpp may use.

llama.cpp's threads meet at a barrier after every step, so when another process keeps a core
busy, one descheduled thread stalls them all: on this project's 2-core machine SmolLM2-135M
took 157 s for a dossier-sized answer on two threads beside a two-threaded embedding job,
and 8.4 s on one (4.5 and 7.4 s with the machine to itself)."""

from __future__ import annotations

import math
import os
import time

IDLE_BELOW = 0.25  # cores' worth of other work that still leaves every configured thread


def threads_for(configured: int, cores: int, others: float | None) -> int:
    """The threads to use: all configured when other work is under IDLE_BELOW of a core (or
    unknown), else only the cores the others leave whole, at least one."""
    if others is None or others < IDLE_BELOW:
        return configured
    return max(1, min(configured, math.floor(cores - others)))


def process_cpu_seconds(pid: int | str = "self") -> float:
    """CPU time (user and system) a process has used."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _busy_seconds() -> float:
    """CPU time every core has spent busy since boot."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and waiting for I/O
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def others_busy(window: float = 0.2) -> float | None:
    """Cores' worth of CPU that other processes used over the next `window` seconds; None
    where /proc is not there to say."""
    try:
        busy, own = _busy_seconds(), process_cpu_seconds()
        started = time.monotonic()
        time.sleep(window)
        busy2, own2 = _busy_seconds(), process_cpu_seconds()
        elapsed = time.monotonic() - started
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, (busy2 - busy - (own2 - own)) / elapsed)


def passive_openmp() -> None:
    """Call before llama.cpp is loaded: OpenMP's waiting threads then sleep instead of spinning.
    Spinning threads on two shared cores slowed generation 4-20x whenever another process ran.
    A value the person set in the environment is kept."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
