"""Balanced recall: full text and vectors fused, spread within sessions, aggregated by session."""

import asyncio
import contextlib

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.recall.fusion import Candidate, fuse, normalised, session_boost, spread


def _ranked(name, ids, scores=None):
    out = []
    for rank, i in enumerate(ids, 1):
        c = Candidate({"id": i, "session": None}, relevance=1.0 / rank if scores is None else scores[rank - 1])
        c.retrievers[name] = {"rank": rank}
        out.append(c)
    return out


def test_rrf_by_hand():
    fused = fuse({"fts": _ranked("fts", [1, 2, 3]), "vector": _ranked("vector", [3, 1])},
                 {"fts": 1.0, "vector": 2.0}, method="rrf", k=60)
    # 1: 1/61 + 2/62 = 0.048651; 3: 1/63 + 2/61 = 0.048660; 2: 1/62 = 0.016129
    assert [c.row["id"] for c in fused] == [3, 1, 2]
    assert fused[0].retrievers["fused"] == {"method": "rrf", "score": pytest.approx(1 / 63 + 2 / 61, abs=1e-6)}
    assert fused[0].relevance == 1.0
    assert fused[2].relevance == pytest.approx((1 / 62) / (1 / 63 + 2 / 61))
    assert fused[1].retrievers["fts"]["rank"] == 1 and fused[1].retrievers["vector"]["rank"] == 2
    assert fuse({"fts": [], "vector": []}, {}, method="rrf") == []


def test_score_fusion_by_hand():
    fts = _ranked("fts", [1, 2, 3], scores=[1.0, 0.5, 0.0])
    vec = _ranked("vector", [3, 1], scores=[1.0, 0.0])
    fused = fuse({"fts": fts, "vector": vec}, {"fts": 1.0, "vector": 0.7})
    # 1: 1.0 + 0.7 * 0 = 1.0; 3: 0 + 0.7 * 1 = 0.7; 2: 0.5
    assert [c.row["id"] for c in fused] == [1, 3, 2]
    assert [c.relevance for c in fused] == pytest.approx([1.0, 0.7, 0.5])
    assert fused[1].retrievers["fused"] == {"method": "scores", "score": 0.7}


def test_min_max_normalisation():
    cands = [Candidate({"id": i}, raw={"fts": s}) for i, s in ((1, 9.0), (2, 5.0), (3, 1.0))]
    assert normalised(cands, "fts") == {1: 1.0, 2: 0.5, 3: 0.0}
    assert normalised(cands[:1], "fts") == {1: 1.0}
    assert normalised([], "fts") == {}


def test_spreading_passes_relevance_to_the_reply_and_the_turn_before():
    # Session turns 10, 11, 12, 13; the full text matched 11 (a question) and 13.
    fts = [Candidate({"id": 11, "session": "s"}, relevance=1.0), Candidate({"id": 13, "session": "s"}, relevance=0.5)]
    around = {11: (10, 12), 13: (12, None)}
    rows = {10: {"id": 10, "session": "s"}, 12: {"id": 12, "session": "s"}}
    out = {c.row["id"]: c for c in spread(fts, around, rows, to_next=0.7, to_previous=0.3)}
    assert out[12].relevance == pytest.approx(0.7 * 1.0 + 0.3 * 0.5)  # the reply to 11, and before 13
    assert out[10].relevance == pytest.approx(0.3)
    assert out[11].relevance == 1.0 and out[13].relevance == 0.5  # from the original relevances only
    assert out[12].retrievers["neighbours"] == {"from": [11, 13], "added": pytest.approx(0.85)}
    # A neighbour outside the recall's scope (absent from rows) gets nothing; zero shares add nothing.
    assert {c.row["id"] for c in spread(fts, around, {}, to_next=0.7, to_previous=0.3)} == {11, 13}
    assert len(spread(fts, around, rows, to_next=0, to_previous=0)) == 2


def test_spreading_further_reaches_the_answer_two_turns_on():
    # Turns 20..24 of a session: 21 matched ("I made coconut milk ice cream"), 22 asks how it
    # tasted, 23 answers. A step further carries `further` of what the first step passed.
    fts = [Candidate({"id": 21, "session": "s"}, relevance=1.0)]
    around = {21: (20, 22), 22: (21, 23), 20: (19, 21), 23: (22, 24)}
    rows = {i: {"id": i, "session": "s"} for i in (19, 20, 22, 23, 24)}
    out = {c.row["id"]: c for c in spread(fts, around, rows, to_next=0.7, to_previous=0.2, further=0.5)}
    assert out[22].relevance == pytest.approx(0.7) and out[23].relevance == pytest.approx(0.35)
    assert out[20].relevance == pytest.approx(0.2) and out[19].relevance == pytest.approx(0.1)
    assert 24 not in out  # two steps, no more
    assert 23 not in {c.row["id"] for c in spread(fts, around, rows, to_next=0.7, to_previous=0.2)}
    # A step stops where the session's next memory is out of scope: nothing passes through it.
    rows.pop(22)
    assert {c.row["id"] for c in spread(fts, around, rows, to_next=0.7, to_previous=0.2, further=0.5)} == {21, 20, 19}


def test_session_boost_adds_a_share_of_the_sessions_best():
    cands = [Candidate({"id": 1, "session": "a"}, relevance=1.0), Candidate({"id": 2, "session": "b"}, relevance=0.8),
             Candidate({"id": 3, "session": "a"}, relevance=0.6), Candidate({"id": 4, "session": None}, relevance=0.7)]
    out = session_boost(cands, 0.3)
    # 1: 1.3, 3: 0.9, 2: 0.8 + 0.24 = 1.04, 4 (no session): 0.7; relative to 1.3
    assert [c.row["id"] for c in out] == [1, 2, 3, 4]
    assert [c.relevance for c in out] == pytest.approx([1.0, 1.04 / 1.3, 0.9 / 1.3, 0.7 / 1.3])
    assert out[2].retrievers["session"] == {"best": 1, "added": pytest.approx(0.3)}
    assert "session" not in out[3].retrievers
    assert session_boost(cands, 0) is cands


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


def test_overlapping_the_query_embedding_changes_no_result(home):
    queries = ["network link failure at the gateway", "ERR_CONN_RESET", "which plant requires irrigation?"]

    async def build():
        async with _memory(home):
            pass

    async def ask():
        async with await Memory.open(home) as mem:
            return [await mem.recall(q, mode=m, k=5) for q in queries for m in ("balanced", "deep")]
    asyncio.run(build())
    before = asyncio.run(ask())
    write_config(home, "[experimental]\n\"recall.overlap_embedding\" = true\n")
    after = asyncio.run(ask())
    assert {r["mode_used"] for r in before + after} == {"balanced", "deep"}
    assert [[(h["id"], h["explain"]["retrievers"].get("vector")) for h in r["hits"]] for r in before] == \
        [[(h["id"], h["explain"]["retrievers"].get("vector")) for h in r["hits"]] for r in after]


# Two sessions of a chat: the answers hold none of the question's words.
CHAT = [
    ("Ines", "s1", "Did you ever get the lighthouse keeper job on the island?"),
    ("Tomas", "s1", "Yes! I start in April, they liked my radio experience."),
    ("Ines", "s1", "That is wonderful news."),
    ("Tomas", "s2", "My sister Marta visited and we baked bread all weekend."),
    ("Ines", "s2", "Sounds cosy. Was the sourdough any good?"),
    ("Tomas", "s2", "It came out flat, the starter was too young."),
]


@contextlib.asynccontextmanager
async def _chat(home, config=""):
    if config:
        write_config(home, config)
    async with await Memory.open(home) as mem:
        await mem.observe_many([{"content": text, "source": who, "session": s, "kind": "message",
                                 "event_at": 1_780_000_000 + i} for i, (who, s, text) in enumerate(CHAT)])
        await mem.embed_pending()
        yield mem


def test_the_reply_after_a_matching_turn_is_found_by_spreading(home):
    query = "When does the lighthouse keeper job start?"

    async def ask():
        async with _chat(home) as mem:
            return await mem.recall(query, mode="balanced", k=6)
    hits = asyncio.run(ask())["hits"]
    asked, reply = (next(h for h in hits if h["content"] == CHAT[i][2]) for i in (0, 1))
    assert reply["explain"]["retrievers"]["neighbours"]["from"] == [asked["id"]]
    assert hits[0] is reply  # above the turn whose words matched, which only asks


def test_spreading_and_sessions_can_be_switched_off(home):
    query = "When does the lighthouse keeper job start?"

    async def ask():
        async with _chat(home, "[experimental]\n\"recall.spread_to_next\" = 0\n\"recall.spread_to_previous\" = 0\n\"recall.session_weight\" = 0\n") as mem:
            return await mem.recall(query, mode="balanced", k=6)
    r = asyncio.run(ask())
    assert len(r["hits"]) >= 2  # the same recall with the defaults has neighbours (the test above)
    assert all("neighbours" not in h["explain"]["retrievers"] and "session" not in h["explain"]["retrievers"]
               for h in r["hits"])


def test_a_speakers_name_finds_what_they_said(home):
    async def ask():
        async with _chat(home) as mem:
            return await mem.recall("Tomas", mode="fast", k=6)
    hits = asyncio.run(ask())["hits"]
    assert [h["source"] for h in hits] == ["Tomas"] * 3  # no text holds the name: the source does


def test_embedding_the_source_is_recorded_and_changing_it_needs_reindex(home):
    async def first():
        async with _chat(home) as mem:
            return (await mem.status())["embedding_model"]
    assert asyncio.run(first())["text"] == "source: content"
    write_config(home, "[embedding]\nwith_source = false\n")

    async def second():
        async with await Memory.open(home) as mem:
            fallback = await mem.recall("bread", mode="balanced")
            result = await mem.reindex()
            return fallback, result, (await mem.status())["embedding_model"]
    fallback, result, model = asyncio.run(second())
    assert fallback["mode_used"] == "fast" and "embedding source: content" in fallback["warnings"][0]
    assert result["reset"] and result["embedded"] == len(CHAT) and model["text"] == "content"
