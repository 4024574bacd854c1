"""The systemd units `strata systemd print-unit` prints: a shipped file (systemd/) with its
@NAME@ placeholders filled in. Three blocks follow the configuration: network sockets only when
the daemon listens on TCP or reaches its store over TCP, a start after the network for a store
on another machine, and /home hidden unless something the daemon uses lies there."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterable
from urllib.parse import parse_qs, urlsplit

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


LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def store_reach(url: str) -> str | None:
    """How the daemon reaches its store: None for the home's SQLite file or a PostgreSQL server
    on a Unix socket (`postgresql:///strata?host=/run/postgresql`), `loopback` for a server on
    this machine's TCP, `remote` for another machine's."""
    if not url:
        return None
    parts = urlsplit(url)
    given = [h for field in (parts.netloc.rpartition("@")[2], *parse_qs(parts.query).get("host", ()))
             for h in field.split(",")]
    named = [_host(h) for h in given if h and not h.startswith("/")]
    if not named:
        return None  # no host (libpq's default) or a path: a Unix socket
    return "loopback" if all(h.casefold() in LOOPBACK_HOSTS for h in named) else "remote"


def _host(netloc: str) -> str:
    """A host without its port: `db:5432` -> `db`, `[::1]:5432` -> `::1`."""
    if netloc.startswith("["):
        return netloc[1:netloc.find("]")]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def order_lines(store: str | None) -> list[str]:
    """What the unit starts after: the network, too, when the store is on another machine."""
    if store != "remote":
        return ["After=local-fs.target"]
    return ["# The store is a PostgreSQL server on another machine (store.url): start once the network is up.",
            "Wants=network-online.target", "After=local-fs.target network-online.target"]


def network_lines(*, tcp: bool, loopback: bool, system: bool, store: str | None = None) -> list[str]:
    """Address families and IP access: Unix sockets only, unless the daemon serves TCP or its
    store is a PostgreSQL server reached over TCP (store_reach)."""
    if store is not None:
        why = "a PostgreSQL server on this machine" if store == "loopback" else "a PostgreSQL server on another machine"
        lines = [f"# Unix sockets, and IPv4 and IPv6: the store is {why} (store.url)"
                 + (", and the API listens on TCP (http.port)." if tcp else "."),
                 "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"]
        if system and store == "loopback" and (not tcp or loopback):
            return lines + ["# Only this machine may be reached:", "IPAddressAllow=localhost",
                            "# every other address is refused, in and out.", "IPAddressDeny=any"]
        return lines
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


def credential_lines(sealed: bool, key_file: str) -> list[str]:
    """How a sealed home's key reaches the service: systemd reads the key file and hands it over
    as the credential strata-key, which strata reads before store.key_file."""
    if not sealed:
        return ["# A sealed home's key comes as a credential: LoadCredential=strata-key:PATH (docs/sealing.md)."]
    head = ["# The sealed home's key, read by systemd and handed to strata as the credential strata-key.",
            "# To seal the key itself to this machine: systemd-creds encrypt --name=strata-key KEYFILE",
            "# /etc/credstore.encrypted/strata-key, then LoadCredentialEncrypted=strata-key in place of this."]
    if key_file:
        return head + [f"LoadCredential=strata-key:{unit_word(key_file)}"]
    return head + ["# Its key comes from STRATA_KEY where this was printed: name a file that holds it.",
                   "LoadCredential=strata-key:/PATH/OF/THE/KEY/FILE"]


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
