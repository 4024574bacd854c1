"""Forgetting demotes, it never hides: a home that has lived (feedback, nights of phases, an
active learning phase) still finds what it holds; only an explicit forget takes a memory out."""

from __future__ import annotations

import json

from strata_daemon.base import timeutil
from strata_daemon.config.home import Home
from tests.conftest import write_config

DAY = 86400.0
ACTIVE_SOON = "[experimental]\n\"scoring.passive_min_episodes\" = 5\n\"scoring.passive_min_feedback\" = 2\n"
ROUTINE = [f"nas-01: cpu temp {t}C" for t in (51, 54, 58, 49, 62)]


def _configure(home, memory, text: str) -> None:
    write_config(home, text)
    memory.reconfigure(Home(home).config())


def _lived(memory) -> dict:
    """A home with a memory from months ago among routine lines, taken into the active phase by
    feedback, then through a night of every consolidation rule and a fold."""
    ids = {"february": memory.observe("Ines recommended the Lisbon tile workshop on Rua das Flores",
                                      at=timeutil.now() - 280 * DAY)["id"]}
    ids["routine"] = [memory.observe(t, at=timeutil.now() - (300 - i) * DAY)["id"] for i, t in enumerate(ROUTINE)]
    ids["today"] = memory.observe("The bridge on gw-02 is down again")["id"]
    for _ in range(2):
        r = memory.recall("bridge gw-02", mode="fast")
        memory.feedback(r["recall_id"], "success", used=[ids["today"]])
    memory.fold()
    ids["night"] = memory.consolidate()
    memory.fold()
    return ids


def test_a_months_old_memory_survives_a_night_and_the_active_phase_and_is_found(home, memory):
    _configure(home, memory, ACTIVE_SOON)
    ids = _lived(memory)
    assert memory.status()["phase"] == "active"
    counts = ids["night"]["counts"]
    assert counts["archive"] == len(ROUTINE) - 1 and counts["stale"] == len(ROUTINE) - 1  # the older readings
    r = memory.recall("tile workshop Lisbon", mode="fast", explain=True)
    hit = next(h for h in r["hits"] if h["id"] == ids["february"])
    assert hit["rank"] == 1 and hit["tier"] == "hot"  # unique: no rule moved it
    assert hit["explain"]["signals"]["penalty"] == 0.98 and "stability threshold" in hit["explain"]["penalised"]
    # The routine readings went cold, and each is still found by its own words, saying its tier.
    for memory_id, text in zip(ids["routine"][:-1], ROUTINE):
        r = memory.recall(text, mode="fast", k=3)
        found = next(h for h in r["hits"] if h["id"] == memory_id)
        assert found["tier"] == "cold" and r["cold_matched"] >= 1
    newest = memory.recall(ROUTINE[-1], mode="fast", k=1)["hits"][0]
    assert (newest["id"], newest["tier"]) == (ids["routine"][-1], "hot")


def test_an_explicitly_forgotten_memory_is_not_recalled_even_by_its_own_words(home, memory):
    _configure(home, memory, ACTIVE_SOON)
    ids = _lived(memory)
    memory.forget(ids["february"], reason="asked to")
    words = "Ines recommended the Lisbon tile workshop on Rua das Flores"
    for mode in ("fast", "balanced"):
        assert ids["february"] not in [h["id"] for h in memory.recall(words, mode=mode)["hits"]]
    shown = memory.recall(words, mode="fast", include_archived=True)["hits"]
    assert shown[0]["id"] == ids["february"] and shown[0]["state"] == "archived"
    memory.restore(ids["february"])
    assert memory.recall(words, mode="fast")["hits"][0]["id"] == ids["february"]


def test_feedback_raises_the_used_memories_and_passes_over_the_rest(home, memory):
    texts = ["backup of nas-01 finished at 02:10", "backup of nas-02 finished at 02:40",
             "backup of web-03 finished at 03:05", "backup of db-01 finished at 03:30"]
    ids = [memory.observe(t)["id"] for t in texts]
    before = memory.recall("backup finished", mode="fast")
    order = [h["id"] for h in before["hits"]]
    used = order[-1]  # the one ranked last is the one the agent needed
    given = memory.feedback(before["recall_id"], "success", used=[used])
    assert given["episodes"] == [used]
    memory.fold()
    rows = {r["id"]: r for r in memory.sql("SELECT id, access_count, success_count FROM episodes")}
    assert rows[used]["access_count"] == 1 and rows[used]["success_count"] == 1
    assert all(rows[i]["access_count"] == 0 and rows[i]["success_count"] == 0 for i in ids if i != used)
    after = memory.recall("backup finished", mode="fast")
    assert [h["id"] for h in after["hits"]][0] == used  # raised above the others


def test_a_passed_over_hit_already_folded_gives_its_access_back(memory):
    a = memory.observe("the relay on gw-01 restarted")["id"]
    b = memory.observe("the relay on gw-02 restarted")["id"]
    r = memory.recall("relay restarted", mode="fast")
    memory.fold()  # the daemon folded before the agent gave feedback
    assert {x["access_count"] for x in memory.sql("SELECT access_count FROM episodes")} == {1}
    memory.feedback(r["recall_id"], "failure", used=[a])
    counts = {x["id"]: x for x in memory.sql("SELECT id, access_count, failure_count FROM episodes")}
    assert counts[b]["access_count"] == 0 and counts[b]["failure_count"] == 1  # offered in a's place
    assert counts[a]["access_count"] == 1 and counts[a]["failure_count"] == 0
    memory.fold()
    assert memory.sql("SELECT access_count FROM episodes WHERE id = ?", (b,))[0]["access_count"] == 0


def test_failures_lower_a_memory_in_the_active_phase_without_hiding_it(home, memory):
    _configure(home, memory, ACTIVE_SOON)
    good = memory.observe("the VPN on edge-07 drops when the lease renews")["id"]
    noisy = memory.observe("the VPN on edge-07 was fine this morning")["id"]
    for i in range(4):
        memory.observe(f"filler note {i}")
    for _ in range(4):
        r = memory.recall("VPN edge-07 drops", mode="fast")
        memory.feedback(r["recall_id"], "failure", used=[good])
    memory.fold()
    r = memory.recall("VPN edge-07", mode="fast", explain=True)
    hit = next(h for h in r["hits"] if h["id"] == noisy)
    assert "success threshold (Wilson upper bound" in hit["explain"]["penalised"]
    assert r["hits"][0]["id"] == good and r["filtered"] == 0


def test_a_memory_other_questions_passed_over_stays_hot_and_is_found_by_its_own_words(home, memory):
    """Failure feedback falls on every hit the agent did not use. An old memory that sat beside
    other questions' answers is ranked lower for that, once: no stale decay, no cold tier."""
    _configure(home, memory, ACTIVE_SOON)
    old = timeutil.now() - 200 * DAY
    beside = memory.observe("Ines mentors two apprentices at the tile workshop", at=old)["id"]
    answer = memory.observe("The tile workshop moved to Rua das Flores", at=old + 60)["id"]
    for i in range(4):
        memory.observe(f"filler note {i}", at=old + 120 + i)
    for _ in range(5):
        r = memory.recall("where is the tile workshop now?", mode="fast")
        assert beside in [h["id"] for h in r["hits"]]
        memory.feedback(r["recall_id"], "failure", used=[answer])
    memory.fold()
    for night in range(3):
        memory.consolidate(now=timeutil.now() + night * DAY)
    row = memory.sql("SELECT tier, confidence, failure_count FROM episodes WHERE id = ?", (beside,))[0]
    assert row == {"tier": "hot", "confidence": 1.0, "failure_count": 5}
    hits = memory.recall("Ines mentors two apprentices at the tile workshop", mode="fast", explain=True)["hits"]
    assert hits[0]["id"] == beside and "success threshold" in hits[0]["explain"]["penalised"]


def test_used_cold_memories_come_back_to_the_hot_tier_and_the_working_set_keeps_to_the_hot(home, memory):
    _configure(home, memory, ACTIVE_SOON)
    ids = _lived(memory)
    cold = ids["routine"][0]
    r = memory.recall(ROUTINE[0], mode="fast")
    assert next(h for h in r["hits"] if h["id"] == cold)["tier"] == "cold"
    working = {n["node"] for n in memory.working_set()["items"]}
    assert f"episode:{cold}" not in working  # recalled, but the working set draws on the hot tier
    given = memory.feedback(r["recall_id"], "success", used=[cold])
    assert given["episodes"] == [cold]
    assert memory.get(cold)["tier"] == "hot"
    audit = json.loads(memory.sql("SELECT data FROM audit WHERE action = 'feedback' ORDER BY id DESC LIMIT 1")[0]
                       ["data"])
    assert audit["warmed"] == [cold]


def test_consolidation_moves_to_the_cold_tier_only_what_is_redundant_or_contradicted(home, memory):
    old = timeutil.now() - 200 * DAY
    unique = [memory.observe(t, at=old + i)["id"] for i, t in enumerate(
        ("Kwame prefers calls after 16:00", "The garden sensors run on 5 V", "Ledger-sync deploys on Fridays"))]
    down = memory.observe("Bridge: DOWN", at=old)["id"]
    memory.observe("Bridge: UP", at=old + DAY)
    first = memory.consolidate()
    second = memory.consolidate()
    memory.fold()
    tiers = {r["id"]: r["tier"] for r in memory.sql("SELECT id, tier FROM episodes")}
    assert [tiers[i] for i in unique] == ["hot"] * 3  # old and never used, but the only ones to say it
    # The value the bridge fact moved on from was contradicted: weakened tonight, then cold.
    assert first["counts"]["interference"] == 1 and tiers[down] == "cold"
    assert sum(second["counts"].values()) == 0  # a second pass the same night changes nothing


def test_use_as_it_stood_before_a_recall_is_read_back_from_the_events(memory):
    from strata_daemon.store import episode_reads as reads

    a = memory.observe("the relay on gw-01 restarted")["id"]
    b = memory.observe("the relay on gw-02 restarted")["id"]
    first = memory.recall("relay restarted", mode="fast")
    memory.feedback(first["recall_id"], "success", used=[a])
    memory.fold()
    asked = memory.sql("SELECT at FROM recalls WHERE id = ?", (first["recall_id"],))[0]["at"]
    assert memory.wait(memory.raw.db.run(reads.usage_before, [a, b], asked)) == {}  # nothing before the question
    used = memory.wait(memory.raw.db.run(reads.usage_before, [a, b], asked + 3600))
    assert used[a] == {"access_count": 1, "last_access_at": asked, "success_count": 1, "failure_count": 0}
    assert b not in used  # passed over: neither an access nor an outcome
    events = memory.sql("SELECT episode_id, outcome FROM feedback_events")
    assert events == [{"episode_id": a, "outcome": "success"}]


def test_the_arena_scores_an_episode_with_the_use_before_its_question(home, memory):
    """The feedback that made an evaluation episode must not lift its own answers: scored as of
    the question, a strategy that weights recent use finds no use to weight."""
    ids = [memory.observe(f"deploy note {i}: the relay config moved to /etc/relay/{i}.toml")["id"] for i in range(6)]
    r = memory.recall("where is the relay config?", mode="fast")
    target = r["hits"][-1]["id"]
    memory.feedback(r["recall_id"], "success", used=[target])
    memory.fold()
    from strata_daemon.arena.arms import parse_arm, presets_of

    recent = parse_arm("fast+recent", presets_of({}))
    episode = memory.sql("SELECT r.at FROM arena_episodes e JOIN recalls r ON r.id = e.recall_id")[0]
    now_hits, _ = memory.rank("where is the relay config?", 10, arm=recent)
    then_hits, _ = memory.rank("where is the relay config?", 10, arm=recent, at=episode["at"])
    assert now_hits[0]["id"] == target  # today's use lifts it to the top
    assert then_hits[0]["id"] != target and target in ids  # before the question it had none
