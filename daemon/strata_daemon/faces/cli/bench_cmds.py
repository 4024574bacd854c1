"""`strata bench ...`: benchmarks in a temporary home, on a deterministic synthetic corpus or on LoCoMo."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

from strata_daemon.bench.arena import bench_arena, format_table as arena_table, steps as arena_steps
from strata_daemon.bench.capture import bench_capture, format_capture
from strata_daemon.bench.capsule import WARMUP as CAPSULE_WARMUP, bench_capsule
from strata_daemon.bench.consolidate import bench_consolidate
from strata_daemon.bench.daemon import bench_daemon
from strata_daemon.bench.dossier import WARMUP as DOSSIER_WARMUP, bench_dossier, small_llm
from strata_daemon.bench.embed import bench_embed
from strata_daemon.bench.facts import bench_facts
from strata_daemon.bench.folds import GRID, bench_folds, format_folds, grid_points
from strata_daemon.bench.ingest import bench_ingest
from strata_daemon.bench.lived import bench_locomo_lived, format_lived, lived_steps, split
from strata_daemon.bench.months import bench_lived, days_of, format_months
from strata_daemon.bench.locomo import bench_locomo, format_table, home_settings, load_locomo, store_steps
from strata_daemon.bench.recall import bench_recall
from strata_daemon.bench.scale import measure as measure_scale, steps as scale_steps
from strata_daemon.bench.sizes import markdown as scale_table, run_sizes
from strata_daemon.bench.updates import bench_updates, format_updates, steps as updates_steps
from strata_daemon.bench.web import DECAY_RUNS, WARMUP, bench_web
from strata_daemon.config.load import parse_assignment
from strata_daemon.errors import InvalidInput
from strata_daemon.config.settings import MODES
from strata_daemon.faces.cli.output import Progress, emit

COMMANDS = ("bench ingest", "bench recall", "bench embed", "bench locomo", "bench facts", "bench web",
            "bench dossier", "bench capsule", "bench daemon", "bench consolidate", "bench tui", "bench mcp",
            "bench http", "bench reliability", "bench arena", "bench scale", "bench capture", "bench updates",
            "bench forget", "bench purge")
CONVERSATIONS = "use only the first N conversations, or the A-th to the B-th (counted from 1)"


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
    bar = Progress(args.n, "ingest", unit="observations")
    result = await bench_ingest(args.n, seed=args.seed, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_recall(args) -> int:
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
    from strata_daemon.config.home import resolve_home

    cfg = resolve_home(args.home).config()
    bar = Progress(args.n * (2 if args.baseline else 1), "embed", unit="texts")
    result = await asyncio.to_thread(bench_embed, args.n, seed=args.seed, model=cfg["embedding.model"],
                                     runtime=cfg["embedding.runtime"], threads=int(cfg["embedding.threads"]),
                                     baseline=args.baseline, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_locomo(args) -> int:
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
    from strata_daemon.config.home import resolve_home

    if args.tail_days < 0 or args.checkpoint_days < 1 or args.own_words < 1:
        raise InvalidInput("need --tail-days >= 0, --checkpoint-days >= 1 and --own-words >= 1")
    conversations = load_locomo(args.data, args.conversations)
    settings = home_settings(resolve_home(args.home).config())
    bar = Progress(days_of(conversations, args.tail_days), "lived (simulated days)", unit="days")
    result = await bench_lived(args.data, conversations, mode=args.mode, settings=settings, tail_days=args.tail_days,
                               checkpoint_days=args.checkpoint_days, own_words_sample=args.own_words,
                               progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, format_months)
    return 0


async def cmd_arena(args) -> int:
    from strata_daemon.arena.api import Settings
    from strata_daemon.config.home import resolve_home

    conversations = load_locomo(args.data, args.conversations)
    config = resolve_home(args.home).config()
    bar = Progress(arena_steps(conversations, len(Settings.from_config(config).arms)),
                   "arena (train, run, hold out, each arm)", unit="questions")
    result = await bench_arena(args.data, conversations, settings=home_settings(config), progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, arena_table)
    return 0


async def cmd_facts(args) -> int:
    if args.keys < 1 or args.history < args.keys or args.ops < 1:
        raise InvalidInput("need --keys >= 1, --history >= --keys and --ops >= 1")
    bar = Progress(args.history + 5 * args.ops, "facts (history, then get/as-of/set/baseline)", unit="steps")
    result = await bench_facts(args.keys, args.history, args.ops, seed=args.seed, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_capture(args) -> int:
    result = bench_capture()
    _save(result, args.out)
    emit(result, args.json, format_capture)
    return 0


async def cmd_updates(args) -> int:
    if args.n < 0:
        raise InvalidInput("--n must be 0 or more")
    bar = Progress(updates_steps(args.n), "updates (homes filled and embedded)", unit="memories")
    result = await bench_updates(background=args.n, seed=args.seed, k=args.k, only=args.set, progress=bar.advance)
    bar.close()
    _save(result, args.out)
    emit(result, args.json, format_updates)
    return 0


async def cmd_web(args) -> int:
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
    if args.n < 100 or args.refreshes < 1 or args.llm_topics < 0:
        raise InvalidInput("need --n >= 100, --refreshes >= 1 and --llm-topics >= 0")
    llm = None if args.no_llm else (Path(args.llm) if args.llm else small_llm())
    if llm is not None and not llm.is_file():
        raise InvalidInput(f"no LLM at {llm}", hint="give --llm a GGUF file, or --no-llm")
    llm_runs = args.llm_topics if llm is not None else 0
    bar = Progress(3 * (args.refreshes + DOSSIER_WARMUP) + llm_runs,
                   "dossier (forced, unchanged, recall baseline, LLM)", unit="refreshes")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    result = await bench_dossier(args.n, refreshes=args.refreshes, mode=args.mode, llm=llm, llm_topics=llm_runs,
                                 seed=args.seed, progress=bar.advance, embed_progress=embed_bar.advance)
    return _report(result, args, bar)


async def cmd_capsule(args) -> int:
    if args.n < 100 or args.renders < 1 or args.edits < 1:
        raise InvalidInput("need --n >= 100, --renders >= 1 and --edits >= 1")
    bar = Progress(args.renders + CAPSULE_WARMUP + args.edits, "capsule (renders, then hand edits)", unit="steps")
    result = await bench_capsule(args.n, renders=args.renders, edits=args.edits, seed=args.seed,
                                 progress=bar.advance)
    return _report(result, args, bar)


async def cmd_tui(args) -> int:
    from strata_daemon.bench.tui import bench_tui  # loads Textual

    if args.n < 100 or args.rounds < 1 or not 0 <= args.think <= 60:
        raise InvalidInput("need --n >= 100, --rounds >= 1 and --think between 0 and 60")
    bar = Progress(args.rounds, "inspector rounds (start, then every screen)", unit="rounds")
    result = await bench_tui(args.n, rounds=args.rounds, seed=args.seed, think=args.think, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_mcp(args) -> int:
    from strata_daemon.bench.mcp import WARMUP as MCP_WARMUP, bench_mcp  # loads the MCP SDK

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
    from strata_daemon.bench.http import WARMUP as HTTP_WARMUP, bench_http

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
    from strata_daemon.bench.reliability import bench_reliability

    from strata_daemon.bench.adversarial import corpus_size
    from strata_daemon.bench.reliability import PARTS

    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise InvalidInput(f"unknown part {unknown[0]!r}" if unknown else "no part named",
                           hint=f"--parts takes some of {','.join(PARTS)}")
    if args.cycles < 1 or args.seconds <= 0 or args.writers < 1 or args.readers < 0 or args.similar < 100 \
            or args.stops < 1:
        raise InvalidInput("need --cycles >= 1, --seconds > 0, --writers >= 1, --readers >= 0, --similar >= 100 "
                           "and --stops >= 1")
    steps = {"crash": args.cycles, "concurrency": args.writers + args.readers, "adversarial": corpus_size(),
             "shutdown": 2 * args.stops}
    bar = Progress(sum(steps[p] for p in parts), ", ".join(parts), unit="steps")
    result = await asyncio.to_thread(bench_reliability, cycles=args.cycles, seconds=args.seconds,
                                     writers=args.writers, readers=args.readers, similar=args.similar,
                                     stops=args.stops, parts=parts, seed=args.seed, progress=bar.advance)
    _report(result, args, bar)
    return 0 if result["ok"] else 1


async def cmd_daemon(args) -> int:
    from strata_daemon.app.phases.registry import PHASES

    if args.n < 100 or args.seconds <= 0 or args.repeat < 1:
        raise InvalidInput("need --n >= 100, --seconds > 0 and --repeat >= 1")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(len(PHASES) * args.repeat + int(args.seconds), "daemon (phases, then idle seconds)", unit="steps")
    result = await bench_daemon(args.n, seconds=args.seconds, repeat=args.repeat, seed=args.seed,
                                progress=bar.advance, embed_progress=embed_bar.advance)
    return _report(result, args, bar)


async def cmd_consolidate(args) -> int:
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
    from strata_daemon.bench.forgetting import CASES, bench_forget

    bar = Progress(len(CASES), "forget requests", unit="cases")
    result = await bench_forget(servers=not args.no_servers, progress=bar.advance)
    return _report(result, args, bar)


async def cmd_purge(args) -> int:
    from strata_daemon.bench.purge import bench_purge

    if not 2 <= args.purges <= 1000:
        raise InvalidInput("--purges is between 2 and 1000")
    embed_bar = Progress(args.n, "embedding the corpus", unit="memories")
    bar = Progress(2 * args.purges, f"purges ({args.n} memories)", unit="purges")
    result = await bench_purge(args.n, seed=args.seed, purges=args.purges, cache=_cache(args), progress=bar.advance,
                               embed_progress=embed_bar.advance)
    return _report(result, args, bar)


def register(sub, common) -> None:
    p = sub.add_parser("bench", help="Benchmarks in a temporary home: a synthetic agent-operations corpus, "
                                     "or LoCoMo retrieval.")
    bsub = p.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)

    def add(name, handler, help_, n: int | None = 100_000, out: str = "also write the JSON result to this file"):
        q = bsub.add_parser(name, help=help_, description=help_)
        if n is not None:  # the synthetic corpus's size and seed
            q.add_argument("--n", type=int, default=n, help=f"corpus size (default {n})")
            q.add_argument("--seed", type=int, default=0)
        q.add_argument("--json", action="store_true", help="print JSON")
        q.add_argument("--out", help=out)
        q.set_defaults(handler=handler)
        return q

    add("ingest", cmd_ingest, "Import throughput: JSONL -> validate -> store, vs bare SQLite inserts.")
    def cached(q):
        q.add_argument("--corpus-cache", metavar="DIR",
                       help="keep the filled (and embedded) corpus database in DIR and reuse it in later runs "
                            "of the same size, seed, model and code: embedding 100,000 memories takes 10-35 min")
        return q

    q = cached(add("recall", cmd_recall, "Recall latency p50/p95/p99 through the user code path, vs a bare FTS5 "
                                         "query."))
    q.add_argument("--mode", choices=MODES, default="balanced", help="recall mode (default balanced)")
    q.add_argument("--queries", type=int, default=300, help="timed queries (after 20 warm-up ones)")
    q.add_argument("--k", type=int, default=10)
    q.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting of the benchmark's home, e.g. recall.overlap_embedding=true (repeatable): "
                        "measures what a setting costs")
    q.add_argument("--fresh", type=int, default=0, metavar="N",
                   help="observe N memories before each recall, left unembedded as with no daemon: what a "
                        "recall costs that catches them up (default 0)")
    q.add_argument("--cold", type=float, default=0.0, metavar="SHARE",
                   help="first move this share of the memories (seeded, at random) to the cold tier: what recall "
                        "costs when much of a home is cold (default 0)")
    q = add("embed", cmd_embed, "Embedding throughput (texts/s) on corpus texts and single-query latency, "
                                "with the configured model; the packaged model in the other runtime as baseline.",
            n=2000)
    q.add_argument("--no-baseline", dest="baseline", action="store_false", help="skip the other runtime")
    q = add("locomo", cmd_locomo, "Retrieval on LoCoMo: each conversation in a temporary home with this home's "
                                  "settings, every question through recall; evidence recall@5/@10 per category "
                                  "vs BM25, flat cosine and their RRF on the same turns.", n=None)
    q.add_argument("--data", required=True, help="LoCoMo JSON file (locomo10.json or the same shape)")
    q.add_argument("--conversations", metavar="N|A-B", help=CONVERSATIONS)
    q.add_argument("--mode", choices=MODES, default="balanced")
    q.add_argument("--folds", type=int, metavar="K",
                   help="leave conversations out: deal them into K folds, choose recall settings from a small grid "
                        "on the other folds and score each fold with its choice (the figure to expect on unseen "
                        "conversations), beside the tuned-on figure and this home's settings")
    q.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="with --folds: the values of a recall setting the protocol chooses among (repeatable; the "
                        "grid is every combination); default: the fusion settings around their shipped values")
    q.add_argument("--lived", action="store_true",
                   help="also measure a lived copy of each home: every other question asked first with feedback "
                        "naming the evidence, one night of every daemon phase, then the other half, against the "
                        "fresh home on the same half; with --folds, every grid point is also scored on the lived "
                        "copies and chosen by the mean of both")
    q = add("lived", cmd_lived, "A home lived for months on LoCoMo conversations (a clock the benchmark moves; "
                                "sessions observed on their days, daily recalls with feedback, explicit forgets, "
                                "every daemon phase each night) against a fresh home holding the same memories: "
                                "held-out questions by the age of their evidence, memories found by their own "
                                "words, forgotten ones returned, and what nights cost.", n=None)
    q.add_argument("--data", required=True, help="LoCoMo JSON file (locomo10.json or the same shape)")
    q.add_argument("--conversations", metavar="N|A-B", help=CONVERSATIONS)
    q.add_argument("--mode", choices=MODES, default="balanced")
    q.add_argument("--tail-days", type=int, default=90, help="days lived after the last session (default 90)")
    q.add_argument("--checkpoint-days", type=int, default=30, help="measure every this many days (default 30)")
    q.add_argument("--own-words", type=int, default=100,
                   help="memories looked for by their own words at each checkpoint before the last, which looks "
                        "for all (default 100)")
    q = add("arena", cmd_arena, "The retrieval arena on LoCoMo: half the questions answered with feedback naming "
                                "the evidence, one arena run, then held-out recall@5/@10 of the arena's choice vs "
                                "the fixed default, every arm's, and the arena phase's duration.", n=None)
    q.add_argument("--data", required=True, help="LoCoMo JSON file (locomo10.json or the same shape)")
    q.add_argument("--conversations", metavar="N|A-B", help=CONVERSATIONS)
    q = add("facts", cmd_facts, "Fact get, as-of get and set latency with many keys and a long history, "
                                "vs a bare key-value table.", n=None)
    q.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10000)")
    q.add_argument("--history", type=int, default=1_000_000, help="history rows in all (default 1000000)")
    q.add_argument("--ops", type=int, default=1000, help="timed operations of each kind (default 1000)")
    q.add_argument("--seed", type=int, default=0)
    add("capture", cmd_capture, "Fact capture's precision and recall on labelled lines (states to capture, "
                                "events to leave alone): the development set it was tuned on and a held-out set.",
        n=None)
    q = add("updates", cmd_updates, "Knowledge updates: pairs of memories stating an older and a newer value of "
                                    "one fact among corpus memories (half with the older arriving late), each "
                                    "asked about; how often the newer ranks first, vs a home without attribute "
                                    "statements.", n=2000)
    q.add_argument("--k", type=int, default=10)
    q.add_argument("--set", choices=("generated", "dev", "held_out"), help="only this set of pairs (default: all)")
    q = add("dossier", cmd_dossier, "Extractive dossier refresh latency (forced and unchanged) vs one recall of "
                                    "the topic; LLM synthesizer tokens/s and seconds per dossier.")
    q.add_argument("--refreshes", type=int, default=200, help="timed refreshes of each kind (after 10 warm-up ones)")
    q.add_argument("--mode", choices=MODES, default="balanced", help="dossier.recall_mode (default balanced)")
    q.add_argument("--llm", help="GGUF model for the LLM part (default: the small test model, if installed)")
    q.add_argument("--no-llm", action="store_true", help="skip the LLM part")
    q.add_argument("--llm-topics", type=int, default=3, help="dossiers written by the LLM (default 3)")
    q = add("capsule", cmd_capsule, "Capsule render latency vs the atomic write alone; time from a saved hand "
                                    "edit to its fact being stored by the watcher.")
    q.add_argument("--renders", type=int, default=100, help="timed renders (after 5 warm-up ones)")
    q.add_argument("--edits", type=int, default=30, help="timed hand edits")
    q = add("daemon", cmd_daemon, "The daemon's cost: each phase's duration through the daemon's path, then the "
                                  "real daemon idling in a subprocess: CPU share and resident memory, vs an idle "
                                  "Python process with the same imports.")
    q.add_argument("--seconds", type=float, default=600.0, help="idle time measured (default 600)")
    q.add_argument("--repeat", type=int, default=3, help="timed runs of each phase (default 3)")
    q = add("tui", cmd_tui, "The inspector headless: time to the first screen with its data and to switch "
                            "screens, vs a bare Textual app.")
    q.add_argument("--rounds", type=int, default=10, help="starts, each followed by a visit to every screen")
    q.add_argument("--think", type=float, default=0.0, help="seconds on the first screen before the first key, "
                                                            "as a person reading it (default 0: at once)")
    q = cached(add("mcp", cmd_mcp, "Recall round trip through `strata mcp` over stdio with the SDK's client, vs "
                                   "the same recalls in-process; observe round trip too."))
    q.add_argument("--mode", choices=MODES, default="balanced", help="recall mode (default balanced)")
    q.add_argument("--queries", type=int, default=300, help="timed recalls (after 20 warm-up ones)")
    q.add_argument("--writes", type=int, default=100, help="timed observes after the recalls")
    q.add_argument("--k", type=int, default=10)
    q = cached(add("http", cmd_http, "Recall round trip through `strata serve` over its Unix socket, one client "
                                     "and then several at once (requests/s), vs the same recalls in-process."))
    q.add_argument("--mode", choices=MODES, default="balanced", help="recall mode (default balanced)")
    q.add_argument("--queries", type=int, default=300, help="timed recalls (after 20 warm-up ones)")
    q.add_argument("--clients", type=int, default=4, help="concurrent clients in the second part (default 4)")
    q.add_argument("--k", type=int, default=10)
    q = cached(add("scale", cmd_scale, "Every layer at one or more corpus sizes (import, embedding, recall in each "
                                       "mode, vector recall@10, facts, spread, each daemon phase, size on disk, "
                                       "memory) vs a flat numpy vector store and bare BM25.", n=None,
                   out="also write scale.json and scale.md (the table) into this directory"))
    q.add_argument("--n", default="10000,100000", help="sizes separated by commas (default 10000,100000); "
                                                     "several are each measured in their own process")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--queries", type=int, default=200, help="timed recalls per mode (after 20 warm-up ones)")
    q.add_argument("--idle-seconds", type=float, default=30.0, help="the daemon's idle time measured (default 30)")
    q.add_argument("--size-out", help=argparse.SUPPRESS)
    q = add("reliability", cmd_reliability, "Crash cycles (SIGKILL of writers and the daemon mid-write: every "
                                            "acknowledged write kept, integrity ok, restart works); the daemon, "
                                            "writers and readers at once (no error reaches any); the adversarial "
                                            "corpus over every face (no traceback, every input answered, nothing "
                                            "changed); SIGTERM in the middle of a phase and consolidation's memory "
                                            "on a home of near-identical lines.", n=None)
    q.add_argument("--parts", default=",".join(("crash", "concurrency", "adversarial", "shutdown")),
                   help="which parts to run, comma-separated (default: all four)")
    q.add_argument("--similar", type=int, default=26_000,
                   help="near-identical memories in the shutdown part's home (default 26000)")
    q.add_argument("--stops", type=int, default=3, help="SIGTERMs into each phase in the shutdown part (default 3)")
    q.add_argument("--cycles", type=int, default=100, help="kill cycles (default 100)")
    q.add_argument("--seconds", type=float, default=60.0, help="length of the concurrent run (default 60)")
    q.add_argument("--writers", type=int, default=8, help="writer processes in the concurrent run (default 8)")
    q.add_argument("--readers", type=int, default=2, help="reader processes in the concurrent run (default 2)")
    q.add_argument("--seed", type=int, default=0)
    q = cached(add("consolidate", cmd_consolidate, "A full consolidation pass (the nightly phase's path) over the "
                                                   "corpus, embedded first, and the idle pass after it, vs reading "
                                                   "what the pass reads; recall@10 of memories looked for by their "
                                                   "own words before and after the pass."))
    q.add_argument("--queries", type=int, default=300, help="memories looked for by their own words (default 300)")
    q = add("forget", cmd_forget, "The deletion-compliance set: secrets planted the ways a home comes to hold them, "
                                  "each forgotten as a person or agent asks, then looked for on every face (recall, "
                                  "facts, dossiers, capsule, export, HTTP, MCP) and in every file's bytes.", n=None)
    q.add_argument("--no-servers", action="store_true", help="skip the HTTP and MCP faces (no subprocesses)")
    q = cached(add("purge", cmd_purge, "`forget ID --purge` end to end in a home that has lived a little (capsule, "
                                       "dossiers, recalls with feedback), vs deleting the memory's row alone."))
    q.add_argument("--purges", type=int, default=30, help="memories purged (half of them ones recalls used)")
    q = add("web", cmd_web, "Spiderweb: decay of a large graph and spreading on it, vs flat baselines; deep "
                            "recall vs balanced on the synthetic corpus (embedded first).", n=None)
    q.add_argument("--nodes", type=int, default=100_000, help="graph nodes (default 100000)")
    q.add_argument("--edges", type=int, default=1_000_000, help="graph edges (default 1000000)")
    q.add_argument("--spreads", type=int, default=300, help="timed spreads (after 20 warm-up ones)")
    q.add_argument("--deep-n", type=int, default=100_000, help="corpus size for deep recall (0 skips it)")
    q.add_argument("--queries", type=int, default=300, help="timed deep and balanced recalls each")
    q.add_argument("--seed", type=int, default=0)
