"""What each `strata bench` command does: check its options, run the benchmark (imported only
now: a benchmark's code loads what it measures), show the result."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from strata_daemon.config.load import parse_assignment
from strata_daemon.errors import InvalidInput
from strata_daemon.faces.cli.output import Progress, emit


def _table(r: dict) -> str:
    skip = {"baseline", "benchmark"}
    lines = [f"{r['benchmark']} benchmark"] + [f"  {k:<26} {v}" for k, v in r.items() if k not in skip]
    lines += [f"  baseline {k:<17} {v}" for k, v in r.get("baseline", {}).items()]
    return "\n".join(lines)


def _save(r: dict, out: str | None) -> None:
    if out:
        Path(out).write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")


def _report(result: dict, args, bar: Progress) -> int:
    """The end of every benchmark command: the bar done, the JSON kept (--out), the result shown."""
    bar.close()
    _save(result, args.out)
    emit(result, args.json, _table)
    return 0


def _cache(args) -> Path | None:
    return Path(args.corpus_cache).expanduser() if args.corpus_cache else None


async def cmd_ingest(args) -> int:
    from strata_bench.ingest import bench_ingest

    bar = Progress(args.n, "ingest", unit="observations")
    result = await bench_ingest(args.n, seed=args.seed, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_recall(args) -> int:
    from strata_bench.recall import bench_recall

    settings = dict(parse_assignment(a) for a in args.set)
    if not 0.0 <= args.cold <= 1.0 or not 0 <= args.fresh <= 10_000:
        raise InvalidInput("--cold is a share of the memories, between 0 and 1; --fresh a count, 0 to 10,000")
    bar = Progress(args.queries + 20, f"recall ({args.n} memories)", unit="queries")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    result = await bench_recall(args.n, mode=args.mode, queries=args.queries, k=args.k, seed=args.seed,
                                progress=bar.advance, embed_progress=embed_bar.advance, cache=_cache(args),
                                settings=settings, cold=args.cold, fresh=args.fresh)
    return _report(result, args, bar)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",")]
    except ValueError:
        raise InvalidInput(f"--n takes sizes separated by commas, e.g. 10000,100000; not {text!r}") from None
    if not sizes or min(sizes) < 100 or max(sizes) > 10_000_000:
        raise InvalidInput("each size must be between 100 and 10,000,000 memories")
    return sizes


async def cmd_scale(args) -> int:
    from strata_bench.scale import measure as measure_scale, steps as scale_steps
    from strata_bench.sizes import markdown as scale_table, run_sizes

    sizes = _sizes(args.n)
    if args.queries < 1 or args.idle_seconds < 1:
        raise InvalidInput("need --queries >= 1 and --idle-seconds >= 1")
    if len(sizes) == 1:
        bar = Progress(scale_steps(sizes[0], args.queries, args.idle_seconds), f"scale ({sizes[0]:,} memories)",
                       unit="steps")
        embed_bar = Progress(sizes[0], "embedding the corpus", unit="memories")
        measured = [await measure_scale(sizes[0], queries=args.queries, seed=args.seed,
                                        idle_seconds=args.idle_seconds, cache=_cache(args), progress=bar.advance,
                                        embed_progress=embed_bar.advance)]
        bar.close()
    else:
        measured = await asyncio.to_thread(run_sizes, sizes, queries=args.queries, seed=args.seed,
                                           idle_seconds=args.idle_seconds, cache=_cache(args))
    if args.size_out:  # a child of a several-size run: its parent reports
        Path(args.size_out).write_text(json.dumps(measured[0]) + "\n", encoding="utf-8")
        return 0
    result = {"benchmark": "scale", "seed": args.seed, "queries": args.queries, "cpus": os.cpu_count(),
              "sizes": measured}
    if args.out:
        folder = Path(args.out)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        (folder / "scale.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        (folder / "scale.md").write_text(scale_table(result), encoding="utf-8")
    emit(result, args.json, scale_table)
    return 0


async def cmd_embed(args) -> int:
    from strata_bench.embed import bench_embed
    from strata_daemon.config.home import resolve_home

    cfg = resolve_home(args.home).config()
    bar = Progress(args.n * (2 if args.baseline else 1), "embed", unit="texts")
    result = await asyncio.to_thread(bench_embed, args.n, seed=args.seed, model=cfg["embedding.model"],
                                     runtime=cfg["embedding.runtime"], threads=int(cfg["embedding.threads"]),
                                     baseline=args.baseline, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_locomo(args) -> int:
    from strata_bench.folds import GRID, bench_folds, format_folds, grid_points
    from strata_bench.lived import bench_locomo_lived, format_lived, lived_steps, split
    from strata_bench.locomo import bench_locomo, format_table
    from strata_bench.locomo_data import load_locomo
    from strata_bench.locomo_home import home_settings, store_steps
    from strata_daemon.config.home import resolve_home

    conversations = load_locomo(args.data, args.conversations)  # bad data fails before any work
    settings = home_settings(resolve_home(args.home).config())
    if args.folds is not None:
        if not 2 <= args.folds <= len(conversations):
            raise InvalidInput(f"--folds takes 2 to {len(conversations)} (the conversations)")
        grid = _grid(args.grid) if args.grid else GRID
        questions = sum(len(c.questions) for c in conversations)
        points = len(grid_points(grid))
        # lived copies: their first half asked once, their second half ranked by every point
        lived = sum(len(first) + len(measured) * points
                    for first, measured in map(split, (c.questions for c in conversations))) if args.lived else 0
        bar = Progress(store_steps(conversations, args.mode) + questions * points + lived,
                       "locomo folds (store, embed, every grid point)", unit="steps")
        result = await bench_folds(args.data, conversations, folds=args.folds, mode=args.mode, settings=settings,
                                   grid=grid, lived=args.lived, progress=bar.advance, store_progress=bar.advance)
        bar.close()
        _save(result, args.out)
        emit(result, args.json, format_folds)
        return 0
    # One bar: storing and asking alternate per conversation, and two bars would overwrite each other's line.
    steps = store_steps(conversations, args.mode) + sum(len(c.questions) for c in conversations)
    if args.lived:
        bar = Progress(steps + lived_steps(conversations), "locomo (store, embed, ask; lived copy: ask, night, ask)",
                       unit="steps")
        result = await bench_locomo_lived(args.data, conversations, mode=args.mode, settings=settings,
                                          progress=bar.advance, store_progress=bar.advance)
    else:
        bar = Progress(steps, "locomo (store, embed, ask)", unit="steps")
        result = await bench_locomo(args.data, conversations, mode=args.mode, settings=settings,
                                    progress=bar.advance, store_progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, (lambda r: format_table(r) + "\n" + format_lived(r)) if args.lived else format_table)
    return 0


def _grid(assignments: list[str]) -> dict:
    """`--grid KEY=V1,V2,...` (repeatable) as {key: values}, each value checked as the setting's."""
    grid = {}
    for a in assignments:
        key, _, values = a.partition("=")
        if not values:
            raise InvalidInput(f"--grid takes KEY=V1,V2,..., not {a!r}")
        grid[key.strip()] = tuple(parse_assignment(f"{key}={v}")[1] for v in values.split(","))
    return grid


async def cmd_lived(args) -> int:
    from strata_bench import months, months_report
    from strata_bench.locomo_data import load_locomo
    from strata_bench.locomo_home import home_settings
    from strata_daemon.config.home import resolve_home

    if args.tail_days < 0 or args.checkpoint_days < 1 or args.own_words < 1:
        raise InvalidInput("need --tail-days >= 0, --checkpoint-days >= 1 and --own-words >= 1")
    conversations = load_locomo(args.data, args.conversations)
    settings = home_settings(resolve_home(args.home).config())
    bar = Progress(months.days_of(conversations, args.tail_days), "lived (simulated days)", unit="days")
    result = await months.bench_lived(args.data, conversations, mode=args.mode, settings=settings, asking=args.asking,
                                      tail_days=args.tail_days, checkpoint_days=args.checkpoint_days,
                                      own_words_sample=args.own_words, reworded=args.reworded, progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, months_report.format_months)
    return 0


async def cmd_arena(args) -> int:
    from strata_bench.arena import bench_arena, format_table as arena_table, steps as arena_steps
    from strata_bench.locomo_data import load_locomo
    from strata_bench.locomo_home import home_settings
    from strata_daemon.app import wiring
    from strata_daemon.config.home import resolve_home

    conversations = load_locomo(args.data, args.conversations)
    config = resolve_home(args.home).config()
    bar = Progress(arena_steps(conversations, len(wiring.arms(config))),
                   "arena (train, run, hold out, each arm)", unit="questions")
    result = await bench_arena(args.data, conversations, settings=home_settings(config), progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, arena_table)
    return 0


async def cmd_facts(args) -> int:
    from strata_bench.facts import bench_facts

    if args.keys < 1 or args.history < args.keys or args.ops < 1:
        raise InvalidInput("need --keys >= 1, --history >= --keys and --ops >= 1")
    bar = Progress(args.history + 5 * args.ops, "facts (history, then get/as-of/set/baseline)", unit="steps")
    result = await bench_facts(args.keys, args.history, args.ops, seed=args.seed, progress=bar.advance)
    return _report(result, args, bar)








async def cmd_web(args) -> int:
    from strata_bench.web import DECAY_RUNS, WARMUP, bench_web

    if args.nodes < 10 or not args.nodes <= args.edges <= args.nodes * (args.nodes - 1) // 4 or args.spreads < 1:
        raise InvalidInput("need --nodes >= 10, --nodes <= --edges <= nodes x (nodes - 1) / 4 and --spreads >= 1")
    if args.deep_n and (args.deep_n < 10 or args.queries < 1):
        raise InvalidInput("need --deep-n >= 10 (or 0 to skip deep recall) and --queries >= 1")
    steps = args.edges + DECAY_RUNS + args.spreads + WARMUP + (args.queries + WARMUP if args.deep_n else 0)
    bar = Progress(steps, "web (edges, decay, spreads, deep recalls)", unit="steps")
    embed_bar = Progress(args.deep_n, "embedding the corpus", unit="memories")
    result = await bench_web(nodes=args.nodes, edges=args.edges, spreads=args.spreads, deep_n=args.deep_n,
                             queries=args.queries, seed=args.seed, progress=bar.advance,
                             embed_progress=embed_bar.advance)
    return _report(result, args, bar)


async def cmd_dossier(args) -> int:
    from strata_bench.dossier import WARMUP as DOSSIER_WARMUP, bench_dossier, small_llm

    if args.n < 100 or args.refreshes < 1 or args.llm_topics < 0:
        raise InvalidInput("need --n >= 100, --refreshes >= 1 and --llm-topics >= 0")
    llm = None if args.no_llm else (Path(args.llm) if args.llm else small_llm())
    if llm is not None and not llm.is_file():
        raise InvalidInput(f"no LLM at {llm}", hint="give --llm a GGUF file, or --no-llm")
    llm_runs = args.llm_topics if llm is not None else 0
    bar = Progress(3 * (args.refreshes + DOSSIER_WARMUP) + 2 * llm_runs,
                   "dossier (forced, unchanged, recall baseline, LLM quiet and beside a busy process)", unit="refreshes")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    result = await bench_dossier(args.n, refreshes=args.refreshes, mode=args.mode, llm=llm, llm_topics=llm_runs,
                                 seed=args.seed, progress=bar.advance, embed_progress=embed_bar.advance)
    return _report(result, args, bar)


async def cmd_capsule(args) -> int:
    from strata_bench.capsule import WARMUP as CAPSULE_WARMUP, bench_capsule

    if args.n < 100 or args.renders < 1 or args.edits < 1:
        raise InvalidInput("need --n >= 100, --renders >= 1 and --edits >= 1")
    bar = Progress(args.renders + CAPSULE_WARMUP + args.edits, "capsule (renders, then hand edits)", unit="steps")
    result = await bench_capsule(args.n, renders=args.renders, edits=args.edits, seed=args.seed,
                                 progress=bar.advance)
    return _report(result, args, bar)


async def cmd_tui(args) -> int:
    from strata_bench.tui import bench_tui  # loads Textual

    if args.n < 100 or args.rounds < 1 or not 0 <= args.think <= 60:
        raise InvalidInput("need --n >= 100, --rounds >= 1 and --think between 0 and 60")
    bar = Progress(args.rounds, "inspector rounds (start, then every screen)", unit="rounds")
    result = await bench_tui(args.n, rounds=args.rounds, seed=args.seed, think=args.think, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_mcp(args) -> int:
    from strata_bench.mcp import WARMUP as MCP_WARMUP, bench_mcp  # loads the MCP SDK

    if args.n < 100 or args.queries < 1 or args.writes < 0:
        raise InvalidInput("need --n >= 100, --queries >= 1 and --writes >= 0")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(2 * (args.queries + MCP_WARMUP) + args.writes, "recalls in-process, then over MCP",
                   unit="calls")
    result = await bench_mcp(args.n, mode=args.mode, queries=args.queries, k=args.k, writes=args.writes,
                             seed=args.seed, progress=bar.advance, embed_progress=embed_bar.advance,
                             cache=_cache(args))
    return _report(result, args, bar)


async def cmd_http(args) -> int:
    from strata_bench.http import WARMUP as HTTP_WARMUP, bench_http

    if args.n < 100 or args.queries < args.clients or args.clients < 1:
        raise InvalidInput("need --n >= 100, --clients >= 1 and --queries >= --clients")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(3 * (args.queries + HTTP_WARMUP) - HTTP_WARMUP, "recalls in-process, over the socket, then "
                   f"{args.clients} clients at once", unit="recalls")
    result = await bench_http(args.n, mode=args.mode, queries=args.queries, clients=args.clients, k=args.k,
                              seed=args.seed, progress=bar.advance, embed_progress=embed_bar.advance,
                              cache=_cache(args))
    return _report(result, args, bar)


async def cmd_reliability(args) -> int:
    from strata_bench.adversarial import corpus_size
    from strata_bench.reliability import PARTS, bench_reliability

    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise InvalidInput(f"unknown part {unknown[0]!r}" if unknown else "no part named",
                           hint=f"--parts takes some of {','.join(PARTS)}")
    if args.cycles < 1 or args.seconds <= 0 or args.writers < 1 or args.readers < 0 or args.similar < 100 \
            or args.stops < 1 or not 0 < args.share <= 1:
        raise InvalidInput("need --cycles >= 1, --seconds > 0, --writers >= 1, --readers >= 0, --similar >= 100, "
                           "--stops >= 1 and 0 < --share <= 1")
    steps = {"crash": args.cycles, "concurrency": args.writers + args.readers,
             "adversarial": corpus_size(args.share, args.seed),
             "shutdown": 2 * args.stops}
    bar = Progress(sum(steps[p] for p in parts), ", ".join(parts), unit="steps")
    result = await asyncio.to_thread(bench_reliability, cycles=args.cycles, seconds=args.seconds,
                                     writers=args.writers, readers=args.readers, similar=args.similar,
                                     stops=args.stops, parts=parts, seed=args.seed, share=args.share,
                                     progress=bar.advance)
    _report(result, args, bar)
    return 0 if result["ok"] else 1


async def cmd_daemon(args) -> int:
    from strata_bench.daemon import bench_daemon
    from strata_daemon.app.phases.registry import PHASES

    if args.n < 100 or args.seconds <= 0 or args.repeat < 1:
        raise InvalidInput("need --n >= 100, --seconds > 0 and --repeat >= 1")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(len(PHASES) * args.repeat + int(args.seconds), "daemon (phases, then idle seconds)", unit="steps")
    result = await bench_daemon(args.n, seconds=args.seconds, repeat=args.repeat, seed=args.seed,
                                progress=bar.advance, embed_progress=embed_bar.advance)
    return _report(result, args, bar)


async def cmd_consolidate(args) -> int:
    from strata_bench.consolidate import bench_consolidate

    if args.n < 100:
        raise InvalidInput("need --n >= 100")
    if args.queries < 1:
        raise InvalidInput("need --queries >= 1")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(4 + 2 * args.queries, "consolidate (own-words recalls, 4 passes, own-words recalls)", unit="steps")
    result = await bench_consolidate(args.n, seed=args.seed, queries=args.queries, progress=bar.advance,
                                     embed_progress=embed_bar.advance, cache=_cache(args))
    return _report(result, args, bar)


async def cmd_forget(args) -> int:
    from strata_bench.forgetting import CASES, bench_forget

    bar = Progress(len(CASES), "forget requests", unit="cases")
    result = await bench_forget(servers=not args.no_servers, progress=bar.advance)
    if result["store"] == "sqlite":  # a PostgreSQL server's disk is the server's to keep free
        from strata_bench.full_disk import full_disk

        result["full_disk"] = await asyncio.to_thread(full_disk)
        result["leaks"] += result["full_disk"].get("leaks", 0)
    return _report(result, args, bar)


async def cmd_purge(args) -> int:
    from strata_bench.purge import bench_purge

    if not 2 <= args.purges <= 1000:
        raise InvalidInput("--purges is between 2 and 1000")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(2 * args.purges, f"purges ({args.n} memories)", unit="purges")
    result = await bench_purge(args.n, seed=args.seed, purges=args.purges, cache=_cache(args), progress=bar.advance,
                               embed_progress=embed_bar.advance)
    return _report(result, args, bar)


async def cmd_cli(args) -> int:
    from strata_bench.cli_start import bench_cli

    if args.n < 100 or not 1 <= args.rounds <= 1000:
        raise InvalidInput("need --n >= 100 and --rounds between 1 and 1000")
    bar, embed_bar = Progress(args.rounds, "rounds of every command", unit="rounds"), Progress(args.n, "embedding")
    return _report(await bench_cli(args.n, rounds=args.rounds, seed=args.seed, progress=bar.advance,
                                   embed_progress=embed_bar.advance, cache=_cache(args)), args, bar)
