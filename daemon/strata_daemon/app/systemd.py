"""The systemd units `strata systemd print-unit` prints: a shipped file (systemd/) with its
@NAME@ placeholders filled in. Two blocks follow the configuration: network sockets only when
the daemon listens on TCP, and /home hidden unless something the daemon uses lies there."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterable

# What ProtectHome= covers.
PRIVATE_TREES = (Path("/home"), Path("/root"), Path("/run/user"))


def fill(template: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        template = template.replace(f"@{name}@", value)
    return template


def unit_word(path: str) -> str:
    """A path as one word of a unit line: `%` doubled (systemd reads `%h` and the like as
    specifiers), and quoted when it holds a space, a quote or a backslash, which would
    otherwise split it or be read as an escape."""
    path = path.replace("%", "%%")
    if not re.search(r'[\s"\'\\]', path):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def network_lines(*, tcp: bool, loopback: bool, system: bool) -> list[str]:
    """Address families and IP access: Unix sockets only, unless the daemon serves TCP."""
    if not tcp:
        return ["# Local only: Unix sockets (the notify socket, the API socket), no network sockets.",
                "# Loop steps run in here too: one that needs the network (a mail check) needs these lines changed.",
                "RestrictAddressFamilies=AF_UNIX",
                *(["# No IP traffic in or out, whatever a library tries.", "IPAddressDeny=any"] if system else []),
                "# A network namespace of its own, with nothing in it but a loopback device.",
                "PrivateNetwork=yes"]
    lines = ["# Unix sockets, and IPv4 and IPv6 for the API's TCP listener (http.port)...",
             "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"]
    if not system:  # IPAddressAllow= and IPAddressDeny= need the system manager's BPF programs
        return lines + ["# ...and no narrower: only the system manager can filter IP addresses (IPAddressDeny=)."]
    if loopback:
        return lines + ["# ...which only this machine may reach:", "IPAddressAllow=localhost",
                        "# every other address is refused, in and out.", "IPAddressDeny=any"]
    return lines + ["# ...reachable from other machines (http.allow_remote), so no IPAddressDeny=."]


def protect_home_lines(private: Path | None) -> list[str]:
    """ProtectHome=yes, or read-only when `private` (something the daemon uses) lies under it."""
    if private is None:
        return ["# No access to /home, /root and /run/user: people's own files are none of its business.",
                "ProtectHome=yes"]
    return [f"# /home, /root and /run/user read-only, not hidden: it uses {private}.",
            "ProtectHome=read-only"]


def first_private(paths: Iterable[Path]) -> Path | None:
    """The first of `paths` that ProtectHome=yes would hide."""
    for path in paths:
        if any(path == tree or tree in path.parents for tree in PRIVATE_TREES):
            return path
    return None


def step_paths(spec: dict, account_home: Path) -> list[Path]:
    """The absolute paths a loop step's table names: its cwd, env values and command words (a
    shell string's `~` is the account's home there)."""
    command = spec.get("command")
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:  # unbalanced quotes: the step reports that when it runs
            words = command.split()
    else:
        words = [w for w in command or [] if isinstance(w, str)]
    env = spec.get("env") if isinstance(spec.get("env"), dict) else {}
    candidates = words + [spec.get("cwd")] + list(env.values())
    return [under(w, account_home) for w in candidates
            if isinstance(w, str) and (w.startswith(("/", "~/")) or w == "~")]


def under(path: str, account_home: Path) -> Path:
    """PATH with a leading `~` as the daemon's account sees it."""
    if path == "~" or path.startswith("~/"):
        return account_home / path[2:]
    return Path(path)
