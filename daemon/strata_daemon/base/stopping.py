"""A request to stop, seen by work running in threads. The daemon asks on SIGTERM; long work
(consolidation, embedding, the arena, dossier refreshes) calls `check()` between its steps
and so ends within a fraction of a second, its transaction rolled back: a stop loses only
the unfinished pass, which the next night does again. Cancelling an asyncio task cannot do
this: the thread it waits on runs to the end, and the process with it."""

from __future__ import annotations

import threading

_requested = threading.Event()


class Stopped(Exception):
    """Raised by `check()` once a stop was asked for."""


def request() -> None:
    _requested.set()


def requested() -> bool:
    return _requested.is_set()


def check() -> None:
    if _requested.is_set():
        raise Stopped("stopped on request")


def reset() -> None:
    """A new run in the same process (tests) starts unstopped."""
    _requested.clear()
