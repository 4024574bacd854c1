"""Loop steps (the agent's loop: check mail, check health, ...): commands a person
configures, run once per loop, whose output becomes observations. A step that fails, times
out or cannot start is an observation too, so the agent learns that its mail check has been
broken since Tuesday.

A step is `[loop.steps.NAME]` with `command` (a string run by /bin/sh, or a list run as
is), and optionally `timeout_seconds`, `cwd`, `env` (a table added to the daemon's
environment), `kind`, `importance` and `enabled`. `[loop.wake]` is one more step, run
after the others, that gets the capsule and dossiers on stdin: the hook that wakes an agent.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

STEP_KEYS = {"command", "timeout_seconds", "cwd", "env", "kind", "importance", "enabled"}
WAKE_KEYS = STEP_KEYS - {"enabled"} | {"dossiers", "max_dossiers"}
DEFAULT_TIMEOUT = 60.0
KILL_GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class Step:
    name: str
    command: tuple[str, ...]
    shell: bool
    timeout: float = DEFAULT_TIMEOUT
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    kind: str | None = None
    importance: float | None = None


@dataclass(frozen=True)
class Outcome:
    step: str
    status: str  # ok | failed | timeout | error (could not start)
    exit_code: int | None
    output: str  # stdout then stderr, trimmed and capped
    seconds: float

    def observation(self) -> tuple[str, dict]:
        """What to store: content and context."""
        if self.status == "ok":
            content = self.output
        else:
            why = {"failed": f"exited with {self.exit_code}", "timeout": f"timed out after {self.seconds:g} s",
                   "error": "could not start"}[self.status]
            content = f"loop step {self.step} {why}" + (f":\n{self.output}" if self.output else "")
        return content, {"step": self.step, "status": self.status, "exit_code": self.exit_code,
                         "seconds": round(self.seconds, 3)}


def spec_problem(name: str, spec, keys: set[str]) -> str | None:
    """Why a step's table is unusable, or None."""
    if not isinstance(spec, dict):
        return f"{name} must be a table"
    unknown = sorted(set(spec) - keys)
    if unknown:
        return f"{name} has unknown key {unknown[0]!r} (known: {', '.join(sorted(keys))})"
    command = spec.get("command")
    if not (isinstance(command, str) and command.strip()) and not (
            isinstance(command, list) and command and all(isinstance(c, str) and c for c in command)):
        return f"{name}.command must be a non-empty string or list of strings"
    timeout = spec.get("timeout_seconds", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 86400:
        return f"{name}.timeout_seconds must be a number of seconds between 0 and 86400"
    env = spec.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return f"{name}.env must be a table of strings"
    for key, kind in (("cwd", str), ("kind", str), ("enabled", bool), ("dossiers", list), ("max_dossiers", int)):
        if key in spec and not isinstance(spec[key], kind):
            return f"{name}.{key} has the wrong type"
    importance = spec.get("importance", 0.5)
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not 0 <= importance <= 1:
        return f"{name}.importance must be between 0 and 1"
    return None


def parse(name: str, spec: dict, home_root: Path) -> Step:
    command = spec["command"]
    return Step(name, (command,) if isinstance(command, str) else tuple(command), isinstance(command, str),
                float(spec.get("timeout_seconds", DEFAULT_TIMEOUT)), str(Path(spec.get("cwd") or home_root).expanduser()),
                dict(spec.get("env", {})), spec.get("kind"), spec.get("importance"))


def _trim(data: bytes, cap: int) -> str:
    text = data.decode("utf-8", errors="replace").replace("\x00", "").strip()
    if len(text.encode("utf-8")) <= cap:
        return text
    # Keep the tail: the end of a log or a traceback is where the news is.
    tail = text.encode("utf-8")[-cap:].decode("utf-8", errors="ignore")
    return f"[... {len(text.encode('utf-8')) - len(tail.encode('utf-8'))} bytes cut ...]\n{tail}"


def _joined(out: bytes, err: bytes) -> bytes:
    return b"\n".join(part.strip() for part in (out, err) if part.strip())


def _kill(proc: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the step's own children go too
    except ProcessLookupError:
        pass


async def run(step: Step, *, stdin: bytes | None, cap: int, extra_env: dict[str, str]) -> Outcome:
    """Run one step to completion, timeout or failure; never raises for the step's sake. When
    cancelled (the daemon is stopping), the step's process group is killed first."""
    started = time.monotonic()
    env = {**os.environ, **extra_env, **step.env}
    argv = ("/bin/sh", "-c", step.command[0]) if step.shell else step.command
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=step.cwd, env=env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as e:
        return Outcome(step.name, "error", None, f"{e.strerror or e}: {e.filename or step.command[0]}",
                       time.monotonic() - started)
    communicating = asyncio.ensure_future(proc.communicate(stdin))
    try:
        out, err = await asyncio.wait_for(asyncio.shield(communicating), step.timeout)
    except asyncio.TimeoutError:
        _kill(proc, signal.SIGTERM)
        try:
            out, err = await asyncio.wait_for(asyncio.shield(communicating), KILL_GRACE_SECONDS)
        except asyncio.TimeoutError:
            _kill(proc, signal.SIGKILL)
            out, err = await communicating
        return Outcome(step.name, "timeout", proc.returncode, _trim(_joined(out, err), cap), step.timeout)
    except asyncio.CancelledError:
        _kill(proc, signal.SIGKILL)
        await asyncio.gather(communicating, return_exceptions=True)
        raise
    status = "ok" if proc.returncode == 0 else "failed"
    return Outcome(step.name, status, proc.returncode, _trim(_joined(out, err), cap), time.monotonic() - started)
