"""The systemd notify protocol, without libsystemd: one datagram to $NOTIFY_SOCKET per message
(READY=1, STOPPING=1, WATCHDOG=1, STATUS=...). Without the variable (not under systemd)
nothing is sent."""

from __future__ import annotations

import os
import socket


def notify(message: str) -> bool:
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):  # an abstract socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message.encode("utf-8"))
        return True
    except OSError:
        return False  # systemd went away or the socket is not ours: never fatal


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings: half of WatchdogSec, when systemd asked for them (and
    for this process)."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(0.5, int(usec) / 2e6)
    except ValueError:
        return None
