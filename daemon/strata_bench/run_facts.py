"""`strata bench capture`, `updates`, `truth`, `redaction` and `sealed`: the commands of the benchmarks of facts and of
knowledge updates (run.py holds the others)."""

from __future__ import annotations

from pathlib import Path

from strata_daemon.errors import InvalidInput
from strata_daemon.faces.cli.output import Progress, emit

from strata_bench.run import _report, _save


async def cmd_capture(args) -> int:
    from strata_bench.capture import bench_capture, format_capture

    result = bench_capture()
    _save(result, args.out)
    emit(result, args.json, format_capture)
    return 0


async def cmd_redaction(args) -> int:
    from strata_bench.redaction import bench_redaction, format_redaction

    result = await bench_redaction(only=args.set, misses=args.misses)
    _save(result, args.out)
    emit(result, args.json, format_redaction)
    return 0


async def cmd_updates(args) -> int:
    from strata_bench.updates import bench_updates, format_updates
    from strata_bench.updates import steps as updates_steps

    if args.n < 0:
        raise InvalidInput("--n must be 0 or more")
    bar = Progress(updates_steps(args.n), "updates (homes filled and embedded)", unit="memories")
    result = await bench_updates(background=args.n, seed=args.seed, k=args.k, only=args.set, progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, format_updates)
    return 0


async def cmd_truth(args) -> int:
    from strata_bench.newest import bench_truth, format_truth
    from strata_bench.newest import steps as truth_steps

    if args.n < 0 or not 32 <= args.budget <= 100000:
        raise InvalidInput("--n must be 0 or more and --budget between 32 and 100000")
    bar = Progress(truth_steps(args.n, args.set), "truth (homes filled and embedded)", unit="memories")
    result = await bench_truth(background=args.n, seed=args.seed, budget=args.budget, only=args.set,
                               misses=args.misses, progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, format_truth)
    return 0


async def cmd_sealed(args) -> int:
    from strata_bench.sealed import bench_sealed

    bar = Progress(args.queries + 20, f"recall, plain and sealed ({args.n} memories)", unit="queries")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    result = await bench_sealed(args.n, queries=args.queries, ingest_n=args.ingest, seed=args.seed,
                                cache=Path(args.corpus_cache).expanduser() if args.corpus_cache else None,
                                progress=bar.advance, embed_progress=embed_bar.advance)
    embed_bar.close()
    return _report(result, args, bar)
