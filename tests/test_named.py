"""Questions that name a source of memories (episodes/named.py), and the recall stage that lifts
what that source said."""

import asyncio

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.recall.named import named_sources
from strata_daemon.recall.why import why_line

SOURCES = {"Melanie", "Caroline", "user", "agent", "Jon Smith", "a", "the", None}


@pytest.mark.parametrize("question, named", [
    ("What items has Melanie bought?", {"Melanie"}),
    ("what are melanie's hobbies", {"Melanie"}),
    ("What movies have both Caroline and Melanie seen?", {"Caroline", "Melanie"}),
    ("what did the user ask about backups?", {"user"}),
    ("Where does Jon Smith work?", {"Jon Smith"}),
    ("What did Jon say?", set()),  # part of a source's name is not the source
    ("What did Melanies cat eat?", set()),  # nor a longer word
    ("Which users asked about backups?", set()),
    ("What is a dossier?", set()),  # a stopword is no source, one letter never
    # The one spoken to is not who the question is about...
    ("What book did Caroline recommend to Melanie?", {"Caroline"}),
    ("What does Caroline tell Melanie she won't do?", {"Caroline"}),
    ("what did the user ask the agent to keep?", {"user"}),
    ("what did I tell the agent about backups?", set()),
    # ...but "to" alone leaves a name that is the only one named, and a name also named
    # elsewhere in the question stays.
    ("What symbols are important to Caroline?", {"Caroline"}),
    ("What did Melanie tell Caroline, and what did Caroline answer?", {"Caroline", "Melanie"}),
])
def test_the_sources_a_question_names(question, named):
    assert named_sources(question, SOURCES) == named


def test_a_question_naming_a_source_lifts_what_it_said(home):
    async def go(weight):
        write_config(home, f"[experimental]\n\"recall.source_named_weight\" = {weight}\n\"recall.hop_weight\" = 0\n")  # this stage alone
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                # Caroline speaks to Melanie by name; Melanie's own turn holds the answer.
                await mem.observe("Yep, Melanie! I bought a hand-painted bowl and new shoes at the market",
                                  source="Caroline", at="2023-05-01T10:00:00Z")
                await mem.observe("Just got running shoes and wore them at the market", source="Melanie",
                                  at="2023-05-01T10:01:00Z")
            r = await mem.recall("What has Melanie bought?", mode="fast")
            return [h["source"] for h in r["hits"]], r["hits"], r["stages"]

    order, _, stages = asyncio.run(go(0))
    assert order[0] == "Caroline" and "source_named" not in [s["stage"] for s in stages]
    order, hits, stages = asyncio.run(go(1.0))
    assert order[0] == "Melanie"
    assert hits[0]["explain"]["retrievers"]["source_named"] == {"lift": 1.0, "named": ["Melanie"]}
    assert "from the source named" in hits[0]["why"]
    assert next(s for s in stages if s["stage"] == "source_named") | {"ms": 0} == {
        "stage": "source_named", "candidates": 2, "change": 0, "sources": ["Melanie"], "lifted": 1, "ms": 0}


def test_the_why_line_says_a_source_was_named():
    line = why_line({"retrievers": {"fts": {}, "source_named": {"lift": 0.1}}}, age=10**9)
    assert line == "found by words; from the source named"
