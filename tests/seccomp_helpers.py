"""A printed unit's system call rules (SystemCallFilter=, SystemCallErrorNumber=,
RestrictAddressFamilies=) put on a subprocess with libseccomp, for tests on machines where
systemd itself cannot start the unit: the real daemon, under the seccomp filters systemd would
install for it. Run as a script, this file is the launcher: it loads the filters, then execs.

Only these rules: the mount, user and network namespaces the unit asks for are not set up."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import socket
import subprocess
import sys

ALLOW = 0x7FFF0000


def _errno_action(number: int) -> int:
    return 0x00050000 | (number & 0xFFFF)


def unavailable() -> str | None:
    """Why the filters cannot be put on a process here, or None."""
    if sys.platform != "linux":
        return "seccomp filters are Linux's"
    if ctypes.util.find_library("seccomp") is None:
        return "libseccomp is not installed"
    if shutil.which("systemd-analyze") is None:
        return "systemd-analyze (which names the system calls of each @group) is not installed"
    return None


def _groups() -> dict[str, list[str]]:
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, timeout=60).stdout
    groups: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif current is not None and line.strip() and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def _expand(names: list[str], groups: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    for name in names:
        found |= _expand(groups[name], groups) if name.startswith("@") else {name}
    return found


def rules(unit: str) -> dict:
    """The allowed system calls, the error number for the others and the allowed address
    families, as systemd reads them from the unit's lines."""
    groups = _groups()
    allowed: set[str] | None = None
    number, families = errno.EPERM, None
    for line in unit.splitlines():
        key, _, value = line.partition("=")
        if key == "SystemCallFilter":
            deny = value.startswith("~")
            names = _expand(value.lstrip("~").split(), groups)
            if allowed is None:  # the first line decides whether the filter is an allow list
                if deny:
                    raise ValueError("only a filter that starts with an allow list is handled here")
                allowed = set()
            allowed = allowed - names if deny else allowed | names
        elif key == "SystemCallErrorNumber":
            number = getattr(errno, value)
        elif key == "RestrictAddressFamilies":
            families = [int(getattr(socket, name)) for name in value.split()]
    return {"allowed": sorted(allowed or ()), "errno": number, "families": families}


def prefix(unit: str) -> list[str]:
    """The launcher to put before a command so that it runs under the unit's rules."""
    return [sys.executable, __file__, json.dumps(rules(unit)), "--"]


class _Compare(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


def _load(spec: dict) -> None:
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp"))
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_Compare)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]

    def add(ctx, action: int, name: str, *compare: _Compare) -> None:
        number = lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:  # not a system call of this architecture
            return
        array = (_Compare * len(compare))(*compare) if compare else None
        rc = lib.seccomp_rule_add_array(ctx, action, number, len(compare), array)
        if rc not in (0, -errno.EACCES, -errno.EEXIST):  # EACCES: the default action already
            raise OSError(-rc, f"seccomp rule for {name}")

    def load(ctx) -> None:
        rc = lib.seccomp_load(ctx)
        if rc != 0:
            raise OSError(-rc, "seccomp_load")

    if spec["families"] is not None:  # socket() of another family fails with EAFNOSUPPORT
        ctx = lib.seccomp_init(ALLOW)
        for family in set(range(64)) - set(spec["families"]):
            add(ctx, _errno_action(errno.EAFNOSUPPORT), "socket", _Compare(0, 4, family, 0))  # 4: equal
        load(ctx)
    ctx = lib.seccomp_init(_errno_action(spec["errno"]))  # loaded last: it may forbid seccomp() itself
    for name in spec["allowed"]:
        add(ctx, ALLOW, name)
    load(ctx)


if __name__ == "__main__":
    _load(json.loads(sys.argv[1]))
    os.execv(sys.argv[3], sys.argv[3:])
