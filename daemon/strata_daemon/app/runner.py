"""`strata run`: the long-running daemon. It takes the home's lock, runs the phases as the
schedule says (strata_daemon/app/phases/), watches the capsule, pings systemd's watchdog from the event
loop, serves the HTTP API when http.enabled, reloads strata.toml on SIGHUP, and on SIGTERM
or SIGINT asks the running phases to stop (each ends at its next check, its unfinished
transaction rolled back), checkpoints the WAL and exits 0."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Awaitable, Callable

from strata_daemon.app import listeners, settings_seen, wiring
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.lock import DaemonLock
from strata_daemon.app.phases.notify import notify, watchdog_interval
from strata_daemon.app.phases.registry import PHASES
from strata_daemon.app.phases.runs import actor, mark_interrupted
from strata_daemon.app.phases.scheduler import PhaseLoop
from strata_daemon.base import logs, stopping, timeutil
from strata_daemon.config.settings import AT_START
from strata_daemon.errors import StrataError
from strata_daemon.store.phases import last_started

log = logging.getLogger("strata")
DRAIN_SECONDS = 5.0


async def _watchdog(stop: asyncio.Event, every: float) -> None:
    # From the event loop itself: a loop blocked by a bug stops the pings and systemd restarts us.
    while not stop.is_set():
        notify("WATCHDOG=1")
        try:
            await asyncio.wait_for(stop.wait(), timeout=every)
        except asyncio.TimeoutError:
            pass


def _cadence(phase, cfg) -> str:
    every = phase.interval(cfg)
    if every is None:
        return f"{phase.name} after {phase.after}"
    return f"{phase.name} every {timeutil.duration(every)}" + (f" and after {phase.after}" if phase.after else "")


# The HTTP face, handed in by whoever starts the daemon (the CLI): (memory, stop event,
# tcp_optional=, report=) -> serves until stop. The daemon knows no face.
Serve = Callable[..., Awaitable[None]]


async def _http(mem: Memory, stop: asyncio.Event, serve: Serve, live: list[Memory]) -> None:
    """The HTTP API (http.enabled) in the daemon, on its own connection with actor `http`. The
    Unix socket is served whatever TCP does; a server that cannot start is logged and the daemon
    goes on without it. Each listener's state goes to state/http-listeners.json for the doctor."""
    def report(unix: dict, tcp: dict | None) -> None:
        try:
            listeners.write(mem.home.state_dir, unix, tcp, agent=mem.agent)
        except OSError as e:
            log.warning("http: cannot record the listeners' state in %s: %s", mem.home.state_dir, e.strerror or e)

    try:
        async with await Memory.open(mem.home, agent=mem.agent, actor="http") as api:
            # One embedding model in the process: the API's recalls use the phases' (loaded by
            # whichever needs it first, released after a phase as daemon.release_models says).
            api.models.share_embedder(mem.models)
            live.append(api)  # a reload reaches the API too: a share taken back is taken back there
            await serve(api, stop, tcp_optional=True, report=report)
    except StrataError as e:
        log.error("http: not serving: %s%s", e.message, f" ({e.hint})" if e.hint else "")


def _seen(mem: Memory) -> None:
    """Record which strata.toml the daemon runs on, for the commands it answers."""
    try:
        settings_seen.record(mem.home.state_dir, mem.home.config_path)
    except OSError as e:
        log.warning("cannot record which strata.toml was read in %s: %s", mem.home.state_dir, e.strerror or e)


def _reload(live: list[Memory], phases: PhaseLoop, verbose: bool) -> None:
    """SIGHUP: read strata.toml again, for the phases' Memory and the API's (LIVE). A broken
    file is reported and the running configuration kept, so a typo never stops the daemon."""
    mem = live[0]
    try:
        config = wiring.configuration(mem.home)
    except StrataError as e:
        log.error("configuration not reloaded, keeping the running one: %s%s", e.message,
                  f" ({e.hint})" if e.hint else "")
        return
    changed = mem.reconfigure(config)
    _seen(mem)
    for other in live[1:]:
        other.reconfigure(config)
    logs.setup("debug" if verbose else config["daemon.log_level"])
    phases.schedule()
    log.info("configuration reloaded from %s: %s", mem.home.config_path,
             f"changed {', '.join(changed)}" if changed else "nothing changed")
    later = [k for k in changed if k in AT_START]
    if later:
        log.warning("%s changed: read when the daemon starts, so the running one keeps the old value until "
                    "`systemctl restart strata` (or a new `strata run`)", ", ".join(later))


async def run(home, *, agent: str | None = None, verbose: bool = False, serve_http: Serve | None = None) -> int:
    """The daemon until a stop signal; `serve_http` serves the HTTP API when http.enabled."""
    mem = await Memory.open(home, agent=agent, actor="daemon")
    lock = DaemonLock(mem.home.state_dir / "daemon.lock")
    try:
        lock.acquire()
    except Exception:
        await mem.close()
        raise
    _seen(mem)
    stop = asyncio.Event()
    stopping.reset()

    def on_signal() -> None:
        stopping.request()  # seen by work in threads, which a task's cancel never reaches
        stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    mine = () if mem.db.dialect == "sqlite" else (actor(mem.db, "daemon"), actor(mem.db, "cli"))
    left = await mem.db.transact(mark_interrupted, timeutil.now(), mine)
    if left:
        log.info("%d phase run(s) left running by a process that ended are marked interrupted", left)
    phases = PhaseLoop(mem, stop, last_started=await mem.db.run(last_started))
    live = [mem]
    loop.add_signal_handler(signal.SIGHUP, _reload, live, phases, verbose)
    tasks = [asyncio.create_task(mem.watch_capsule(stop), name="capsule-watch"),
             asyncio.create_task(phases.run(), name="phases")]
    if mem.config["http.enabled"] and serve_http is not None:
        tasks.append(asyncio.create_task(_http(mem, stop, serve_http, live), name="http"))
    every = watchdog_interval()
    if every:
        tasks.append(asyncio.create_task(_watchdog(stop, every), name="watchdog"))
    try:
        status = await mem.status()
        log.info("strata started: home %s, database %s (%d bytes), namespace %s with %d memories",
                 status["home"], status["database"], status["database_bytes"], mem.agent, status["episodes"])
        log.info("phases: %s; stop with Ctrl-C or SIGTERM",
                 ", ".join(_cadence(p, mem.config) for p in PHASES))
        notify("READY=1")
        await stop.wait()
        log.info("strata stopping")
        notify("STOPPING=1")
    finally:
        stopping.request()
        stop.set()
        await phases.drain(DRAIN_SECONDS)
        await asyncio.gather(*tasks, return_exceptions=True)
        await mem.db.checkpoint()
        await mem.close()
        lock.release()
    log.info("strata stopped")
    return 0
