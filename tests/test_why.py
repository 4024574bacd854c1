"""What a hit says about itself besides its rank: `match`, measured against the question (not
relative to the best candidate), and `why`, its reasons in a line (episodes/why.py)."""

from strata_daemon.recall.why import RECENT, why_line
from strata_daemon.store.fulltext import word_shares


def test_why_line_says_what_found_and_raised_a_memory():
    explain = {"retrievers": {"fts": {"rank": 1}, "vector": {"rank": 2}, "neighbours": {"from": [3]}},
               "features": {"access_count": 3, "successes": 2, "failures": 1}}
    assert why_line(explain, age=3600) == "found by words and meaning; next to a match; recent; used 3×, 2 helped, 1 did not"
    old = {"retrievers": {"vector": {}, "supersedes": {"memory": 4}}, "features": {"access_count": 2, "successes": 2},
           "superseded_by": [9], "penalised": "low quality"}
    assert why_line(old, age=RECENT + 1, tier="cold") == ("found by meaning; newer than #4; used 2×, 2 helped; "
                                                          "superseded by #9; marked down: low quality; from the cold tier")
    assert why_line({"retrievers": {"session": {}}, "features": {}}, age=RECENT * 2) == \
        "brought in by what matched; in a session that matches"
    # A memory from the time a question names is found by that time, even with no word in common.
    assert why_line({"retrievers": {"date": {"window": "2022-05-24 .. 2022-05-27"}, "session": {}}, "features": {}},
                    age=RECENT * 2) == "found by the time named; in a session that matches"
    # Deep recall's cross-encoder: the memory it read as the best answer says so, when it read more than one.
    read = {(rank, of): why_line({"retrievers": {"vector": {}, "cross_encoder": {"score": -2.1, "rank": rank,
                                                                                 "of": of}},
                                  "features": {}}, age=RECENT * 2) for rank, of in ((1, 20), (2, 20), (1, 1))}
    assert read == {(1, 20): "found by meaning; read as the best answer of 20", (2, 20): "found by meaning",
                    (1, 1): "found by meaning"}


def test_word_shares_weigh_the_questions_words_by_rarity(memory):
    memory.observe_many([{"content": f"the nightly backup {i} finished"} for i in range(8)]
                        + [{"content": "the kestrel nests on the bridge"}])
    shares = memory.wait(memory.raw.db.run(word_shares, "default", "kestrel backup", [
        "a kestrel and a backup", "the kestrels nested", "the backups ran", "nothing alike", ""]))
    assert shares[0] == 1.0 and shares[3] == shares[4] == 0.0
    # the stemmer's words count ("kestrels" holds "kestrel"); the rare word weighs more than the common one
    assert 0.5 < shares[1] < 1.0 and 0 < shares[2] < 0.5 and abs(shares[1] + shares[2] - 1.0) < 1e-9
    # a question of stopwords only keeps them, and a memory holding them all matches it whole
    assert memory.wait(memory.raw.db.run(word_shares, "default", "the of and", ["and the cat of mine"])) == [1.0]
    assert memory.wait(memory.raw.db.run(word_shares, "default", "?!", ["anything"])) == [0.0]


def test_hits_carry_their_measured_match_and_a_why_line(memory):
    memory.observe("the bridge went down on Tuesday and I restarted it")
    memory.observe("Caroline likes hiking in the mountains")
    r = memory.recall("bridge restart", explain=True)
    top = r["hits"][0]
    assert top["content"].startswith("the bridge") and top["match"] == 1.0  # both words, stemmed
    assert top["why"].startswith("found by words and meaning") and "recent" in top["why"]
    assert 0 < top["explain"]["match"]["cosine"] < 1 and top["explain"]["match"]["words"] == 1.0
    # Not rescaled: a question that only half matches its best hit says so.
    half = memory.recall("bridge albatross", explain=True)["hits"][0]
    assert half["content"].startswith("the bridge") and half["match"] < 1.0
    assert abs(half["match"] - max(half["explain"]["match"]["words"], half["explain"]["match"]["cosine"])) < 1e-3
    lean = memory.recall("bridge restart", explain=False)["hits"][0]
    assert "explain" not in lean and lean["why"].startswith("found by words and meaning") and lean["match"] == 1.0


def test_words_the_tokenizer_splits_otherwise_than_python_do_not_break_recall(memory):
    # 'ᦶ' is one word to Python's \w and none to FTS5's unicode61; '乑۹' is one to each only as a pair
    odd = "乑۹ ᦶ 丅 the kestrel"
    memory.observe(f"a note in many scripts: {odd}")
    r = memory.recall(odd, explain=True)
    assert r["hits"] and r["hits"][0]["content"].endswith(odd) and r["hits"][0]["match"] > 0.5
    assert memory.wait(memory.raw.db.run(word_shares, "default", "ᦶ", ["ᦶ and more"])) in ([0.0], [1.0])
