"""Filled benchmark corpora kept between runs (`--corpus-cache DIR`).

Embedding a large corpus is most of a benchmark's time (100,000 memories: 10-35 minutes; a
million: hours), so the filled database is kept and copied into each run's home. It is built
in a home beside the kept file and only renamed into place when complete; a build that is
stopped resumes where it stopped: the import is redone if it did not finish (it is minutes
even at a million), the embedding goes on from the last committed batch.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Callable

from strata_bench import corpus, ingest
from strata_bench.ingest import populate
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import MIGRATIONS, copy_database, fact_judge, fact_rules, fact_statements
from strata_daemon.config.home import Home, init_home
from strata_daemon.config.load import settings_toml

_IMPORTED = "imported"  # marker file in a build's home: the import finished


async def _embedded(mem: Memory, mode: str, embed_progress) -> float | None:
    """Unless the mode is fast, embed every memory (the vector retriever needs them all); the
    seconds it took."""
    if mode == "fast":
        return None
    t = time.perf_counter()
    await mem.embed_pending(progress=embed_progress)
    return round(time.perf_counter() - t, 3)


def corpus_file(cache: Path, n: int, seed: int, mode: str, config) -> Path:
    """Where a filled corpus database is kept between runs: named by everything that shapes it
    (size, seed, embedded or not, the model, the schema, the generator's, importer's and fact
    capture's code), so a change to any of them makes a new one rather than reusing a stale one."""
    shape = b"".join(Path(m.__file__).read_bytes() for m in (corpus, ingest, fact_rules, fact_judge, fact_statements))
    shape += f"{len(MIGRATIONS)}:{config['embedding.model']}:{config['embedding.runtime']}".encode()
    what = "fts" if mode == "fast" else "embedded"
    return cache / f"corpus-{n}-{seed}-{what}-{hashlib.sha256(shape).hexdigest()[:16]}.db"


def _home(root: Path, settings: dict | None) -> Home:
    """A new (or resumed) home at `root`, configured with exactly `settings` when given."""
    home, _ = init_home(root)
    if settings:
        home.config_path.write_text(settings_toml(settings), encoding="utf-8")
    return home


async def _build(kept: Path, n: int, seed: int, mode: str, embed_progress, settings: dict | None) -> float | None:
    work = kept.with_suffix(".building")
    if work.is_dir() and not (work / _IMPORTED).is_file():
        shutil.rmtree(work)  # stopped during the import: start it again
    kept.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    home = _home(work, settings)
    imported = (work / _IMPORTED).is_file()
    async with await Memory.open(home, actor="bench") as mem:
        if not imported:
            await populate(mem, n, seed)
            (work / _IMPORTED).touch(mode=0o600)
        embed_s = await _embedded(mem, mode, embed_progress)
    partial = kept.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    copy_database(home.db_path, partial)
    os.replace(partial, kept)
    shutil.rmtree(work)
    return embed_s


async def filled_home(root: Path, n: int, seed: int, mode: str, embed_progress: Callable[[int], None] | None = None,
                      cache: Path | None = None, settings: dict | None = None) -> tuple[Home, float | None, bool]:
    """A new home at `root` holding the corpus (embedded unless fast), taken from `cache` when
    a run before kept it there: (home, seconds the embedding took in this run, whether the
    corpus came from the cache as it was). `settings` replace the defaults of the home's
    configuration (`--set`)."""
    home = _home(root, settings)
    if cache is None:
        async with await Memory.open(home, actor="bench") as mem:
            await populate(mem, n, seed)
            return home, await _embedded(mem, mode, embed_progress), False
    kept = corpus_file(cache, n, seed, mode, home.config())
    embed_s, cached = None, kept.is_file()
    if not cached:
        embed_s = await _build(kept, n, seed, mode, embed_progress, settings)
    copy_database(kept, home.db_path)
    return home, embed_s, cached
