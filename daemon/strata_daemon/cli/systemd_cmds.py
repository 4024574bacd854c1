"""`strata systemd print-unit`: systemd/strata.service (system) or strata-user.service (user)
with this machine's paths."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

from ..errors import ConfigError
from ..home import resolve_home, shipped

COMMANDS = ("systemd print-unit",)
UNITS = shipped("systemd")


def unit_text(home: Path, *, user: bool) -> str:
    unit = UNITS / ("strata-user.service" if user else "strata.service")
    try:
        text = unit.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {unit}: {e.strerror}", hint="reinstall strata: its systemd units are missing") from None
    strata = Path(sys.executable).parent / "strata"
    return text.replace("@STRATA@", str(strata)).replace("@HOME@", str(home)).replace("@USER@", getpass.getuser())


def cmd_print_unit(args) -> int:
    home = resolve_home(args.home)
    home.require()  # a unit for a mistyped path would start a daemon on an empty home
    sys.stdout.write(unit_text(home.root, user=args.user))
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("systemd", parents=[common], help="systemd integration.")
    ss = p.add_subparsers(dest="systemd_command", metavar="ACTION", required=True)
    q = ss.add_parser("print-unit", parents=[common], help="Print the unit file for this home and this install.",
                      description="Print systemd/strata.service (or strata-user.service) with this home and this install's paths. "
                                  "Save it as ~/.config/systemd/user/strata.service (--user) or "
                                  "/etc/systemd/system/strata.service.")
    q.add_argument("--user", action="store_true", help="a user unit (systemctl --user)")
    q.set_defaults(handler=cmd_print_unit)
