"""The times a memory states, resolved when it is stored (episodes/stated.py) and used by recall."""

import asyncio
from datetime import datetime, timezone

import pytest

from conftest import strata_sqlite as sqlite3, write_config
from strata_daemon import Memory
from strata_daemon.episodes.stated import label, stated_times

SAID = datetime(2023, 5, 8, 14, 0, tzinfo=timezone.utc).timestamp()  # a Monday


def spans(text, said=SAID):
    return [(text[s.at:s.at + s.length], label(s.start, s.end)) for s in stated_times(text, said)]


@pytest.mark.parametrize("text, expected", [
    ("I went to the support group yesterday", [("yesterday", "2023-05-07")]),
    ("we met last night and again today", [("last night", "2023-05-07"), ("today", "2023-05-08")]),
    ("the deploy is tomorrow", [("tomorrow", "2023-05-09")]),
    ("I started painting last week", [("last week", "2023-05-01..2023-05-07")]),
    ("camping last weekend", [("last weekend", "2023-05-06..2023-05-07")]),
    ("she called last Friday", [("last Friday", "2023-05-05")]),
    ("she called last Monday", [("last Monday", "2023-05-01")]),  # said on a Monday: the one before
    ("moved here last month", [("last month", "2023-04")]),
    ("the race was last year", [("last year", "2022")]),
    ("I ran a marathon last May", [("last May", "2022-05")]),  # said in May: the May before
    ("I ran a charity race last April", [("last April", "2023-04")]),
    ("I adopted a dog 3 days ago", [("3 days ago", "2023-05-05")]),
    ("we moved two years ago", [("two years ago", "2021")]),
    ("she left a few days ago", [("a few days ago", "2023-05-04..2023-05-06")]),
    ("it broke 2 weeks back", [("2 weeks back", "2023-04-21..2023-04-27")]),
    ("the show opened on 13 October 2023", [("13 October 2023", "2023-10-13")]),
    ("the show opened on October 13, 2023", [("October 13, 2023", "2023-10-13")]),
    ("backup of 2023-02-28 restored", [("2023-02-28", "2023-02-28")]),
    ("we toured in July 2022", [("July 2022", "2022-07")]),
    ("she graduated in 2019", [("in 2019", "2019")]),
    ("the party on March 3 was fun", [("March 3", "2023-03-03")]),
    ("the party on the 20th of May", [("20th of May", "2022-05-20")]),  # not yet this year: last year's
])
def test_time_phrases_resolve_from_when_they_were_said(text, expected):
    assert spans(text) == expected


@pytest.mark.parametrize("text", [
    "I like green tea", "recently I took up pottery", "when I was a kid we had a farm", "see you next Friday",
    "May I ask you something?", "we may 2 times", "march 5 miles north", "on 31 February 2023 it broke", "", "build 2023-13-45 failed"])
def test_what_pins_no_span_is_left_alone(text):
    assert stated_times(text, SAID) == []


def test_a_label_says_the_span_as_people_write_it():
    day = datetime(2023, 5, 7, tzinfo=timezone.utc).timestamp()
    assert label(day, day + 86400) == "2023-05-07"
    assert label(day, day + 3 * 86400) == "2023-05-07..2023-05-09"
    assert label(datetime(2023, 12, 1, tzinfo=timezone.utc).timestamp(),
                 datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()) == "2023-12"


@pytest.mark.sqlite_only
def test_stored_times_reach_the_hits_and_a_question_about_the_day_then(home):
    write_config(home, "[experimental]\n\"recall.date_weight\" = 1.0\n\"recall.hop_weight\" = 0\n\"recall.when_weight\" = 0\n")

    async def go():
        async with await Memory.open(home) as mem:
            said = await mem.observe("Caroline went to the support group yesterday", at="2023-05-08T14:00:00Z")
            await mem.observe("Caroline talked about the support group and the people of the support group",
                              at="2023-06-20T10:00:00Z")
            r = await mem.recall("What did Caroline do on 7 May 2023 with the support group?", mode="fast",
                                 explain=True)
            return said, r

    said, r = asyncio.run(go())
    top = r["hits"][0]
    assert top["id"] == said["id"] and top["times"] == [{"phrase": "yesterday", "date": "2023-05-07"}]
    assert "times" not in r["hits"][1]
    stage = next(s for s in r["stages"] if s["stage"] == "time_named")
    assert stage["members"] == 1 and stage["window"] == "2023-05-06 .. 2023-05-09"
    # offsets, never words, beside the text: a purge that deletes the memory takes them along
    conn = sqlite3.connect(home / "state" / "memory.db")
    assert conn.execute("SELECT at, length FROM stated_times WHERE episode_id = ?", (said["id"],)).fetchall() == \
        [(len("Caroline went to the support group "), len("yesterday"))]


def test_a_purged_memory_takes_its_stated_times_along(memory):
    kept = memory.observe("the bridge went down yesterday")["id"]
    gone = memory.observe("Dana moved out last month")["id"]
    assert {r["episode_id"] for r in memory.sql("SELECT episode_id FROM stated_times")} == {kept, gone}
    memory.forget(gone, purge=True)
    assert [r["episode_id"] for r in memory.sql("SELECT episode_id FROM stated_times")] == [kept]


@pytest.mark.sqlite_only
def test_the_migration_resolves_what_a_home_held_before_it(home):
    async def store():
        async with await Memory.open(home) as mem:
            return (await mem.observe("the printer broke last Friday", at="2023-05-08T14:00:00Z"))["id"]

    eid = asyncio.run(store())
    conn = sqlite3.connect(home / "state" / "memory.db")
    with conn:  # the home as the release before stated times left it
        conn.execute("DROP TABLE stated_times")
        conn.execute("DELETE FROM _migrations WHERE name = 'stated times'")
    conn.close()

    async def recall():
        async with await Memory.open(home) as mem:
            return (await mem.recall("printer broke", mode="fast"))["hits"][0]

    hit = asyncio.run(recall())
    assert hit["id"] == eid and hit["times"] == [{"phrase": "last Friday", "date": "2023-05-05"}]
