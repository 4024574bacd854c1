"""Questions about time, and memories that say when (episodes/when.py), and the recall stage
that lifts the second for the first."""

import asyncio
from datetime import datetime, timezone

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.episodes.when import asks_when, named_time, says_when


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
        write_config(home, f"[recall]\nwhen_weight = {weight}\nhop_weight = 0\n")  # this stage alone
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


def _ts(*when):
    return datetime(*when, tzinfo=timezone.utc).timestamp()


def test_the_time_a_question_names():
    on = named_time("What painting did Melanie show to Caroline on October 13, 2023?", 0)
    assert on.holds(_ts(2023, 10, 13, 15)) and on.holds(_ts(2023, 10, 12, 9)) and not on.holds(_ts(2023, 10, 16))
    assert named_time("what happened on 2023-10-13", 0).holds(_ts(2023, 10, 13))
    month = named_time("What did Mel paint in July 2023?", 0)
    assert month.holds(_ts(2023, 7, 31, 23)) and not month.holds(_ts(2023, 8, 1))
    any_june = named_time("When did Melanie go camping in June?", 0)
    assert any_june.holds(_ts(2021, 6, 3)) and not any_june.holds(_ts(2023, 7, 1))
    assert named_time("what broke in 2022", 0).holds(_ts(2022, 12, 31)) and not named_time("what broke in 2022", 0).holds(_ts(2023, 1, 1))
    now = _ts(2026, 11, 26)
    week = named_time("what broke last week?", now)
    assert week.holds(now - 6 * 86400) and not week.holds(now - 20 * 86400)
    assert named_time("the deploy 3 months ago", now).holds(now - 88 * 86400)
    for none in ("What did Caroline research?", "May I ask what you like?", "on 31 February 2023 it broke"):
        assert named_time(none, now) is None


def test_a_question_naming_a_day_lifts_the_memories_of_that_day(home):
    async def go(weight):
        write_config(home, f"[recall]\ndate_weight = {weight}\nhop_weight = 0\n")  # this stage alone
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                await mem.observe("Melanie showed a painting of the lake at sunset", at="2023-10-13T15:00:00Z")
                await mem.observe("Melanie showed Caroline a painting of the lake and the painting of a sunset",
                                  at="2023-08-01T10:00:00Z")
            r = await mem.recall("What painting did Melanie show to Caroline on October 13, 2023?", mode="fast")
            return [h["event_at"] for h in r["hits"]], r["hits"]

    order, _ = asyncio.run(go(0))
    assert order[0] == _ts(2023, 8, 1, 10)
    order, hits = asyncio.run(go(1.0))
    assert order[0] == _ts(2023, 10, 13, 15) and hits[0]["explain"]["retrievers"]["date"] == {"lift": 1.0}


def test_the_cheap_first_test_never_turns_away_what_the_full_pattern_finds():
    import json
    from pathlib import Path

    from strata_daemon.episodes import when
    data = json.loads((Path(__file__).parent / "data" / "locomo_tiny.json").read_text(encoding="utf-8"))
    texts = [t["text"] for c in data for k, v in c["conversation"].items() if k.startswith("session_")
             and isinstance(v, list) for t in v] + [q["question"] for c in data for q in c["qa"]]
    texts += ["see you on Mondays", "it was back in the nineties", "a fortnight ago", "at 5pm", "in '99"]
    assert sum(when.says_when(x) for x in texts) > 5
    assert [when.says_when(x) for x in texts] == [bool(when._TIME.search(x)) for x in texts]
