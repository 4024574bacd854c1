"""Balanced recall: reciprocal rank fusion of full text and vectors."""

import asyncio
import contextlib

import pytest

from daemon import Memory
from daemon.episodes.recall import Candidate, fuse
from conftest import write_config


def _ranked(name, ids):
    out = []
    for rank, i in enumerate(ids, 1):
        c = Candidate({"id": i})
        c.retrievers[name] = {"rank": rank}
        out.append(c)
    return out


def test_rrf_by_hand():
    fused = fuse({"fts": _ranked("fts", [1, 2, 3]), "vector": _ranked("vector", [3, 1])},
                 {"fts": 1.0, "vector": 2.0}, k=60)
    # 1: 1/61 + 2/62 = 0.048651; 3: 1/63 + 2/61 = 0.048660; 2: 1/62 = 0.016129
    assert [c.row["id"] for c in fused] == [3, 1, 2]
    assert fused[0].retrievers["rrf"]["score"] == pytest.approx(1 / 63 + 2 / 61, abs=1e-6)
    assert fused[0].relevance == 1.0
    assert fused[2].relevance == pytest.approx((1 / 62) / (1 / 63 + 2 / 61))
    assert fused[1].retrievers["fts"]["rank"] == 1 and fused[1].retrievers["vector"]["rank"] == 2
    assert fuse({"fts": [], "vector": []}, {}, k=60) == []


# A short conversation an agent might have had with itself over a week.
CONVERSATION = [
    "Joel says the revenue directive is the top priority this quarter",
    "The bridge between the mail relay and gw-02 dropped every connection overnight",
    "Backups now run at 03:00 because the NAS is idle then",
    "ERR_CONN_RESET from smtp-relay-07 while sending the weekly digest",
    "Priya prefers to be contacted by email rather than chat",
    "The lemon tree on the balcony needs water every two days",
    "Renewed the TLS certificate for web-01, valid until March",
    "The invoice for March was paid on the 14th",
]


@contextlib.asynccontextmanager
async def _memory(home):
    async with await Memory.open(home) as mem:
        await mem.observe_many([{"content": t, "event_at": 1_780_000_000 + i * 3600}
                                for i, t in enumerate(CONVERSATION)])
        await mem.embed_pending()
        yield mem


def _top(result, n=1):
    return [h["content"] for h in result["hits"][:n]]


@pytest.mark.parametrize("query, expected", [
    ("who dislikes instant messaging?", CONVERSATION[4]),
    ("network link failure at the gateway", CONVERSATION[1]),
    ("when does the nightly data copy happen?", CONVERSATION[2]),
    ("which plant requires irrigation?", CONVERSATION[5]),
])
def test_balanced_finds_paraphrases_that_fast_misses(home, query, expected):
    async def go():
        async with _memory(home) as mem:
            return await mem.recall(query, mode="fast", k=3), await mem.recall(query, mode="balanced", k=3)
    fast, balanced = asyncio.run(go())
    assert expected not in _top(fast, 1)
    assert _top(balanced, 1) == [expected] and balanced["mode_used"] == "balanced"


@pytest.mark.parametrize("query, expected", [
    ("ERR_CONN_RESET", CONVERSATION[3]),
    ("smtp-relay-07", CONVERSATION[3]),
    ("web-01", CONVERSATION[6]),
])
def test_exact_identifiers_stay_first(home, query, expected):
    async def go():
        async with _memory(home) as mem:
            vector_only = await mem.recall(query, mode="balanced", k=8)
            return await mem.recall(query, mode="fast", k=3), vector_only
    fast, balanced = asyncio.run(go())
    assert _top(fast, 1) == [expected]
    assert _top(balanced, 1) == [expected]  # fusion keeps the exact match on top


def test_balanced_falls_back_when_the_index_has_another_model(home):
    async def build():
        async with _memory(home):
            pass
    asyncio.run(build())
    write_config(home, '[embedding]\nruntime = "llama"\n')

    async def ask():
        async with await Memory.open(home) as mem:
            return await mem.recall("lemon tree", mode="balanced")
    r = asyncio.run(ask())
    assert r["mode_used"] == "fast" and "strata reindex" in r["warnings"][0] and r["hits"]
