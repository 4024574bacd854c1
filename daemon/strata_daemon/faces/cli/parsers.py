"""Registering a command: its parser, with the common options and its description, and the
function that runs it."""

from __future__ import annotations

from typing import Callable


def adder(sub, common) -> Callable:
    """add(name, handler, help, **parser options) -> the new parser, for the subcommands of `sub`."""
    def add(name: str, handler: Callable, help_: str, **kw):
        p = sub.add_parser(name, parents=[common], help=help_, description=help_, **kw)
        p.set_defaults(handler=handler)
        return p
    return add


# Argument types. Python's own int() and float() read "0_5" as 5 (a digit separator), which a
# person typing a number never means; argparse names these functions in its errors.
def number(text: str) -> float:
    if "_" in text:
        raise ValueError(text)
    return float(text)


def integer(text: str) -> int:
    if "_" in text:
        raise ValueError(text)
    return int(text)
