"""Agent namespaces: names every query of the data layer is scoped by."""

from __future__ import annotations

import re

from strata_daemon.errors import InvalidInput

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # fullmatch: "$" would let a final newline in
# The home namespace's capsule is capsule/CAPSULE.md and another's capsule/NAME.md: a namespace
# called CAPSULE (in any case, for case-insensitive file systems) would share the home's file.
RESERVED = frozenset({"capsule"})


def namespace_problem(name: object) -> str | None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return "must be 1-64 characters: letters, digits, '_', '.', '-' (starting with a letter or digit)"
    if name.casefold() in RESERVED:
        return "is reserved (capsule/CAPSULE.md is the home namespace's capsule file); choose another name"
    return None


def check_namespace(name: str) -> str:
    problem = namespace_problem(name)
    if problem:
        raise InvalidInput(f"agent namespace {name!r} {problem}")
    return name
