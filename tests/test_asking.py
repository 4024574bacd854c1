"""Memories that ask rather than tell (episodes/asking.py), and the recall stage that lowers them."""

import asyncio

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.recall.asking import told_share
from strata_daemon.recall.why import why_line


@pytest.mark.parametrize("text, share", [
    ("What's your best camping memory?", 0.0),
    ("Cool! What did it look like?", 1 / 6),
    ("I went camping at the beach. Did you?", 6 / 8),
    ("bridge is DOWN", 1.0),  # short, and it tells
    ("GET /search?q=1 failed with 502", 1.0),  # a question mark inside a word ends nothing
    ("Release v2.3.1 is out. Did the deploy pass?", 4 / 8),
    ('She asked "why?" and left', 1.0),
    ('"Why?" she asked.', 1.0),
    ("Ready? [shares a photo of a tent]", 6 / 7),  # the caption tells
    ("", 1.0),
    ("?!", 0.0),
    ("Really?! Then what? ", 0.0),
    ("   ", 1.0),
])
def test_the_share_of_a_memory_that_tells(text, share):
    assert told_share(text) == pytest.approx(share)


def test_a_memory_that_only_asks_ranks_below_one_that_tells(home):
    async def go(discount):
        write_config(home, f"[experimental]\n\"recall.asking_discount\" = {discount}\n\"recall.hop_weight\" = 0\n")  # this stage alone
        async with await Memory.open(home) as mem:
            if not await mem.timeline():
                await mem.observe("What do you love most about camping trips with your family?",
                                  source="Caroline", at="2023-05-01T10:00:00Z")
                await mem.observe("We went camping with the family at the beach", source="Melanie",
                                  at="2023-05-01T10:01:00Z")
            r = await mem.recall("camping trips with family", mode="fast")
            return r["hits"], r["stages"]

    hits, stages = asyncio.run(go(0))
    assert hits[0]["source"] == "Caroline" and "asking" not in [s["stage"] for s in stages]
    hits, stages = asyncio.run(go(0.7))
    assert [h["source"] for h in hits] == ["Melanie", "Caroline"]
    assert hits[1]["explain"]["retrievers"]["asks"] == {"told_share": 0.0}
    assert "asks" not in hits[0]["explain"]["retrievers"]
    assert "mostly asks" in hits[1]["why"]
    assert next(s for s in stages if s["stage"] == "asking") | {"ms": 0} == {
        "stage": "asking", "candidates": 2, "change": 0, "lowered": 1, "ms": 0}


@pytest.mark.parametrize("share, words", [(0.0, "mostly asks"), (0.6, "partly asks")])
def test_the_why_line_says_a_memory_asks(share, words):
    line = why_line({"retrievers": {"fts": {}, "asks": {"told_share": share}}}, age=10**9)
    assert line == f"found by words; {words}"
