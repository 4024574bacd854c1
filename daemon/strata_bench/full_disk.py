"""The deletion-compliance set's full disk (`strata bench forget`, its `full_disk` field).

A home lives on a filesystem of its own, small enough to fill: a tmpfs, which only root may
mount, so anywhere else the case says it did not run and why. A secret is stored among ordinary
memories; the disk is filled until a copy of the database no longer fits, and a backup is asked
for (it must fail saying the disk is full, and leave no partial copy); then the disk is filled to
its last byte and the purge is asked for, as a person meets it. A purge on a full disk may fail
(SQLite writes its changes to the WAL before the file): it must say the disk is full and lose
nothing. The person frees the space, as told, and asks again. Then every file on that
filesystem, the backups' folder included, is searched for the secret's bytes, and the home must
still hold every memory but the purged one. Each step runs the `strata` command a person runs.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIZE_MB = 48
SECRET = "QUOKKA-7741-FULLDISK"
MEMORIES = 400


def _strata(home: Path, *args: str, stdin: str | None = None) -> dict:
    """`strata --home HOME ARGS...` as a person runs it: its exit code and what it said."""
    env = {**os.environ, "STRATA_HOME": str(home)}
    env.pop("STRATA_KEY", None)
    r = subprocess.run([sys.executable, "-P", "-m", "strata_daemon", "--home", str(home), *args], input=stdin,
                       capture_output=True, text=True, env=env, timeout=600)
    said = (r.stderr.strip() or r.stdout.strip()).splitlines()
    return {"exit": r.returncode, "said": said[0] if said else "", "stdout": r.stdout}


def _fill(path: Path, leave: int) -> None:
    """Write PATH until the filesystem holds no more than LEAVE bytes free (0: until it refuses)."""
    chunk = b"\0" * (1 << 20)
    with open(path, "ab", buffering=0) as f:
        while True:
            st = os.statvfs(path)
            free = st.f_bavail * st.f_frsize
            if free <= leave:
                return
            try:
                f.write(chunk[:max(4096, min(len(chunk), free - leave))])
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                if leave or len(chunk) == 1:
                    return
                chunk = chunk[:len(chunk) // 2]  # the last pages, smaller and smaller


def _holding(root: Path, secret: str) -> list[str]:
    needle = secret.lower().encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and needle in p.read_bytes().lower())


def _case(disk: Path) -> dict:
    home = disk / "home"
    steps = {"init": _strata(home, "init", str(home))}
    lines = [json.dumps({"content": f"Routine reading {i}: queue depth {i % 17} on worker-{i % 5}"})
             for i in range(MEMORIES)]
    lines.insert(MEMORIES // 2, json.dumps({"content": f"The parcel locker for the lab opens with {SECRET}."}))
    steps["import"] = _strata(home, "import", "-", "--json", stdin="\n".join(lines) + "\n")
    database = home / "state" / "memory.db"
    filler = disk / "filler"
    _fill(filler, leave=database.stat().st_size // 2)  # a copy of the database no longer fits
    steps["backup_on_a_full_disk"] = _strata(home, "backup")
    partials = sorted(p.name for p in (home / "state" / "backups").glob("*partial*")) \
        if (home / "state" / "backups").is_dir() else []
    _fill(filler, leave=0)
    steps["purge_on_a_full_disk"] = _strata(home, "forget", "--matching", SECRET, "--purge", "--yes", "--json")
    filler.unlink()  # what the error told the person to do
    if steps["purge_on_a_full_disk"]["exit"] != 0:
        steps["purge_again"] = _strata(home, "forget", "--matching", SECRET, "--purge", "--yes", "--json")
    status = _strata(home, "status", "--json")
    memories = json.loads(status["stdout"])["episodes"] if status["exit"] == 0 else None
    holding = _holding(disk, SECRET)
    return {"ran": True, "disk_mb": SIZE_MB, "memories_before": MEMORIES + 1, "memories_after": memories,
            "lost": None if memories is None else MEMORIES - memories, "leaks": len(holding) + len(partials),
            "partials_left_by_the_failed_backup": partials, "files_holding_the_secret": holding,
            "steps": {name: {k: v for k, v in s.items() if k != "stdout"} for name, s in steps.items()}}


def full_disk() -> dict:
    """The full-disk case, or why it did not run."""
    if os.geteuid() != 0:
        return {"ran": False, "why": "a small filesystem of its own (tmpfs) needs root to mount"}
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        disk = Path(tmp) / "disk"
        disk.mkdir(mode=0o700)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m,mode=0700", "strata-bench", str(disk)],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            return {"ran": False, "why": f"mount: {mounted.stderr.strip() or 'refused'}"}
        try:
            return _case(disk)
        finally:
            subprocess.run(["umount", str(disk)], capture_output=True)
