"""The second hop (episodes/hop.py and its recall stage): the words the best first hits share
that the question lacks find what the question does not name."""

import asyncio

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.recall.hop import expansion


def test_expansion_prefers_words_several_hits_share_and_never_the_questions():
    seeds = ["I want to work in counseling and mental health", "The mental health workshop on counseling was great",
             "Caroline loves painting"]
    words = expansion("What might Caroline study?", seeds, 3)
    assert words[:2] in (["counseling", "health"], ["health", "counseling"]) and "mental" in words
    assert "caroline" not in expansion("What might Caroline study?", seeds, 20)  # the question's own word
    assert not {"great", "want", "and", "the", "in", "on"} & set(expansion("x", seeds, 20))  # filler, stopwords, short
    assert expansion("anything", [], 5) == [] and expansion("q", ["a b c"], 5) == []
    found = seeds + ["a mental health day", "mental notes", "Caroline went out"]
    assert "mental" not in expansion("What might Caroline study?", seeds, 20, found)  # in half of what was found
    assert "counseling" in expansion("What might Caroline study?", seeds, 20, found)


def test_a_second_hop_finds_the_memory_the_question_does_not_name(home, cli):
    async def go(weight, **how):
        write_config(home, f"[experimental]\n\"recall.hop_weight\" = {weight}\n\"recall.min_similarity\" = 1.0\n")  # full text only
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                await mem.observe("Caroline told me she wants a career in counseling and mental health")
                await mem.observe("Counseling programs with a mental health focus open applications in May")
                await mem.observe("The printer on floor two jams")
                for other in ("Dana fixed the billing bug", "web-3 rotated its logs", "Tom sent the quarterly report",
                              "We talked about pricing for the launch", "The bridge on gw-02 went down overnight"):
                    await mem.observe(other)  # a home large enough that rarer words weigh more
            r = await mem.recall("What career does Caroline want?", explain=True, **how)
            return [h["content"] for h in r["hits"]], r["stages"], r["hits"]

    found, stages, _ = asyncio.run(go(0))
    assert found == ["Caroline told me she wants a career in counseling and mental health"]
    found, stages, hits = asyncio.run(go(0.5))
    assert "second_hop" not in hits[0]["explain"]["retrievers"]  # a seed is not lifted by its own words
    assert found[:2] == ["Caroline told me she wants a career in counseling and mental health",
                         "Counseling programs with a mental health focus open applications in May"]
    hop = next(s for s in stages if s["stage"] == "second_hop")
    assert hop["added"] == 1 and "counseling" in hop["words"]
    # fast keeps to the question's words: the hop may reorder them and brings in nothing, unless asked
    found, stages, _ = asyncio.run(go(0.5, mode="fast"))
    assert found == ["Caroline told me she wants a career in counseling and mental health"]
    assert next(s for s in stages if s["stage"] == "second_hop")["added"] == 0
    found, _, _ = asyncio.run(go(0.5, mode="fast", hop=True))
    assert found[1] == "Counseling programs with a mental health focus open applications in May"
    words = cli.json("recall", "What career does Caroline want?", "--mode", "fast")["hits"]
    hopped = cli.json("recall", "What career does Caroline want?", "--mode", "fast", "--hop")["hits"]
    assert (len(words), len(hopped)) == (1, 2)


def test_the_hop_searches_only_words_rare_enough_to_rank_exactly(memory):
    from strata_daemon.store.fulltext import rarest_within
    memory.observe_many([{"content": f"probe {i} reported from gw-0{i % 2}"} for i in range(6)]
                        + [{"content": "the kestrel nests on gw-02"}])
    found = memory.wait(memory.raw.db.run(lambda conn: rarest_within(conn, "default", ["probe", "kestrel", "gw-02",
                                                                            "albatross", "reported"], 4)))
    # kestrel (1) then gw-02 (1): "probe" and "reported" (6 each) would overflow 4; no memory holds albatross
    assert found == ["gw-02", "kestrel"]  # rarest first, ties by the word
    assert memory.wait(memory.raw.db.run(lambda conn: rarest_within(conn, "default", ["probe"], 4))) == []
