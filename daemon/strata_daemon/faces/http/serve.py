"""Serving the HTTP API: a Unix socket in the home (mode 0600) by default; loopback TCP only when
configured, and then only with a bearer token kept in the home (0600)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import secrets
import socket
import stat
from pathlib import Path
from typing import Callable

from strata_daemon.app.listeners import listener, stopped
from strata_daemon.app.memory import Memory
from strata_daemon.errors import ConfigError, Conflict, StorageError, StrataError

log = logging.getLogger("strata")

TOKEN_FILE = "http-token"


def socket_path(mem: Memory, given: str | None = None) -> Path:
    raw = mem.config["http.socket"] if given is None else given
    if not str(raw).strip():
        raise ConfigError("the socket path is empty", hint="give --socket PATH or set http.socket to a file path")
    path = Path(raw).expanduser()
    return path if path.is_absolute() else mem.home.root / path


def token(state_dir: Path) -> str:
    """The bearer token for TCP clients, made once (0600) and kept."""
    path = state_dir / TOKEN_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip()


def _clear_stale(path: Path) -> None:
    """Remove a socket file left by a server that did not stop cleanly, and nothing else: a
    path that is not a socket may be the user's data (the database itself, a folder)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a socket"
        raise ConfigError(f"{path} already exists and is {kind}; it is left as it is",
                          hint="give --socket (or http.socket) a path where no file exists, e.g. state/strata.sock")
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(str(path))
    except ConnectionRefusedError:
        path.unlink()  # a socket nobody answers: its server is gone
    except OSError as e:
        raise StorageError(f"cannot tell whether a server still listens on {path} ({e.strerror})",
                           hint="remove the socket file yourself if no server uses it") from None
    else:
        raise Conflict(f"another server already listens on {path}",
                       hint="the daemon (`strata status` says whether it runs) or another `strata serve` serves "
                            "this home already: stop it, or give --socket another path")
    finally:
        probe.close()


def unix_socket(path: Path) -> socket.socket:
    if len(os.fsencode(path)) > 100:
        raise ConfigError(f"http.socket {path} is too long for a Unix socket (about 100 bytes at most)",
                          hint="set http.socket to a shorter path")
    _clear_stale(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: only this user may connect
    try:
        sock.bind(str(path))
    except OSError as e:
        sock.close()
        raise StorageError(f"cannot listen on {path} ({e.strerror})",
                           hint="set http.socket to a path in an existing folder this user may write to") from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def _remove_own(path: Path, inode: int) -> None:
    """Unlink the socket file this server bound, unless something else took its place."""
    with contextlib.suppress(FileNotFoundError):
        st = path.lstat()
        if stat.S_ISSOCK(st.st_mode) and st.st_ino == inode:
            path.unlink()


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _tcp_hint(errno_: int | None, port: int) -> str:
    """What to do about a TCP listener that could not start, by the reason."""
    if errno_ == errno.EADDRINUSE:
        return (f"another program listens on port {port} (`ss -ltnp 'sport = :{port}'` names it): stop it, "
                "or choose another http.port")
    if errno_ == errno.EAFNOSUPPORT:
        return ("this address family is not allowed here: under systemd, a unit printed while http.port was unset "
                "forbids network sockets, so print it again (strata systemd print-unit), install it and restart; "
                "elsewhere, set http.host to 127.0.0.1")
    if errno_ == errno.EACCES:
        return "ports below 1024 need privileges strata does not have: choose an http.port above 1023"
    if errno_ == errno.EADDRNOTAVAIL:
        return "http.host is not an address of this machine: use 127.0.0.1"
    return "choose another http.port"


def tcp_socket(host: str, port: int, allow_remote: bool) -> socket.socket:
    if not is_loopback(host):
        if not allow_remote:
            raise ConfigError(f"http.host {host!r} is not a loopback address",
                              hint="set http.allow_remote = true to listen beyond this machine (not advised)")
        log.warning("http: listening on %s:%d, reachable from other machines; the bearer token is all that "
                    "protects it", host, port)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = None
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)  # refused where the address family is not allowed
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as e:
        if sock is not None:
            sock.close()
        # Another program holding the port is a conflict (exit 5), not a storage problem.
        kind = Conflict if e.errno == errno.EADDRINUSE else StorageError
        raise kind(f"cannot listen on {host}:{port} ({e.strerror or e})", hint=_tcp_hint(e.errno, port)) from None
    return sock


def _protocol(seconds: float):
    """uvicorn's h11 protocol with a deadline on each request's headers: without one, a client
    that opens a connection and sends part of a request holds it open for ever."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Deadlined(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _too_slow(self) -> None:
            waiting = self.cycle is None or self.cycle.response_complete  # no request under way
            if waiting and not self.transport.is_closing():
                self.transport.close()

        def on_response_complete(self) -> None:
            self._deadline.cancel()
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc) -> None:
            self._deadline.cancel()
            super().connection_lost(exc)

    return Deadlined


async def serve(mem: Memory, stop: asyncio.Event, *, socket_file: str | None = None,
                port: int | None = None, tcp_optional: bool = False,
                report: Callable[[dict, dict | None], None] | None = None) -> None:
    """Serve until `stop` is set: the Unix socket always, TCP too when a port is given or
    http.port is set. With `tcp_optional` (the daemon), a TCP listener that cannot start is
    logged and the Unix socket served alone. `report(unix, tcp)` hears each listener's state
    (listeners.listener) once serving starts, and again when it ends."""
    import uvicorn

    from strata_daemon.faces.http.app import build

    cfg = mem.config
    path = socket_path(mem, socket_file)
    port = int(cfg["http.port"] if port is None else port)
    if not 0 <= port <= 65535:
        raise ConfigError(f"port {port} is not between 0 and 65535")
    where = f"{cfg['http.host']}:{port}"
    unix, tcp = listener(str(path)), listener(where) if port else None
    sockets: list[socket.socket] = []
    bearer = None
    ended: BaseException | None = None
    try:
        if port:  # checked first: a refused address must not leave a socket file behind
            try:
                bearer = token(mem.home.state_dir)
                sockets.append(tcp_socket(cfg["http.host"], port, bool(cfg["http.allow_remote"])))
            except StrataError as e:
                if not tcp_optional:
                    raise
                bearer, tcp = None, listener(where, e)
                log.error("http: %s; serving %s only%s", e.message, path, f" ({e.hint})" if e.hint else "")
        sockets.insert(0, unix_socket(path))
        inode = path.lstat().st_ino
        app = build(mem, token=bearer, max_body_bytes=int(cfg["http.max_body_bytes"]),
                    body_seconds=float(cfg["http.request_timeout_seconds"]))
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", server_header=False,
                                http=_protocol(float(cfg["http.request_timeout_seconds"])))
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)
        await server.startup(sockets=sockets)
        log.info("http: serving namespace %s on %s%s", mem.agent, path,
                 f" and http://{where} (bearer token in {mem.home.state_dir / TOKEN_FILE})" if bearer else "")
        if report:
            report(unix, tcp)
        ticking = asyncio.create_task(server.main_loop())
        await stop.wait()
        server.should_exit = True
        await ticking
        await server.shutdown(sockets=sockets)
    except BaseException as e:
        ended = e
        raise
    finally:
        for s in sockets:
            s.close()
        if sockets and sockets[0].family == socket.AF_UNIX:
            _remove_own(path, inode)
        if report:
            report(stopped(unix, ended), stopped(tcp, ended))
