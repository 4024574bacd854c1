"""Consolidation: each rule on hand-built memories with a fixed clock, then whole runs on a
real home (embeddings included): dry run, idempotence, restore and undo."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import numpy as np
import pytest

from strata_daemon.app.memory import Memory
from strata_daemon.config.tuning import Consolidation, Scoring
from strata_daemon.consolidation import rules as R, similar

NOW = 1_780_000_000.0
DAY = 86400.0
S = Consolidation()


def m(i: int, **kw) -> dict:
    base = {"id": i, "kind": "observation", "content": f"memory {i}", "event_at": NOW - DAY, "importance": 0.5,
            "access_count": 0, "last_access_at": None, "success_count": 0, "failure_count": 0, "factual": 0,
            "confidence": 1.0, "quality": "unknown", "strength_factor": 1.0, "potentiated_at": None,
            "stale_at": None, "replayed_at": None, "embedded": 1, "state": "active", "superseded_by": None,
            "source": None, "tier": "hot", "tier_at": None}
    return {**base, **kw}


def test_replay_takes_the_most_important_once_a_night():
    ms = [m(1, importance=0.9), m(2, importance=0.7), m(3, importance=0.69), m(4, importance=1.0,
                                                                               replayed_at=NOW - 3600)]
    acts = R.replay(ms, NOW, replace(S, replay_limit=2))  # 4, replayed an hour ago, used one of the two
    assert [(a.episode, a.set["access_count"]) for a in acts] == [(1, 1)]
    assert {a.episode for a in R.replay(ms, NOW, S)} == {1, 2}
    assert R.replay(ms, NOW + DAY, S)[0].episode == 4


def test_replay_spends_one_budget_a_night_however_many_runs():
    ms = [m(i, importance=0.9) for i in range(1, 6)]
    first = R.replay(ms, NOW, replace(S, replay_limit=2))
    assert [a.episode for a in first] == [5, 4]
    for a in first:
        ms[a.episode - 1] = {**ms[a.episode - 1], **a.set}
    assert R.replay(ms, NOW + 60, replace(S, replay_limit=2)) == []  # the night's two are spent
    assert len(R.replay(ms, NOW + DAY, replace(S, replay_limit=2))) == 2
    # Archived since (so no longer among the active memories), they still spent tonight's budget.
    still_active = [x for x in ms if x["replayed_at"] is None]
    assert len(R.replay(still_active, NOW + 60, replace(S, replay_limit=2))) == 2
    assert R.replay(still_active, NOW + 60, replace(S, replay_limit=2), [x["replayed_at"] for x in ms]) == []


def test_near_duplicates_must_share_numbers_identifiers_and_capitals():
    assert R.key_tokens("The backup job on nas-01 failed with ENOSPC") == \
        R.key_tokens("the backup job on nas-01 failed with ENOSPC.")
    assert R.key_tokens("disk 83% on nas-01") != R.key_tokens("disk 91% on nas-01")
    assert R.key_tokens("disk on nas-01.lan at 91%.") == R.key_tokens("Disk on nas-01.lan at 91%") == {"nas-01.lan",
                                                                                                    "91%"}
    assert R.key_tokens("Bridge: DOWN") != R.key_tokens("Bridge: UP")


def test_potentiate_marks_once_after_n_accesses():
    acts = R.potentiate([m(1, access_count=10), m(2, access_count=9), m(3, access_count=50, potentiated_at=NOW)],
                        NOW, Scoring().potentiation_accesses)
    assert [a.episode for a in acts] == [1] and acts[0].set == {"potentiated_at": NOW}


def test_promote_needs_use_confidence_and_a_proven_record():
    ms = [m(1, access_count=5, success_count=1), m(2, access_count=4, success_count=3),
          m(3, access_count=9, confidence=0.6, success_count=3), m(4, access_count=9, failure_count=2, success_count=2),
          m(5, access_count=9, quality="good", success_count=3), m(6, access_count=50)]  # 6: returned often, never used
    assert [a.episode for a in R.promote(ms, NOW, S)] == [1]


def test_routine_lines_are_those_a_newer_one_repeats_with_other_numbers():
    ms = [m(1, content="nas-01: cpu temp 54C", event_at=NOW - 3 * DAY),
          m(2, content="nas-01: CPU temp 61C", event_at=NOW - DAY),
          m(3, content="nas-01: cpu temp 58C", event_at=NOW - 2 * DAY, kind="event"),  # another kind
          m(4, content="nas-01: cpu temp 57C", event_at=NOW - 4 * DAY, source="step:temps"),  # another source
          m(5, content="Thanks!", event_at=NOW - 9 * DAY), m(6, content="thanks!", event_at=NOW - 8 * DAY),
          m(7, content="The garden sensors need new batteries", event_at=NOW - 90 * DAY)]
    assert R.shape("nas-01: cpu temp 54C") == R.shape("NAS-07:  cpu temp 61.5C") == "nas-#: cpu temp #c"
    assert R.routine(ms) == {1: 2, 5: 6}
    assert R.cold_reason(ms[0], R.routine(ms)) == "routine: memory 2 says the same later"
    assert R.cold_reason(ms[6], R.routine(ms)) is None  # old, but the only one to say it
    assert R.cold_reason(m(8, strength_factor=0.5), {}) == "contradicted by a newer memory"
    # Failures are the success penalty's to rank: a hit passed over by five questions may be
    # the answer to the sixth.
    assert R.cold_reason(m(9, failure_count=5), {}) is None


def test_stale_decay_steps_down_redundant_or_superseded_memories_once_a_night():
    old = NOW - 61 * DAY
    ms = [m(1, event_at=old), m(2, event_at=NOW - 59 * DAY), m(3, event_at=old, access_count=1),
          m(4, event_at=old, factual=1), m(5, event_at=old, confidence=0.2), m(6, event_at=old, confidence=0.1),
          m(7, event_at=old, stale_at=NOW - 3600), m(8, event_at=old, strength_factor=0.5),
          m(9, event_at=old, failure_count=6)]
    newer = {i: 99 for i in range(1, 8)}  # 1-7 are routine lines a newer one repeats
    acts = {a.episode: a.set["confidence"] for a in R.stale(ms, NOW, S, newer)}
    assert acts == {1: 0.85, 5: 0.1, 8: 0.85}  # 9 failed six recalls: ranked lower for it, not stale
    # Age alone does not make a memory stale: nothing repeats or contradicts these.
    assert R.stale([m(1, event_at=old), m(5, event_at=old, confidence=0.2)], NOW, S, {}) == []


def test_interference_weakens_the_older_once_per_contradiction_with_a_floor():
    ms = {1: m(1), 2: m(2, strength_factor=0.15)}
    acts = R.interference(ms, [(1, 5, "a contradicts link"), (1, 6, "fact bridge changed"), (2, 7, "x")], NOW, S)
    assert [(a.episode, a.set["strength_factor"], a.extra["by"]) for a in acts] == [(1, 0.5, 5), (1, 0.25, 6),
                                                                                     (2, 0.1, 7)]


def test_archive_moves_weak_unused_redundant_memories_to_the_cold_tier():
    old = NOW - 400 * DAY
    ms = [m(1, event_at=old), m(2, event_at=old, access_count=3), m(3, event_at=old, factual=1), m(4),
          m(5, event_at=old, access_count=12), m(6, event_at=NOW - 30 * DAY),  # 6: weak but not old enough
          m(7, event_at=old, tier="cold"), m(8, event_at=old)]  # 7: cold already; 8: old, weak and unique
    acts = R.archive(ms, NOW, S, {i: 99 for i in range(1, 8)}, Scoring().potentiation_accesses)
    assert [a.episode for a in acts] == [1] and acts[0].set == {"tier": "cold", "tier_at": NOW}
    assert acts[0].reason.endswith("routine: memory 99 says the same later: to the cold tier")


def test_merge_keeps_the_most_used_and_carries_its_history():
    ms = {1: m(1, access_count=1, success_count=1), 2: m(2, access_count=4, importance=0.2, last_access_at=NOW),
          3: m(3, failure_count=1, importance=0.9)}
    acts = R.merge([[1, 2, 3]], ms, {(1, 2): 0.95, (2, 3): 0.93}, NOW, S)
    keep = acts[0]
    assert keep.episode == 2 and keep.extra == {"absorbed": [1, 3]}
    assert keep.set == {"access_count": 5, "success_count": 1, "failure_count": 1, "importance": 0.9,
                        "last_access_at": NOW}
    cold = {"tier": "cold", "tier_at": NOW}
    assert [(a.episode, a.set) for a in acts[1:]] == [(1, {"state": "superseded", "superseded_by": 2, **cold}),
                                                     (3, {"state": "superseded", "superseded_by": 2, **cold})]
    assert "cosine 0.950" in acts[1].reason and "cosine 0.930" in acts[2].reason


def test_close_pairs_and_components():
    v = np.array([[1, 0, 0], [0.99, 0.14, 0], [0, 1, 0], [0, 0, 1], [0, 0.1, 0.995]], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    pairs = similar.close_pairs(v, 0.9)
    assert [(i, j) for i, j, _ in pairs] == [(0, 1), (3, 4)]
    assert similar.close_pairs(v, 0.9, rows=np.array([4])) == [pairs[1]]  # only pairs touching the new rows
    assert similar.components(5, pairs) == [[0, 1], [3, 4]]
    assert similar.strongest([(0, 1, 0.9), (0, 2, 0.95), (0, 3, 0.8)], 2) == [(0, 2, 0.95), (0, 1, 0.9)]


def test_close_pairs_per_row_bounds_the_pairs_of_identical_memories_and_keeps_them_connected():
    rng = np.random.default_rng(3)
    same = np.tile(rng.normal(size=(1, 16)), (3000, 1)) + rng.normal(scale=1e-3, size=(3000, 16))
    other = rng.normal(size=(5, 16))
    v = np.vstack([same, other]).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    capped = similar.close_pairs(v, 0.95, per_row=4)
    assert len(capped) <= 3000 * 4  # against 4.5 million uncapped
    assert similar.components(len(v), capped) == [list(range(3000))]
    new = np.array([10, 2999, 3002])
    capped_new = similar.close_pairs(v, 0.95, rows=new, per_row=4)
    assert len(capped_new) <= 3 * 4 and all(i in new or j in new for i, j, _ in capped_new)
    assert len({(i, j) for i, j, _ in capped_new}) == len(capped_new)  # each pair once
    small = similar.close_pairs(v[2995:], 0.95)
    assert sorted(similar.close_pairs(v[2995:], 0.95, per_row=10)) == sorted(small)  # a cap not reached changes nothing


def test_merge_candidates_share_kind_and_key_tokens_and_a_later_pass_compares_only_new_ones():
    from strata_daemon.consolidation.api import _merge_groups, _merge_sets

    texts = {1: "disk usage on nas-01 at 91%", 2: "Disk usage on nas-01 at 91%.", 3: "disk usage on nas-01 at 83%",
             4: "disk usage on nas-01 at 91%", 5: "backup done on nas-02", 6: "backup finished on nas-02",
             7: "backup done on nas-02"}
    kinds = {4: "event"}
    mems = {i: {"kind": kinds.get(i, "observation"), "content": t, "factual": 0, "embedded": i % 7}
            for i, t in texts.items()}  # 7 has no vector yet
    v = np.array([[1, 0.0], [1, 0.01], [1, 0.02], [1, 0.0], [0, 1.0], [0.05, 1]], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    pos = {i: p for p, i in enumerate(range(1, 7))}

    def groups(excluded=frozenset(), mark=None):
        return _merge_groups(_merge_sets(mems, set(excluded), mark), pos, v, mems, mark, S)
    # 3 has other numbers, 4 is another kind: neither joins 1 and 2, however close their vectors
    assert sorted(_merge_sets(mems, set(), None)) == [[1, 2], [5, 6]]
    found, sims = groups()
    assert sorted(found) == [[1, 2], [5, 6]] and set(sims) == {(1, 2), (5, 6)}
    assert groups({2})[0] == [[5, 6]]  # a fact source never merges
    # a later pass: only sets holding a vector newer than the mark are compared, or read
    assert _merge_sets(mems, set(), 5) == [[5, 6]] and groups(mark=5)[0] == [[5, 6]]
    assert _merge_sets(mems, set(), 6) == [] and groups(mark=6)[0] == []
    # a member whose vector is gone (purged since the sets were made) is left out
    assert _merge_groups([[1, 2]], {1: 0}, v, mems, None, S)[0] == []


@pytest.mark.parametrize("one, other, disagree", [
    ("The deploy of web-01 succeeded", "The deploy of web-01 failed", True),
    ("Payment to Dana was sent", "Payment to Dana was not sent", True),
    ("Do not restart gw-02 during backups", "Do restart gw-02 during backups", True),
    ("The bridge is up", "the bridge is down", True),
    ("I don't like jazz", "I like jazz", True),
    ("The backup job on nas-01 failed with ENOSPC", "the backup job on nas-01 failed with ENOSPC.", False),
    ("renewed the TLS certificate for web-01 today", "the TLS certificate of web-01 has been renewed", False),
])
def test_memories_that_say_opposite_things_disagree(one, other, disagree):
    assert R.disagree(one, other) is disagree and R.disagree(other, one) is disagree


# -- whole runs on a real home -----------------------------------------------------------------

def _home_with_memories(home):
    async def go():
        async with await Memory.open(home) as mem:
            ids = {}
            ids["dup_a"] = (await mem.observe("The backup job on nas-01 failed with ENOSPC", importance=0.9))["id"]
            ids["dup_b"] = (await mem.observe("the backup job on nas-01 failed with ENOSPC.", kind="observation",
                                              at=NOW - 3600))["id"]
            ids["old"] = (await mem.observe("A note about garden sensors", at=NOW - 300 * DAY))["id"]
            ids["temp_old"] = (await mem.observe("nas-01: cpu temp 54C", at=NOW - 300 * DAY))["id"]
            ids["temp_new"] = (await mem.observe("nas-01: cpu temp 61C", at=NOW - 200 * DAY))["id"]
            ids["down"] = (await mem.observe("Bridge: DOWN", at=NOW - 2 * DAY))["id"]
            ids["up"] = (await mem.observe("Bridge: UP", at=NOW - DAY))["id"]
            ids["tls_a"] = (await mem.observe("renewed the TLS certificate for web-01 today", at=NOW - 2 * DAY))["id"]
            ids["tls_b"] = (await mem.observe("the TLS certificate of web-01 has been renewed", at=NOW - DAY))["id"]
            # Close in meaning (cosine above the threshold), opposite in what they say: never merged.
            ids["deploy_ok"] = (await mem.observe("The deploy of web-01 succeeded", at=NOW - 2 * DAY))["id"]
            ids["deploy_failed"] = (await mem.observe("The deploy of web-01 failed", at=NOW - DAY))["id"]
            ids["paid"] = (await mem.observe("Payment to Dana was sent", at=NOW - 2 * DAY))["id"]
            ids["unpaid"] = (await mem.observe("Payment to Dana was not sent", at=NOW - DAY))["id"]
            await mem.embed_pending()
            return ids
    return asyncio.run(go())


def _run(home, **kw):
    async def go():
        async with await Memory.open(home) as mem:
            r = await mem.consolidate(now=NOW, **kw)
            states = {row[0]: dict(row) for row in await mem.db.fetchall(
                "SELECT id, state, tier, superseded_by, confidence, strength_factor, access_count FROM episodes")}
            edges = (await mem.db.fetchone("SELECT count(*) FROM web_edges"))[0]
            return r, states, edges
    return asyncio.run(go())


def test_a_run_merges_archives_weakens_and_associates_and_dry_run_changes_nothing(home):
    ids = _home_with_memories(home)
    dry, before, edges_before = _run(home, dry_run=True)
    assert dry["run"] is None and dry["counts"]["merge"] == 2  # two pairs of paraphrases
    brief, still, edges_still = _run(home, dry_run=True, detail=False)
    assert still == before and edges_still == edges_before  # a dry run writes nothing
    assert "actions" not in brief and brief["counts"] == dry["counts"]  # the nightly phase's counts only

    r, after, edges = _run(home)
    assert r["run"] == 1 and r["actions"] == dry["actions"]
    assert after[ids["dup_b"]]["state"] == "superseded" and after[ids["dup_b"]]["superseded_by"] == ids["dup_a"]
    assert after[ids["dup_b"]]["tier"] == "cold"
    # The older routine line goes cold and stale; a unique note as old stays as it was.
    assert (after[ids["temp_old"]]["state"], after[ids["temp_old"]]["tier"]) == ("active", "cold")
    assert after[ids["temp_old"]]["confidence"] == 0.85
    assert (after[ids["old"]]["tier"], after[ids["old"]]["confidence"]) == ("hot", 1.0)
    assert (after[ids["temp_new"]]["tier"], after[ids["temp_new"]]["confidence"]) == ("hot", 1.0)
    assert after[ids["down"]]["strength_factor"] == 0.5  # the fact moved on from its value
    assert after[ids["up"]]["strength_factor"] == 1.0
    assert after[ids["dup_a"]]["access_count"] == 1  # replayed
    assert after[ids["tls_b"]]["superseded_by"] == ids["tls_a"]
    for key in ("deploy_ok", "deploy_failed", "paid", "unpaid"):
        assert (after[ids[key]]["state"], after[ids[key]]["tier"]) == ("active", "hot"), key
    # Fact sources never merge, but two close recent memories get an edge.
    assert any(a["rule"] == "associate" and {a["episode"], a["with"]} == {ids["down"], ids["up"]}
               for a in r["actions"])
    assert edges > edges_before

    again, same, edges_again = _run(home)  # idempotent
    assert sum(again["counts"].values()) == 0 and same == after and edges_again == edges


def test_merged_and_archived_memories_stay_recalled_restorable_and_a_run_can_be_undone(home, cli):
    ids = _home_with_memories(home)
    r, _, _ = _run(home)
    shown = cli.json("show", str(ids["dup_b"]))
    assert shown["state"] == "superseded" and shown["tier"] == "cold" and shown["content"]
    # Cold memories answer for their own words without --include-archived, and say their tier.
    for key, query in (("temp_old", "cpu temp 54C"), ("dup_b", "backup job failed ENOSPC")):
        found = cli.json("recall", query, "--mode", "fast", "--explain")
        hit = next(h for h in found["hits"] if h["id"] == ids[key])
        assert hit["tier"] == "cold" and hit["explain"]["signals"]["tier"] == 0.8 and found["cold_matched"] >= 1
    assert cli.json("restore", str(ids["temp_old"]))["state"] == "active"
    assert cli.json("show", str(ids["temp_old"]))["tier"] == "hot"

    undone = cli.json("consolidate", "--undo", str(r["run"]))
    assert undone["undone"] == sum(1 for a in r["actions"])
    back = cli.json("show", str(ids["dup_b"]))
    assert back["state"] == "active" and back["superseded_by"] is None and back["tier"] == "hot"
    assert cli.json("show", str(ids["down"]))["strength_factor"] == 1.0
    again = cli("consolidate", "--undo", str(r["run"]))
    assert again.returncode != 0 and "already undone" in again.err
    for _ in range(2):  # a run never made is not found (exit 3), and trying records nothing
        never = cli("consolidate", "--undo", str(r["run"] + 40))
        assert never.returncode == 3 and f"the newest is run {r['run']}" in never.err, never.err


def test_consolidation_audits_each_change_with_its_reason(home, cli):
    ids = _home_with_memories(home)
    _run(home, rules=["archive"])
    history = cli.json("show", str(ids["temp_old"]))["history"]
    entry = json.loads(next(a for a in history if a["action"] == "consolidate:archive")["data"])
    assert "strength" in entry["reason"] and "routine" in entry["reason"]
    assert entry["before"] == {"tier": "hot", "tier_at": None} and entry["run"] == 1


def test_a_dry_run_lists_each_memory_with_the_start_of_its_text(cli):
    long = "Rotate the API keys of the billing service before the auditors arrive " * 3
    eid = int(cli("observe", long, "--importance", "0.9", check=True).out)
    shown = cli("consolidate", "--dry-run", "--rule", "replay", check=True).out.splitlines()
    line = next(n for n, text in enumerate(shown) if text.startswith(f"  #{eid} "))
    assert shown[line].split()[:2] == [f"#{eid}", "replay"]
    assert "Rotate the API keys of the billing service" in shown[line] and shown[line].endswith("…")
    assert "replayed as an implicit access" in shown[line + 1]
    assert cli.json("show", str(eid))["access_count"] == 0  # a dry run changes nothing
    planned = cli.json("consolidate", "--dry-run", "--rule", "replay")["actions"]
    assert [(a["episode"], a["rule"]) for a in planned] == [(eid, "replay")] and "content" not in planned[0]


def test_a_contradiction_s_reason_quotes_values_in_words(cli):
    cli("observe", "I'm vegetarian.", "--at", "3 days ago", check=True)
    newer = int(cli("observe", "I'm no longer vegetarian.", check=True).out)
    reasons = [a["reason"] for a in cli.json("consolidate", "--dry-run", "--rule", "interference")["actions"]]
    assert reasons == [f"contradicted by newer memory {newer} (fact my diet changed from 'vegetarian' to no value): "
                       "strength x0.5"]


def test_unknown_rule_is_refused(cli, tmp_path):
    from strata_daemon.app import wiring
    from strata_daemon.config.load import load_config
    from strata_daemon.errors import ConfigError

    bad = cli("consolidate", "--rule", "nap")
    assert bad.returncode == 2 and "is not one strata knows" in bad.err
    path = tmp_path / "strata.toml"
    path.write_text('[consolidation]\nrules = ["merge", "nap"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown rule 'nap'"):
        wiring.check(load_config(path))  # consolidation checks the rules it is handed
