"""The retrieval arena: arms, rewards, the UCB1 bandit, adoption, inheritance and undo."""

import asyncio
import json
import math

import pytest
from test_balanced import CONVERSATION

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.app import wiring
from strata_daemon.arena.arms import BUILTIN_PRESETS, arms_of, parse_arm, presets_of
from strata_daemon.arena.bandit import ArmStats, choose, clearly_better, held_apart, leader, paired_gain, ucb
from strata_daemon.arena.reward import check as check_weights, episode_reward, latency_score
from strata_daemon.arena.wording import overlap, terms, worded_apart
from strata_daemon.config.load import load_config
from strata_daemon.config.tuning import ArenaWeights
from strata_daemon.errors import ConfigError, InvalidInput, NotFound
from strata_daemon.store import arena as arena_store

# Paraphrases that share no word with the memory they need: full text alone cannot find them.
PARAPHRASES = [
    ("who dislikes instant messaging?", 4),
    ("network link failure at the gateway", 1),
    ("when does the nightly data copy happen?", 2),
    ("which plant requires irrigation?", 5),
]

# A home where the configured default (fast) is clearly the worse arm for paraphrases.
ARENA_TOML = """
[recall]
mode = "fast"
[arena]
arms = ["balanced"]
[experimental]
"arena.min_episodes" = 4
"arena.pulls" = 8
"arena.sample" = 4
"arena.min_pulls" = 2
"""


# -- pure parts -----------------------------------------------------------------------------

def test_reward_by_hand():
    w = ArenaWeights()
    hits = [(1, "a"), (2, "a"), (3, "b"), (4, None)]
    useful = [(2, "a"), (9, "c")]
    r = episode_reward(hits, useful, 300.0, k=4, latency_budget_ms=200.0, weights=w)
    # recall 1/2, precision 1/4, sessions {a, c}: a reached -> 1/2, latency 2 - 300/200, diversity {a, b, #4} 3/4
    assert r["recall"] == 0.5 and r["precision"] == 0.25 and r["session_recall"] == 0.5
    assert r["latency"] == 0.5 and r["diversity"] == 0.75
    assert r["reward"] == pytest.approx(0.55 * 0.5 + 0.15 * 0.25 + 0.20 * 0.5 + 0.07 * 0.5 + 0.03 * 0.75)
    nothing = episode_reward([], useful, 500.0, k=4, latency_budget_ms=200.0, weights=w)
    assert nothing["reward"] == 0.0
    # weights need not sum to 1: the reward is their weighted mean
    only_recall = ArenaWeights(recall=2, precision=0, session_recall=0, latency=0, diversity=0)
    assert episode_reward(hits, useful, 0, k=4, latency_budget_ms=1, weights=only_recall)["reward"] == 0.5


def test_no_cheap_trade_speed_within_the_budget_and_fewer_hits_win_nothing():
    useful = [(2, "a")]
    # Within the budget every recall scores alike on latency; past it, 0 at twice the budget.
    assert [latency_score(ms, 250.0) for ms in (0, 3, 249, 250, 375, 500, 900)] == [1, 1, 1, 1, 0.5, 0, 0]
    slow = episode_reward([(2, "a"), *((i, f"s{i}") for i in range(10, 19))], useful, 240.0, k=10,
                          latency_budget_ms=250.0, weights=ArenaWeights())
    # An arm that finds the same memory and returns nothing else (fast keeps to the question's
    # words) scores no higher on precision or diversity, nor for its speed.
    quick = episode_reward([(2, "a")], useful, 2.0, k=10, latency_budget_ms=250.0, weights=ArenaWeights())
    assert quick["precision"] == slow["precision"] == 0.1 and quick["latency"] == slow["latency"] == 1
    assert quick["reward"] < slow["reward"]  # the slower arm's hits span more sessions


def test_arms_that_search_less_and_questions_worded_apart():
    fast, balanced, deep = (parse_arm(m, {}) for m in ("fast", "balanced", "deep"))
    assert fast.searches_less_than(balanced) and balanced.searches_less_than(deep)
    assert not balanced.searches_less_than(fast) and not parse_arm("balanced+recent", BUILTIN_PRESETS) \
        .searches_less_than(balanced)
    assert terms("The Gateway's links were failing") == {"gateway", "link", "were", "failing"} - {"were"}
    assert overlap("who dislikes instant messaging?", ["Bob hates chat apps, prefers email"]) == 0
    assert overlap("when is the nightly backup?", ["the backup runs nightly at 02:00"]) == 1
    assert overlap("?", ["anything"]) == 1  # no content word: nothing says it is worded apart
    episodes = [{"id": i, "query": q, "texts": [t]} for i, (q, t) in enumerate([
        ("nightly backup time", "backup runs nightly"), ("who dislikes chat?", "Bob hates chat apps"),
        ("plant needing water", "the fern wants watering"), ("gateway link down", "gateway link down at 3")])]
    assert [e["id"] for e in worded_apart(episodes)] == [1, 2]  # the half sharing fewest words, in order
    assert worded_apart([]) == [] and len(worded_apart(episodes[:1])) == 1
    with pytest.raises(ValueError):
        check_weights(ArenaWeights(recall=0, precision=0, session_recall=0, latency=0, diversity=0))


def test_ucb1_tries_every_arm_then_balances_mean_and_bonus():
    stats = {"a": ArmStats(4, 2.0), "b": ArmStats(1, 0.4)}
    scores = ucb({**stats, "c": ArmStats()}, 0.35)
    assert scores["c"] == math.inf
    assert scores["a"] == pytest.approx(0.5 + 0.35 * math.sqrt(math.log(6) / 4))
    assert scores["b"] == pytest.approx(0.4 + 0.35 * math.sqrt(math.log(6) / 1))
    assert choose(["a", "b", "c"], stats, 0.35) == "c"  # never pulled: first
    assert choose(["a", "b"], stats, 0.35) == "b"  # 0.4 + 0.468 beats 0.5 + 0.234
    assert choose(["a", "b"], stats, 0.0) == "a"  # no exploration: the best mean
    assert choose(["x", "y"], {}, 0.35) == "x"  # ties go to the arm listed first
    assert leader(["a", "b"], stats, 2) == "a" and leader(["a", "b"], stats, 5) is None


def test_arms_parse_and_refuse_nonsense():
    presets = presets_of({})
    assert parse_arm("deep+relevance", presets).overrides == tuple(sorted(BUILTIN_PRESETS["relevance"].items()))
    assert parse_arm("fast", presets).preset is None
    assert parse_arm("balanced+lasting", presets).overrides == (("scoring.preset", "long-term"),)
    for bad in ("slow", "balanced+nothing", "+relevance"):
        with pytest.raises(ValueError):
            parse_arm(bad, presets)
    arms = arms_of(["fast", "balanced", "fast"], "balanced", presets)
    assert [a.name for a in arms] == ["balanced", "fast"]  # the default first, once


@pytest.mark.parametrize("toml, words", [
    ('[arena]\narms = ["slow"]', "arena.arms"),
    ('[arena]\narms = ["deep+nothing"]', "no preset 'nothing'"),
    ('[arena.presets.mine]\n"recall.mode" = "fast"', "may change"),
    ('[arena.presets.mine]\n"scoring.weights.relevance" = "high"', "type"),
    ('[arena.presets.mine]\n"scoring.weights.relevance" = 0\n"scoring.weights.recency" = 0\n'
     '"scoring.weights.strength" = 0\n"scoring.weights.priority" = 0\n"scoring.weights.wilson" = 0\n'
     '"scoring.weights.context" = 0\n[arena]\narms = ["balanced+mine"]', "not all zero"),
])
def test_broken_arena_settings_are_config_errors(home, toml, words):
    write_config(home, toml)
    with pytest.raises(ConfigError) as e:
        wiring.check(load_config(home / "strata.toml"))  # the arena checks what it is handed
    assert words in str(e.value)


def test_a_preset_of_ones_own_changes_the_weights(home):
    write_config(home, '[arena.presets.mine]\n"scoring.weights.recency" = 0.5\n[arena]\narms = ["fast+mine", '
                       '"balanced+lasting"]')
    cfg = load_config(home / "strata.toml")
    assert [a.name for a in arms_of(cfg["arena.arms"], "balanced", presets_of(cfg["arena.presets"]))] == \
        ["balanced", "fast+mine", "balanced+lasting"]

    async def go():
        async with await Memory.open(home) as mem:
            await mem.observe("the relay dropped connections")
            arm = mem.layers.arena.by_name["fast+mine"]
            hits, _ = await mem.rank("relay", 3, arm=arm, at=2e9)
            mine_w = mem.layers.recall.tuned(arm)[0].weights.recency
            lasting = mem.layers.recall.tuned(mem.layers.arena.by_name["balanced+lasting"])[0].half_life_hours
            return mine_w, mem.layers.recall.tuned(None)[0].weights.recency, hits, lasting
    mine, default, hits, lasting = asyncio.run(go())
    assert (mine, default) == (0.5, 0.10) and len(hits) == 1
    assert lasting == 720.0  # the long-term preset's half-life


# -- evaluation episodes --------------------------------------------------------------------

def test_feedback_makes_evaluation_episodes(memory):
    ids = memory.observe_many([{"content": t} for t in CONVERSATION])["ids"]
    r1 = memory.recall("backups NAS", mode="fast")
    given = memory.feedback(r1["recall_id"], "failure", used=[ids[2], ids[2]])
    assert given["used"] == [ids[2]] and given["arena_episode"] is not None
    # a success without used: every hit, marked shared
    r2 = memory.recall("invoice March", mode="fast")
    assert memory.feedback(r2["recall_id"], "success")["arena_episode"] is not None
    # a failure without used and nothing marked: nothing to learn from
    r3 = memory.recall("lemon tree", mode="fast")
    assert memory.feedback(r3["recall_id"], "failure")["arena_episode"] is None
    # what the agent put in the working set after the recall counts as used
    r4 = memory.recall("certificate", mode="fast")
    memory.activate([ids[6], ids[0]])
    assert memory.feedback(r4["recall_id"], "failure")["arena_episode"] is not None
    rows = memory.sql("SELECT query, useful, origin, recall_id FROM arena_episodes ORDER BY id")
    assert [(r["query"], sorted(json.loads(r["useful"])), r["origin"]) for r in rows] == [
        ("backups NAS", [ids[2]], "used"),
        ("invoice March", sorted(h["id"] for h in r2["hits"]), "shared"),
        ("certificate", sorted([ids[6], ids[0]]), "used"),
    ]
    assert [r["recall_id"] for r in rows] == [r1["recall_id"], r2["recall_id"], r4["recall_id"]]


def test_feedback_with_a_memory_of_another_namespace_changes_nothing(home):
    async def go():
        async with await Memory.open(home, agent="b") as b:
            theirs = (await b.observe("agent b's secret plan"))["id"]
        async with await Memory.open(home, agent="a") as a:
            mine = (await a.observe("agent a's plan"))["id"]
            rid = (await a.recall("plan", mode="fast"))["recall_id"]
            for used in ([theirs], [mine, theirs], [0], [2**70]):
                with pytest.raises(NotFound):
                    await a.feedback(rid, "success", used=used)
            with pytest.raises(InvalidInput):
                await a.feedback(rid, "success", used=list(range(1, 1002)))
            left = await a.db.fetchone("SELECT outcome FROM recalls WHERE id = ?", (rid,))
            episodes = await a.db.scalar("SELECT count(*) FROM arena_episodes")
            return left[0], episodes
    assert asyncio.run(go()) == (None, 0)  # the refused feedback left no trace


def test_question_sets_name_memories_by_id_or_source(memory):
    a = memory.observe("the relay is in rack 4", source="D1:3")["id"]
    b = memory.observe("the gateway is gw-02", source="D1:4")["id"]
    r = memory.add_arena_questions([
        {"qa": [{"question": "where is the relay?", "evidence": ["D1:3"]},
                {"question": "which gateway?", "evidence": [b, "D9:9"], "category": 4}]},
        {"question": "nothing known", "evidence": [999, "D7:7"]},
    ])
    assert (r["added"], r["skipped"]) == (2, 1)
    rows = memory.sql("SELECT query, useful, origin FROM arena_episodes ORDER BY id")
    assert [(x["query"], json.loads(x["useful"])) for x in rows] == [("where is the relay?", [a]),
                                                                       ("which gateway?", [b])]
    for bad in ("text", [{"question": ""}], [{"question": "q", "evidence": "D1:3"}], [{"question": "q"}]):
        with pytest.raises(InvalidInput):
            memory.add_arena_questions(bad)


# -- runs, adoption, safety -----------------------------------------------------------------

async def _paraphrase_home(home, *, agent=None, questions=PARAPHRASES):
    mem = await Memory.open(home, agent=agent)
    ids = (await mem.observe_many([{"content": t, "event_at": 1_780_000_000 + i * 3600}
                                   for i, t in enumerate(CONVERSATION)]))["ids"]
    await mem.embed_pending()
    await mem.add_arena_questions([{"question": q, "evidence": [ids[i]]} for q, i in questions])
    return mem, ids


def test_nightly_runs_follow_new_evidence(home):
    write_config(home, ARENA_TOML)
    more = [("who would rather get an email?", 4), ("what fails at the gateway?", 1),
            ("when do copies of the data run?", 2), ("which plant is thirsty?", 5)]

    async def go():
        mem, ids = await _paraphrase_home(home)

        async def ask(questions):
            await mem.add_arena_questions([{"question": q, "evidence": [ids[i]]} for q, i in questions])
            return await mem.run_arena(if_new=True)

        async with mem:
            first = await mem.run_arena(if_new=True)  # no run before: a full one
            idle = await mem.run_arena(if_new=True)
            few = await ask(more[:1])
            again = await ask(more[1:])
            third = await ask(PARAPHRASES)
            runs = (await mem.arena_history())["runs"]
            return first, idle, few, again, third, runs

    first, idle, few, again, third, runs = asyncio.run(go())
    assert first["decision"] == "adopt" and first["confirm"] and len(first["pulls"]) == 8
    assert idle == {"skipped": "no evaluation episode since the last run (newest 4)"}
    # One new episode would hardly move a mean over arena.sample (4) of them: the night waits.
    assert few == {"skipped": "1 evaluation episodes since the last run, fewer than arena.sample (4): they "
                              "would not change the choice"}
    # Four new: one pull's worth of evidence, one pull (the first run's statistics carry over);
    # half the confirmation episodes (odd ids 5 and 7 of 1-7) are new: compared again.
    assert len(again["pulls"]) == 1 and again["decision"] == "adopt" and again["episodes"]["total"] == 8
    assert again["confirm"] and again["strategy"]["arm"] == "balanced"
    # Four more: 2 of 6 confirmation episodes new since that comparison; its decision stands.
    assert third["confirm"] is None and third["decision"] == "adopt" and len(third["pulls"]) == 1
    assert f"run {again['run']} compared it with the default and 2 of 6 confirmation episodes are new" \
        in third["reason"] and len(runs) == 3


@pytest.mark.parametrize("budget", [250.0, 0.001], ids=["default-within-budget", "default-too-slow"])
def test_an_arm_that_searches_less_is_confirmed_on_questions_worded_apart(home, budget):
    # balanced by default; fast has led every earlier pull (as an agent whose questions repeat its
    # memories' words would make it lead). Odd ids confirm: two paraphrases, two in the memories' words.
    write_config(home, f'[arena]\narms = ["fast"]\nlatency_budget_ms = {budget}\n[experimental]\n'
                       '"arena.min_episodes" = 4\n"arena.pulls" = 2\n"arena.sample" = 4\n"arena.min_pulls" = 2\n')
    questions = [(PARAPHRASES[0][0], 4), ("bridge between mail relay and gw-02", 1),
                 ("when do backups run on the NAS?", 2), ("Priya contacted by email", 4),
                 (PARAPHRASES[3][0], 5), ("lemon tree on the balcony", 5),
                 ("TLS certificate for web-01", 6), ("invoice for March paid", 7)]

    async def go():
        mem, ids = await _paraphrase_home(home, questions=questions)
        async with mem:
            await mem.db.transact(lambda c: arena_store.save_stats(
                c, mem.agent, {"fast": ArmStats(50, 47.5), "balanced": ArmStats(50, 25.0)}, 0.0))
            return await mem.run_arena()

    run = asyncio.run(go())
    assert run["leader"] == "fast" and run["decision"] == "keep", run
    assert run["strategy"]["arm"] == "balanced"
    if budget == 250.0:  # the default answers within the budget: a thriftier arm is not even compared
        assert "which answered the 4 confirmation episodes in a median" in run["reason"]
        assert "within arena.latency_budget_ms (250): the default stays" in run["reason"]
        assert list(run["confirm"]) == ["balanced"]
        return
    assert "on the 2 of 4 confirmation episodes worded furthest from their memories (fast searches less than " \
           "balanced)" in run["reason"]
    assert run["confirm"]["fast"] < run["confirm"]["balanced"]


def test_the_clearly_better_arm_is_adopted_and_explicit_modes_never_change(home):
    write_config(home, ARENA_TOML)

    async def go():
        mem, ids = await _paraphrase_home(home)
        async with mem:
            before = await mem.recall("who dislikes instant messaging?")
            explicit_before = await mem.recall("who dislikes instant messaging?", mode="fast")
            run = await mem.run_arena()
            after = await mem.recall("who dislikes instant messaging?")
            explicit_after = await mem.recall("who dislikes instant messaging?", mode="fast")
            logged = await mem.db.fetchall("SELECT arm FROM recalls ORDER BY id")
            return ids, before, explicit_before, run, after, explicit_after, [r[0] for r in logged]

    ids, before, explicit_before, run, after, explicit_after, logged = asyncio.run(go())
    assert before["strategy"] == {"arm": "fast", "chosen_by": "config"} and before["mode_used"] == "fast"
    assert run["decision"] == "adopt" and run["leader"] == "balanced"
    pulls = {a["arm"]: a["pulls"] for a in run["arms"]}
    assert pulls["balanced"] > pulls["fast"] and sum(pulls.values()) == 8  # UCB1 spent its pulls on the winner
    means = {a["arm"]: a["mean_reward"] for a in run["arms"]}
    assert means["balanced"] > means["fast"] + 0.3
    assert run["confirm"]["balanced"] > run["confirm"]["fast"]
    assert "adopted" in run["reason"] and run["strategy"]["chosen_by"] == "arena"
    assert after["strategy"]["arm"] == "balanced" and after["mode_used"] == "balanced"
    assert after["hits"][0]["id"] == ids[4]
    # an explicit mode is answered exactly as before the arena chose
    strip = lambda r: [(h["id"], h["score"]) for h in r["hits"]]  # noqa: E731
    assert explicit_after["strategy"] == {"arm": "fast", "chosen_by": "mode"}
    assert strip(explicit_after) == strip(explicit_before)
    assert logged == ["fast", "fast", "balanced", "fast"]


def test_too_few_episodes_keep_the_default(home):
    write_config(home, ARENA_TOML.replace('"arena.min_episodes" = 4', '"arena.min_episodes" = 5'))

    async def go():
        mem, _ = await _paraphrase_home(home)
        async with mem:
            return await mem.run_arena(), await mem.recall("which plant requires irrigation?"), \
                await mem.db.scalar("SELECT count(*) FROM arena_choices")
    run, recall, choices = asyncio.run(go())
    assert run["decision"] == "too_few" and run["pulls"] == [] and "fewer than arena.min_episodes" in run["reason"]
    assert recall["strategy"]["chosen_by"] == "config" and choices == 0


def test_the_gain_must_stand_out_of_the_noise_of_the_episodes():
    assert paired_gain([0.9, 0.8, 0.7], [0.4, 0.3, 0.2]) == pytest.approx((0.5, 0.0))
    gain, error = paired_gain([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.8])  # wins twice, loses twice
    assert gain == pytest.approx(0.05) and error > 0.5
    assert paired_gain([0.9], [0.1])[1] == float("inf") and paired_gain([], []) == (0.0, float("inf"))
    with pytest.raises(ValueError):
        paired_gain([0.5, 0.5], [0.5])
    # a gain of 0.05 from two wins and two losses is noise; the same gain on every episode is not
    assert clearly_better([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.8], 0.01, 2.0)[2] is False
    assert clearly_better([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.8], 0.01, 0.0)[2] is True
    assert clearly_better([0.55, 0.45, 0.65], [0.5, 0.4, 0.6], 0.01, 2.0)[2] is True
    assert clearly_better([0.55, 0.45, 0.65], [0.5, 0.4, 0.6], 0.1, 2.0)[2] is False  # below min_gain


def test_the_leader_is_confirmed_on_episodes_it_was_not_pulled_on():
    episodes = [{"id": i} for i in range(1, 11)]  # oldest first
    pool, held = held_apart(episodes, 3)
    assert [e["id"] for e in pool] == [2, 4, 6, 8, 10] and [e["id"] for e in held] == [5, 7, 9]
    assert [e["id"] for e in held_apart(episodes, 200)[1]] == [1, 3, 5, 7, 9]
    # An episode stays on its side when more arrive.
    assert [e["id"] for e in held_apart(episodes + [{"id": 11}, {"id": 12}], 3)[0]] == [2, 4, 6, 8, 10, 12]
    assert held_apart([{"id": 7}], 200) == ([{"id": 7}], [{"id": 7}])


def test_a_leader_that_does_not_beat_the_default_by_min_gain_is_not_adopted(home):
    write_config(home, ARENA_TOML + '"arena.min_gain" = 1.0\n')

    async def go():
        mem, _ = await _paraphrase_home(home)
        async with mem:
            return await mem.run_arena()
    run = asyncio.run(go())
    assert run["leader"] == "balanced" and run["decision"] == "keep" and "the default stays" in run["reason"]
    assert run["confirm"]["balanced"] > run["confirm"]["fast"] and "standard error" in run["reason"]
    assert run["strategy"] == {"arm": "fast", "chosen_by": "arena", "choice": 1, "mode": "fast", "preset": None,
                               "reason": run["reason"]}


def test_inheritance_namespace_then_home_then_default_and_undo(home):
    write_config(home, ARENA_TOML)

    async def go():
        a, _ = await _paraphrase_home(home, agent="a")
        b = await Memory.open(home, agent="b")
        async with a, b:
            await b.observe("nothing to learn from yet")
            fresh = (await b.arena_status())["strategy"]
            await a.run_arena()
            inherited = (await b.arena_status())["strategy"]
            own_a = (await a.arena_status())["strategy"]
            # b decides for itself: its own choice (keep the default) wins over the home's
            await b.db.transact(lambda c: b.layers.arena._choose(c, "b", "keep", None, "test", None, 0.0))
            b_own = (await b.arena_status())["strategy"]
            undone = await b.undo_arena()
            reset = await a.reset_arena()
            a_stats = (await a.arena_status())["arms"]
            history = await a.arena_history()
            return fresh, inherited, own_a, b_own, undone, reset, a_stats, history

    fresh, inherited, own_a, b_own, undone, reset, a_stats, history = asyncio.run(go())
    assert fresh["chosen_by"] == "config"
    assert (own_a["arm"], own_a["chosen_by"]) == ("balanced", "arena")
    assert (inherited["arm"], inherited["chosen_by"]) == ("balanced", "home arena")
    assert "namespaces holding 4 of 4 evaluation episodes" in inherited["reason"]
    assert (b_own["arm"], b_own["chosen_by"]) == ("fast", "arena")
    assert (undone["strategy"]["arm"], undone["strategy"]["chosen_by"]) == ("balanced", "home arena")
    # a reset forgets a's statistics and own choice: a inherits the home-wide choice it made
    assert reset["arms_reset"] == 2 and reset["strategy"]["chosen_by"] == "home arena"
    assert all(x["pulls"] == 0 for x in a_stats)
    assert [c["kind"] for c in history["choices"]] == ["clear", "adopt"]
    assert history["runs"][0]["decision"] == "adopt"


def test_arena_off_or_a_retired_arm_falls_back_to_the_configured_default(home):
    write_config(home, ARENA_TOML)

    async def adopt():
        mem, _ = await _paraphrase_home(home)
        async with mem:
            return (await mem.run_arena())["decision"]
    assert asyncio.run(adopt()) == "adopt"

    async def recall():
        async with await Memory.open(home) as mem:
            return await mem.recall("which plant requires irrigation?")
    write_config(home, ARENA_TOML.replace('arms = ["balanced"]', 'arms = ["balanced"]\nenabled = false'))
    off = asyncio.run(recall())
    assert off["strategy"] == {"arm": "fast", "chosen_by": "config"} and off["mode_used"] == "fast"
    write_config(home, ARENA_TOML.replace('arms = ["balanced"]', 'arms = ["deep"]'))
    retired = asyncio.run(recall())
    assert retired["strategy"] == {"arm": "fast", "chosen_by": "config"}
    assert any("no longer lists" in w for w in retired["warnings"])


# -- the faces ------------------------------------------------------------------------------

def test_cli_arena_commands(cli, home):
    write_config(home, ARENA_TOML)
    fresh = cli("arena", "history", check=True).out  # an empty list says so, not a bare heading
    assert "choices: none yet" in fresh and "runs: none yet" in fresh, fresh
    ids = [cli.json("observe", t)["id"] for t in CONVERSATION]
    cli("embed", check=True)
    rid = cli.json("recall", "who dislikes instant messaging?")["recall_id"]
    assert cli.json("feedback", str(rid), "failure", "--used", str(ids[4]))["arena_episode"] == 1
    qfile = home / "questions.json"
    qfile.write_text(json.dumps([{"question": q, "evidence": [ids[i]]} for q, i in PARAPHRASES[1:]]))
    assert cli.json("arena", "questions", str(qfile))["added"] == 3
    status = cli.json("arena", "status")
    assert status["episodes"]["total"] == 4 and status["strategy"]["arm"] == "fast"
    run = cli.json("arena", "run")
    assert run["decision"] == "adopt" and run["strategy"]["arm"] == "balanced"
    text = cli("arena", "status", check=True).out
    assert "strategy balanced (chosen by arena)" in text and "balanced+" not in text
    assert cli.json("status")["recall_strategy"] == {"arm": "balanced", "chosen_by": "arena"}
    assert "recall_strategy        balanced (chosen by arena" in cli("status", check=True).out
    recall = cli("recall", "which plant requires irrigation?", check=True).out
    assert "(strategy balanced, chosen by arena)" in recall
    assert cli.json("arena", "undo")["strategy"]["chosen_by"] == "home arena"
    assert [c["kind"] for c in cli.json("arena", "history")["choices"]] == ["clear", "adopt"]
    bad = cli("arena", "questions", str(home / "missing.json"))
    assert bad.returncode == InvalidInput.exit_code and "cannot read" in bad.err
    ran = cli.json("phase", "run", "arena")
    assert ran["phase"] == "arena" and ran["status"] == "ok", ran
    # Nothing new since `arena run`: the nightly phase has nothing to learn and costs nothing.
    assert ran["result"] == {"skipped": "no evaluation episode since the last run (newest 4)"}
    qfile.write_text(json.dumps([{"question": q, "evidence": [ids[i]]} for q, i in PARAPHRASES]))
    assert cli.json("arena", "questions", str(qfile))["added"] == 4
    ran = cli.json("phase", "run", "arena")
    assert ran["result"]["decision"] in ("adopt", "keep") and ran["result"]["episodes"] == 8
    assert len(cli.json("arena", "history")["runs"][0]["pulls"]) == 1  # one pull per arena.sample new episodes


# -- the benchmark --------------------------------------------------------------------------

def test_bench_split_alternates_questions():
    from strata_bench.arena import split
    train, held = split(list("abcde"))
    assert (train, held) == (["a", "c", "e"], ["b", "d"])


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_cli_bench_arena_on_the_tiny_fixture(cli, home, tmp_path):
    from test_bench_locomo import TINY
    write_config(home, '[experimental]\n"arena.min_episodes" = 2\n"arena.pulls" = 6\n"arena.sample" = 2\n"arena.min_pulls" = 1\n')
    out = tmp_path / "arena.json"
    r = cli.json("bench", "arena", "--data", str(TINY), "--out", str(out))
    assert json.loads(out.read_text(encoding="utf-8")) == r
    assert (r["conversations"], r["training_questions"], r["held_out_questions"]) == (2, 6, 5)
    for key in ("arena_recall_at_5", "arena_recall_at_10", "default_recall_at_5", "default_recall_at_10"):
        assert 0 <= r[key] <= 1
    assert r["ratio_at_5"] == round(r["arena_recall_at_5"] / r["default_recall_at_5"], 4)
    assert set(r["arms_held_out"]) == {"balanced", "fast", "deep", "balanced+relevance", "balanced+recent",
                                       "balanced+semantic"}
    assert r["best_arm_at_5"] in r["arms_held_out"]
    convs = r["per_conversation"]
    assert all(c["decision"] in ("adopt", "keep") and sum(c["pulls"].values()) == 6 for c in convs)
    # every training question with evidence became an episode (one of the six has none)
    assert sum(c["episodes"] for c in convs) == 5
    assert 0 < r["arena_phase_ms"]["p50_ms"] <= r["arena_phase_ms"]["max_ms"]
    assert not (home / "state" / "memory.db").exists()  # everything happened in temporary homes
