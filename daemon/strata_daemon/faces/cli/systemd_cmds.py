"""`strata systemd print-unit`: systemd/strata.service (system) or strata-user.service (user)
with this machine's paths, the account to run as and the lines strata.toml decides."""

from __future__ import annotations

import os
import pwd
import sys
from dataclasses import replace
from pathlib import Path

from strata_daemon.config.home import Home, resolve_home, shipped
from strata_daemon.errors import ConfigError, InvalidInput
from strata_daemon.faces.cli.output import note

COMMANDS = ("systemd print-unit",)
UNITS = shipped("systemd")
TEMP_TREES = (Path("/tmp"), Path("/var/tmp"))  # what PrivateTmp=yes replaces


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def service_account(home: Path, given: str | None) -> tuple[pwd.struct_passwd, list[str]]:
    """The account the system unit runs strata as (the home's owner unless given), and warnings.
    Never root: a daemon that runs loop steps and loads native libraries has no use for it."""
    owner = home.stat().st_uid
    try:
        account = pwd.getpwnam(given) if given is not None else pwd.getpwuid(owner)
    except KeyError:
        if given is not None:
            raise ConfigError(f"there is no account named {given!r} on this machine",
                              hint="check the name, or create the account: "
                                   "useradd --system --shell /usr/sbin/nologin strata") from None
        raise ConfigError(f"{home} belongs to uid {owner}, which has no account name",
                          hint="give the account to run strata as with --run-as ACCOUNT") from None
    if account.pw_uid == 0:
        who = "--run-as root" if given is not None else f"{home} belongs to root, so the unit"
        raise ConfigError(f"{who} would run strata as root, with every file on the machine in reach",
                          hint="give strata an account of its own and the home to it: useradd --system --shell "
                               f"/usr/sbin/nologin strata && chown -R strata: {home}, then print the unit again "
                               "(or give --run-as ACCOUNT, the account that owns the home)")
    warnings = []
    if account.pw_uid != owner:
        warnings.append(f"{home} belongs to {_name(owner)}, not {account.pw_name}, so the service could not write "
                        f"it: chown -R {account.pw_name}: {home} before starting it")
    return account, warnings


def used_paths(home: Path, cfg, account_home: Path) -> list[Path]:
    """What the daemon reads or runs: the home, this install, the models and loop steps named in
    strata.toml. ProtectHome= must not hide any of them."""
    from strata_daemon.app.systemd import step_paths, under

    install = [Path(sys.executable), Path(sys.prefix), Path(sys.base_prefix), Path(__file__).parents[2]]
    paths = [home, *install, *(p.resolve() for p in install)]
    paths += [under(cfg[key], account_home) for key in ("embedding.model", "llm.model")
              if cfg[key] and ("/" in cfg[key] or cfg[key].startswith("~"))]
    for spec in [*cfg["loop.steps"].values(), *([cfg["loop.wake"]] if cfg["loop.wake"] else [])]:
        if isinstance(spec, dict):
            paths += step_paths(spec, account_home)
    return paths


def unit_text(home: Home, *, user: bool, account: pwd.struct_passwd | None = None) -> str:
    from strata_daemon.app.systemd import (
        credential_lines,
        fill,
        first_private,
        network_lines,
        order_lines,
        protect_home_lines,
        store_reach,
        unit_word,
    )
    from strata_daemon.app import sealing
    from strata_daemon.faces.http.serve import is_loopback

    unit = UNITS / ("strata-user.service" if user else "strata.service")
    try:
        text = unit.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {unit}: {e.strerror}", hint="reinstall strata: its systemd units are missing") from None
    cfg = home.config()
    tcp = bool(cfg["http.enabled"]) and int(cfg["http.port"]) != 0  # only `strata run` is under the unit
    account_home = Path(account.pw_dir) if account else Path.home()
    store = store_reach(cfg["store.url"])
    network = network_lines(tcp=tcp, loopback=is_loopback(cfg["http.host"]), system=not user, store=store)
    private = first_private(used_paths(home.root, cfg, account_home))
    return fill(text, {"STRATA": unit_word(str(Path(sys.executable).parent / "strata")),
                       "HOME": unit_word(str(home.root)),
                       "USER": account.pw_name if account else "", "NETWORK": "\n".join(network),
                       "ORDER": "\n".join(order_lines(store)),
                       "PROTECT_HOME": "\n".join(protect_home_lines(private)),
                       "CREDENTIAL": "\n".join(credential_lines(sealing.status(home)["sealed"],
                                                                 cfg["store.key_file"]))})


def cmd_print_unit(args) -> int:
    home = replace(resolve_home(args.home), named=True)
    home.require()  # a unit for a mistyped path (or a default home not made yet) would not start
    if args.user and args.run_as is not None:
        raise InvalidInput("--run-as is for the system unit; a user unit runs as the user whose manager starts it",
                           hint="drop --user to print the system unit, or drop --run-as")
    warnings = []
    account = None
    if args.user:
        if os.geteuid() == 0:
            warnings.append("a user unit for root runs strata as root; a system unit with --run-as ACCOUNT "
                            "runs it as an unprivileged account")
    else:
        account, warnings = service_account(home.root, args.run_as)
    if any(home.root == tree or tree in home.root.parents for tree in TEMP_TREES):
        warnings.append(f"{home.root} lies in a temporary folder: the unit's PrivateTmp=yes gives the daemon an "
                        "empty /tmp of its own, where the home is not; move the home elsewhere")
    text = unit_text(home, user=args.user, account=account)
    for warning in warnings:
        note(f"strata: warning: {warning}")
    sys.stdout.write(text)
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("systemd", parents=[common], help="systemd integration.")
    ss = p.add_subparsers(dest="systemd_command", metavar="ACTION", required=True)
    q = ss.add_parser("print-unit", parents=[common], help="Print the unit file for this home and this install.",
                      description="Print systemd/strata.service (or strata-user.service) with this home and this "
                                  "install's paths; network sockets are allowed only when the daemon serves TCP "
                                  "(http.enabled and http.port) or reaches a PostgreSQL store over TCP (store.url), "
                                  "so print it again after changing either. Save it "
                                  "as ~/.config/systemd/user/strata.service (--user) or "
                                  "/etc/systemd/system/strata.service. The system unit runs strata as the account "
                                  "that owns the home (or --run-as ACCOUNT), and never as root.")
    q.add_argument("--user", action="store_true", help="a user unit (systemctl --user)")
    q.add_argument("--run-as", metavar="ACCOUNT",
                   help="the system unit's User= (default: the account that owns the home; root is refused)")
    q.set_defaults(handler=cmd_print_unit)
