"""`strata systemd print-unit`: the units carry this install and the home's owner (never root),
allow network sockets only when the daemon listens on TCP, say why for every hardening option,
pass `systemd-analyze verify`, and the system unit's exposure stays low in `systemd-analyze
security`. The real daemon runs under the printed unit's system call rules."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import seccomp_helpers
from conftest import write_config
from http_helpers import doctor_on_http, free_port, listening_tcp_sockets, serving
from strata_daemon.app.systemd import first_private, step_paths

EXPOSURE_AT_MOST = 2.5  # systemd-analyze's scale: 0 (safe) to 10 (exposed)
TCP = "[http]\nenabled = true\nport = {port}\n"
STORE = '[store]\nurl = "{url}"\n'
CONFIGS = {"socket only": "", "tcp": TCP.format(port=8765),
           "postgres elsewhere": STORE.format(url="postgresql://strata:pw@db.example:5432/strata")}
NO_SECCOMP = seccomp_helpers.unavailable()
NO_ANALYZE = "systemd-analyze is not installed" if shutil.which("systemd-analyze") is None else None
START_TIMEOUT = 60.0


@pytest.fixture
def service_home(home):
    """A home owned by an account that is not root, as a system service's is: when the tests
    run as root, the home is given to the first system account (not `nobody`, which systemd
    warns about)."""
    if os.geteuid() == 0:
        account = next((p for p in sorted(pwd.getpwall(), key=lambda p: p.pw_uid)
                        if p.pw_uid != 0 and p.pw_name != "nobody"), None)
        if account is None:
            pytest.skip("running as root, with no other account to give the home to")
        for path in [home, *home.rglob("*")]:
            os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    return home


def owner(home: Path) -> str:
    return pwd.getpwuid(home.stat().st_uid).pw_name


def unit(cli, *flags: str) -> str:
    return cli("systemd", "print-unit", *flags, check=True).out


def options(text: str) -> list[str]:
    return [line for line in text.splitlines() if "=" in line and not line.startswith("#")]


def test_the_units_carry_this_install_and_the_homes_owner(cli, service_home):
    system, user = unit(cli), unit(cli, "--user")
    strata = Path(sys.executable).parent / "strata"
    for text in (system, user):
        assert f"ExecStart={strata} --home {service_home} run" in text and f"ReadWritePaths={service_home}" in text
        assert {"Type=notify", "WatchdogSec=60", "NoNewPrivileges=yes", "PrivateUsers=yes",
                "SystemCallFilter=@system-service", "SystemCallFilter=~@privileged @resources"} <= set(options(text))
        assert not re.search(r"@[A-Z_]+@", text)  # every placeholder filled in
        for line in text.splitlines():  # systemd has no trailing comments: a comment is a line of its own
            assert "#" not in line or line.startswith("#"), line
    assert f"User={owner(service_home)}" in options(system) and "WantedBy=multi-user.target" in system
    assert {"CapabilityBoundingSet=", "ProtectProc=invisible"} <= set(options(system))
    assert not [o for o in options(user) if o.startswith(("User=", "CapabilityBoundingSet=", "ProtectProc="))]
    assert "WantedBy=default.target" in user


@pytest.mark.parametrize("flags", [(), ("--user",)])
@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_every_hardening_option_says_why(cli, service_home, flags, config):
    write_config(service_home, config)
    lines = unit(cli, *flags).splitlines()
    start, end = next(i for i, line in enumerate(lines) if line.startswith("# Hardening")), lines.index("[Install]")
    hardening = [i for i in range(start, end) if lines[i] and not lines[i].startswith("#")]
    assert len(hardening) > 20
    for i in hardening:
        assert lines[i - 1].startswith("#"), f"{lines[i]} has no comment line above it"


@pytest.mark.parametrize("config, families, system_ip, private_network", [
    ("", "AF_UNIX", ["IPAddressDeny=any"], True),
    (TCP.format(port=8765), "AF_UNIX AF_INET AF_INET6", ["IPAddressAllow=localhost", "IPAddressDeny=any"], False),
    ("[http]\nenabled = false\nport = 8765\n", "AF_UNIX", ["IPAddressDeny=any"], True),  # `strata run` opens no port
    ('[http]\nenabled = true\nport = 8765\nhost = "0.0.0.0"\nallow_remote = true\n', "AF_UNIX AF_INET AF_INET6",
     [], False),
], ids=["socket only", "tcp", "port but not enabled", "remote"])
def test_network_sockets_only_when_the_daemon_listens_on_tcp(cli, service_home, config, families, system_ip,
                                                             private_network):
    write_config(service_home, config)
    system, user = options(unit(cli)), options(unit(cli, "--user"))
    for opts in (system, user):
        assert [o for o in opts if o.startswith("RestrictAddressFamilies=")] == [f"RestrictAddressFamilies={families}"]
        assert ("PrivateNetwork=yes" in opts) == private_network
    assert [o for o in system if o.startswith("IPAddress")] == system_ip
    assert not [o for o in user if o.startswith("IPAddress")]  # a user manager cannot filter addresses


@pytest.mark.parametrize("url, families, system_ip, private_network, online", [
    ("postgresql://strata:pw@db.example:5432/strata", "AF_UNIX AF_INET AF_INET6", [], False, True),
    ("postgresql://strata@localhost:5432/strata", "AF_UNIX AF_INET AF_INET6",
     ["IPAddressAllow=localhost", "IPAddressDeny=any"], False, False),
    ("postgresql://strata@[::1]/strata", "AF_UNIX AF_INET AF_INET6", ["IPAddressAllow=localhost", "IPAddressDeny=any"],
     False, False),
    ("postgresql:///strata?host=/run/postgresql", "AF_UNIX", ["IPAddressDeny=any"], True, False),
], ids=["another machine", "this machine", "this machine, IPv6", "a Unix socket"])
def test_the_unit_reaches_a_postgresql_store_where_store_url_says(cli, service_home, url, families, system_ip,
                                                                  private_network, online):
    write_config(service_home, STORE.format(url=url))
    system, user = options(unit(cli)), options(unit(cli, "--user"))
    for opts in (system, user):
        assert [o for o in opts if o.startswith("RestrictAddressFamilies=")] == [f"RestrictAddressFamilies={families}"]
        assert ("PrivateNetwork=yes" in opts) == private_network
        assert ("Wants=network-online.target" in opts) == online
        assert [o for o in opts if o.startswith("After=")] == [
            "After=local-fs.target network-online.target" if online else "After=local-fs.target"]
    assert [o for o in system if o.startswith("IPAddress")] == system_ip
    # The API on another interface as well: no address filter may cut either off.
    write_config(service_home, STORE.format(url=url) + '[http]\nenabled = true\nport = 8765\nhost = "0.0.0.0"\n'
                 'allow_remote = true\n')
    assert not [o for o in options(unit(cli)) if o.startswith("IPAddress")]


def test_the_system_unit_never_runs_strata_as_root(cli, home):
    r = cli("systemd", "print-unit", "--run-as", "root")
    assert r.returncode == 7 and r.out == "" and "would run strata as root" in r.err and "--run-as ACCOUNT" in r.err
    r = cli("systemd", "print-unit")
    if home.stat().st_uid == 0:  # the tests run as root: the home is root's, and refused
        assert r.returncode == 7 and r.out == "" and f"{home} belongs to root" in r.err
        assert f"chown -R strata: {home}" in r.err and "useradd --system" in r.err
    else:
        assert r.returncode == 0 and f"User={owner(home)}" in options(r.out)


def test_another_account_than_the_owner_is_warned_and_a_wrong_one_refused(cli, service_home):
    other = next(p.pw_name for p in pwd.getpwall() if p.pw_uid not in (0, service_home.stat().st_uid))
    r = cli("systemd", "print-unit", "--run-as", other, check=True)
    assert f"User={other}" in options(r.out)
    assert f"belongs to {owner(service_home)}, not {other}" in r.err and f"chown -R {other}: {service_home}" in r.err
    r = cli("systemd", "print-unit", "--run-as", "no-such-account-here")
    assert r.returncode == 7 and r.out == "" and "no account named 'no-such-account-here'" in r.err
    r = cli("systemd", "print-unit", "--user", "--run-as", other)
    assert r.returncode == 4 and r.out == "" and "--run-as is for the system unit" in r.err


def test_a_home_in_tmp_is_named_since_the_units_private_tmp_hides_it(cli, service_home):
    r = cli("systemd", "print-unit", check=True)
    in_tmp = any(p in (Path("/tmp"), Path("/var/tmp")) for p in service_home.parents)
    assert ("lies in a temporary folder" in r.err) == in_tmp


def test_protect_home_hides_home_unless_something_the_daemon_uses_lies_there(cli, service_home):
    assert first_private([Path("/srv/strata"), Path("/usr/bin/python3"), Path("/homes/x")]) is None
    assert first_private([Path("/srv/strata"), Path("/root/.pyenv/bin/python3"), Path("/home/a")]) \
        == Path("/root/.pyenv/bin/python3")
    assert first_private([Path("/run/user/1000/strata")]) == Path("/run/user/1000/strata")
    step = {"command": "~/bin/check-mail --new", "cwd": "/home/agent", "env": {"MAILDIR": "/home/agent/Maildir",
                                                                                "LANG": "C"}}
    assert step_paths(step, Path("/home/agent")) == [Path("/home/agent/bin/check-mail"), Path("/home/agent"),
                                                     Path("/home/agent/Maildir")]
    assert step_paths({"command": ["systemctl", "--failed", "--no-legend"]}, Path("/home/a")) == []
    assert step_paths({"command": "echo 'unbalanced"}, Path("/home/a")) == []

    text = unit(cli)  # whether it says yes depends on where this Python lives; what it names must be private
    named = re.search(r"^# /home, /root and /run/user read-only, not hidden: it uses (.+)\.$", text, re.M)
    assert ("ProtectHome=read-only" in options(text)) == (named is not None)
    assert named is None or first_private([Path(named.group(1))]) is not None
    write_config(service_home, '[loop.steps.mail]\ncommand = "check-mail"\ncwd = "/home/agent"\n')
    assert "ProtectHome=read-only" in options(unit(cli))


@pytest.mark.parametrize("flags", [(), ("--user",)])
@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.skipif(NO_ANALYZE is not None, reason=str(NO_ANALYZE))
def test_systemd_accepts_every_line_of_the_units(cli, service_home, tmp_path, flags, config):
    write_config(service_home, config)
    path = tmp_path / "strata.service"
    path.write_text(unit(cli, *flags), encoding="utf-8")
    # The system manager checks both: every directive of the user unit is valid there too.
    r = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.skipif(NO_ANALYZE is not None, reason=str(NO_ANALYZE))
def test_systemd_analyze_rates_the_system_unit_safe(cli, service_home, tmp_path, config):
    write_config(service_home, config)
    path = tmp_path / "strata.service"
    path.write_text(unit(cli), encoding="utf-8")
    r = subprocess.run(["systemd-analyze", "security", "--offline=true", str(path)], capture_output=True, text=True,
                       timeout=120)
    if r.returncode and "offline" in r.stderr:  # --offline came with systemd 250
        pytest.skip(f"this systemd-analyze cannot rate a unit file offline: {r.stderr.strip()}")
    found = re.search(r"Overall exposure level for strata\.service: (\d+\.\d+)", r.stdout)
    assert r.returncode == 0 and found, r.stdout + r.stderr
    assert float(found.group(1)) <= EXPOSURE_AT_MOST, r.stdout


@pytest.mark.slow
@pytest.mark.skipif(NO_SECCOMP is not None, reason=str(NO_SECCOMP))
def test_the_daemon_embeds_serves_and_runs_steps_under_the_units_system_call_rules(cli, service_home):
    port = free_port()
    write_config(service_home, TCP.format(port=port) + "[daemon]\nheartbeat_seconds = 1\n[experimental]\n\"daemon.embed_interval_seconds\" = 1\n"
                 '[loop.steps.uptime]\ncommand = "echo machine is up"\n')
    rules = seccomp_helpers.prefix(unit(cli))
    with serving(service_home, command="run", prefix=rules) as api:
        assert api("POST", "/v1/memories", {"content": "Ines likes green tea in the morning"})[0] == 201
        deadline = time.monotonic() + START_TIMEOUT
        while api("GET", "/v1/status")[1]["embedding_backlog"]:  # onnxruntime loaded and ran under the filter
            assert time.monotonic() < deadline, "the memory was not embedded"
            time.sleep(0.2)
        hits = api("POST", "/v1/recall", {"query": "beverage preference", "mode": "balanced"})[1]["hits"]
        assert [h["content"] for h in hits] == ["Ines likes green tea in the morning"]
        while not api("POST", "/v1/recall", {"query": "machine up", "mode": "fast"})[1]["hits"]:  # a step ran
            assert time.monotonic() < deadline, "the loop step's output was not stored"
            time.sleep(0.2)
        token = (service_home / "state" / "http-token").read_text().strip()
        api.port = port  # from strata.toml: `run` takes no --port
        assert api("GET", "/v1/status", tcp=True, headers={"Authorization": f"Bearer {token}"})[0] == 200
        code, http = doctor_on_http(cli, service_home)
        assert [f["status"] for f in http] == ["ok"] and f"tcp 127.0.0.1:{port}" in http[0]["message"]
    assert api.proc.returncode == 0 and "Traceback" not in api.stderr, api.stderr


@pytest.mark.slow
@pytest.mark.skipif(NO_SECCOMP is not None, reason=str(NO_SECCOMP))
def test_a_port_set_after_the_unit_was_printed_leaves_the_socket_served_and_the_doctor_names_the_fix(
        cli, service_home):
    rules = seccomp_helpers.prefix(unit(cli))  # printed without http.port: Unix sockets only
    port = free_port()
    write_config(service_home, TCP.format(port=port))
    with serving(service_home, command="run", prefix=rules) as api:
        assert api("GET", "/v1/status")[0] == 200
        assert not listening_tcp_sockets(api.proc.pid)
        code, http = doctor_on_http(cli, service_home)
        assert api.proc.poll() is None  # the daemon runs on
    down = next(f for f in http if f["status"] == "error")
    assert f"127.0.0.1:{port} is configured but down" in down["message"] and "not supported" in down["message"]
    assert "strata systemd print-unit" in down["fix"] and "restart" in down["fix"]
    assert code != 0 and any(f["status"] == "ok" and "unix" in f["message"] for f in http)
    assert "serving" in api.stderr and "only" in api.stderr and "Traceback" not in api.stderr


@pytest.mark.skipif(NO_ANALYZE is not None, reason=str(NO_ANALYZE))
def test_a_home_whose_path_holds_a_space_or_a_percent_is_one_word_to_systemd(tmp_path):
    from conftest import CLI
    from strata_daemon.config.home import init_home
    root, _ = init_home(tmp_path / "my agent 100%")
    home = root.root
    text = CLI(home)("systemd", "print-unit", "--user", check=True).out
    quoted = f'"{str(home).replace("%", "%%")}"'
    assert f"ReadWritePaths={quoted}" in text and f"--home {quoted} run" in text
    path = tmp_path / "strata.service"
    path.write_text(text, encoding="utf-8")
    r = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr
