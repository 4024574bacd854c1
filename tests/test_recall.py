import asyncio

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.errors import InvalidInput
from strata_daemon.store.fts_query import match_expression, terms


@pytest.mark.parametrize("query, expected", [
    ("bridge status", '"bridge" OR "status"'),
    ("ERR_CONN_RESET on gw-02", '"err conn reset" OR "gw 02"'),
    ('"deploy" OR rollback', '"deploy" OR "rollback"'),  # the user's OR is a word, not syntax
    ("NEAR(a b) col:term ^x -y *", '"near a" OR "b" OR "col term" OR "x" OR "y"'),
    ("'; DROP TABLE episodes; --", '"drop" OR "table" OR "episodes"'),
    ("what is it", '"what" OR "is" OR "it"'),  # stopwords kept when nothing else is left
    ("Crème brûlée", '"crème" OR "brûlée"'),
])
def test_match_expression_is_always_safe_syntax(query, expected):
    assert match_expression(query) == expected


@pytest.mark.parametrize("query", ["🔥🔥", "?!...", "   ", "-- ;"])
def test_queries_without_words_have_no_expression(query):
    assert match_expression(query) is None and terms(query) == []


def test_fast_recall_ranks_and_explains(memory):
    a = memory.observe("TLS cert on gw-02 expires in 3 days", importance=0.9)["id"]
    memory.observe("disk usage on nas-01 at 91%")
    b = memory.observe("rotated the TLS cert on web-01")["id"]
    r = memory.recall("TLS cert gw-02", k=5, mode="fast")
    assert [h["id"] for h in r["hits"]][:2] == [a, b]
    top = r["hits"][0]
    assert set(top["explain"]["signals"]) == {"relevance", "recency", "strength", "priority", "wilson", "context", "trust",
                                              "tier", "penalty"}
    assert top["explain"]["signals"]["relevance"] == 1.0
    assert top["explain"]["retrievers"]["fts"]["rank"] == 1
    assert r["fts_plan"]["strategy"] == "exact" and r["mode_used"] == "fast"


def test_weird_queries_return_cleanly_and_change_nothing(memory):
    memory.observe("backup job on nas-01 failed with ENOSPC")
    for q in ['"', "''", "NEAR(", "a AND", "OR OR OR", "col:x", "'; DROP TABLE episodes; --", "🔥", "\\", "%_"]:
        r = memory.recall(q, mode="fast")
        assert isinstance(r["hits"], list)
    assert memory.status()["episodes"] == 1
    with pytest.raises(InvalidInput):
        memory.recall("   ")
    with pytest.raises(InvalidInput):
        memory.recall("x", k=0)
    with pytest.raises(InvalidInput):
        memory.recall("x", mode="psychic")


def test_a_long_text_is_searched_by_its_rarest_words_and_says_so(memory, cli):
    bridge = memory.observe("Bridge: DOWN since the storm")["id"]
    memory.observe("Lunch was two salads and a soup")
    # A pasted log: thousands of words no memory holds, the one that matters at its end.
    log = " ".join(f"worker{i} tick{i % 97} ok" for i in range(2000)) + " and what about the bridge?"
    for mode in ("fast", "balanced"):
        r = memory.recall(log, mode=mode)
        assert r["hits"][0]["id"] == bridge, mode
        assert any("distinct words and recall searches at most 32" in w and "(bridge)" in w for w in r["warnings"])
    block = memory.context(log, budget=300, record=False)
    assert [m["id"] for m in block["parts"]["memories"]][:1] == [bridge] and block["warnings"]
    r = cli("recall", "-", input=log, check=True)  # `-` reads the query from stdin, as observe and context do
    assert "Bridge: DOWN" in r.out and "recall searches at most 32" in r.out
    r = cli("context", "-", "--budget", "300", input=log, check=True)
    assert "Bridge: DOWN" in r.out and "strata: warning: the query holds" in r.err
    # Too long to take at all: the size, the limit and the setting are named.
    r = cli("recall", "-", input="a" * 70_000)
    assert r.returncode == 4 and "the query is 70,000 bytes, longer than store.max_content_bytes (65,536)" in r.err
    r = cli("recall", "-", input="bridge\x00")
    assert r.returncode == 4 and "the query holds a NUL byte" in r.err


def test_balanced_without_vectors_still_answers_from_full_text(home):
    write_config(home, "[recall]\nembed_waiting = 0\n")  # nothing is embedded: fusion of FTS alone

    async def go():
        async with await Memory.open(home) as mem:
            await mem.observe("the bridge went down")
            return await mem.recall("bridge", mode="balanced")

    r = asyncio.run(go())
    assert r["mode_used"] == "balanced" and len(r["hits"]) == 1
    assert "vector" not in r["hits"][0]["explain"]["retrievers"]
    assert any("1 memory waits for a vector" in w for w in r["warnings"])

def test_context_match_raises_a_memory(memory):
    prod = memory.observe("restart the web proxy", context={"environment": "prod"})["id"]
    lab = memory.observe("restart the web proxy now", context={"environment": "lab"})["id"]
    r = memory.recall("restart web proxy", context={"environment": "lab"}, mode="fast")
    assert r["hits"][0]["id"] == lab
    r = memory.recall("restart web proxy", context={"environment": "prod"}, mode="fast")
    assert r["hits"][0]["id"] == prod


def test_kind_filter(memory):
    memory.observe("decided to pin invoice-bot", kind="decision")
    memory.observe("invoice-bot crashed", kind="event")
    r = memory.recall("invoice-bot", kinds=["decision"], mode="fast")
    assert [h["kind"] for h in r["hits"]] == ["decision"]


def _bulk(home, n, extra_config=""):
    write_config(home, extra_config)

    async def go():
        async with await Memory.open(home) as mem:
            rows = [{"content": f"cycle {i} status check {i * 7} of the bridge", "event_at": 1_700_000_000 + i}
                    for i in range(n)]
            rows.append({"content": "cycle 4242 bridge DOWN with a rare error zebrafish",
                         "event_at": 1_700_000_000 + n})
            await mem.observe_many(rows)
            return (await mem.recall("cycle zebrafish", k=3, mode="fast"),
                    await mem.recall("cycle status bridge", k=5, mode="fast"))
    return asyncio.run(go())


@pytest.mark.sqlite_only
def test_common_terms_are_counted_once_until_the_index_has_grown(home, monkeypatch):
    from strata_daemon.store import driver, fulltext as fts_plan

    monkeypatch.setattr(fts_plan, "KEEP_COUNTS_FROM", 100)  # the corpus is small: keep what 100+ memories hold
    _bulk(home, 300)
    conn = driver.connect(home / "state" / "memory.db")

    def counts():
        total = conn.execute("SELECT max(rowid) FROM episodes").fetchone()[0]
        return fts_plan._counted(conn, "episodes_fts_1", ["cycl", "zebrafish"], total)

    assert counts() == {"cycl": 301, "zebrafish": 1}
    kept = dict(conn.execute("SELECT term, doc FROM temp.fts_term_counts").fetchall())
    assert kept == {"cycl": 301}  # the rare term is cheap to count: never kept
    conn.execute("UPDATE temp.fts_term_counts SET doc = 999")
    assert counts()["cycl"] == 999  # the kept count is used while the index has not grown

    async def grow(first, n):
        async with await Memory.open(home) as mem:
            await mem.observe_many([{"content": f"cycle again {i}"} for i in range(first, first + n)])
    asyncio.run(grow(0, 4))  # 1.3%: still within COUNT_AGAIN_AFTER
    assert counts()["cycl"] == 999
    asyncio.run(grow(4, 4))  # 2.7%: counted again
    assert counts()["cycl"] == 309
    conn.close()


def test_broad_query_uses_bounded_plan_and_still_finds_the_rare_memory(home):
    rare, broad = _bulk(home, 300, "[experimental]\n\"recall.fts_budget\" = 50\n")
    assert rare["fts_plan"]["strategy"] == "bounded"
    assert '"cycle"' in rare["fts_plan"]["common_terms"]
    assert "zebrafish" in rare["hits"][0]["content"]
    assert "idf-sum" in rare["hits"][0]["explain"]["retrievers"]["fts"]
    assert broad["fts_plan"]["strategy"] == "bounded" and len(broad["hits"]) == 5


def test_bounded_scores_count_each_phrase_a_memory_holds_once(home):
    from strata_daemon.store.fulltext import idf
    rare, broad = _bulk(home, 300, "[experimental]\n\"recall.fts_budget\" = 50\n")
    total = 301  # rowids in the index
    both = round(idf(301, total) + idf(1, total), 4)  # "cycle" is in every memory, "zebrafish" in one
    assert rare["hits"][0]["explain"]["retrievers"]["fts"]["idf-sum"] == both
    every = round(idf(301, total) + idf(300, total) + idf(301, total), 4)
    assert {h["explain"]["retrievers"]["fts"]["idf-sum"] for h in broad["hits"]} == {every}
    assert [h["id"] for h in broad["hits"]] == sorted((h["id"] for h in broad["hits"]), reverse=True)


def test_same_corpus_exact_plan_agrees_on_the_top_hit(home):
    rare, _ = _bulk(home, 300, "[experimental]\n\"recall.fts_budget\" = 100000\n")
    assert rare["fts_plan"]["strategy"] == "exact"
    assert "zebrafish" in rare["hits"][0]["content"]


def _phases(home, config: str):
    write_config(home, "[experimental]\n\"scoring.passive_min_episodes\" = 3\n\"scoring.passive_min_feedback\" = 1\n" + config)

    async def go():
        async with await Memory.open(home) as mem:
            old = (await mem.observe("old note about the garden sensors", at="400d ago"))["id"]
            fact = (await mem.observe("garden sensors run on 5 V", at="400d ago", factual=True))["id"]
            await mem.observe("new garden sensors note")
            passive = await mem.recall("garden sensors", mode="fast", explain=True)
            await mem.feedback(passive["recall_id"], "success")
            active = await mem.recall("garden sensors", mode="fast", explain=True)
            return old, fact, passive, active
    return asyncio.run(go())


def test_active_phase_thresholds_rank_a_stale_memory_lower_and_keep_it(home):
    old, fact, passive, active = _phases(home, '"scoring.stability_penalty" = 0.5\n')
    assert passive["phase"] == "passive" and old in [h["id"] for h in passive["hits"]]
    assert active["phase"] == "active" and active["filtered"] == 0
    ranked = {h["id"]: h for h in active["hits"]}
    assert old in ranked and fact in ranked  # demoted, never hidden
    why = ranked[old]["explain"]
    assert why["signals"]["penalty"] == 0.5 and why["penalised"].startswith("below stability threshold")
    before = next(h for h in passive["hits"] if h["id"] == old)
    assert ranked[old]["score"] < before["score"] and ranked[old]["rank"] == len(active["hits"])
    assert "penalised" not in ranked[fact]["explain"]  # factual memories are never judged


def test_the_default_stability_penalty_is_a_tie_breaker(home):
    old, _, _, active = _phases(home, "")
    why = next(h for h in active["hits"] if h["id"] == old)["explain"]
    assert why["signals"]["penalty"] == 0.98 and why["penalised"].endswith("composite x0.98")


def test_seed_filter_mode_leaves_stale_memories_out_when_asked(home):
    old, fact, _, active = _phases(home, '"scoring.thresholds" = "filter"\n')
    assert active["phase"] == "active" and active["filtered"] == 1
    ids = [h["id"] for h in active["hits"]]
    assert old not in ids and fact in ids


def test_balanced_is_the_default_mode(memory):
    memory.observe("the bridge on gw-02 is down")
    r = memory.recall("bridge")
    assert r["mode"] == "balanced" and r["hits"]


def test_explain_traces_each_stage_of_the_pipeline(memory):
    memory.observe("the bridge went down at noon")
    memory.observe("Bridge: DOWN")
    memory.observe("lunch was late")
    r = memory.recall("bridge", mode="deep")
    names = [s["stage"] for s in r["stages"]]
    assert names[0] == "full_text" and names[-1] == "rank"
    assert names.index("meaning") < names.index("graph") < names.index("supersession") < names.index("rank")
    assert r["stages"][0]["candidates"] == 2  # the two with the word
    assert r["stages"][-1]["candidates"] == len(r["hits"]) and all(s["ms"] >= 0 for s in r["stages"])
    assert "stages" not in memory.recall("bridge", explain=False)
