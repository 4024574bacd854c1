"""A writer process for the reliability benchmark: mixed writes through the Python API as fast
as it can, printing one acknowledgement line after each write has committed. Whatever it
printed must be in the database after it (or the daemon beside it) is killed.

    python -m strata_bench.writer HOME NAME [SECONDS]
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time

from strata_daemon.app.memory import Memory
from strata_daemon.errors import StrataError


def ack(began: float, **fields) -> None:
    """One line per write, with how long it took (ms) from the call to its commit."""
    fields["ms"] = round((time.perf_counter() - began) * 1000, 2)
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def write(home: str, name: str, seconds: float) -> None:
    rng = random.Random(name)
    deadline = time.monotonic() + seconds
    async with await Memory.open(home, actor=f"writer-{name}") as mem:
        n, seen = 0, []
        while time.monotonic() < deadline:
            n += 1
            roll = rng.random()
            began = time.perf_counter()
            try:
                if roll < 0.55 or len(seen) < 2:
                    r = await mem.observe(f"{name} observation {n}: host web-{n % 7} status {rng.choice('AB')}")
                    seen.append(r["id"])
                    ack(began, op="observe", id=r["id"], content=f"{name} observation {n}")
                elif roll < 0.80:
                    key, value = f"{name} counter", str(n)
                    await mem.set_fact(key, value)
                    ack(began, op="fact", key=key, value=value)
                elif roll < 0.95:
                    await mem.activate([f"episode:{i}" for i in rng.sample(seen, 2)])
                    r = await mem.commit_working_set()
                    ack(began, op="web", committed=r["committed"])
                else:
                    r = await mem.render_capsule()
                    ack(began, op="capsule", status=r["status"])
            except StrataError as e:  # reported, never hidden: the benchmark counts these
                ack(began, op="error", kind=e.kind, message=e.message)


if __name__ == "__main__":
    asyncio.run(write(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 3600.0))
