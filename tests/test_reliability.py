"""Crash and concurrency runs at a small size (the README's figures come from `strata bench
reliability` at full size), and no face listening on a network port."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from conftest import REPO
from http_helpers import listening_tcp_sockets

pytestmark = pytest.mark.slow


def test_killed_writers_and_daemon_lose_nothing_and_concurrent_use_sees_no_error(cli):
    r = cli.json("bench", "reliability", "--cycles", "4", "--seconds", "6", "--writers", "4", "--readers", "2")
    crash, busy = r["crash"], r["concurrency"]
    assert crash["cycles"] == 4 and crash["acknowledged_writes"] > 50, crash
    assert crash["missing_writes"] == 0 and crash["integrity"] == "ok" and crash["failures"] == []
    assert busy["writes"] > 50 and busy["reads"] > 50, busy
    assert busy["write_error_count"] == busy["read_error_count"] == busy["locked_errors"] == 0, busy
    assert busy["missing_writes"] == 0 and busy["integrity"] == "ok" and busy["daemon_exit"] == 0
    assert r["data_lost"] == 0 and r["ok"] is True


@pytest.mark.parametrize("command", [["run"], ["mcp"], ["tui"]])
def test_no_face_listens_on_a_network_port(home, command):
    proc = subprocess.Popen([sys.executable, "-m", "daemon", "--home", str(home), *command], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(4)  # started and idle
        assert proc.poll() is None, proc.communicate(timeout=10)
        assert listening_tcp_sockets(proc.pid) == set()
    finally:
        proc.kill()
        proc.communicate(timeout=30)
