"""Asking the running daemon. A read that needs the embedding model (a recall) costs a second
or more to load it in a new process; the daemon has it loaded, and answers over its Unix socket
in milliseconds. Without a daemon serving this namespace, the command works in process."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from urllib.parse import quote

from strata_daemon.errors import of_kind

CONNECT_SECONDS = 1.0
# A recall waits behind nothing in the daemon but its own queries; past this something is wrong,
# and the answer is not waited for (the recall may still be logged there).
ANSWER_SECONDS = 60.0


class _Unix(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("strata", timeout=ANSWER_SECONDS)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_SECONDS)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        sock.settimeout(ANSWER_SECONDS)
        self.sock = sock


def socket_of(home_arg: str | None, agent_arg: str | None) -> str | None:
    """The socket of the daemon serving the namespace this command line names; None when no
    daemon serves it. Reads strata.toml and the daemon's listener record, nothing else."""
    from strata_daemon.app import listeners
    from strata_daemon.config.home import resolve_home

    home = resolve_home(home_arg)
    agent = agent_arg or home.config()["agent.namespace"]
    return listeners.serving(home.state_dir, agent)


def ask(sock: str, path: str, body: dict, *, scope: str | None = None) -> dict | None:
    """The daemon's answer to POST PATH with BODY; None when it cannot be reached (the caller
    then works in process). An error it answers with is raised as the error it is."""
    conn = _Unix(sock)
    try:
        try:
            conn.connect()
        except OSError:  # gone since it wrote its record, or not yet listening
            return None
        target = path + (f"?scope={quote(scope, safe='')}" if scope else "")
        conn.request("POST", target, body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        answer = json.loads(response.read() or b"null")
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        conn.close()
    if response.status >= 400:
        raise of_kind(answer if isinstance(answer, dict) else {})
    return answer if isinstance(answer, dict) else None


def answered(args, path: str, body: dict) -> dict | None:
    """The answer of the daemon serving the command line's namespace to POST PATH, or None
    (no daemon, --no-daemon, or it cannot be reached)."""
    if getattr(args, "no_daemon", False):
        return None
    sock = socket_of(args.home, args.agent)
    if sock is None or not Path(sock).is_socket():
        return None
    answer = ask(sock, path, body, scope=getattr(args, "scope", None))
    if answer is not None:
        _settings_changed(args.home)
    return answer


def _settings_changed(home_arg: str | None) -> None:
    """A note when strata.toml changed since the daemon that answered read it: an edit shows no
    effect until the daemon reloads."""
    from strata_daemon.app import listeners, settings_seen
    from strata_daemon.config.home import resolve_home
    from strata_daemon.faces.cli.output import note

    home = resolve_home(home_arg)
    pid = (listeners.read(home.state_dir) or {}).get("pid")
    if settings_seen.changed_since(home.state_dir, home.config_path, pid if isinstance(pid, int) else None):
        note(f"strata: warning: {home.config_path} changed since the daemon read it; this answer used the daemon's "
             f"settings (`kill -HUP {pid}` or `systemctl reload strata` applies the file, `--no-daemon` reads it)")


def recall(args) -> dict | None:
    """`strata recall` answered by the daemon, or None."""
    from strata_daemon.app.public import parse_context_pairs

    body = {"query": args.query, "explain": args.explain, "context": parse_context_pairs(args.context),
            "kinds": args.kind or [], "include_archived": args.include_archived}
    body.update({k: v for k, v in (("k", args.k), ("mode", args.mode), ("hop", args.hop or None)) if v is not None})
    return answered(args, "/v1/recall", body)


def context(args, text: str) -> dict | None:
    """`strata context` (and the prompt hook) answered by the daemon, or None."""
    body = {"text": text, **{k: v for k, v in (("budget", args.budget), ("mode", args.mode)) if v is not None}}
    return answered(args, "/v1/context", body)
