"""Recall: candidates from the retrievers, composite scoring, filters, explanations."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from strata_daemon.scoring import EpisodeFeatures, ScoringParams, context_match, learning_phase, score_episode
from strata_daemon.scoring.batch import Columns, composites
from strata_daemon.store import vectors
from strata_daemon.embedding.cache import VectorCache
from strata_daemon.facts.named import named_in
from strata_daemon.store import graph as web_store
from strata_daemon.store.nodes import episode_id
from strata_daemon.graph import edges as web_edges
from strata_daemon.graph.spread import spread as spread_activation, strength
from strata_daemon.store.db import Database
from strata_daemon.store.fulltext import Scope, search
from strata_daemon.recall.currency import asks_present, newer_alike
from strata_daemon.recall.fusion import Candidate, fuse, normalised, session_boost, spread
from strata_daemon.episodes.when import Window

# A stated span starts at most this long before a window it meets: the longest a phrase
# states is a year ("last year", "in 2022"), so the index on its start bounds the search.
STATED_SPAN_MOST = 366 * 86400.0
# Spreading's second step starts from this many of the best full-text matches: what the rest
# would pass two memories on moves no rank (LoCoMo: 0.7134 / 0.8021 against 0.7138 / 0.8025
# from every match), and reading their neighbours' neighbours cost 7 ms a recall at 100,000.
FURTHER_FROM = 10

CANDIDATE_COLUMNS = ("e.id, e.kind, e.content, e.event_at, e.last_access_at, e.access_count, e.importance, "
                      "e.success_count, e.failure_count, e.factual, e.context, e.state, e.source, e.session, "
                      "e.confidence, e.quality, e.strength_factor, e.tier")


@dataclass(frozen=True)
class Tuning:
    """The recall.* settings that shape candidates and their fusion."""
    candidates: int
    fts_budget: int
    source_weight: float
    fusion: str
    rrf_k: int
    fts_weight: float
    vector_weight: float
    spread_to_next: float
    spread_to_previous: float
    session_weight: float
    superseded_factor: float
    present_similarity: float
    present_parallel: float
    min_similarity: float
    when_weight: float
    date_weight: float
    hop_weight: float
    hop_seeds: int
    hop_words: int
    spread_further: float
    source_named_weight: float
    asking_discount: float

    @classmethod
    def from_config(cls, cfg) -> "Tuning":
        return cls(int(cfg["recall.candidates"]), int(cfg["recall.fts_budget"]), float(cfg["recall.source_weight"]),
                   cfg["recall.fusion"], int(cfg["recall.rrf_k"]), float(cfg["recall.fts_weight"]),
                   float(cfg["recall.vector_weight"]), float(cfg["recall.spread_to_next"]),
                   float(cfg["recall.spread_to_previous"]), float(cfg["recall.session_weight"]),
                   float(cfg["recall.superseded_factor"]), float(cfg["recall.present_similarity"]),
                   float(cfg["recall.present_parallel"]), float(cfg["recall.min_similarity"]),
                   float(cfg["recall.when_weight"]), float(cfg["recall.date_weight"]),
                   float(cfg["recall.hop_weight"]), int(cfg["recall.hop_seeds"]), int(cfg["recall.hop_words"]),
                   float(cfg["recall.spread_further"]), float(cfg["recall.source_named_weight"]),
                   float(cfg["recall.asking_discount"]))


@dataclass
class Lexical:
    """What the full-text read found: candidates in rank order, the plan, the namespace's learning
    phase, and (when spreading) each hit's session neighbours with their rows."""
    candidates: list[Candidate]
    plan: dict
    phase: str
    around: dict[int, tuple[int | None, int | None]]
    rows: dict[int, dict]
    facts: list[dict]  # current facts the query names, longest key first
    fact_rows: dict[int, dict]  # the memories their current values came from


def _fact_sources(facts: list[dict]) -> list[int]:
    return [int(f["source"].split(":", 1)[1]) for f in facts if f["source"].startswith("episode:")]


async def fts_candidates(db: Database, scope: Scope, query: str, tuning: Tuning, params: ScoringParams, *,
                         neighbours: bool = False, facts_at: float | None = None) -> Lexical:
    """Full-text candidates, read in one hop with everything else that does not need the query's
    vector, so that this hop can run while the query is embedded (recall.overlap_embedding)."""
    spreading = neighbours and (tuning.spread_to_next > 0 or tuning.spread_to_previous > 0)

    def read(conn):
        found, plan = search(conn, query, scope, CANDIDATE_COLUMNS, limit=tuning.candidates,
                             budget=tuning.fts_budget, source_weight=tuning.source_weight)
        counts = conn.execute("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?",
                              (scope.agent,)).fetchone()
        around, rows = {}, {}
        if spreading and found:
            ids = [r["id"] for r, _ in found]
            around = _session_neighbours(conn, scope.agent, ids)
            if tuning.spread_further > 0:  # the second step, from the best matches' neighbours
                around.update(_session_neighbours(conn, scope.agent, list(
                    {n for i in ids[:FURTHER_FROM] for n in around.get(i, ()) if n is not None} - around.keys())))
            rows = rows_in_scope(conn, scope, {n for pair in around.values() for n in pair if n is not None})
        facts = [] if facts_at is None else named_in(conn, scope.agent, query, facts_at)
        return found, plan, counts, around, rows, facts, rows_in_scope(conn, scope, _fact_sources(facts))

    found, plan, counts, around, rows, facts, fact_rows = await db.run(read)
    phase = learning_phase(*(counts or (0, 0)), params)
    best = found[0][1] if found else 0.0
    out = []
    for rank, (r, score) in enumerate(found, 1):
        c = Candidate(r, raw={"fts": score})
        c.retrievers["fts"] = {"rank": rank, plan["scorer"]: score}
        # In a tiny corpus every word is in every memory and BM25 is ~0: treat hits as equally relevant.
        c.relevance = score / best if best > 1e-6 else 1.0
        out.append(c)
    rows.update((c.row["id"], c.row) for c in out)  # a full-text hit is in scope
    return Lexical(out, plan, phase, around, rows, facts, fact_rows)


async def namespace_phase(db: Database, agent: str, params: ScoringParams) -> str:
    row = await db.fetchone("SELECT episode_count, feedback_count FROM namespaces WHERE agent = ?", (agent,))
    episodes, feedback = (row[0], row[1]) if row else (0, 0)
    return learning_phase(episodes, feedback, params)


def with_fact_sources(candidates: list[Candidate], lexical: Lexical) -> tuple[list[Candidate], dict[int, int]]:
    """The candidates plus the memories behind the current facts the query names (which lead
    the hits, the most specific fact's first), each marked with the fact it supports."""
    by_id = {c.row["id"]: c for c in candidates}
    first: dict[int, int] = {}
    for f in lexical.facts:
        for i in _fact_sources([f]):
            if i not in lexical.fact_rows:
                continue  # outside the recall's scope (archived, another kind)
            c = by_id.get(i)
            if c is None:
                c = by_id[i] = Candidate(lexical.fact_rows[i])
                c.relevance = 1.0
                candidates = [*candidates, c]
            c.retrievers["fact"] = {"key": f["key"], "value": f["value"]}
            first.setdefault(i, len(first))
    return candidates, first


SUPERSESSION_DEPTH = 4  # most passes that settle a chain of supersessions among the candidates


async def with_superseders(db: Database, scope: Scope, candidates: list[Candidate]
                           ) -> tuple[list[Candidate], dict[int, set[int]]]:
    """The candidates plus the in-scope memories that directly supersede one of them (a newer
    statement of the same fact: brought in with the relevance of what it replaces), and for
    each superseded candidate the ids of its superseders among them, in one hop. Only direct
    superseders come in: a status that changed a hundred times brings one newer line, not a
    hundred."""
    by_id = {c.row["id"]: c for c in candidates}

    def read(conn):
        newer: dict[int, set[int]] = {}
        for dst, src in web_store.superseders(conn, scope.agent, [f"episode:{i}" for i in by_id]):
            old, new = episode_id(dst), episode_id(src)
            if old is not None and new is not None:
                newer.setdefault(old, set()).add(new)
        wanted = {i for news in newer.values() for i in news} - by_id.keys()
        return newer, rows_in_scope(conn, scope, wanted)

    newer, rows = await db.run(read)
    if not newer:
        return candidates, {}
    out = list(candidates)
    for old in list(newer):
        for i in sorted(newer[old]):
            if i in by_id or i not in rows:
                continue
            n = by_id[i] = Candidate(rows[i])
            n.relevance = by_id[old].relevance
            n.retrievers["supersedes"] = {"memory": old}
            out.append(n)
    return out, {old: {i for i in news if i in by_id} for old, news in newer.items()}


def alike_newer(candidates: list[Candidate], cache: VectorCache | None, query: str, k: int,
                similarity: float, parallel: float) -> dict[int, set[int]]:
    """For a question about the present: among the most relevant candidates, older id -> the
    newer ones alike it (episodes/currency.py). Needs the vectors in memory (recall.vector_cache)."""
    if cache is None or similarity <= 0 or not asks_present(query):
        return {}
    top = sorted(candidates, key=lambda c: -c.relevance)[:max(10, 2 * k)]
    vectors = cache.vectors(c.row["id"] for c in top)
    return newer_alike([(c.row["id"], c.row["event_at"], c.row["content"]) for c in top], vectors, query,
                       similarity=similarity, parallel=parallel)


def _below_superseders(score: list[float], index: dict[int, int], eligible, superseded: dict[int, set[int]],
                       factor: float) -> dict[int, list[int]]:
    """Rank each superseded memory just below what supersedes it: a superseder scoring less is
    lifted to the superseded memory's score, which then falls to `factor` times that (in
    chains, from the newest down). A query that matches the old statement best thus finds the
    new one first and the old one next, not the old one pushed down to the new one's weaker
    match. Returns, for each superseded memory, the ranked superseders it stays below."""
    below = {old: sorted(i for i in news if i in index and eligible[index[i]]) for old, news in superseded.items()}
    for _ in range(SUPERSESSION_DEPTH + 1):
        changed = False
        for old, news in below.items():
            j = index[old]
            for new in news:
                k = index[new]
                if score[k] < score[j]:
                    score[k], changed = score[j], True
                if score[j] > score[k] * factor + 1e-12:
                    score[j], changed = score[k] * factor, True
        if not changed:
            break
    return {old: news for old, news in below.items() if news}


# Alike memories are reordered only among the first hits: which memories a recall returns in its
# top 5 (and top 10) stays what scoring chose. Reordering all k hits, or capping scores as a
# `supersedes` link does, cost 0.014 (0.073) of LoCoMo evidence recall@5 in turns that are alike
# without one updating the other.
ALIKE_WINDOW = 5


def _newer_above(shown: list[int], ids: list[int], alike: dict[int, set[int]]
                 ) -> tuple[list[int], dict[int, list[int]]]:
    """The first hits (candidate positions, best first) with each newer memory alike an older
    one moved just above it, when it ranked below; the set stays the same, so only the order
    changes. Returns the order and, per older id, the newer ids moved above it."""
    if not alike:
        return shown, {}
    order = list(shown)
    moved: dict[int, list[int]] = {}
    at = 0
    while at < len(order):
        old = ids[order[at]]
        later = [p for p in order[at + 1:] if ids[p] in alike.get(old, ())]
        if later:
            for p in later:
                order.remove(p)
            order[at:at] = later
            moved.setdefault(old, []).extend(ids[p] for p in later)
            at += len(later)
        at += 1
    return order, moved


def features_of(r, context: dict) -> EpisodeFeatures:
    """A stored row's scoring inputs."""
    return EpisodeFeatures(
        event_at=r["event_at"], last_access_at=r["last_access_at"], access_count=r["access_count"],
        importance=r["importance"], successes=r["success_count"], failures=r["failure_count"],
        factual=bool(r["factual"]), context=context, confidence=r["confidence"], good=r["quality"] == "good",
        strength_factor=r["strength_factor"], cold=r["tier"] == "cold")


# Retrievers record raw scores; they are rounded only for the k memories shown (a recall
# ranks ~150 candidates, and rounding every score of every one cost more than the fusion).
_FOUR_PLACES = ("cosine", "bm25", "idf-sum")


def _shown(explained: dict) -> dict:
    return {k: round(v, 4 if k in _FOUR_PLACES else 6) if isinstance(v, float) else v for k, v in explained.items()}


# The breakdown's parts a hit's explanation shows: the six signals and the three factors.
_SIGNALS = ("relevance", "recency", "strength", "priority", "wilson", "context", "trust", "tier", "penalty")


def rank_candidates(candidates: list[Candidate], *, query_context: dict, now: float, params: ScoringParams,
                    phase: str, k: int, first: dict[int, int] | None = None,
                    superseded: dict[int, set[int]] | None = None, alike: dict[int, set[int]] | None = None,
                    superseded_factor: float = 0.9) -> tuple[list[dict], int]:
    """Score and order (memories in `first` lead; a superseded memory ranks below what
    supersedes it, and, for a question about the present, below a newer one alike it); in the
    thresholds' filter mode, also filter. Returns (hits, how many the thresholds filtered out).
    Every candidate is scored at once; the breakdown that explains a hit is worked out for the
    k shown."""
    rows = [c.row for c in candidates]
    contexts = [json.loads(r["context"]) for r in rows] if query_context else None
    matches = np.array([context_match(query_context, x) for x in contexts]) if contexts else np.zeros(len(rows))
    composite, eligible = composites(Columns.of(rows), np.array([c.relevance for c in candidates]), matches, now,
                                     params, phase)
    kept = np.flatnonzero(eligible).tolist()
    score = composite.tolist()
    superseded = superseded or {}
    below = _below_superseders(score, {r["id"]: j for j, r in enumerate(rows)}, eligible, superseded,
                               superseded_factor) if superseded else {}
    first = first or {}
    kept.sort(key=lambda j: (first.get(rows[j]["id"], len(first)), -score[j], -rows[j]["id"]))
    top = min(k, ALIKE_WINDOW)
    kept[:top], moved = _newer_above(kept[:top], [r["id"] for r in rows], alike or {})
    hits = []
    for rank, j in enumerate(kept[:k], 1):
        c, r = candidates[j], rows[j]
        feats = features_of(r, contexts[j] if contexts else {})
        b = score_episode(feats, c.relevance, query_context, now, params, phase)
        hits.append({
            "rank": rank, "id": r["id"], "score": round(score[j], 6), "kind": r["kind"], "content": r["content"],
            "event_at": r["event_at"], "source": r["source"], "session": r["session"],
            "factual": feats.factual, "context": feats.context or json.loads(r["context"]),
            "tier": r["tier"], "state": r["state"],
            "explain": {"signals": {k_: round(v, 6) for k_, v in b.as_dict().items() if k_ in _SIGNALS},
                        "retrievers": {name: _shown(v) for name, v in c.retrievers.items()},
                        "features": {"access_count": feats.access_count, "successes": feats.successes,
                                     "failures": feats.failures, "importance": feats.importance},
                        **({"penalised": b.reason} if b.reason else {}),
                        **({"superseded_by": below[r["id"]]} if r["id"] in below else {}),
                        **({"newer_alike": moved[r["id"]]} if r["id"] in moved else {})},
        })
    return hits, len(rows) - len(kept)


async def nearest(db: Database, scope: Scope, vector, limit: int, spec: vectors.Spec, cache: VectorCache | None,
                  known: dict[int, dict]) -> tuple[list[tuple[int, float]], dict[int, dict]]:
    """The namespace's nearest vectors, (episode id, cosine distance), and the rows of those in
    the recall's scope that `known` lacks, in one hop, after checking that the index holds
    vectors of `spec`. The in-memory copy is searched on the database thread (about 3 ms at
    100,000 memories): searching it in a worker thread beside the full-text hop was measured
    slower on two cores (`bench recall` at 100k: p50 21.0 against 19.8 ms, p95 31 against 25)."""
    def read(conn):
        vectors.check(conn, spec)
        if cache is None:
            near = vectors.nearest(conn, scope.agent, vector, limit)
        else:
            cache.sync(conn)
            near = cache.search(vector, limit)
        return near, rows_in_scope(conn, scope, {i for i, _ in near} - known.keys())

    return await db.run(read)


async def graph_reach(db: Database, scope: Scope, web, seeds: list[int], known: dict[int, dict]
                      ) -> tuple[dict[int, dict], dict[int, tuple[float, int]], dict[int, dict]]:
    """For deep recall, in one hop: the memories a spread from the seed memories reaches
    (id -> {"activation", "path", "via"}), each memory's strongest direct Hebbian edge to a seed
    (id -> (weight / cap, seed id)), and the rows in scope of those that `known` lacks."""
    nodes = [f"episode:{i}" for i in seeds]

    def read(conn):
        reached = {}
        for r in spread_activation(nodes, lambda ns, floors: web.neighbours_in(conn, ns, floors), depth=web.depth,
                                   threshold=web.threshold, cap=web.rules.cap, fan_out=web.fan_out):
            i = episode_id(r.node)
            if i is not None:
                reached[i] = {"activation": round(r.activation, 6), "path": list(r.path), "via": r.via}
        hebb: dict[int, tuple[float, int]] = {}
        for seed, edges in web_edges.neighbours(conn, scope.agent, nodes).items():
            for other, weight, _ in edges:
                i = episode_id(other)
                share = strength(weight, web.rules.cap)
                if i is not None and share > hebb.get(i, (0.0, 0))[0]:
                    hebb[i] = (share, episode_id(seed))
        return reached, hebb, rows_in_scope(conn, scope, (set(reached) | set(hebb)) - known.keys())

    return await db.run(read)


def rows_in_scope(conn, scope: Scope, ids) -> dict[int, dict]:
    """The candidate rows of these ids that the recall's scope holds."""
    ids = list(ids)
    if not ids:
        return {}
    where, params = scope.where(by_id=True)
    return {r["id"]: dict(r) for r in conn.execute(
        f"SELECT {CANDIDATE_COLUMNS} FROM episodes e WHERE e.id IN ({', '.join('?' * len(ids))}) AND {where}",
        (*ids, *params))}


def window_members(conn, scope: Scope, window: Window, limit: int) -> list[int]:
    """The ids of the memories in scope said within the window or stating a time within it,
    at most `limit` of each (the latest first; for "in June", the latest Junes first)."""
    if window.month is None:
        spans = [(window.start, window.end)]
    else:
        first, last = conn.execute("SELECT min(event_at), max(event_at) FROM episodes WHERE agent = ?",
                                   (scope.agent,)).fetchone()
        spans = window.spans(first, last)[::-1] if first is not None else []
    where, params = scope.where()
    by_id, by_id_params = scope.where(by_id=True)
    said: dict[int, None] = {}  # ordered, latest first
    stating: dict[int, None] = {}
    for start, end in spans:
        if len(said) < limit:
            said.update((r[0], None) for r in conn.execute(
                f"SELECT e.id FROM episodes e WHERE {where} AND e.event_at >= ? AND e.event_at < ? "
                "ORDER BY e.event_at DESC LIMIT ?", (*params, start, end, limit - len(said))))
        if len(stating) < limit:
            # From the stated spans by their start, then each memory by its key: led by the
            # namespace's index instead, SQLite would read every memory of the namespace.
            stating.update((r[0], None) for r in conn.execute(
                f"SELECT e.id FROM episodes e WHERE e.id IN (SELECT episode_id FROM stated_times WHERE start_at >= ? "
                f"AND start_at < ? AND end_at > ?) AND {by_id} ORDER BY e.id DESC LIMIT ?",
                (start - STATED_SPAN_MOST, end, start, *by_id_params, limit - len(stating))))
    return list({**said, **stating})


def _session_neighbours(conn, agent: str, ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
    """id -> (previous id, next id) in its session, by id order, for memories with a session."""
    if not ids:
        return {}
    return {r[0]: (r[1], r[2]) for r in conn.execute(
        "SELECT e.id, (SELECT max(p.id) FROM episodes p WHERE p.agent = e.agent AND p.session = e.session "
        "AND p.id < e.id), (SELECT min(n.id) FROM episodes n WHERE n.agent = e.agent AND n.session = e.session "
        f"AND n.id > e.id) FROM episodes e WHERE e.id IN ({', '.join('?' * len(ids))}) AND +e.agent = ? "
        "AND e.session IS NOT NULL", (*ids, agent))}


def vector_list(rows: dict[int, dict], near: list[tuple[int, float]], min_similarity: float = 0.0) -> list[Candidate]:
    """The nearest memories within the recall's scope (those in `rows`), in vector rank order;
    those less alike than `min_similarity` are no match at all, only the least far of strangers."""
    out = []
    kept = ((i, d) for i, d in near if i in rows and 1.0 - d >= min_similarity)
    for rank, (i, distance) in enumerate(kept, 1):
        c = Candidate(rows[i], raw={"vector": 1.0 - distance})
        c.retrievers["vector"] = {"rank": rank, "cosine": 1.0 - distance}
        out.append(c)
    return with_normalised(out, "vector")


def with_normalised(candidates: list[Candidate], name: str) -> list[Candidate]:
    """Relevance on a 0..1 scale within the list (min-max of the raw scores), as fusion by scores needs."""
    scaled = normalised(candidates, name)
    for c in candidates:
        c.relevance = scaled[c.row["id"]]
    return candidates


def balanced_candidates(lexical: Lexical, near: list[tuple[int, float]], rows: dict[int, dict],
                        tuning: Tuning) -> list[Candidate]:
    """Full-text and vector candidates as one list: spreading within sessions (full text only:
    spreading vector similarity measured worse), fusion, session aggregation. `rows` holds
    every memory in scope that the vector search or the spreading reached."""
    fts = with_normalised(lexical.candidates, "fts")
    if lexical.around:
        fts = spread(fts, lexical.around, lexical.rows, to_next=tuning.spread_to_next,
                     to_previous=tuning.spread_to_previous, further=tuning.spread_further)
    fused = fuse({"fts": fts, "vector": vector_list({**lexical.rows, **rows}, near, tuning.min_similarity)},
                 {"fts": tuning.fts_weight, "vector": tuning.vector_weight}, method=tuning.fusion, k=tuning.rrf_k)
    return session_boost(fused, tuning.session_weight)
