"""The state of the daemon's API listeners (the Unix socket, the TCP port), kept in
state/http-listeners.json for `strata doctor` and `strata status`: a listener that failed shows
nowhere else but the log, and probing a port cannot tell strata's listener from another
program's."""

from __future__ import annotations

import json
import os
from pathlib import Path

from strata_daemon.base import timeutil
from strata_daemon.base.private import write_private
from strata_daemon.errors import StrataError

FILE = "http-listeners.json"


def listener(address: str, error: BaseException | None = None) -> dict:
    """One listener: its address, whether it is up, and if not why and what to do."""
    if error is None:
        return {"address": address, "up": True, "error": None, "hint": None}
    if isinstance(error, StrataError):
        return {"address": address, "up": False, "error": error.message, "hint": error.hint}
    return {"address": address, "up": False, "error": str(error) or type(error).__name__, "hint": None}


def stopped(state: dict | None, why: BaseException | None) -> dict | None:
    """A listener once serving has ended: down, for `why` (None: a clean stop)."""
    if state is None or not state["up"]:
        return state
    return listener(state["address"], why or StrataError("stopped"))


def write(state_dir: Path, unix: dict, tcp: dict | None, *, agent: str) -> None:
    """Replace the record (0600) in one rename, so a reader never sees half of it. AGENT is the
    namespace the API serves: the CLI asks it only for that one."""
    record = {"pid": os.getpid(), "written_at": timeutil.iso(timeutil.now()), "agent": agent, "unix": unix,
              "tcp": tcp}
    write_private(state_dir / FILE, json.dumps(record))


def read(state_dir: Path) -> dict | None:
    """The record, or None when there is none or it cannot be read."""
    try:
        record = json.loads((state_dir / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and "unix" in record else None


def of_daemon(state_dir: Path, pid: int | None) -> dict | None:
    """{"unix", "tcp"} as the running daemon `pid` recorded them; None with no daemon, or one
    that has not recorded them (serving not started, or the API off)."""
    record = read(state_dir) if pid is not None else None
    if record is None or record.get("pid") != pid:
        return None
    return {"unix": record.get("unix"), "tcp": record.get("tcp")}


def serving(state_dir: Path, agent: str) -> str | None:
    """The Unix socket of a live daemon that serves AGENT's namespace; None when there is none
    (no daemon, its API off or down, another namespace)."""
    record = read(state_dir)
    if record is None or record.get("agent") != agent or not isinstance(record.get("unix"), dict) \
            or not record["unix"].get("up") or not isinstance(record.get("pid"), int):
        return None
    try:
        os.kill(record["pid"], 0)  # a record left by a daemon that was killed names a dead process
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, as another account: its socket's mode decides
    return str(record["unix"].get("address") or "") or None


def line(states: dict) -> str:
    """The listeners in words: `unix /run/strata.sock up · tcp 127.0.0.1:8765 down (address in use)`."""
    parts = []
    for name in ("unix", "tcp"):
        state = states.get(name)
        if isinstance(state, dict):
            how = "up" if state.get("up") else f"down ({state.get('error')})"
            parts.append(f"{name} {state.get('address')} {how}")
    return " · ".join(parts) or "none"
