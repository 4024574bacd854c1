"""Recall's reading half as a pipeline: the stages in order over one list of candidates, each
traced (`stages` in a recall's result, shown by `--explain`): how many candidates it found or
left, what it did, and how long it took.

    full text ─┐
    meaning ───┴─ fusion ─ second hop ─ graph (deep) ─ time asked ─ time named ─ source named
    ─ asking ─ cross-encoder (deep) ─ fact sources ─ supersession ─ alike newer ─ (use as of) ─ rank

Each stage is a module of stages/ with one function (request, sources, state) -> what it did,
or None when it did not apply; this module only orders and times them, so a new stage is a
module there and one line in STAGES.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable

from strata_daemon.recall.ranking import rank_candidates
from strata_daemon.recall.request import Request, Sources, State
from strata_daemon.recall.stages import (
    alike_newer,
    asking,
    cross_encoder,
    fact_sources,
    full_text,
    graph,
    meaning,
    measured,
    second_hop,
    source_named,
    supersession,
    time_asked,
    time_named,
    use_as_of,
)

STAGES = (
    ("meaning", meaning.meaning),
    ("second_hop", second_hop.second_hop),
    ("graph", graph.graph),
    ("time_asked", time_asked.time_asked),
    ("time_named", time_named.time_named),
    ("source_named", source_named.source_named),
    ("asking", asking.asking),
    ("cross_encoder", cross_encoder.cross_encoder),
    ("fact_sources", fact_sources.fact_sources),
    ("supersession", supersession.supersession),
    ("alike_newer", alike_newer.alike),
    ("use_as_of", use_as_of.use_as_of),
)


async def _timed(state: State, name: str, step: Awaitable[dict | None]) -> None:
    started = time.perf_counter()
    before = len(state.candidates)
    said = await step
    if said is None:
        return
    state.stages.append({"stage": name, "candidates": len(state.candidates), "change": len(state.candidates) - before,
                         **said, "ms": round((time.perf_counter() - started) * 1000, 2)})


async def run(req: Request, src: Sources) -> dict:
    st = State()
    if src.embedding is not None and not req.overlap_embedding:
        await asyncio.wait([src.embedding[1]])  # a failure is raised in `meaning`, where it becomes a fallback
    try:
        await _timed(st, "full_text", full_text.full_text(req, src, st))
    except BaseException:
        if src.embedding is not None:
            src.embedding[1].cancel()
        raise
    for name, stage in STAGES:
        await _timed(st, name, stage(req, src, st))
    started = time.perf_counter()
    hits, filtered = rank_candidates(st.candidates, query_context=req.query_context, now=req.now, params=req.params,
                                     phase=st.lexical.phase, k=req.k, first=st.first, superseded=st.superseded,
                                     alike=st.alike, superseded_factor=req.tuning.superseded_factor,
                                     alike_reach=req.tuning.present_reach)
    if hits:
        await measured.measured(req, src, hits)
    st.stages.append({"stage": "rank", "candidates": len(hits), "change": len(hits) - len(st.candidates),
                      "filtered": filtered, "ms": round((time.perf_counter() - started) * 1000, 2)})
    lexical = st.lexical
    return {"query": req.query, "mode": req.mode, "mode_used": st.used, "k": req.k, "phase": lexical.phase,
            "candidates": len(st.candidates), "cold_matched": sum(c.row["tier"] == "cold" for c in st.candidates),
            "cold_factor": req.params.cold_factor, "fts_plan": lexical.plan, "filtered": filtered,
            "warnings": st.warnings, "facts": lexical.facts, "query_context": req.query_context, "hits": hits,
            "stages": st.stages}
