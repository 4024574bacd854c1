"""Questions about time, and memories that say when (episodes/when.py), and the recall stage
that lifts the second for the first."""

import asyncio

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.episodes.when import asks_when, says_when


@pytest.mark.parametrize("question", [
    "When did Caroline go to the LGBTQ support group?", "when is the deploy window", "How long ago was her birthday?",
    "What year did Jon start his business?", "How many weeks did the trip take?", "Since when has the bridge been down?",
    "In which month did Ines move?", "Do you remember when did we restart it?"])
def test_questions_that_ask_when(question):
    assert asks_when(question)


@pytest.mark.parametrize("question", [
    "What did Caroline research?", "Where does Ines live?", "Whenever you can, restart web-01",
    "How many dogs does Melanie have?", "Who went to the concert?"])
def test_questions_that_do_not(question):
    assert not asks_when(question)


@pytest.mark.parametrize("text", [
    "I went to a support group yesterday", "We moved back in May", "That was 3 weeks ago", "See you on Friday",
    "It started in 2022", "the release on 8 May 2023 went fine", "meet at 3pm", "the deploy ran last night",
    "a couple of years back I lived there", "when I was a kid we went camping"])
def test_memories_that_say_when(text):
    assert says_when(text)


@pytest.mark.parametrize("text", [
    "I like green tea", "May I ask you something?", "The printer on floor two jams", "web-01 restarted cleanly",
    "the build has 2 stages"])
def test_memories_that_do_not(text):
    assert not says_when(text)


def test_a_when_question_lifts_the_memory_that_says_when(home):
    async def go(weight):
        write_config(home, f"[recall]\nwhen_weight = {weight}\n")
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                await mem.observe("Caroline loves the support group and the people in the support group there")
                await mem.observe("Caroline went to a support group yesterday")
            r = await mem.recall("When did Caroline go to the support group?", mode="fast")
            return [h["content"] for h in r["hits"]], r["hits"], r["stages"]

    order, _, stages = asyncio.run(go(0))
    assert order[0].startswith("Caroline loves") and "time_asked" not in [s["stage"] for s in stages]
    order, hits, stages = asyncio.run(go(1.0))
    assert order[0] == "Caroline went to a support group yesterday"
    assert hits[0]["explain"]["retrievers"]["when"] == {"lift": 1.0}
    assert next(s for s in stages if s["stage"] == "time_asked")["lifted"] == 1
