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
