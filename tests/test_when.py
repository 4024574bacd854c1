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
        write_config(home, f"[experimental]\n\"recall.when_weight\" = {weight}\n\"recall.hop_weight\" = 0\n")  # this stage alone
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
    # A long text (a pasted log and a question) is read at its two ends, where the question sits.
    log = "disk usage on nas-1 is fine\n" * 1000
    assert named_time(log + "what broke last week?", now).holds(now - 6 * 86400)
    assert named_time("what broke in 2022? " + log, now).holds(_ts(2022, 6, 1))
    assert named_time(log + "it broke in 2022" + log, now) is None


def test_a_question_naming_a_day_lifts_the_memories_of_that_day(home):
    async def go(weight):
        write_config(home, f'[experimental]\n"recall.date_weight" = {weight}\n"recall.hop_weight" = 0\n')  # this stage alone
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
    assert order[0] == _ts(2023, 10, 13, 15)
    assert hits[0]["explain"]["retrievers"]["date"]["window"] == "2023-10-12 .. 2023-10-15"


@pytest.mark.parametrize("question, inside, outside", [
    ("Where was John between August 11 and August 15 2023?", [(2023, 8, 11), (2023, 8, 15, 20)], [(2023, 8, 18)]),
    ("between 28 December 2022 and 2 January 2023", [(2022, 12, 28), (2023, 1, 2)], [(2022, 12, 20)]),
    ("What did John do the week before August 3, 2023?", [(2023, 7, 27), (2023, 8, 3)], [(2023, 7, 20)]),
    ("the puppy she got two weeks before August 11, 2023", [(2023, 7, 28), (2023, 8, 11)], [(2023, 7, 20)]),
    ("What did Joanna watch on the Sunday before October 25, 2022?", [(2022, 10, 23)], [(2022, 10, 10)]),
    ("What happened three days after 1 May 2023?", [(2023, 5, 4)], [(2023, 5, 8)]),
    ("Where was the picture John shared on December 1,2023 taken?", [(2023, 12, 1)], [(2023, 12, 5)]),
    ("What state did Joanna visit in summer 2021?", [(2021, 6, 1), (2021, 8, 31)], [(2021, 9, 2), (2022, 7, 1)]),
    ("in the winter of 2022", [(2023, 1, 15)], [(2022, 3, 1)]),
    ("What did they give him when they met on Aug 15th?", [(2020, 8, 15)], [(2023, 9, 15)]),
])
def test_ranges_and_spans_counted_from_a_day(question, inside, outside):
    window = named_time(question, _ts(2026, 11, 26))
    assert all(window.holds(_ts(*t)) for t in inside), window
    assert not any(window.holds(_ts(*t)) for t in outside), window


def test_last_summer_is_the_latest_whole_one():
    assert str(named_time("what we saw last summer", _ts(2026, 11, 26))) == "2026-06-01 .. 2026-09-01"
    assert str(named_time("what we saw last summer", _ts(2026, 7, 1))) == "2025-06-01 .. 2025-09-01"
    assert named_time("I love summer", 0) is None


def test_a_memory_of_the_named_day_joins_though_no_retriever_found_it(home):
    """It shares no word with the question and is no nearer in meaning than the rest: only
    the day it was said brings it (with the day's other memory)."""
    async def go(weight):
        write_config(home, f'[experimental]\n"recall.date_weight" = {weight}\n"recall.hop_weight" = 0\n"recall.candidates" = 5\n')
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                for day in range(1, 21):
                    await mem.observe(f"Nate kept practising the new level for the tournament, day {day}",
                                      at=f"2022-05-{day:02d}T09:00:00Z", source="Nate")
                await mem.observe("Looky here, I got this new pup for you!", at="2022-05-25T15:00:00Z", source="Nate")
                await mem.observe("the weather was grey all afternoon", at="2022-05-25T16:00:00Z", source="Nate")
                await mem.embed_pending()
            r = await mem.recall("What did Nate do for Joanna on 25 May, 2022?", k=8)
            return [h["content"] for h in r["hits"]], r

    contents, _ = asyncio.run(go(0))
    assert "Looky here, I got this new pup for you!" not in contents
    contents, r = asyncio.run(go(1.0))
    assert "Looky here, I got this new pup for you!" in contents
    stage = next(s for s in r["stages"] if s["stage"] == "time_named")
    assert stage["window"] == "2022-05-24 .. 2022-05-27" and stage["members"] == 2 and stage["added"] == 2
    assert "the weather was grey all afternoon" in contents


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


def test_the_memories_of_any_june_latest_first_and_no_more_than_asked(home):
    from strata_daemon.recall.stages.time_named import window_members
    from strata_daemon.store.fulltext import Scope

    async def go():
        async with await Memory.open(home) as mem:
            ids = {}
            for at in ("2021-06-03", "2022-06-20", "2022-07-01", "2022-06-02"):
                ids[(await mem.observe(f"a walk by the river on {at}", at=f"{at}T10:00:00Z"))["id"]] = at
            said = await mem.observe("we went camping last June", at="2022-09-01T10:00:00Z")
            ids[said["id"]] = "stated"
            june = named_time("When did we go camping in June?", 0)
            scope = Scope("default", ("active",))
            return ids, await mem.db.run(window_members, scope, june, 100), await mem.db.run(window_members, scope,
                                                                                            june, 2)

    ids, every, two = asyncio.run(go())
    assert [ids[i] for i in every] == ["2022-06-20", "2022-06-02", "2021-06-03", "stated"]
    assert [ids[i] for i in two] == ["2022-06-20", "2022-06-02", "stated"]  # two said then, and the one stating it
