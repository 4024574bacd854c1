"""Internal tuned constants of recall, scoring, graph, consolidation, dossiers, capsule, arena and daemon: a
person does not set them (config/settings.py holds what a person sets). Each can be overridden for an experiment
under `[experimental]` in strata.toml by its name (e.g. `recall.vector_weight`), which carries no promise. A
default changes only when the leave-conversations-out protocol (`strata bench locomo --folds`) shows a gain on
conversations it was not chosen on, in a commit that says so. Figures: docs/benchmarks.md and the CHANGELOG;
LoCoMo is `strata bench locomo --data locomo_dev.json`, @5 / @10 its evidence recall at 5 and 10, "folds" that
protocol (--folds 2, --lived where said)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Store:
    # Import keeps rows in memory up to this, else reads twice. 56 MB: 78 s/382 MB kept, 86 s/100 MB (2026-11-24).
    import_buffer_mb: int = 16


@dataclass(frozen=True)
class Recall:
    # Candidates each retriever hands to scoring. A latency bound (100, then 50 since 1e48d62, 2026-11-22); not swept.
    candidates: int = 50
    # Full-text matches ranked exactly per query. A cost bound: p95 6.4 ms at 100,000 vs bare FTS5 45.0 (2026-11-22).
    fts_budget: int = 500
    # Weight of query words in a memory's source. Not swept; 0 with with_source off: @5 0.668 -> 0.638 (2026-11-25).
    source_weight: float = 1.0
    # Merge of full text and vectors: "scores" (weighted min-max) or "rrf". RRF: @5 0.668 -> 0.541 (2026-11-25).
    fusion: str = "scores"
    # RRF constant, used only with fusion = "rrf": the customary 60. Not tuned.
    rrf_k: int = 60
    # Weight of the full-text list in fusion, the reference vector_weight is measured against. Not swept.
    fts_weight: float = 1.0
    # Weight of the vector list. Folds, fresh and lived (2026-11-27): the folds chose 0.5 and 0.7, all seven 0.7.
    vector_weight: float = 0.7
    # Share of a match's relevance passed to the next memory. Folds --lived (ae373cf, 2026-11-27): 0.5 over 0.3, 0.7.
    spread_to_next: float = 0.5
    # Share passed to the previous memory of the session. Folds --lived 2026-11-27: 0.45 (0.8016 vs 0.8008 at 0.3).
    spread_to_previous: float = 0.45
    # Share of the passed relevance going one memory further. Folds steps 7-8, 0/0.6/0.9 (aabb832, 2026-11-26): 0.6.
    spread_further: float = 0.6
    # A memory's gain as a share of its session's best. Folds --lived (2026-11-27): 0.45; 0.6 hurt lived (97065bf).
    session_weight: float = 0.45
    # A superseded memory scores at most this share of its superseder, so the newer ranks first. A judgement.
    superseded_factor: float = 0.9
    # A block leaves out a memory whose relevance is below this share of its best one's (the budget is a ceiling).
    # LoCoMo conv 1-4, evidence at 256/512/1024: 0 and 0.05 0.7471/0.8278/0.8869, 0.1 -0.0007 at 512, 0.2 -0.0013 at
    # 1024 (92% of the tokens); 5-7: 0.05 as 0 (2026-12-06). Leaves out what shares no word or meaning with the turn.
    context_floor: float = 0.05
    # Now-question: top-5 hits this alike swap newer first. Not swept; at 0 newer-first 0.602 -> 0.279 (2026-11-25).
    present_similarity: float = 0.4
    # Two hits this alike say the same in other values: the newer moves up. A judgement on MiniLM's cosine; not swept.
    present_parallel: float = 0.5
    # A newer hit worded as an update this alike an older top-5 hit moves above it from the top 10 (less alike: from
    # the top 5 only). Truth development set and LoCoMo (2026-12-07): 0.5 from any of k cost 0.045 of recall's
    # evidence within 256 tokens; 0.6 from the top 10 kept the gain. 1.0 turns the reach off.
    present_reach: float = 0.6
    # Least cosine for a memory found only by meaning. Folds step 3, 0.1/0.15/0.2/0.25 (2026-11-26): 0.1 everywhere.
    min_similarity: float = 0.1
    # Lift for memories saying a time when a question asks when. Folds step 1, 0/0.3/0.6 (6e11a79, 2026-11-26): 0.3.
    when_weight: float = 0.3
    # Lift x closeness for memories from a time a question names. Folds step 5, 0.5/1/1.5 (8174b3e, 2026-11-26): 1.0.
    date_weight: float = 1.0
    # Lift for memories of a source the question names. Folds step 12, 0.1/0.2/0.3 (f0b64a7, 2026-11-27): 0.2.
    source_named_weight: float = 0.2
    # Loss x a memory's question-word share. Folds 2026-11-27, @5 at 0/0.5/0.7/0.9: 0.7152/0.7364/0.7407/0.7388.
    asking_discount: float = 0.7
    # Second hop: lift for what the first hits' words find. Folds step 2, 0/0.1/0.2/0.4 (09d27e1, 2026-11-26): 0.1.
    hop_weight: float = 0.1
    # Second hop: how many of the best first hits give their words. A judgement, not swept.
    hop_seeds: int = 3
    # Second hop: how many of their words (the rarest that rank exactly) are searched. A judgement, not swept.
    hop_words: int = 8
    # Embed the query while full text runs. Off: two cores, p95 at 100,000 33.7 -> 37.3 ms (f792825, 2026-11-24).
    overlap_embedding: bool = False
    # Exact up to this many vectors, else a 2% sign-bit shortlist. Not swept; recall@10 1.0 at a million (2026-11-24).
    vector_exact_below: int = 20000
    # Deep recall: how many of the best balanced candidates seed the graph spread. A judgement.
    deep_seeds: int = 5
    # Deep recall: weight of balanced relevance (alpha). Seeds' formula; @5 deep 0.686, balanced 0.685 (2026-11-26).
    deep_retrieval_weight: float = 0.5
    # Deep recall: weight of the spread's activation (gamma). The seeds' formula; not tuned.
    deep_graph_weight: float = 0.2
    # Deep recall: weight of the strongest direct Hebbian edge to a seed (delta). The seeds' formula; not tuned.
    deep_hebbian_weight: float = 0.1
    # Deep recall: the cross-encoder's share. Folds --lived, 0/0.15/0.25/0.35/0.5 (2026-11-27): 0.25 in both folds.
    rerank_weight: float = 0.25
    # Deep recall: candidates the cross-encoder reads. Convs 1-4 (2026-11-27): 40 within 0.0005 @5 of 20, 10 -0.007.
    rerank_depth: int = 20
    # Deep recall: cross-encoder token budget (pairs cut at 128); without it 1 KB memories hit p95 ~600 ms (0bbc1e0).
    rerank_tokens: int = 1600


@dataclass(frozen=True)
class ScoringWeights:
    """Weights of the composite's six 0..1 signals, summing to 1: the first composite's (e70f5cf, 2026-11-22)."""
    # Weight of retrieval relevance (relative to the best hit). Not swept.
    relevance: float = 0.55
    # Weight of recency with frequency. Not swept.
    recency: float = 0.10
    # Weight of hybrid decay strength. Not swept.
    strength: float = 0.05
    # Weight of RFM priority (recency, frequency, importance). Not swept.
    priority: float = 0.10
    # Weight of the Wilson bound on feedback. Not swept.
    wilson: float = 0.10
    # Weight of the match of the recall's --context pairs. Not swept (no benchmark exercises it).
    context: float = 0.10


@dataclass(frozen=True)
class Scoring:
    # Recency half-life in hours (None: from scoring.preset, 168 h for balanced). The seeds' default; not measured.
    half_life_hours: float | None = None
    # Recency's share against frequency in the recency score (None: from scoring.preset, 0.6). The seeds' formula.
    time_weight: float | None = None
    # Recency below which a memory is stale in the active phase (None: preset, 0.15: two half-lives). A judgement.
    stability_threshold: float | None = None
    # Success rate a rated memory must not be clearly below (None: preset, 0.5: helped more than not). A judgement.
    success_threshold: float | None = None
    # Thresholds: "penalty" ranks lower, "filter" leaves out; filter would hide 3 successes in 3 (lower bound 0.44).
    thresholds: str = "penalty"
    # Stale memory's factor, a tie-breaker. Lived - fresh @5, convs 1-4 (1319bcc): 0.8 -0.007, 0.9 0.000, 0.98 +0.005.
    stability_penalty: float = 0.98
    # Factor for a record clearly below the success threshold. Not tuned: 0.8 and 1 gave the same figures.
    success_penalty: float = 0.8
    # Factor for a cold-tier memory: below as good a hot match, above a worse one. A judgement, not swept.
    cold_factor: float = 0.8
    # Confidence level of the Wilson bounds: the customary 95%. Set with e70f5cf (2026-11-22); not measured.
    confidence: float = 0.95
    # Rated recalls before the success threshold judges a memory. Set with e70f5cf (2026-11-22); not measured.
    min_feedback_trials: int = 3
    # Thresholds stay off (passive phase) until this many episodes... Set with e70f5cf (2026-11-22); not measured.
    passive_min_episodes: int = 200
    # ...and this many feedback events. Set with e70f5cf (2026-11-22); not measured.
    passive_min_feedback: int = 20
    # Accesses after which a memory decays ten times slower (potentiation). The seeds' rule; not measured.
    potentiation_accesses: int = 10
    # Composite x (1 - this x (1 - confidence)). A judgement (confidence 0 halves it); not swept.
    confidence_weight: float = 0.5
    # Promoted memory's composite x (1 + this). A judgement; 0 or 0.03 scored as 0.1 on lived convs 1-4 (2026-11-27).
    quality_boost: float = 0.1
    weights: ScoringWeights = field(default_factory=ScoringWeights)


@dataclass(frozen=True)
class Facts:
    # A key's values from two sources this close in valid time conflict; further apart, history. A judgement.
    conflict_window_seconds: int = 600
    # Capture statements as facts. Newer-first: generated 1.000 vs 0.627 off, written 0.602 vs 0.607 (2026-11-25).
    statements: bool = True
    # A recall naming a fact's key returns the current fact first. On by design; not measured off.
    in_recall: bool = True
    # Half-life of a change's freshness in the capsule's fact ranking. A judgement (a day); not measured.
    capsule_half_life_hours: float = 24.0
    # A held update (facts/superseding.py) is taken when its two memories' MiniLM vectors are at least this alike.
    # Development sets in one home: 151 of 155 wrong first-person updates below it, no right one (2026-12-07).
    alike_floor: float = 0.35
    # The same for an update only a change said ties to the fact (no word names its attribute). Not swept: 0.5 is
    # below 3 in 4 right pairs of the truth development set; on/off there: facts pairs 0.742/0.750, chains 0.50/0.52,
    # no more endings by another item (2026-12-07).
    loose_floor: float = 0.5
    # The same for an update no rule ties to its fact (facts/near.py): the most alike of its candidates, if this alike.
    # Truth development set, the most alike of each memory: 0.5 takes 16 right, 4 wrong; 0.55 13, 2; 0.6 12, 1.
    near_floor: float = 0.55


@dataclass(frozen=True)
class Graph:
    # Weight of a new spiderweb edge. From the seeds' edge rules; not measured.
    edge_start: float = 1.0
    # Weight each further co-activation adds. From the seeds' edge rules; not measured.
    edge_increment: float = 1.0
    # Highest edge weight; strength = weight / cap, in 0..1. From the seeds' edge rules; not measured.
    edge_cap: float = 10.0
    # Each decay run multiplies every weight by this: an unused edge lasts 89 nightly runs. The seeds' edge rules.
    decay_factor: float = 0.95
    # Decay removes edges lighter than this. The seeds' edge rules; a million edges decay in 0.06 s (2026-11-22).
    prune_below: float = 0.01
    # Most items the working set holds: about seven, as the seeds describe working memory. Not measured.
    context_capacity: int = 7
    # A working set idle this long is committed by the next call or the heartbeat. A judgement (30 minutes).
    context_ttl_seconds: int = 1800
    # How many of each recall's best hits join the working set (0: none). A judgement.
    recall_feed: int = 3
    # Link new memories to entities they name (rules). On by design; ingest 3,297/s at 100,000 (2026-11-25) has it.
    entities: bool = True
    # Weight a spread gives a typed link: half the cap, 0.5 a hop (0: Hebbian edges only). A judgement; not swept.
    link_weight: float = 5.0
    # Neighbours a spread follows per node, heaviest first. A cost bound: p95 2.3 ms, a million edges (2026-11-22).
    spread_fan_limit: int = 50
    # Edges a spread follows from its seeds (1 to 5). A judgement; p50 1.3 ms, 34 nodes reached (2026-11-22).
    spread_depth: int = 2
    # Least activation a spread reports or passes: above one edge's 0.1, so it takes two coincidences (e716912).
    spread_threshold: float = 0.15
    # Divide what a node passes on by the square root of its edges, so hubs do not dominate. Off by design.
    fan_out_normalise: bool = False


@dataclass(frozen=True)
class Dossier:
    # Mentions an entity needs before it is proposed as a topic. A judgement.
    discover_min_mentions: int = 25
    # Fact keys a first word needs before it is proposed as a topic. A judgement.
    discover_min_keys: int = 3
    # Most topics proposed at once. A judgement.
    discover_limit: int = 10
    # Memories recall hands a refresh. A judgement; refresh p95 35.1 ms at 100,000 vs 27.1 for recall (2026-11-22).
    sources: int = 40
    # Recall mode a refresh uses (never the arena's choice). The default mode's; not measured against others.
    recall_mode: str = "balanced"
    # Half-life of salience's recency, capsule too: Park et al.'s 0.995 an hour (ln 0.5 / ln 0.995 = 138).
    half_life_hours: float = 138.0
    # Changes and memories younger than this are "recent", older ones context. A judgement (a week).
    recent_days: float = 7.0
    # Longest quoted line in characters, the capsule's too (longer ones end in an ellipsis). A judgement.
    line_chars: int = 240
    # What makes a memory a task (TODO, - [ ], need to, ...). Capsule open tasks 20 of 20, before 14 (2026-11-25).
    open_pattern: str = (
        r"(?im)(?:^|(?<=[.!?;]\s))[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?:\[ \]|to-?do\b|to do:|"
        r"(?:new |open )?task(?:[ \t]+(?:[A-Z][A-Z0-9]*-\d+|#\d+))?[ \t]*:|action items?:|"
        r"(?:i |we )?(?:need to|have to|must\b(?!-))|(?:please )?remind me to\b|reminder:|"
        r"(?:don't|do not) forget to\b|follow[ -]?up(?: with\b| on\b|:))"
    )
    # A later memory matching this (naming the task or sharing its words) closes it. Open tasks 1.00 (2026-11-25).
    closed_pattern: str = r"(?i)\b(done|closed|fixed|resolved|completed|finished|cancel(?:l)?ed)\b"
    # The daemon refreshes a topic at most this often (by hand: no limit). The seeds' cadence (one at most 2 h).
    min_interval_hours: float = 2.0


@dataclass(frozen=True)
class Llm:
    # The dossier model's context window. Prompts measured 2,700-3,200 tokens with SmolLM2 (2026-11-22).
    context_tokens: int = 4096
    # Most tokens per dossier: at the measured 22 tokens/s about 23 s, inside llm.timeout_seconds (120). A judgement.
    max_tokens: int = 512
    # Sampling temperature: 0, so the same sources give the same text (and the input hash means something). By design.
    temperature: float = 0.0
    # Fewest lines that must pass the grounding check, else the extractive dossier is used. A judgement.
    min_lines: int = 2


@dataclass(frozen=True)
class Capsule:
    # Memories from this many days feed the capsule's recent work. A judgement.
    recent_days: float = 3.0
    # Open tasks from this many days are pending tasks. A judgement.
    task_days: float = 60.0
    # Most memories a render reads for recent work and tasks: a cost bound. p95 67.0 ms at 100,000 (2026-11-22).
    task_scan: int = 2000
    # Most active dossier topics listed as priorities. A judgement.
    priority_topics: int = 5
    # The watcher waits up to this for a save to finish. A judgement; an edit reaches facts p95 0.114 s (2026-11-22).
    watch_debounce_ms: int = 300


@dataclass(frozen=True)
class Daemon:
    # How often access events fold into memory features. A judgement; a fold 8 ms p50 (bench daemon, 2026-11-23).
    fold_interval_seconds: int = 60
    # How often waiting memories are embedded (512 a run). A judgement; 512 embed in 9.3 s (bench daemon, 2026-11-23).
    embed_interval_seconds: int = 60
    # Phase runs older than this are removed (each phase's last stays; ~3,000 runs a day). A safety bound (a month).
    phase_runs_keep_days: float = 30.0
    # Capsule render interval, besides after refreshes and edits. A judgement; a render takes 10 ms p50 (2026-11-23).
    capsule_interval_seconds: int = 900


@dataclass(frozen=True)
class Consolidation:
    # Cosine above which two memories of one kind (no negation between) merge. From the seeds' rule; not swept.
    merge_threshold: float = 0.92
    # Memories this important get a nightly implicit access (replay). The seeds' rule; off, conv-26 same (2026-11-27).
    replay_importance: float = 0.7
    # Most memories replayed a night. A judgement; a pass over 100,000 replayed 100, the limit (2026-11-25).
    replay_limit: int = 100
    # Accesses a memory needs to be promoted to quality good (more successes than failures). The seeds' rule.
    promote_accesses: int = 5
    # ...and the confidence it needs. From the seeds' rule; not swept.
    promote_confidence: float = 0.7
    # A never-accessed memory older than this, redundant or contradicted, goes stale. From the seeds' rule.
    stale_days: float = 60.0
    # Confidence a stale memory loses a night. A judgement; not swept.
    stale_step: float = 0.15
    # Confidence never falls below this. A safety bound.
    stale_floor: float = 0.1
    # Weaker than this, with few accesses, redundant or contradicted: to the cold tier. From the seeds' rule.
    archive_strength: float = 0.05
    # ...with fewer accesses than this. From the seeds' rule; not swept.
    archive_max_accesses: int = 3
    # ...and older than this, as strength falls below 0.05 in three days (65ee09c, 2026-11-23). A judgement.
    archive_min_days: float = 90.0
    # A contradicted memory's strength is multiplied by this, once per contradiction. From the seeds' rule.
    interference_factor: float = 0.5
    # The strength factor never falls below this. A safety bound.
    interference_floor: float = 0.1
    # Memories this recent are clustered by meaning and linked in the spiderweb. The seeds' rule (a week).
    associate_days: float = 7.0
    # Cosine above which two recent memories get a spiderweb edge. A judgement; not swept.
    associate_threshold: float = 0.8
    # A memory gets edges to at most this many minus one others a night, closest first. A cost bound.
    associate_max_cluster: int = 8
    # Replay and stale decay touch a memory at most once in this long (under a day). A judgement.
    min_interval_hours: float = 20.0


@dataclass(frozen=True)
class ArenaWeights:
    """The arena's reward weights (arena.weights.*), summing to 1: the seeds' arena score, none swept."""
    # Share of the used memories found in the top k. From the seeds' arena score; not swept.
    recall: float = 0.55
    # Share of hits that were used. From the seeds' arena score; not swept.
    precision: float = 0.15
    # Share of the used memories' sessions reached (document recall). From the seeds' arena score; not swept.
    session_recall: float = 0.20
    # Speed past arena.latency_budget_ms (none within it). Not swept: it only parts arms too slow for the budget.
    latency: float = 0.07
    # Share of distinct sessions among the hits. From the seeds' arena score; not swept.
    diversity: float = 0.03


@dataclass(frozen=True)
class Arena:
    # UCB1 exploration constant c in mean + c x sqrt(ln(pulls + 1) / arm pulls). From the seeds' arena; not swept.
    exploration: float = 0.35
    # Arms pulled in a first run, on `sample` episodes each; a later one pulls once per `sample` new
    # episodes, up to this. A judgement; ~800 recalls, p50 29.5 s per home (2026-11-27).
    pulls: int = 24
    # Episodes scored per pull; also the new episodes a night needs to run, and that reopen a
    # comparison. A judgement; not swept.
    sample: int = 25
    # Hits per evaluation recall. A judgement (recall.k's default); not swept.
    k: int = 10
    # Evaluation episodes a namespace needs before its arena may change anything. A safety bound.
    min_episodes: int = 20
    # Pulls an arm needs before it can lead. A safety bound.
    min_pulls: int = 3
    # Mean reward by which a leader must beat the default. A judgement; no arm beat it by over 0.004 (2026-11-25).
    min_gain: float = 0.01
    # Standard errors the leader's gain needs too. Bench arena (479b8b9, 2026-11-27): 2 kept `fast`; 0 let noise win.
    confirm_z: float = 1.0
    # The newest this many episodes of odd id confirm a leader (pulls use even ids). A judgement.
    confirm_episodes: int = 200
    # The newest this many episodes are used per run. A cost bound; not swept.
    max_episodes: int = 1000
    # A success naming no memories makes an episode of all the recall's hits. On by design (the seeds' feedback).
    shared_feedback: bool = True
    weights: ArenaWeights = field(default_factory=ArenaWeights)


@dataclass(frozen=True)
class Tuning:
    store: Store = field(default_factory=Store)
    recall: Recall = field(default_factory=Recall)
    scoring: Scoring = field(default_factory=Scoring)
    facts: Facts = field(default_factory=Facts)
    graph: Graph = field(default_factory=Graph)
    dossier: Dossier = field(default_factory=Dossier)
    llm: Llm = field(default_factory=Llm)
    capsule: Capsule = field(default_factory=Capsule)
    daemon: Daemon = field(default_factory=Daemon)
    consolidation: Consolidation = field(default_factory=Consolidation)
    arena: Arena = field(default_factory=Arena)
