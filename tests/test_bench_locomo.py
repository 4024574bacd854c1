"""`strata bench locomo`: the scoring by hand-computed examples, the data checks, and a real run
on a tiny hand-written LoCoMo-format file (tests/data/locomo_tiny.json)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from conftest import write_config
from strata_bench.folds import GRID, choose, deal, grid_points
from strata_bench.locomo_baselines import (
    Bm25,
    cosine_rankings,
    embed_all,
    embedded_documents,
    fts_tokenize,
    nearest_by_cosine,
    rrf,
)
from strata_bench.locomo_data import (
    Turn,
    budget_recall,
    data_issues,
    dia_ranking,
    evidence_recall,
    load_locomo,
    parse_evidence,
    parse_locomo,
    parse_session_date,
    question_scores,
    session_of,
    session_recall,
    summarise,
    token_counter,
    turn_text,
)
from strata_bench.locomo_home import episode_turns, home_toml, store_turns
from strata_daemon import Memory
from strata_daemon.config.load import load_config
from strata_daemon.errors import InvalidInput, NotFound

TINY = Path(__file__).resolve().parent / "data" / "locomo_tiny.json"


# -- evidence and dates ----------------------------------------------------------------------

@pytest.mark.parametrize("raw, ids, irregular, unreadable", [
    (["D1:3"], ["D1:3"], 0, 0),
    ([], [], 0, 0),
    (["D8:6; D9:17"], ["D8:6", "D9:17"], 1, 0),  # as in LoCoMo: two ids in one entry
    (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"], 1, 0),
    (["D1:2, D1:3"], ["D1:2", "D1:3"], 1, 0),
    (["D:11:26"], ["D11:26"], 1, 0),  # LoCoMo's typo for D11:26
    (["D"], [], 1, 1),
    (["D1:1", "D1:1"], ["D1:1"], 0, 0),
    (["D01:03"], ["D1:3"], 1, 0),
])
def test_parse_evidence(raw, ids, irregular, unreadable):
    assert parse_evidence(raw) == (ids, irregular, unreadable)


def test_parse_session_date():
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp()
    assert parse_session_date("12:05 am on 1 January, 2024") == datetime(2024, 1, 1, 0, 5,
                                                                         tzinfo=timezone.utc).timestamp()
    for bad in ("8 May 2023", "13:56 pm on 8 May, 2023", "1:56 pm on 8 Mai, 2023", "", None):
        with pytest.raises(InvalidInput) as e:
            parse_session_date(bad)
        assert "1:56 pm on 8 May, 2023" in e.value.hint


def test_turn_text_is_the_text_and_the_shared_image_caption():
    turn = {"speaker": "Ines", "dia_id": "D1:5", "text": "Mostly bowls.", "blip_caption": "a blue bowl"}
    assert turn_text(turn) == "Mostly bowls. [shares a blue bowl]"
    assert turn_text({**turn, "blip_caption": " "}) == turn_text({"text": "Mostly bowls."}) == "Mostly bowls."


# -- scoring ---------------------------------------------------------------------------------

def test_session_of():
    assert session_of("D3:5") == "3" and session_of("D12:1") == "12"


def test_evidence_recall_is_the_share_of_evidence_in_the_top_k():
    ranked = ["D9:9", "D1:1", "D5:5", "D6:6", "D7:7", "D3:3", "D8:8"]
    evidence = ["D1:1", "D2:2", "D3:3"]
    assert evidence_recall(evidence, ranked, 5) == pytest.approx(1 / 3)  # D1:1
    assert evidence_recall(evidence, ranked, 10) == pytest.approx(2 / 3)  # D1:1, D3:3; D2:2 never
    assert evidence_recall([], ranked, 10) == 0.0  # no evidence counts 0
    assert evidence_recall(evidence, [], 10) == 0.0


def test_session_recall_counts_distinct_evidence_sessions():
    evidence = ["D1:1", "D1:2", "D2:5"]  # sessions 1 and 2
    assert session_recall(evidence, ["D1:7", "D4:1"], 5) == 0.5  # another turn of session 1 counts
    assert session_recall(evidence, ["D12:2", "D21:5"], 5) == 0.0  # session 12 is not session 1
    assert session_recall(evidence, ["D4:1"] * 5 + ["D2:1"], 5) == 0.0
    assert session_recall(evidence, ["D4:1"] * 5 + ["D2:1"], 10) == 0.5
    assert session_recall([], ["D1:1"], 5) == 0.0


def test_question_scores():
    ranked = ["D1:1"] + [f"D5:{i}" for i in range(1, 6)] + ["D2:2"]
    assert question_scores(["D1:1", "D2:2"], ranked) == {
        "recall_at_5": 0.5, "recall_at_10": 1.0, "session_recall_at_5": 0.5, "session_recall_at_10": 1.0}


def test_budget_recall_counts_only_hits_that_fit_whole():
    ranked = [(["D1:1"], 200), (["D1:2", "D1:3"], 50), (["D2:1"], 10), (["D3:1"], 1000)]
    assert budget_recall(["D1:1", "D2:1"], ranked, 256) == 0.5  # 200 + 50 + 10 > 256: D2:1 is cut
    assert budget_recall(["D1:1", "D2:1"], ranked, 512) == 1.0
    assert budget_recall(["D1:3"], ranked, 250) == 1.0 and budget_recall(["D1:3"], ranked, 249) == 0.0
    assert budget_recall(["D3:1"], ranked, 1024) == 0.0 and budget_recall([], ranked, 1024) == 0.0
    assert question_scores(["D2:1"], ["D2:1"], ranked)["evidence_within_512"] == 1.0


def test_the_token_ruler_counts_wordpieces_without_special_tokens():
    assert token_counter()(["", "hello world", "hello world, unbelievably"]) == [0, 2, 8]  # hello world , un ##bel ##ie ##va ##bly


def test_summarise_means_over_questions_and_per_category():
    def s(r5, r10):
        return {"recall_at_5": r5, "recall_at_10": r10, "session_recall_at_5": r5, "session_recall_at_10": 1.0}

    out = summarise([(1, s(1.0, 1.0)), (1, s(0.0, 0.5)), (4, s(0.5, 0.0))])
    assert out["recall_at_5"] == 0.5  # (1 + 0 + 0.5) / 3
    assert out["recall_at_10"] == 0.5
    assert out["session_recall_at_10"] == 1.0
    assert out["categories"] == {
        "1": {"name": "multi-hop", "questions": 2, "recall_at_5": 0.5, "recall_at_10": 0.75,
              "session_recall_at_5": 0.5, "session_recall_at_10": 1.0},
        "4": {"name": "single-hop", "questions": 1, "recall_at_5": 0.5, "recall_at_10": 0.0,
              "session_recall_at_5": 0.5, "session_recall_at_10": 1.0},
    }
    assert summarise([(2, s(1 / 3, 2 / 3))])["recall_at_5"] == 0.3333  # 4 decimals


def test_rrf_sums_reciprocal_ranks_and_keeps_first_seen_order_on_ties():
    # 3: 1/63 + 1/61, 1: 1/61, 2 and 4: 1/62 each (2 seen first)
    assert rrf([[1, 2, 3], [3, 4]]) == [3, 1, 2, 4]
    assert rrf([[], []]) == []
    assert rrf([[7, 8], [8, 7]], k=0) == [7, 8]  # 1 + 1/2 each: a tie


def test_dia_ranking_expands_shared_episodes_and_cuts_at_k():
    dia = {5: ["D1:1"], 6: ["D1:2", "D1:3"], 7: ["D2:1"]}
    assert dia_ranking([5, 7, 6], dia, k=3) == ["D1:1", "D2:1", "D1:2"]
    assert dia_ranking([6, 99, 5], dia) == ["D1:2", "D1:3", "D1:1"]  # an unknown id stands for nothing


def test_episode_turns_groups_turns_that_share_an_episode():
    turns = [Turn(f"D1:{i}", "A", "session_1", 0.0, {"text": "x"}) for i in range(1, 5)]
    grouped = episode_turns([11, 12, 12, 13], turns)
    assert {e: [t.dia_id for t in ts] for e, ts in grouped.items()} == {11: ["D1:1"], 12: ["D1:2", "D1:3"],
                                                                         13: ["D1:4"]}
    with pytest.raises(ValueError):
        episode_turns([11], turns)


def test_identical_turns_of_a_session_share_an_episode_and_keep_every_dia_id(home):
    conv = load_locomo(TINY)[0]  # D2:5 and D2:6 are both "See you soon!"

    async def store():
        async with await Memory.open(home) as mem:
            return await store_turns(mem, conv, [turn_text(t.raw) for t in conv.turns], "fast", None)

    stored = asyncio.run(store())
    assert len(stored.episodes) == len(stored.texts) == 11
    assert stored.dia_ids[stored.episodes[-1]] == ["D2:5", "D2:6"] and stored.texts[-1] == "See you soon!"
    assert sorted(d for ds in stored.dia_ids.values() for d in ds) == sorted(t.dia_id for t in conv.turns)


def test_cosine_rankings():
    docs = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    queries = np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    assert cosine_rankings(queries, docs, [10, 20, 30], 2) == [[20, 30], [10, 30]]


@pytest.mark.parametrize("with_source", [True, False])
def test_cosine_baseline_ranks_by_the_vectors_the_store_holds(home, with_source):
    write_config(home, f"embedding.with_source = {str(with_source).lower()}\n")
    conv = load_locomo(TINY)[0]

    async def run():
        async with await Memory.open(home) as mem:
            stored = await store_turns(mem, conv, [turn_text(t.raw) for t in conv.turns], "balanced", None)
            embedder = await mem.embedder()
            docs = embedded_documents(stored, mem.embedded_text())
            mine = await embed_all(embedder, docs)
            ranked = await nearest_by_cosine(embedder, stored, conv.questions, mem.embedded_text(), None)
            rows = await mem.db.fetchall("SELECT rowid, embedding FROM episode_vectors")
            return stored, docs, mine, ranked, {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows}

    stored, docs, mine, ranked, held = asyncio.run(run())
    assert docs[0].startswith("Ines: ") == with_source
    assert sorted(held) == sorted(stored.episodes)
    np.testing.assert_allclose(mine, np.stack([held[e] for e in stored.episodes]), atol=1e-5)
    assert len(ranked) == len(conv.questions) and all(sorted(r) == sorted(stored.episodes) for r in ranked)


def test_bm25_baseline_tokenizes_like_the_store(memory):
    memory.observe("a first memory makes the namespace's full-text table")
    schema = memory.sql("SELECT sql FROM sqlite_master WHERE name = 'episodes_fts_1'")[0]["sql"]
    tokenize = fts_tokenize(schema)
    assert "porter" in tokenize  # the store stems, so the baseline must too
    bm25 = Bm25(tokenize, [(1, "She runs along the river every morning"), (2, "A quiet evening at home"),
                           (3, "Running shoes, running socks, running late")])
    try:
        assert bm25.search("running", 10) == [3, 1]  # stemmed: runs ~ running; more matches rank first
        assert bm25.search("???", 10) == []  # no searchable words
    finally:
        bm25.close()
    with pytest.raises(ValueError):
        fts_tokenize("CREATE VIRTUAL TABLE t USING fts5(content)")


def test_home_toml_is_read_back_by_the_config_loader(tmp_path):
    settings = {"store.attention_window_seconds": 0, "recall.rrf_k": 30, "scoring.weights.relevance": 0.7,
                "store.kinds": ["message", "observation"], "store.default_kind": "message",
                "agent.namespace": "bench-1", "embedding.model": "/models/a \"quoted\" name.gguf"}
    path = tmp_path / "strata.toml"
    path.write_text(home_toml(settings), encoding="utf-8")
    cfg = load_config(path)
    tuned = {"recall.rrf_k", "scoring.weights.relevance"}  # tuned constants: under [experimental]
    assert {k: cfg[k] for k in settings if k not in tuned} == {k: v for k, v in settings.items() if k not in tuned}
    assert cfg.experimental == {"recall.rrf_k": 30, "scoring.weights.relevance": 0.7}
    assert all(cfg.sources[k] == str(path) for k in settings if k not in tuned)


# -- reading the data ------------------------------------------------------------------------

def test_the_tiny_fixture_loads():
    convs = load_locomo(TINY)
    assert [c.name for c in convs] == ["tiny-1", "tiny-2"]
    assert [len(c.turns) for c in convs] == [12, 8] and [len(c.questions) for c in convs] == [6, 5]
    first = convs[0].turns[0]
    assert (first.dia_id, first.speaker, first.session) == ("D1:1", "Ines", "session_1")
    assert first.at == parse_session_date("9:15 am on 3 March, 2024")
    assert convs[0].turns[-1].session == "session_2"  # session_3 has a date but no turns, as in LoCoMo
    assert convs[0].questions[3].evidence == ("D1:3", "D1:5", "D2:4")
    assert data_issues(convs) == {"questions_without_evidence": 1, "evidence_irregular": 3,
                                  "evidence_unreadable": 1, "evidence_not_in_conversation": 1}
    assert len(load_locomo(TINY, 1)) == 1
    assert [c.name for c in load_locomo(TINY, "2-2")] == [convs[1].name]
    assert [c.name for c in load_locomo(TINY, "1-5")] == [c.name for c in convs]  # past the end: what there is


def _tiny() -> list:
    return json.loads(TINY.read_text(encoding="utf-8"))


def _broken(change) -> list:
    data = _tiny()
    change(data)
    return data


@pytest.mark.parametrize("data, words", [
    ({"qa": []}, "expected a non-empty list of conversations"),
    ([], "expected a non-empty list of conversations"),
    (_broken(lambda d: d[0].pop("qa")), 'tiny-1: missing "qa" list'),
    (_broken(lambda d: d[0]["qa"][2].update(category=7)), "qa[2]: category 7 is not one of 1, 2, 3, 4, 5"),
    (_broken(lambda d: d[0]["qa"][0].pop("question")), "qa[0]: a qa entry has no question"),
    (_broken(lambda d: d[0]["qa"][0].update(evidence="D2:1")), "evidence must be a list"),
    (_broken(lambda d: d[1]["conversation"]["session_2"][0].update(dia_id="D1:1")), "two turns share a dia_id"),
    (_broken(lambda d: d[1]["conversation"]["session_2"][1].pop("text")), "session_2: turn D2:2 has no text"),
    (_broken(lambda d: d[1]["conversation"]["session_1"][0].update(dia_id="turn one")), "no readable dia_id"),
    (_broken(lambda d: d[1]["conversation"].pop("session_1_date_time")), "session_1_date_time: cannot read"),
    (_broken(lambda d: [d[0]["conversation"].pop(k) for k in ("session_1", "session_2")]), "no session_N lists"),
    (_broken(lambda d: [c.update(qa=[]) for c in d]), "no questions to ask"),
])
def test_wrong_shapes_are_invalid_input_naming_the_place(data, words):
    with pytest.raises(InvalidInput) as e:
        parse_locomo(data, "x.json")
    assert words in e.value.message and e.value.hint


def test_unreadable_files(tmp_path):
    with pytest.raises(NotFound):
        load_locomo(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('[{"qa": [', encoding="utf-8")
    with pytest.raises(InvalidInput, match="is not JSON"):
        load_locomo(bad)
    bad.write_bytes(b"\xff\xfe[]")
    with pytest.raises(InvalidInput, match="not UTF-8"):
        load_locomo(bad)
    for pick in (0, "0-1", "2-1", "two", "1-"):
        with pytest.raises(InvalidInput, match="--conversations"):
            load_locomo(TINY, pick)
    with pytest.raises(InvalidInput, match="holds only 2 conversations"):
        load_locomo(TINY, "3-4")


# -- through the CLI -------------------------------------------------------------------------

def test_cli_missing_file_is_not_found(cli, tmp_path):
    proc = cli("bench", "locomo", "--data", str(tmp_path / "nope.json"))
    assert proc.returncode == 3
    assert "no LoCoMo data at" in proc.err and "hint: pass --data" in proc.err and "Traceback" not in proc.err


def test_cli_malformed_json_is_invalid_input(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"qa": [', encoding="utf-8")
    proc = cli("bench", "locomo", "--data", str(bad), "--json")
    assert proc.returncode == 4
    err = json.loads(proc.out)
    assert err["error"] == "invalid_input" and "is not JSON" in err["message"] and err["hint"]
    assert "Traceback" not in proc.err


def test_cli_wrong_shape_is_invalid_input(cli, tmp_path):
    bad = tmp_path / "shape.json"
    bad.write_text(json.dumps({"conversation": {}, "qa": []}), encoding="utf-8")
    proc = cli("bench", "locomo", "--data", str(bad))
    assert proc.returncode == 4 and "non-empty list of conversations" in proc.err


METRICS = ("recall_at_5", "recall_at_10", "session_recall_at_5", "session_recall_at_10",
           "evidence_within_256", "evidence_within_512", "evidence_within_1024")


def _check_figures(block: dict, questions: int) -> None:
    for m in METRICS:
        assert 0.0 <= block[m] <= 1.0, m
    assert sum(c["questions"] for c in block["categories"].values()) == questions
    for cat in block["categories"].values():
        assert set(cat) == {"name", "questions", *METRICS}
        assert all(0.0 <= cat[m] <= 1.0 for m in METRICS)


@pytest.mark.slow
def test_cli_locomo_on_the_tiny_fixture(cli, home, tmp_path):
    out = tmp_path / "locomo.json"
    r = cli.json("bench", "locomo", "--data", str(TINY), "--out", str(out))
    assert json.loads(out.read_text(encoding="utf-8")) == r
    assert (r["benchmark"], r["data"], r["conversations"], r["questions"], r["turns"]) == (
        "locomo", str(TINY), 2, 11, 20)
    assert r["mode"] == "balanced" and r["mode_used"] == "balanced" and r["warnings"] == []
    _check_figures(r, 11)
    assert {k: c["name"] for k, c in r["categories"].items()} == {
        "1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
    assert set(r["baselines"]) == {"bm25", "cosine", "rrf"} == set(r["ratios"])
    for b in r["baselines"].values():
        _check_figures(b, 11)
    for name, rat in r["ratios"].items():
        assert set(rat) == {"recall_at_5", "recall_at_10"}
        assert rat["recall_at_5"] == round(r["recall_at_5"] / r["baselines"][name]["recall_at_5"], 4)
    # The fixture's single-hop questions each name a word only their evidence turn holds
    # ("tortoise", "sailboat", "half marathon"): BM25 and strata must both rank it in the top 5.
    assert r["categories"]["4"]["recall_at_5"] == 1.0
    assert r["baselines"]["bm25"]["categories"]["4"]["recall_at_5"] == 1.0
    # The open-domain question without evidence scores 0, so that category cannot reach 1.
    assert r["categories"]["3"]["recall_at_10"] <= 0.5
    assert r["data_issues"]["questions_without_evidence"] == 1
    lat = r["recall_latency_ms"]
    assert 0 < lat["p50_ms"] <= lat["p95_ms"]
    assert r["seconds"] > 0 and r["embedding_model"]
    assert r["settings"]["recall.rrf_k"] == 60 and "recall.mode" not in r["settings"]
    assert not (home / "state" / "memory.db").exists()  # everything happened in temporary homes


@pytest.mark.slow
def test_cli_locomo_fast_mode_one_conversation_and_the_table(cli, home):
    (home / "strata.toml").write_text("[experimental]\n\"recall.rrf_k\" = 30\n", encoding="utf-8")
    proc = cli("bench", "locomo", "--data", str(TINY), "--conversations", "1", "--mode", "fast", check=True)
    lines = proc.out.splitlines()
    assert lines[0].startswith("LoCoMo retrieval: 1 conversations, 12 turns, 6 questions, mode fast (used fast)")
    assert any(line.split()[:2] == ["overall", "6"] and len(line.split()) == 10 for line in lines)
    assert any(line.split()[:2] == ["single-hop", "2"] for line in lines)
    r = cli.json("bench", "locomo", "--data", str(TINY), "--conversations", "1", "--mode", "fast")
    assert r["conversations"] == 1 and r["questions"] == 6 and r["mode_used"] == "fast"
    assert r["settings"]["recall.rrf_k"] == 30  # the home's own settings are the ones measured


def test_split_alternates_questions_for_the_lived_copy():
    from strata_bench.lived import split

    conv = load_locomo(TINY)[0]
    first, measured = split(conv.questions)
    assert first == list(conv.questions[0::2]) and measured == list(conv.questions[1::2])


def test_cli_locomo_lived_on_the_tiny_fixture(cli, home):
    # The fixture is small: let its feedback take the lived copies into the active phase, as a
    # real conversation's does.
    (home / "strata.toml").write_text("[experimental]\n\"scoring.passive_min_episodes\" = 5\n\"scoring.passive_min_feedback\" = 2\n",
                                      encoding="utf-8")
    r = cli.json("bench", "locomo", "--data", str(TINY), "--lived", timeout=300)
    assert r["questions"] == 11 and r["mode_used"] == "balanced"  # the fresh run, as without --lived
    lv = r["lived"]
    assert lv["questions"] == 5  # every other question of each conversation: 3 + 2
    for side in ("fresh", "lived"):
        assert set(lv[side]) == {"recall_at_5", "recall_at_10"}
        assert all(0.0 <= v <= 1.0 for v in lv[side].values())
    assert lv["delta"] == {m: round(lv["lived"][m] - lv["fresh"][m], 4) for m in lv["delta"]}
    assert all(0.0 <= lv["arena_choice"][m] <= 1.0 for m in ("recall_at_5", "recall_at_10"))
    assert sum(c["questions"] for c in lv["categories"].values()) == 5
    assert lv["night_seconds"]["max"] >= lv["night_seconds"]["median"] > 0
    # The hooked copies: the first half asked through the prompt hook, replies citing the evidence.
    hooked = r["hooked"]
    assert hooked["questions"] == 5 and hooked["asked_through_the_hook"] == 6 and 0 < hooked["feedback_given"] <= 6
    assert set(hooked["fresh"]) == set(hooked["hooked"]) == {f"context_within_{b}" for b in (256, 512, 1024)}
    assert r["context"]["context_within_1024"] >= r["context"]["context_within_256"] > 0
    for conv in lv["per_conversation"]:
        assert conv["phase"] == "active" and conv["failed_phases"] == [] and conv["strategy"]
        assert conv["night"]["consolidate"]["run"] == 1 and conv["night"]["fold"]["events"] > 0
        assert conv["by_tier"]["hot"] + conv["by_tier"]["cold"] == sum(conv["by_state"].values())
    text = cli("bench", "locomo", "--data", str(TINY), "--lived", "--conversations", "1", check=True,
               timeout=300).out
    assert "lived vs fresh on the measured half (3 questions" in text and "night: median" in text


def test_an_agent_asking_in_its_own_words_uses_its_evidence_turns_words():
    from strata_bench.months import in_own_words

    q = load_locomo(TINY)[0].questions[0]
    texts = {q.evidence[0]: "one two three four five six seven eight nine ten eleven twelve thirteen"}
    asked = in_own_words(q, texts)
    assert asked.text == "one two three four five six seven eight nine ten eleven twelve"
    assert asked.evidence == q.evidence and asked.category == q.category


def test_cli_bench_lived_on_the_tiny_fixture(cli, home, tmp_path):
    from strata_bench.months_probes import question_key

    # The measured questions of the first conversation, worded apart as tests/data/LABELLING.md says.
    conv = load_locomo(TINY)[0]
    apart = ["What name did Bram give his sailing vessel?",
             "What does Ines craft during her lessons, and at which place were they traded?",
             "What do they call the shelled reptile Ines keeps?"]
    table = tmp_path / "reworded.tsv"
    table.write_text("# conversation\tkey\treworded\n" + "".join(
        f"{conv.name}\t{question_key(q.text)}\t{text}\n" for q, text in zip(conv.questions[1::2], apart)))
    r = cli.json("bench", "lived", "--data", str(TINY), "--tail-days", "20", "--checkpoint-days", "20",
                 "--asking", "own-words", "--reworded", str(table), timeout=600)
    assert r["mode"] == "none (the arena's)" and r["conversations"] == 2 and r["asking"] == "own-words"
    last = r["last_day"]
    # Measured: every other question whose evidence arrives (one names a turn of a third session
    # the second conversation never had).
    assert last["as_written"]["all"]["questions"] == 4 and last["worded_apart"]["all"]["questions"] == 3
    assert r["worded_apart_by_evidence_age"]["all"]["questions"] >= 3
    for block in (r["by_evidence_age"]["all"], last["as_written"]["all"], last["worded_apart"]["all"],
                  r["worded_apart_by_evidence_age"]["all"]):
        assert all(0 <= block[f"{h}_recall_at_{k}"] <= 1 for h in ("lived", "fresh") for k in (1, 5, 10))
        assert block["lived_recall_at_1"] <= block["lived_recall_at_5"] <= block["lived_recall_at_10"]
    assert last["shared_words"]["worded_apart"] < last["shared_words"]["as_written"]
    # The held-out update pairs are dealt between the conversations and asked on the last day.
    u = r["updates"]
    assert u["lived"]["pairs"] == u["fresh"]["pairs"] > 150 and 0 <= u["lived"]["newer_first"] <= 1
    a = r["arena"]
    assert a["nights"] == sum(c["days"] for c in r["per_conversation"]) and 0 <= a["nights_it_ran"] <= a["nights"]
    assert sum(a["days_on_each_strategy"].values()) == a["nights"]
    assert all(changes[0][0] == 1 for changes in a["choice_over_time"].values())
    assert r["forgotten_returned"] == 0 and 0.9 <= r["own_words_top10"]["lived"] <= 1
    text = cli("bench", "lived", "--data", str(TINY), "--conversations", "2", "--tail-days", "5",
               check=True, timeout=300).out
    assert "last day, worded apart" in text and "knowledge updates, newest statement first" in text
    assert "the arena ran on" in text


def test_folds_deal_every_conversation_once_and_choose_by_training_questions():
    assert deal(["a", "b", "c", "d", "e", "f", "g"], 2) == [["a", "c", "e", "g"], ["b", "d", "f"]]
    assert len(grid_points({"x": (1, 2), "y": (3, 4, 5)})) == 6
    good, bad = {"recall_at_5": 1.0, "recall_at_10": 1.0}, {"recall_at_5": 0.0, "recall_at_10": 0.0}
    scores = {0: {"a": [(1, bad)], "b": [(1, good)]}, 1: {"a": [(1, good)], "b": [(1, bad)]}}
    assert choose(scores, ["a"]) == 1 and choose(scores, ["b"]) == 0
    assert choose({0: {"a": [(1, good)]}, 1: {"a": [(1, good)]}}, ["a"]) == 0  # the first of equals
    # with lived copies, a point is chosen by the mean of both: a little better fresh loses to
    # much better lived
    fair = {"recall_at_5": 0.9, "recall_at_10": 0.9}
    fresh, lived = {0: {"a": [(1, good)]}, 1: {"a": [(1, fair)]}}, {0: {"a": [(1, bad)]}, 1: {"a": [(1, good)]}}
    assert choose(fresh, ["a"]) == 0 and choose(fresh, ["a"], lived) == 1


@pytest.mark.slow
def test_cli_locomo_folds_scores_each_question_with_settings_chosen_without_it(cli, tmp_path):
    r = cli.json("bench", "locomo", "--data", str(TINY), "--folds", "2")
    assert (r["benchmark"], r["folds"], r["conversations"], r["questions"]) == ("locomo_folds", 2, 2, 11)
    assert sorted(n for f in r["per_fold"] for n in f["held_out"]) == ["tiny-1", "tiny-2"]
    assert sum(f["questions"] for f in r["per_fold"]) == 11
    _check_figures(r["held_out"], 11)
    _check_figures(r["home_settings"], 11)
    for part in ("held_out_context", "home_settings_context"):  # the evidence inside `strata context`'s block
        assert set(r[part]) == {"context_within_256", "context_within_512", "context_within_1024", "categories"}
        assert 0 < r[part]["context_within_256"] <= r[part]["context_within_1024"] <= 1
    for f in r["per_fold"]:
        assert all(f["chosen"][k] in r["grid"][k] for k in r["grid"])
    assert r["gap"]["recall_at_5"] == round(r["tuned_on"]["recall_at_5"] - r["held_out"]["recall_at_5"], 4)
    assert r["points"] == len(grid_points(GRID)) and r["protocol_choice"]["settings"].keys() == GRID.keys()
    proc = cli("bench", "locomo", "--data", str(TINY), "--folds", "3")
    assert proc.returncode == 4 and "--folds takes 2 to 2 (the conversations)" in proc.err
    small = cli.json("bench", "locomo", "--data", str(TINY), "--folds", "2", "--grid", "recall.when_weight=0,0.5")
    assert small["points"] == 2 and small["grid"] == {"recall.when_weight": [0.0, 0.5]}
    # every point's score on all conversations, the protocol's choice the best of them
    assert [p["settings"] for p in small["point_scores"]] == [{"recall.when_weight": 0.0}, {"recall.when_weight": 0.5}]
    best = max(small["point_scores"], key=lambda p: p["recall_at_5"] + p["recall_at_10"])
    assert best["recall_at_5"] + best["recall_at_10"] == small["protocol_choice"]["recall_at_5"] + \
        small["protocol_choice"]["recall_at_10"]
    proc = cli("bench", "locomo", "--data", str(TINY), "--folds", "2", "--grid", "recall.when_weight=0,x")
    assert proc.returncode == 7 and "must be a number" in proc.err


@pytest.mark.slow
def test_cli_locomo_folds_lived_chooses_on_lived_copies_too(cli, home):
    (home / "strata.toml").write_text("[experimental]\n\"scoring.passive_min_episodes\" = 5\n\"scoring.passive_min_feedback\" = 2\n",
                                      encoding="utf-8")
    r = cli.json("bench", "locomo", "--data", str(TINY), "--folds", "2", "--lived",
                 "--grid", "recall.when_weight=0,0.5", timeout=300)
    lv = r["lived"]
    assert lv["questions"] == 5  # the measured half of each conversation: 3 + 2
    for block in (lv["held_out"], lv["fresh_held_out_same_questions"], lv["home_settings"],
                  r["protocol_choice"]["lived"], *(p["lived"] for p in r["point_scores"])):
        assert set(block) == {"recall_at_5", "recall_at_10"} and all(0.0 <= v <= 1.0 for v in block.values())
    assert lv["delta"] == {m: round(lv["held_out"][m] - lv["fresh_held_out_same_questions"][m], 4)
                           for m in lv["delta"]}
    assert all(set(f["lived_held_out_scores"]) == {"recall_at_5", "recall_at_10"} for f in r["per_fold"])
    # the protocol's choice is the point best by the mean of fresh and lived
    def both(p):
        return (p["recall_at_5"] + p["recall_at_10"] + p["lived"]["recall_at_5"] + p["lived"]["recall_at_10"]) / 4
    assert max(both(p) for p in r["point_scores"]) == pytest.approx(both(r["protocol_choice"]), abs=1e-3)
    text = cli("bench", "locomo", "--data", str(TINY), "--folds", "2", "--lived", "--grid",
               "recall.when_weight=0,0.5", check=True, timeout=300).out
    assert "lived copies, held out (5 questions" in text
