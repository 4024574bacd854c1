"""Numbered migrations, each applied once in its own transaction and recorded in _migrations."""

from __future__ import annotations

import json
import time
from typing import Callable

from strata_daemon.episodes.stated import stated_rows
from strata_daemon.errors import StorageError
from strata_daemon.store import floors
from strata_daemon.store.driver import sqlite_module


def _statements(script: str) -> list[str]:
    """Split a script into statements (trigger bodies hold semicolons, so ask SQLite where each ends)."""
    complete = sqlite_module().complete_statement
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if complete(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete statement in migration: {buf[:80]!r}")
    return out


def _run(conn, script: str) -> None:
    # executescript would COMMIT first; statements one by one keep the migration in one transaction.
    for stmt in _statements(script):
        conn.execute(stmt)


def m001_episodic_store(conn) -> None:
    _run(conn, """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE namespaces (
    agent TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    episode_count INTEGER NOT NULL DEFAULT 0,   -- maintained by the write path, read by the passive-phase check
    feedback_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE episodes (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL REFERENCES namespaces(agent),
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    event_at REAL NOT NULL,          -- when it happened in the world
    recorded_at REAL NOT NULL,       -- when strata learned it
    last_seen_at REAL NOT NULL,      -- latest repeat folded in by the attention filter
    occurrences INTEGER NOT NULL DEFAULT 1,
    source TEXT,
    session TEXT,
    importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    factual INTEGER NOT NULL DEFAULT 0 CHECK (factual IN (0, 1)),
    irrelevant INTEGER NOT NULL DEFAULT 0 CHECK (irrelevant IN (0, 1)),
    context TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(context)),
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access_at REAL,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'active'
        CHECK (state IN ('active', 'superseded', 'archived', 'quarantined')),
    superseded_by INTEGER REFERENCES episodes(id) ON DELETE SET NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX episodes_by_time ON episodes(agent, event_at);
CREATE INDEX episodes_by_hash ON episodes(agent, content_hash);
CREATE INDEX episodes_superseded_by ON episodes(superseded_by) WHERE superseded_by IS NOT NULL;

CREATE VIRTUAL TABLE episodes_fts USING fts5(
    content, content='episodes', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
-- Document frequencies per term, read by recall to plan bounded-cost full-text queries.
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, 'row');
CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF content ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO episodes_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE recalls (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL REFERENCES namespaces(agent),
    query TEXT NOT NULL,
    mode TEXT NOT NULL,
    k INTEGER NOT NULL,
    context TEXT NOT NULL DEFAULT '{}',
    at REAL NOT NULL,
    outcome TEXT CHECK (outcome IN ('success', 'failure')),
    outcome_at REAL
);
CREATE INDEX recalls_by_agent ON recalls(agent, at);

-- The queue of deferred access updates, kept in SQLite so a crash loses nothing:
-- a recall appends here; the fold phase turns pending rows into episode features.
CREATE TABLE access_events (
    id INTEGER PRIMARY KEY,
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    recall_id INTEGER REFERENCES recalls(id) ON DELETE CASCADE,
    rank INTEGER,
    score REAL,
    at REAL NOT NULL,
    folded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX access_by_recall ON access_events(recall_id);
CREATE INDEX access_by_episode ON access_events(episode_id);
CREATE INDEX access_pending ON access_events(id) WHERE folded = 0;

-- Immutable history of every change; no foreign keys so it outlives what it describes.
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    agent TEXT NOT NULL,
    item_kind TEXT NOT NULL,
    item_id INTEGER,
    action TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    actor TEXT NOT NULL
);
CREATE INDEX audit_by_item ON audit(item_kind, item_id);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
""")


def m002_embedding_backlog(conn) -> None:
    # The vector table itself is created for the configured model's dimension on first use
    # (strata_daemon/store/vectors.py); this records which episodes still wait for a vector.
    _run(conn, """
ALTER TABLE episodes ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0;
CREATE INDEX episodes_unembedded ON episodes(id) WHERE embedded = 0;
""")


def m003_vector_sequence(conn) -> None:
    # `embedded` becomes the sequence number of the batch that stored the vector (0: none yet),
    # so an in-memory copy of a namespace's vectors can fetch just what is new
    # (strata_daemon/embedding/cache.py); `vector_epoch` changes when vectors are removed.
    _run(conn, """
CREATE INDEX episodes_embedded_seq ON episodes(agent, embedded);
INSERT OR REPLACE INTO meta (key, value) SELECT 'vector_seq', coalesce(max(embedded), 0) FROM episodes;
INSERT OR REPLACE INTO meta (key, value) VALUES ('vector_epoch', '0');
""")


def m004_source_in_full_text(conn) -> None:
    # The full-text index gains the memory's source (who said it), weighted at query time by
    # recall.source_weight; and a memory's neighbours in its session are found by id order.
    _run(conn, """
DROP TRIGGER episodes_fts_insert;
DROP TRIGGER episodes_fts_delete;
DROP TRIGGER episodes_fts_update;
DROP TABLE episodes_vocab;
DROP TABLE episodes_fts;
CREATE VIRTUAL TABLE episodes_fts USING fts5(
    content, source, content='episodes', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, 'row');
CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts(rowid, content, source) VALUES (new.id, new.content, new.source);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content, source) VALUES ('delete', old.id, old.content, old.source);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF content, source ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, content, source) VALUES ('delete', old.id, old.content, old.source);
    INSERT INTO episodes_fts(rowid, content, source) VALUES (new.id, new.content, new.source);
END;
INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
CREATE INDEX episodes_by_session ON episodes(agent, session, id) WHERE session IS NOT NULL;
""")


def m005_persistent_facts(conn) -> None:
    _run(conn, """
-- One row per key in a namespace: its identity and settings. Values live in fact_values.
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL REFERENCES namespaces(agent),
    key TEXT NOT NULL,               -- normalised (strata_daemon/facts/keys.py)
    label TEXT NOT NULL,             -- the key as first written
    importance REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    ttl_seconds REAL CHECK (ttl_seconds IS NULL OR ttl_seconds > 0),
    confirmed_at REAL,               -- latest valid time at which the current value was asserted
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (agent, key)
);

-- Bitemporal history: each row one assertion, true in the world from valid_from until
-- valid_to (the next assertion's valid_from), learned at recorded_at. NULL value: retracted.
CREATE TABLE fact_values (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL REFERENCES facts(id),
    agent TEXT NOT NULL,
    value TEXT,
    valid_from REAL NOT NULL,
    valid_to REAL,
    recorded_at REAL NOT NULL,
    source_kind TEXT NOT NULL,
    source_ref TEXT,
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    rule TEXT,                       -- the capture rule that produced it, if any
    actor TEXT NOT NULL
);
CREATE INDEX fact_values_by_time ON fact_values(fact_id, valid_from, id);
CREATE TRIGGER fact_values_no_delete BEFORE DELETE ON fact_values BEGIN
    SELECT RAISE(ABORT, 'fact history is never deleted');
END;
CREATE TRIGGER fact_values_no_rewrite BEFORE UPDATE OF fact_id, agent, value, valid_from, recorded_at,
    source_kind, source_ref, confidence, rule, actor ON fact_values BEGIN
    SELECT RAISE(ABORT, 'fact history is never rewritten; only valid_to follows later assertions');
END;

-- Every change of a key's value, with the values either side in world time.
CREATE TABLE fact_conflicts (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    fact_id INTEGER NOT NULL REFERENCES facts(id),
    old_value_id INTEGER REFERENCES fact_values(id),
    new_value_id INTEGER NOT NULL REFERENCES fact_values(id),
    next_value_id INTEGER REFERENCES fact_values(id),
    flagged INTEGER NOT NULL DEFAULT 0,  -- another value within facts.conflict_window_seconds
    late INTEGER NOT NULL DEFAULT 0,     -- arrived with a valid time older than the current value's
    at REAL NOT NULL,
    acknowledged_at REAL
);
CREATE INDEX fact_conflicts_by_agent ON fact_conflicts(agent, id);
""")


def m006_spiderweb(conn) -> None:
    _run(conn, """
-- The sum of ln(decay factor) over the namespace's decay runs (strata_daemon/graph/hebbian.py).
ALTER TABLE namespaces ADD COLUMN web_clock REAL NOT NULL DEFAULT 0;
ALTER TABLE namespaces ADD COLUMN web_decay_runs INTEGER NOT NULL DEFAULT 0;

-- Undirected Hebbian edges between nodes named kind:id (strata_daemon/graph/nodes.py), a < b.
-- weight = exp(level + web_clock of the namespace).
CREATE TABLE web_edges (
    agent TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    level REAL NOT NULL,
    activations INTEGER NOT NULL,
    created_at REAL NOT NULL,
    last_at REAL NOT NULL,
    PRIMARY KEY (agent, a, b),
    CHECK (a < b)
) WITHOUT ROWID;
-- Both ends ordered by weight, so a spread reads a hub's heaviest edges only; covering, so
-- the planner never prefers web_edges_by_level for a lookup by node.
CREATE INDEX web_edges_by_a ON web_edges(agent, a, level);
CREATE INDEX web_edges_by_b ON web_edges(agent, b, level);
CREATE INDEX web_edges_by_level ON web_edges(agent, level);

-- The working set: items active together, co-activated when the context is committed.
CREATE TABLE web_context (
    agent TEXT NOT NULL,
    node TEXT NOT NULL,
    activated_at REAL NOT NULL,
    source TEXT NOT NULL,            -- "recall:ID" or the actor who marked it
    PRIMARY KEY (agent, node)
) WITHOUT ROWID;
""")


def m007_entities_and_links(conn) -> None:
    _run(conn, """
-- Things memories mention (strata_daemon/graph/entities.py), as spiderweb nodes entity:TYPE:VALUE.
CREATE TABLE entities (
    agent TEXT NOT NULL,
    type TEXT NOT NULL,
    value TEXT NOT NULL,
    mentions INTEGER NOT NULL DEFAULT 0,
    first_at REAL NOT NULL,
    last_at REAL NOT NULL,
    PRIMARY KEY (agent, type, value)
) WITHOUT ROWID;

-- Typed, directed links between nodes: "mentions" from extraction, the others from people
-- and later phases. They do not decay; spreading follows them at web.link_weight.
CREATE TABLE web_links (
    agent TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('mentions', 'related', 'supports', 'contradicts', 'supersedes')),
    created_at REAL NOT NULL,
    actor TEXT NOT NULL,
    PRIMARY KEY (agent, src, dst, type),
    CHECK (src <> dst)
) WITHOUT ROWID;
CREATE INDEX web_links_by_dst ON web_links(agent, dst, created_at);
""")


def m008_dossiers(conn) -> None:
    _run(conn, """
-- A topic's settings as a person chose them (`strata dossier add|remove`) and its refresh state.
-- Topics from the config and the capsule need no row until they are refreshed or changed.
CREATE TABLE dossier_topics (
    agent TEXT NOT NULL,
    topic TEXT NOT NULL,             -- normalised (strata_daemon/dossier/topics.py)
    query TEXT,                      -- NULL: from the config or capsule, else the topic's words
    fact_prefixes TEXT CHECK (fact_prefixes IS NULL OR json_valid(fact_prefixes)),
    enabled INTEGER CHECK (enabled IS NULL OR enabled IN (0, 1)),  -- NULL: as its origin says
    added_at REAL,                   -- set by `strata dossier add`
    changed_at REAL NOT NULL,
    current_version INTEGER,
    refreshed_at REAL,               -- latest stored version
    checked_at REAL,                 -- latest refresh, including those that found nothing new
    PRIMARY KEY (agent, topic)
) WITHOUT ROWID;

-- Every refresh that changed something: append-only.
CREATE TABLE dossier_versions (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    topic TEXT NOT NULL,
    version INTEGER NOT NULL,
    text TEXT NOT NULL,
    sources TEXT NOT NULL CHECK (json_valid(sources)),   -- [{"id", "salience", ...}] in salience order
    generator TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    notes TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(notes)),  -- why a generator fell back, lines dropped
    created_at REAL NOT NULL,
    actor TEXT NOT NULL,
    UNIQUE (agent, topic, version)
);
CREATE TRIGGER dossier_versions_no_delete BEFORE DELETE ON dossier_versions BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never deleted');
END;
CREATE TRIGGER dossier_versions_no_rewrite BEFORE UPDATE ON dossier_versions BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never rewritten');
END;
""")


def m009_capsule(conn) -> None:
    _run(conn, """
-- Each render of a capsule: what strata wrote in each block, the base for telling a person's
-- edits from its own. The file itself keeps the last capsule.keep_versions copies in state/.
CREATE TABLE capsule_renders (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    blocks TEXT NOT NULL CHECK (json_valid(blocks)),  -- {"facts": ["- bridge: UP", ...], ...}
    sha256 TEXT NOT NULL,                             -- of the whole file as written
    lines INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX capsule_renders_by_agent ON capsule_renders(agent, id);

-- A person's edits inside rendered blocks: lines they added (pin) stay; lines they removed
-- (hide) stay out, until cleared with `strata capsule overrides --clear ID`.
CREATE TABLE capsule_overrides (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    block TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('pin', 'hide')),
    line TEXT NOT NULL,
    created_at REAL NOT NULL,
    cleared_at REAL
);
CREATE INDEX capsule_overrides_by_agent ON capsule_overrides(agent, block, cleared_at);
""")


def m010_phase_runs(conn) -> None:
    _run(conn, """
-- Every run of a daemon phase (or `strata phase run`): when, how it ended, what it did.
CREATE TABLE phase_runs (
    id INTEGER PRIMARY KEY,
    phase TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
    result TEXT CHECK (result IS NULL OR json_valid(result)),
    error TEXT,
    actor TEXT NOT NULL
);
CREATE INDEX phase_runs_by_phase ON phase_runs(phase, id);
""")


def m011_strength_snapshots(conn) -> None:
    _run(conn, """
-- The nightly decay phase's picture of each namespace: how strong its memories are, and how
-- many associations the spiderweb keeps. One row a run; trends are read across rows.
CREATE TABLE strength_snapshots (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    taken_at REAL NOT NULL,
    episodes INTEGER NOT NULL,
    mean REAL,
    p10 REAL,
    p50 REAL,
    p90 REAL,
    weak INTEGER NOT NULL,
    potentiated INTEGER NOT NULL,
    edges INTEGER NOT NULL
);
CREATE INDEX strength_snapshots_by_agent ON strength_snapshots(agent, taken_at);
""")


def m012_consolidation(conn) -> None:
    _run(conn, """
-- What nightly consolidation changes on a memory, besides its state (archived, superseded).
-- Every change is also an audit row holding the values before it, so each can be undone.
ALTER TABLE episodes ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1);
ALTER TABLE episodes ADD COLUMN quality TEXT NOT NULL DEFAULT 'unknown' CHECK (quality IN ('unknown', 'good'));
ALTER TABLE episodes ADD COLUMN strength_factor REAL NOT NULL DEFAULT 1.0
    CHECK (strength_factor > 0 AND strength_factor <= 1);
ALTER TABLE episodes ADD COLUMN potentiated_at REAL;
ALTER TABLE episodes ADD COLUMN stale_at REAL;     -- the latest stale-decay step
ALTER TABLE episodes ADD COLUMN replayed_at REAL;  -- the latest replay
-- Pairs a rule has acted on once and for all (interference: older weakened by newer;
-- associate: an edge added), so running consolidation again changes nothing.
CREATE TABLE consolidation_pairs (
    agent TEXT NOT NULL,
    rule TEXT NOT NULL,
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (agent, rule, a, b)
) WITHOUT ROWID;
""")


def m013_counts_by_state(conn) -> None:
    _run(conn, """
-- `strata status` and the inspector's overview count memories by state on every look: from
-- this index rather than from every row (94 ms at 100,000 memories before, a few after).
CREATE INDEX episodes_by_state ON episodes(agent, state);
""")


def m014_arena(conn) -> None:
    _run(conn, """
-- The retrieval arena (strata_daemon/arena/). Evaluation episodes: a query and the memories that
-- served it, from feedback naming what the agent used (or a rated recall's hits) or from a
-- question set a person added.
CREATE TABLE arena_episodes (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    query TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '{}',
    useful TEXT NOT NULL,            -- JSON list of memory ids
    origin TEXT NOT NULL CHECK (origin IN ('used', 'shared', 'questions')),
    recall_id INTEGER UNIQUE REFERENCES recalls(id) ON DELETE SET NULL,
    created_at REAL NOT NULL
);
CREATE INDEX arena_episodes_by_agent ON arena_episodes(agent, id);

-- Pulls and summed rewards per arm: the bandit's state, kept across runs until a reset.
CREATE TABLE arena_arms (
    agent TEXT NOT NULL,
    arm TEXT NOT NULL,
    pulls INTEGER NOT NULL,
    reward_sum REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (agent, arm)
) WITHOUT ROWID;

CREATE TABLE arena_runs (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    at REAL NOT NULL,
    episodes INTEGER NOT NULL,
    pulls TEXT NOT NULL,             -- JSON [[arm, reward], ...] in pull order
    leader TEXT,
    confirm TEXT,                    -- JSON {arm: mean reward on the confirmation episodes}
    decision TEXT NOT NULL CHECK (decision IN ('adopt', 'keep', 'too_few')),
    reason TEXT NOT NULL,
    seconds REAL NOT NULL
);
CREATE INDEX arena_runs_by_agent ON arena_runs(agent, id);

-- Every change of a namespace's default strategy, so each can be explained and undone.
-- agent '*' is the home-wide choice that namespaces without their own inherit.
-- kind: adopt (arm), keep (the configured default, decided), clear (no choice: inherit).
CREATE TABLE arena_choices (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('adopt', 'keep', 'clear')),
    arm TEXT,
    reason TEXT NOT NULL,
    run_id INTEGER,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    CHECK ((kind = 'adopt') = (arm IS NOT NULL))
);
CREATE INDEX arena_choices_by_agent ON arena_choices(agent, id);

-- The strategy each recall used, so feedback can be traced to it.
ALTER TABLE recalls ADD COLUMN arm TEXT;
""")


def m015_tiers(conn) -> None:
    _run(conn, """
-- Forgetting demotes, it never hides. Consolidation moves a memory between the hot tier (what
-- the capsule, dossiers and working set draw on) and the cold tier; recall reaches both, the
-- cold one ranking lower. Only an explicit forget (state archived) takes a memory out of recall.
ALTER TABLE episodes ADD COLUMN tier TEXT NOT NULL DEFAULT 'hot' CHECK (tier IN ('hot', 'cold'));
ALTER TABLE episodes ADD COLUMN tier_at REAL;  -- when it last moved between tiers
UPDATE episodes SET tier = 'cold' WHERE state = 'superseded';
-- Counts by state and tier (`strata status`, the inspector) from the index, as by state before.
DROP INDEX episodes_by_state;
CREATE INDEX episodes_by_state ON episodes(agent, state, tier);
-- Before tiers, consolidation's archive rule set state archived, which hid the memory: such a
-- memory becomes an active one in the cold tier. One archived by `strata forget` stays archived.
CREATE TEMP TABLE cooled AS
    SELECT e.id FROM episodes e WHERE e.state = 'archived' AND (
        SELECT a.action FROM audit a WHERE a.item_kind = 'episode' AND a.item_id = e.id
        AND (a.action = 'consolidate:archive' OR a.action = 'state') ORDER BY a.id DESC LIMIT 1
    ) = 'consolidate:archive';
UPDATE episodes SET state = 'active', tier = 'cold', tier_at = updated_at WHERE id IN (SELECT id FROM cooled);
INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor)
    SELECT unixepoch('subsec'), e.agent, 'episode', e.id, 'state',
           json_object('from', 'archived', 'to', 'active', 'tier', 'cold',
                       'reason', 'migration 15: archived by consolidation, now in the cold tier'),
           'migration'
    FROM episodes e WHERE e.id IN (SELECT id FROM cooled);
DROP TABLE cooled;
""")


def m016_arena_newest_episode(conn) -> None:
    _run(conn, """
-- The newest evaluation episode each arena run saw: a night with none newer has nothing new to
-- learn from, and the daemon's arena phase skips it (its cost follows new feedback, not the
-- home's age).
ALTER TABLE arena_runs ADD COLUMN newest_episode INTEGER;
""")


def m017_feedback_events(conn) -> None:
    _run(conn, """
-- Each memory a feedback concerned, with its outcome and time, as access_events holds each
-- access: the usage of a memory as of any moment can be read back. The arena scores a strategy
-- on an evaluation episode with the memories as they were when its question was asked; with
-- today's counts, the feedback that made the episode would lift its own answers, and a strategy
-- weighting recent use would win on evidence it created.
CREATE TABLE feedback_events (
    id INTEGER PRIMARY KEY,
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    recall_id INTEGER REFERENCES recalls(id) ON DELETE CASCADE,
    outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
    at REAL NOT NULL
);
CREATE INDEX feedback_by_episode ON feedback_events(episode_id, at);
INSERT INTO feedback_events (episode_id, recall_id, outcome, at)
    SELECT j.value, a.item_id, json_extract(a.data, '$.outcome'), a.at
    FROM audit a, json_each(a.data, '$.episodes') j
    WHERE a.item_kind = 'recall' AND a.action = 'feedback' AND j.value IN (SELECT id FROM episodes);
""")


def m018_imports(conn) -> None:
    _run(conn, """
-- Each input strata import has stored from, known by the SHA-256 of its bytes, and how many of
-- its rows are stored: counted in the transaction that stores them, so a run cut short and run
-- again goes on after the last stored row instead of folding the same lines in a second time.
CREATE TABLE imports (
    agent TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    rows_stored INTEGER NOT NULL,
    rows_total INTEGER NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    PRIMARY KEY (agent, input_sha256)
);
""")


def m019_phase_runs_interrupted(conn) -> None:
    _run(conn, """
-- A run a stop request ended is 'interrupted' (its work rolled back), and each run names the
-- process that ran it: a row a killed process left 'running' is marked interrupted when the
-- daemon next starts, instead of showing as running forever beside "daemon not running".
CREATE TABLE phase_runs_new (
    id INTEGER PRIMARY KEY,
    phase TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
    result TEXT CHECK (result IS NULL OR json_valid(result)),
    error TEXT,
    actor TEXT NOT NULL,
    pid INTEGER
);
INSERT INTO phase_runs_new (id, phase, started_at, ended_at, status, result, error, actor)
    SELECT id, phase, started_at, ended_at, status, result, error, actor FROM phase_runs;
DROP TABLE phase_runs;
ALTER TABLE phase_runs_new RENAME TO phase_runs;
CREATE INDEX phase_runs_by_phase ON phase_runs(phase, id);
""")


def m020_redaction(conn) -> None:
    _run(conn, """
-- A purge (strata_daemon/forgetting/) must take a memory's words out of what was derived from it,
-- including the append-only history. It holds a row here for the length of its transaction,
-- so no other writer ever sees one: the guards below give way to it alone, and only as far as
-- replacing words (the audit's data, a dossier version's text); rows are never deleted from
-- the audit, and the when, who and what of each row stay as they were.
CREATE TABLE redacting (purge INTEGER NOT NULL);
DROP TRIGGER audit_no_update;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
WHEN NOT EXISTS (SELECT 1 FROM redacting) OR new.id IS NOT old.id OR new.at IS NOT old.at
    OR new.agent IS NOT old.agent OR new.item_kind IS NOT old.item_kind OR new.item_id IS NOT old.item_id
    OR new.action IS NOT old.action OR new.actor IS NOT old.actor
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
DROP TRIGGER fact_values_no_delete;
CREATE TRIGGER fact_values_no_delete BEFORE DELETE ON fact_values WHEN NOT EXISTS (SELECT 1 FROM redacting) BEGIN
    SELECT RAISE(ABORT, 'fact history is never deleted');
END;
DROP TRIGGER dossier_versions_no_rewrite;
CREATE TRIGGER dossier_versions_no_rewrite BEFORE UPDATE ON dossier_versions
WHEN NOT EXISTS (SELECT 1 FROM redacting) OR new.id IS NOT old.id OR new.agent IS NOT old.agent
    OR new.topic IS NOT old.topic OR new.version IS NOT old.version OR new.generator IS NOT old.generator
    OR new.created_at IS NOT old.created_at OR new.actor IS NOT old.actor
BEGIN
    SELECT RAISE(ABORT, 'dossier versions are never rewritten');
END;
-- A deleted memory's entries leave the full-text index itself, not only its results.
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('secure-delete', 1);
""")


def m021_stated_times(conn) -> None:
    _run(conn, """
-- The times a memory states ("yesterday", "last May"), resolved when it is stored
-- (strata_daemon/episodes/stated.py). Offsets into the text, never its words: a purge deletes
-- the memory and these go with it.
CREATE TABLE stated_times (
    episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    at INTEGER NOT NULL,        -- where the phrase starts in the text (characters)
    length INTEGER NOT NULL,
    start_at REAL NOT NULL,     -- the span it means, UTC, end exclusive
    end_at REAL NOT NULL
);
CREATE INDEX stated_times_by_episode ON stated_times(episode_id);
""")
    last = 0
    while rows := conn.execute("SELECT id, content, event_at FROM episodes WHERE id > ? ORDER BY id LIMIT 5000",
                               (last,)).fetchall():  # a batch at a time: a home of a million stays small here
        conn.executemany("INSERT INTO stated_times (episode_id, at, length, start_at, end_at) VALUES (?, ?, ?, ?, ?)",
                         stated_rows((r[0], r[1], r[2]) for r in rows))
        last = rows[-1][0]


def m022_stated_times_by_start(conn) -> None:
    _run(conn, """
-- A question naming a time finds the memories stating a time then (episodes/recall.py,
-- window_members): by where their spans start. IF NOT EXISTS: a development version of
-- migration 21 made this index, and homes made then have it.
CREATE INDEX IF NOT EXISTS stated_times_by_start ON stated_times(start_at);
""")


def m023_episode_id_floor(conn) -> None:
    # A purge of a lower id after a higher one lowered the floor (storage/floors.py compared a
    # number with text), so a new memory could take a purged memory's id. The audit names every
    # id ever given: the floor goes back above all of them.
    given = conn.execute("SELECT max(item_id) FROM audit WHERE item_kind = 'episode'").fetchone()[0]
    if given:
        floors.raise_floor(conn, floors.EPISODES, int(given))


def m024_recall_history(conn) -> None:
    _run(conn, """
-- Recalls older than daemon.recalls_keep_days are pruned (episodes/history.py): their folded
-- accesses become one row per memory and day, counting how many they were.
ALTER TABLE access_events ADD COLUMN n INTEGER NOT NULL DEFAULT 1;
-- An evaluation episode keeps when its question was asked, which its recall held: the arena
-- replays it with the memories' use as of then, after the recall is pruned too.
ALTER TABLE arena_episodes ADD COLUMN asked_at REAL;
UPDATE arena_episodes SET asked_at = (SELECT at FROM recalls WHERE recalls.id = arena_episodes.recall_id)
    WHERE recall_id IS NOT NULL;
""")


def m025_unbury_the_passed_over(conn) -> None:
    # Stale decay and the archive rule no longer act on feedback (consolidation/rules.py,
    # cold_reason): give back what they took for it. Each such change is in the audit with its
    # reason and the value before it; a memory consolidation still finds redundant or
    # contradicted is taken again on the next night, with that reason.
    rows = conn.execute("SELECT agent, item_id, action, data FROM audit WHERE item_kind = 'episode' "
                        "AND action IN ('consolidate:stale', 'consolidate:archive') "
                        "AND json_extract(data, '$.reason') LIKE '%unhelpful:%' ORDER BY id").fetchall()
    confidence, cold = {}, set()
    for agent, episode, action, data in rows:
        if action == "consolidate:stale":
            confidence.setdefault((agent, episode), json.loads(data).get("before", {}).get("confidence", 1.0))
        else:
            cold.add((agent, episode))
    now = time.time()
    conn.executemany("UPDATE episodes SET confidence = max(confidence, ?), stale_at = NULL WHERE agent = ? AND id = ?",
                     [(c, agent, episode) for (agent, episode), c in confidence.items()])
    conn.executemany("UPDATE episodes SET tier = 'hot', tier_at = ? WHERE agent = ? AND id = ? AND tier = 'cold' "
                     "AND state = 'active'", [(now, agent, episode) for agent, episode in cold])


MIGRATIONS: tuple[tuple[int, str, Callable], ...] = (
    (1, "episodic store", m001_episodic_store),
    (2, "embedding backlog", m002_embedding_backlog),
    (3, "vector sequence", m003_vector_sequence),
    (4, "source in full text", m004_source_in_full_text),
    (5, "persistent facts", m005_persistent_facts),
    (6, "spiderweb", m006_spiderweb),
    (7, "entities and links", m007_entities_and_links),
    (8, "dossiers", m008_dossiers),
    (9, "capsule", m009_capsule),
    (10, "phase runs", m010_phase_runs),
    (11, "strength snapshots", m011_strength_snapshots),
    (12, "consolidation", m012_consolidation),
    (13, "counts by state", m013_counts_by_state),
    (14, "arena", m014_arena),
    (15, "tiers", m015_tiers),
    (16, "arena newest episode", m016_arena_newest_episode),
    (17, "feedback events", m017_feedback_events),
    (18, "imports", m018_imports),
    (19, "phase runs interrupted", m019_phase_runs_interrupted),
    (20, "redaction", m020_redaction),
    (21, "stated times", m021_stated_times),
    (22, "stated times by start", m022_stated_times_by_start),
    (23, "episode id floor", m023_episode_id_floor),
    (24, "recall history", m024_recall_history),
    (25, "unbury the passed over", m025_unbury_the_passed_over),
)


def applied(conn) -> set[int]:
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "applied_at REAL NOT NULL)")
    return {row[0] for row in conn.execute("SELECT id FROM _migrations")}


def migrate(conn) -> list[int]:
    """Apply what is missing; safe when several processes start at once (BEGIN IMMEDIATE serialises them)."""
    known = {n for n, _, _ in MIGRATIONS}
    done = applied(conn)
    newer = done - known
    if newer:
        raise StorageError(f"the database was written by a newer strata (migration {max(newer)})",
                           hint="upgrade strata, or point --home at another home")
    ran = []
    for number, name, step in MIGRATIONS:
        if number in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM _migrations WHERE id = ?", (number,)).fetchone():
                conn.execute("ROLLBACK")
                continue
            step(conn)
            conn.execute("INSERT INTO _migrations (id, name, applied_at) VALUES (?, ?, ?)",
                         (number, name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        ran.append(number)
    return ran
