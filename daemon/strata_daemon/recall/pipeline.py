"""Recall's reading half as a pipeline: one function per stage, run in order over one list of
candidates. Each stage says what it did in the trace (`stages` in a recall's result, shown by
`--explain`): how many candidates it found or left, and how long it took.

    full text ─┐
    meaning ───┴─ fusion ─ second hop ─ graph (deep) ─ time asked ─ time named ─ source named
    ─ asking ─ cross-encoder (deep) ─ fact sources ─ supersession ─ alike newer ─ (use as of) ─ rank

The stages' scoring lives in recall.py, deep.py and scoring/; this module only orders them,
so that a new stage is one function here and one line in `run`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from strata_daemon.store import vectors as vector_index
from strata_daemon.embedding.cache import VectorCache
from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.scoring import ScoringParams
from strata_daemon.store.db import Database
from strata_daemon.store import episode_reads as reads
from strata_daemon.recall.asking import told_share
from strata_daemon.recall.deep import DeepWeights, combine, reranked, seeds_of
from strata_daemon.store.fulltext import Scope, rarest_within, search, word_shares
from strata_daemon.recall.hop import expansion
from strata_daemon.recall.named import named_sources
from strata_daemon.recall.candidates import (CANDIDATE_COLUMNS, Candidate, Lexical, Tuning, alike_newer,
                                             balanced_candidates, fts_candidates, graph_reach, nearest,
                                             rank_candidates, rows_in_scope, window_members, with_fact_sources,
                                             with_superseders)
from strata_daemon.episodes.when import asks_when, named_time, says_when
from strata_daemon.recall.why import why_line
from strata_daemon.episodes.stated import with_times


@dataclass
class Request:
    """A recall, checked: what to look for and with which settings."""
    query: str
    mode: str
    k: int
    scope: Scope
    query_context: dict[str, str]
    now: float
    params: ScoringParams
    tuning: Tuning
    deep: DeepWeights
    facts_in_recall: bool
    overlap_embedding: bool
    as_of: bool = False


@dataclass
class Sources:
    """What the stages read besides the database: the query's embedding (started by the caller
    on its own thread, or None for full text only), the in-memory vectors and the spiderweb."""
    db: Database
    embedding: tuple[Any, asyncio.Future] | None  # (embedder, future vector)
    spec_of: Callable[[Any], Any]
    vectors: VectorCache | None
    web: Any
    reranker: Any = None  # embedding.rerank.Loaded, for deep recall


@dataclass
class State:
    candidates: list[Candidate] = field(default_factory=list)
    lexical: Lexical | None = None
    used: str = "fast"
    first: dict[int, int] = field(default_factory=dict)
    superseded: dict = field(default_factory=dict)
    alike: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    stages: list[dict] = field(default_factory=list)


async def _timed(state: State, name: str, step: Awaitable[dict | None]) -> None:
    started = time.perf_counter()
    before = len(state.candidates)
    said = await step
    if said is None:
        return
    state.stages.append({"stage": name, "candidates": len(state.candidates), "change": len(state.candidates) - before,
                         **said, "ms": round((time.perf_counter() - started) * 1000, 2)})


async def full_text(req: Request, src: Sources, st: State) -> dict:
    st.lexical = await fts_candidates(src.db, req.scope, req.query, req.tuning, req.params,
                                      neighbours=src.embedding is not None,
                                      facts_at=req.now if req.facts_in_recall else None)
    st.candidates = st.lexical.candidates
    return {"plan": st.lexical.plan.get("strategy")}


async def meaning(req: Request, src: Sources, st: State) -> dict | None:
    """The nearest memories by meaning, fused with the full-text list (spreading within sessions
    and session aggregation included); a model that fails leaves full text alone, and says why."""
    if src.embedding is None:
        return None
    emb, future = src.embedding
    try:
        near, rows = await nearest(src.db, req.scope, (await future)[0], req.tuning.candidates, src.spec_of(emb),
                                   src.vectors, st.lexical.rows)
    except EmbeddingUnavailable as e:
        st.warnings.append(fallback(e))
        return {"skipped": "the model failed"}
    st.candidates, st.used = balanced_candidates(st.lexical, near, rows, req.tuning), "balanced"
    return {"nearest": len(near)}


async def graph(req: Request, src: Sources, st: State) -> dict | None:
    if req.mode != "deep":
        return None
    reached, hebb, rows = await graph_reach(src.db, req.scope, src.web, seeds_of(st.candidates, req.deep.seeds),
                                            {c.row["id"]: c.row for c in st.candidates})
    st.candidates, st.used = combine(st.candidates, reached, hebb, rows, req.deep), "deep"
    return {"reached": len(reached)}


def _lift(candidates: list[Candidate], chosen: Callable[[Candidate], bool], lift: float, name: str,
          **shown: Any) -> int:
    """Raise the relevance of the chosen candidates by `lift`; returns how many were lifted."""
    lifted = 0
    for c in candidates:
        if chosen(c):
            c.relevance *= 1.0 + lift
            c.retrievers[name] = {"lift": lift, **shown}
            lifted += 1
    _within_one(candidates)
    return lifted


def _within_one(candidates: list[Candidate]) -> None:
    """Relevance back within 0..1, as the composite expects, after a stage raised some."""
    top = max((c.relevance for c in candidates), default=0.0)
    if top > 1.0:
        for c in candidates:
            c.relevance /= top


async def time_asked(req: Request, src: Sources, st: State) -> dict | None:
    """A question that asks when lifts the memories that say a time (when.py says which)."""
    if req.tuning.when_weight <= 0 or not st.candidates or not asks_when(req.query):
        return None
    return {"lifted": _lift(st.candidates, lambda c: says_when(c.row["content"]), req.tuning.when_weight, "when")}


WINDOW_MOST = 2000  # memories of a named time that recall weighs, the latest said
WINDOW_JOINS = 100  # of those no retriever found, the closest that join the candidates


async def time_named(req: Request, src: Sources, st: State) -> dict | None:
    """A question that names a time ("on 3 May 2023", "the week before ...", "last summer"):
    the memories from then, said then or saying a time that falls then ("yesterday" said the
    day after), gain `date_weight` of relevance times their closeness to the question against
    the closest of them (cosine; the share of its words for one without a vector). The closest
    `WINDOW_JOINS` that no retriever found join: "What did Nate do on 25 May 2022?" shares no
    word and little meaning with "I got this new pup for you!", said that day. One less alike
    than `min_similarity` is no match, whenever it was said."""
    if req.tuning.date_weight <= 0 or not st.candidates:
        return None
    window = named_time(req.query, req.now)
    if window is None:
        return None
    query = await _query_vector(src)
    known = {c.row["id"]: c for c in st.candidates}

    def read(conn):
        members = window_members(conn, req.scope, window, WINDOW_MOST)
        close: dict[int, float] = {}
        if query is not None and members:
            close = cosines(conn, src.vectors, members, query)
        rest = [i for i in members if i not in close]
        if rest:
            text = {i: r["content"] for i, r in rows_in_scope(conn, req.scope, rest).items()}
            close.update(zip(rest, word_shares(conn, req.query, [text.get(i, "") for i in rest])))  # gone: no match
        floor = req.tuning.min_similarity
        joining = sorted((i for i in members if i not in known and close[i] >= floor), key=lambda i: -close[i])
        return members, close, rows_in_scope(conn, req.scope, joining[:WINDOW_JOINS])

    members, close, joining = await src.db.run(read)
    if not members:
        return {"window": str(window), "members": 0, "added": 0}
    high = max(close.values())
    for i, row in joining.items():
        known[i] = Candidate(row)
        st.candidates.append(known[i])
    for i in members:
        c = known.get(i)
        if c is None:
            continue
        share = max(close[i], 0.0) / high if high > 0 else 1.0
        c.relevance += req.tuning.date_weight * share
        c.retrievers["date"] = {"window": str(window), "closeness": round(close[i], 4), "share": round(share, 3)}
    _within_one(st.candidates)
    return {"window": str(window), "members": len(members), "added": len(joining)}


async def source_named(req: Request, src: Sources, st: State) -> dict | None:
    """A question that names where memories came from ("What has Melanie bought?", "what did the
    user ask about backups?") lifts the candidates from that source by `source_named_weight`:
    what a person did is mostly in what they said, while "Yep, Melanie!" is someone else
    speaking to them."""
    if req.tuning.source_named_weight <= 0 or not st.candidates:
        return None
    named = named_sources(req.query, {c.row["source"] for c in st.candidates})
    if not named:
        return None
    lifted = _lift(st.candidates, lambda c: c.row["source"] in named, req.tuning.source_named_weight,
                   "source_named", named=sorted(named))
    return {"sources": sorted(named), "lifted": lifted}


async def asking(req: Request, src: Sources, st: State) -> dict | None:
    """A memory made of questions tells little, whatever words it shares with the question
    (asking.py): each candidate loses `asking_discount` times the share of its words that ask.
    After every stage that brings candidates in, so that each is weighed alike."""
    discount = req.tuning.asking_discount
    if discount <= 0 or not st.candidates:
        return None
    lowered = 0
    for c in st.candidates:
        told = told_share(c.row["content"])
        if told < 1.0:
            c.relevance *= 1.0 - discount * (1.0 - told)
            c.retrievers["asks"] = {"told_share": round(told, 3)}
            lowered += 1
    return {"lowered": lowered}


async def cross_encoder(req: Request, src: Sources, st: State) -> dict | None:
    """Deep recall: the cross-encoder reads the question with each of the `rerank_depth` best
    candidates (with its source, as memories are embedded; fewer when their pairs would hold more
    than `rerank_tokens`) and takes `rerank` of their relevance (deep.reranked). Those below keep
    the rest of theirs. Without the model, deep recall goes on without it, and says why."""
    if req.mode != "deep" or req.deep.rerank <= 0 or not st.candidates or src.reranker is None:
        return None
    try:
        model = await src.reranker.get()
    except EmbeddingUnavailable as e:
        st.warnings.append(f"deep recall ranked without its cross-encoder: {e.message}"
                           + (f" ({e.hint})" if e.hint else ""))
        return {"skipped": "no cross-encoder"}
    st.candidates.sort(key=lambda c: (-c.relevance, -c.row["id"]))
    texts = [f"{c.row['source']}: {c.row['content']}" if c.row["source"] else c.row["content"]
             for c in st.candidates[:req.deep.rerank_depth]]
    scores = await asyncio.to_thread(model.scores, req.query, texts, req.deep.rerank_tokens)
    after = reranked([c.relevance for c in st.candidates], scores, req.deep.rerank)
    for c, relevance in zip(st.candidates, after):
        c.relevance = relevance
    for rank, i in enumerate(sorted(range(len(scores)), key=lambda i: -scores[i]), 1):
        st.candidates[i].retrievers["cross_encoder"] = {"score": round(scores[i], 3), "rank": rank,
                                                        "of": len(scores)}
    return {"read": len(scores), "model": model.name}


def cosines(conn, held: VectorCache | None, ids, query) -> dict[int, float]:
    """Each embedded memory's cosine to the question: from the in-memory copy, or the index."""
    if held is not None:
        return held.cosines(ids, query)
    return {i: float(v @ query) for i, v in vector_index.vectors_of(conn, ids).items()}  # both normalised


async def _query_vector(src: Sources):
    """The question's embedding, or None (full text only, or the model failed: `meaning` said so)."""
    if src.embedding is None:
        return None
    try:
        return (await src.embedding[1])[0]
    except EmbeddingUnavailable:
        return None


HOP_JOINS = 0.1  # a memory the second hop alone finds joins when its words weigh this share of the question's


async def second_hop(req: Request, src: Sources, st: State) -> dict | None:
    """Search again with what the best first hits say that the question does not (hop.py);
    what that finds, the seeds aside, gains `hop_weight` of its relevance there. A seed found
    again by its own words would only rise for being a seed, above memories that feedback
    raised."""
    t = req.tuning
    if t.hop_weight <= 0 or not st.candidates:
        return None
    seeds = sorted(st.candidates, key=lambda c: -c.relevance)[:t.hop_seeds]
    words = expansion(req.query, [c.row["content"] for c in seeds], t.hop_words,
                      [c.row["content"] for c in st.candidates])
    if not words:
        return None

    def read(conn):
        # Only words rare enough to rank exactly: a common word would weigh next to nothing
        # against the question's best match, and reading its memories costs the most.
        rare = rarest_within(conn, words, t.fts_budget)
        return rare, search(conn, " ".join(rare), req.scope, CANDIDATE_COLUMNS, limit=t.candidates,
                            budget=t.fts_budget, source_weight=t.source_weight)[0] if rare else []

    words, found = await src.db.run(read)
    if not words:
        return {"words": "", "found": 0, "added": 0}
    seed_ids = {c.row["id"] for c in seeds}
    found = [(row, score) for row, score in found if row["id"] not in seed_ids]
    # Weighed against the question's own best match, so that words every memory holds (a tiny
    # IDF) lift nothing; in a home so small that the question's words weigh nothing either,
    # against the hop's best.
    first = max((c.raw.get("fts", 0.0) for c in st.lexical.candidates), default=0.0)
    best = first if first > 1e-6 else (found[0][1] if found else 0.0)
    known = {c.row["id"]: c for c in st.candidates}
    added = 0
    for rank, (row, score) in enumerate(found, 1):
        share = min(1.0, score / best) if best > 1e-6 else 1.0
        c = known.get(row["id"])
        if c is None:
            if share < HOP_JOINS:
                continue
            c = known[row["id"]] = Candidate(row)
            st.candidates.append(c)
            added += 1
        c.relevance += t.hop_weight * share
        c.retrievers["second_hop"] = {"rank": rank, "share": round(share, 3)}
    _within_one(st.candidates)
    return {"words": " ".join(words), "found": len(found), "added": added}


async def fact_sources(req: Request, src: Sources, st: State) -> dict | None:
    st.candidates, st.first = with_fact_sources(st.candidates, st.lexical)
    return {"facts": len(st.lexical.facts)} if st.lexical.facts else None


async def supersession(req: Request, src: Sources, st: State) -> dict:
    st.candidates, st.superseded = await with_superseders(src.db, req.scope, st.candidates)
    return {"superseded": len(st.superseded)}


async def alike(req: Request, src: Sources, st: State) -> dict | None:
    if st.used == "fast":
        return None
    st.alike = alike_newer(st.candidates, src.vectors, req.query, req.k, req.tuning.present_similarity,
                           req.tuning.present_parallel)
    return {"moved_up": len(st.alike)}


async def use_as_of(req: Request, src: Sources, st: State) -> dict | None:
    """For a replay at a past time: each candidate's use (accesses, feedback) as it stood then."""
    if not req.as_of:
        return None
    usage = await src.db.run(reads.usage_before, [c.row["id"] for c in st.candidates], req.now)
    for c in st.candidates:
        c.row = {**c.row, **usage.get(c.row["id"], reads.NO_USE)}
    return {}


async def measured(req: Request, src: Sources, hits: list[dict]) -> None:
    """The times each hit states, and its `match` to the question as measured, not relative to
    the best candidate (which is what ranking weighs): the larger of its cosine to the question
    and the share of the question's words it holds. Also the hit's reasons in a line (`why`)."""
    def read(conn):  # one trip to the database thread for both
        with_times(hits, reads.stated_times_of(conn, [h["id"] for h in hits]))
        return word_shares(conn, req.query, [h["content"] for h in hits])

    shares = await src.db.run(read)
    cosine_of: dict[int, float] = {}
    for h in hits:
        if "vector" in h["explain"]["retrievers"]:
            cosine_of[h["id"]] = h["explain"]["retrievers"]["vector"]["cosine"]
    missing = [h["id"] for h in hits if h["id"] not in cosine_of]
    if src.vectors is not None and missing:
        query = await _query_vector(src)
        if query is not None:
            cosine_of.update(src.vectors.cosines(missing, query))
    for h, share in zip(hits, shares):
        cosine = cosine_of.get(h["id"])
        h["match"] = round(max(share, cosine or 0.0), 3)
        h["explain"]["match"] = {"cosine": None if cosine is None else round(cosine, 4), "words": round(share, 4)}
        h["why"] = why_line(h["explain"], age=req.now - h["event_at"], tier=h["tier"])


def fallback(e: EmbeddingUnavailable) -> str:
    return f"semantic recall unavailable, used fast: {e.message}" + (f" ({e.hint})" if e.hint else "")


async def run(req: Request, src: Sources) -> dict:
    st = State()
    if src.embedding is not None and not req.overlap_embedding:
        await asyncio.wait([src.embedding[1]])  # a failure is raised in `meaning`, where it becomes a fallback
    try:
        await _timed(st, "full_text", full_text(req, src, st))
    except BaseException:
        if src.embedding is not None:
            src.embedding[1].cancel()
        raise
    for name, stage in (("meaning", meaning), ("second_hop", second_hop), ("graph", graph),
                        ("time_asked", time_asked), ("time_named", time_named), ("source_named", source_named),
                        ("asking", asking), ("cross_encoder", cross_encoder), ("fact_sources", fact_sources),
                        ("supersession", supersession),
                        ("alike_newer", alike), ("use_as_of", use_as_of)):
        await _timed(st, name, stage(req, src, st))
    started = time.perf_counter()
    hits, filtered = rank_candidates(st.candidates, query_context=req.query_context, now=req.now, params=req.params,
                                     phase=st.lexical.phase, k=req.k, first=st.first, superseded=st.superseded,
                                     alike=st.alike, superseded_factor=req.tuning.superseded_factor)
    if hits:
        await measured(req, src, hits)
    st.stages.append({"stage": "rank", "candidates": len(hits), "change": len(hits) - len(st.candidates),
                      "filtered": filtered, "ms": round((time.perf_counter() - started) * 1000, 2)})
    lexical = st.lexical
    return {"query": req.query, "mode": req.mode, "mode_used": st.used, "k": req.k, "phase": lexical.phase,
            "candidates": len(st.candidates), "cold_matched": sum(c.row["tier"] == "cold" for c in st.candidates),
            "cold_factor": req.params.cold_factor, "fts_plan": lexical.plan, "filtered": filtered,
            "warnings": st.warnings, "facts": lexical.facts, "query_context": req.query_context, "hits": hits,
            "stages": st.stages}
