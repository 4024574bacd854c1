"""`strata bench ...` really runs, at small sizes, and reports numbers that make sense."""

from __future__ import annotations

import json
import numbers

import pytest

from conftest import strata_sqlite as sqlite3

pytestmark = pytest.mark.slow


def is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@pytest.mark.parametrize("n, q, rank", [(300, 95, 285), (300, 99, 297), (200, 95, 190), (100, 99, 99),
                                         (20, 95, 19), (7, 50, 4), (1, 95, 1), (10, 0, 1)])
def test_percentile_is_the_nearest_rank(n, q, rank):
    from strata_bench.stats import percentile

    assert percentile([float(i) for i in range(n, 0, -1)], q) == rank


def test_bench_ingest(cli):
    r = cli.json("bench", "ingest", "--n", "2000")
    assert r["benchmark"] == "ingest" and r["n"] == 2000
    assert is_number(r["observations_per_s"]) and r["observations_per_s"] > 0
    assert is_number(r["baseline"]["observations_per_s"]) and r["baseline"]["observations_per_s"] > 0
    assert is_number(r["ratio_to_baseline"]) and r["ratio_to_baseline"] > 0
    assert r["created"] + r["repeats_folded"] == 2000
    assert r["created"] > 0


def test_bench_ingest_human_output(cli):
    proc = cli("bench", "ingest", "--n", "200", check=True)
    assert proc.out.startswith("ingest benchmark")
    assert "observations_per_s" in proc.out and "baseline observations_per_s" in proc.out


def test_bench_recall(cli, tmp_path):
    out = tmp_path / "recall.json"
    r = cli.json("bench", "recall", "--n", "2000", "--mode", "fast", "--queries", "30", "--out", str(out))
    assert r["benchmark"] == "recall" and r["n"] == 2000 and r["mode_used"] == "fast"
    assert r["queries"] == 30
    for key in ("p50_ms", "p95_ms", "p99_ms"):
        assert is_number(r[key]) and r[key] > 0, key
    assert r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"]
    assert is_number(r["baseline"]["p95_ms"]) and r["baseline"]["p95_ms"] > 0
    assert is_number(r["ratio_p95"]) and r["ratio_p95"] > 0
    assert r["hits_per_query"] > 0
    assert json.loads(out.read_text(encoding="utf-8")) == r


def test_bench_sealed_finds_no_memory_in_a_sealed_home_s_files(cli):
    r = cli.json("bench", "sealed", "--n", "300", "--queries", "10", "--ingest", "300")
    assert r["benchmark"] == "sealed" and r["recall"]["queries"] == 10 and r["recall"]["same_hits"] == 10
    assert r["ingest"]["sealed_per_s"] > 0 and is_number(r["recall"]["ratio_p95"])
    probed = r["plaintext"]["memories_probed"]
    assert probed > 200 and r["plaintext"]["sealed"]["memories_found"] == 0
    assert r["plaintext"]["plain_control"]["memories_found"] == probed  # the search finds them where they are


def test_bench_recall_measures_the_home_with_the_settings_given(cli):
    plain = cli.json("bench", "recall", "--n", "300", "--mode", "fast", "--queries", "10")
    few = cli.json("bench", "recall", "--n", "300", "--mode", "fast", "--queries", "10",
                   "--set", "recall.candidates=2", "--set", "recall.overlap_embedding=true")
    assert plain["settings"] == {}
    assert few["settings"] == {"recall.candidates": 2, "recall.overlap_embedding": True}
    # Two candidates: at most two hits, and the newer statement that directly supersedes each.
    assert few["hits_per_query"] <= 4 and few["hits_per_query"] < plain["hits_per_query"]
    for bad, says in (("recall.nope=1", "naming a setting"), ("recall.candidates=many", "must be a whole number"),
                      ("recall.candidates", "KEY=VALUE")):
        proc = cli("bench", "recall", "--n", "300", "--set", bad)
        assert proc.returncode == 7 and says in proc.err and "Traceback" not in proc.err, proc.err


def test_bench_recall_times_recalls_that_catch_up_fresh_memories(cli):
    r = cli.json("bench", "recall", "--n", "300", "--queries", "5", "--fresh", "3")
    assert r["fresh_per_query"] == 3 and r["mode_used"] == "balanced" and r["hits_per_query"] > 0
    proc = cli("bench", "recall", "--n", "300", "--fresh", "-1")
    assert proc.returncode == 4 and "--fresh" in proc.err  # invalid input


def test_bench_recall_with_half_the_home_cold_still_returns_cold_memories(cli):
    plain = cli.json("bench", "recall", "--n", "300", "--mode", "fast", "--queries", "20")
    cold = cli.json("bench", "recall", "--n", "300", "--mode", "fast", "--queries", "20", "--cold", "0.5")
    assert plain["cold_memories"] == 0 and plain["cold_hit_share"] == 0.0
    assert 140 <= cold["cold_memories"] <= 150 and 0.0 < cold["cold_hit_share"] < 1.0
    assert cold["hits_per_query"] == plain["hits_per_query"]  # the cold tier ranks; it never hides
    bad = cli("bench", "recall", "--n", "300", "--cold", "2")
    assert bad.returncode == 4 and "between 0 and 1" in bad.err  # invalid input


def test_bench_does_not_touch_the_home(cli, home):
    cli.json("bench", "ingest", "--n", "100")
    assert not (home / "state" / "memory.db").exists()


@pytest.mark.slow
def test_bench_embed_reports_throughput_and_query_latency(cli):
    r = cli.json("bench", "embed", "--n", "40")
    assert r["n"] == 40 and r["dimension"] == 384 and r["model"] == "all-MiniLM-L6-v2-int8"
    assert r["baseline"]["runtime"] == "llama" and r["baseline"]["texts_per_s"] > 0
    assert r["texts_per_s"] > 0 and 0 < r["query_p50_ms"] <= r["query_p95_ms"]


@pytest.mark.slow
def test_bench_recall_balanced_is_the_default_and_embeds_the_corpus_first(cli, tmp_path):
    cache = tmp_path / "cache"
    r = cli.json("bench", "recall", "--n", "300", "--queries", "10", "--corpus-cache", str(cache))
    assert r["mode"] == r["mode_used"] == "balanced" and r["corpus_cached"] is False
    assert r["embed_seconds"] > 0 and r["first_recall_ms"] > 0 and r["hits_per_query"] > 0
    kept = list(cache.iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("corpus-300-0-embedded-")
    assert kept[0].stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o777 == 0o700
    # the second run starts from the kept corpus: no embedding, the same memories found
    again = cli.json("bench", "recall", "--n", "300", "--queries", "10", "--corpus-cache", str(cache))
    assert again["corpus_cached"] is True and again["embed_seconds"] is None
    assert again["hits_per_query"] == r["hits_per_query"] and again["mode_used"] == "balanced"
    # another size or a full-text run is another corpus
    other = cli.json("bench", "recall", "--n", "200", "--queries", "10", "--mode", "fast", "--corpus-cache", str(cache))
    assert other["corpus_cached"] is False and len(list(cache.iterdir())) == 2


class _Stop(Exception):
    pass


@pytest.mark.slow
def test_a_corpus_build_that_stops_resumes_where_it_stopped(tmp_path):
    import asyncio

    from strata_bench.kept import filled_home
    from strata_daemon.app.memory import Memory

    cache, done = tmp_path / "cache", []

    def stop_after_first_batch(count):
        done.append(count)
        raise _Stop

    with pytest.raises(_Stop):
        asyncio.run(filled_home(tmp_path / "a", 300, 0, "balanced", stop_after_first_batch, cache))
    building = [p for p in cache.iterdir() if p.suffix == ".building"]
    assert len(building) == 1 and (building[0] / "imported").is_file() and not list(cache.glob("*.db"))
    conn = sqlite3.connect(building[0] / "state" / "memory.db")
    imported = conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
    conn.close()
    again: list[int] = []
    home, embed_s, cached = asyncio.run(filled_home(tmp_path / "b", 300, 0, "balanced", again.append, cache))
    # the second run embedded only what the first had not committed
    assert embed_s > 0 and not cached and sum(again) == imported - done[0] and done[0] > 0
    assert [p.suffix for p in cache.iterdir()] == [".db"]

    async def counts():
        async with await Memory.open(home) as mem:
            return (await mem.status())["episodes"], await mem.embedding_backlog()
    episodes, backlog = asyncio.run(counts())
    assert episodes == imported > 250 and backlog == 0  # the import was not run twice


def test_bench_facts_reports_get_and_set_latency_against_a_bare_table(cli, tmp_path):
    out = tmp_path / "facts.json"
    r = cli.json("bench", "facts", "--keys", "200", "--history", "4000", "--ops", "40", "--out", str(out))
    assert r["benchmark"] == "facts" and r["keys"] == 200 and r["history_rows"] == 4000 and r["ops"] == 40
    for key in ("get_p50_ms", "get_p95_ms", "get_at_p95_ms", "set_p50_ms", "set_p95_ms"):
        assert is_number(r[key]) and r[key] > 0, key
    assert r["get_p50_ms"] <= r["get_p95_ms"] and r["set_p50_ms"] <= r["set_p95_ms"]
    assert r["baseline"]["get_p95_ms"] > 0 and r["baseline"]["set_p95_ms"] > 0
    assert r["ratio_get_p95"] == round(r["get_p95_ms"] / r["baseline"]["get_p95_ms"], 3)
    assert r["ratio_set_p95"] == round(r["set_p95_ms"] / r["baseline"]["set_p95_ms"], 3)
    assert json.loads(out.read_text(encoding="utf-8")) == r
    assert cli("bench", "facts", "--keys", "10", "--history", "5").returncode == 4


@pytest.mark.slow
def test_bench_web_reports_decay_spread_and_deep_recall_against_baselines(cli, tmp_path):
    out = tmp_path / "web.json"
    r = cli.json("bench", "web", "--nodes", "500", "--edges", "4000", "--spreads", "20", "--deep-n", "300",
                 "--queries", "10", "--out", str(out))
    assert r["benchmark"] == "web" and r["nodes"] == 500 and r["edges"] == 4000
    for key in ("decay_1m_edges_s", "spread_p95_ms", "deep_recall_p95_ms"):
        assert is_number(r[key]) and r[key] > 0, key
    assert r["edges_after_decay"] == 4000  # five runs of x0.95 prune nothing that weighs 1 or more
    assert r["spread_p50_ms"] <= r["spread_p95_ms"] and r["reached_per_spread"] > 0
    assert r["hebbian_edges"] > 0 and r["links"] > 0 and r["graph_hits_per_query"] > 0
    assert r["decay_baseline"]["seconds"] > 0 and r["decay_ratio"] > 0
    assert r["spread_ratio_p95"] == round(r["spread_p95_ms"] / r["spread_baseline"]["p95_ms"], 3)
    assert r["deep_ratio_p95"] == round(r["deep_recall_p95_ms"] / r["deep_baseline"]["p95_ms"], 3)
    assert json.loads(out.read_text(encoding="utf-8")) == r
    assert cli("bench", "web", "--nodes", "10", "--edges", "100").returncode == 4


@pytest.mark.slow
def test_bench_daemon_times_every_phase_and_measures_the_idle_daemon(cli):
    from strata_daemon.app.phases.registry import PHASES

    r = cli.json("bench", "daemon", "--n", "300", "--seconds", "3", "--repeat", "1")
    assert set(r["phases"]) == {p.name for p in PHASES}
    assert all(v["median_s"] > 0 for v in r["phases"].values())
    assert r["phases"]["embed"]["median_s"] > r["phases"]["steps"]["median_s"]  # embedding 512 memories is work
    assert 0 <= r["idle_cpu_percent"] < 50 and 20 < r["rss_mb"] <= r["rss_peak_mb"]
    assert r["stop_exit_code"] == 0 and r["baseline"]["rss_mb"] > 20 and r["ratio_rss"] > 0
    bad = cli("bench", "daemon", "--n", "10")
    assert bad.returncode == 4 and "need --n >= 100" in bad.err


def test_the_daemon_unloads_models_after_using_them(memory):
    memory.observe("the bridge went down")
    memory.embed_pending()
    memory.recall("bridge", mode="balanced")
    mem = memory.raw
    assert mem.models._embedder is not None and len(mem.models.vectors) == 1
    mem.release_models()
    assert mem.models._embedder is None and len(mem.models.vectors) == 0
    assert memory.recall("bridge", mode="balanced")["mode_used"] == "balanced"  # loaded again on use


def test_bench_tui_times_the_first_screen_and_every_switch(cli):
    r = cli.json("bench", "tui", "--n", "300", "--rounds", "1", "--think", "0.5")
    assert r["benchmark"] == "tui" and r["rounds"] == 1 and r["dossiers"] == 5 and r["think_seconds"] == 0.5
    for field in ("first_screen_ms", "switch_ms", "switch_first_visit_ms"):
        assert r[field]["p50_ms"] > 0 and r[field]["p95_ms"] >= r[field]["p50_ms"]
    assert set(r["switch_by_screen_ms"]) == {"Overview", "Memories", "Facts", "Spiderweb", "Dossiers", "Capsule"}
    assert r["baseline"]["first_screen_ms"]["p50_ms"] > 0 and r["baseline"]["switch_ms"]["p50_ms"] > 0
    assert is_number(r["ratio_first_screen_p50"]) and is_number(r["ratio_switch_p50"])


def test_bench_mcp_times_recall_round_trips_against_the_same_recalls_in_process(cli):
    r = cli.json("bench", "mcp", "--n", "300", "--queries", "10", "--writes", "5")
    assert r["benchmark"] == "mcp" and r["queries"] == 10 and r["transport"] == "stdio"
    assert r["p95_ms"] >= r["p50_ms"] > 0 and r["baseline"]["p50_ms"] > 0 and r["observe"]["count"] == 5
    assert r["ratio_p95"] == round(r["p95_ms"] / r["baseline"]["p95_ms"], 3) and r["connect_seconds"] > 0


def test_bench_context_times_blocks_through_the_daemon_against_its_recalls(cli, tmp_path):
    r = cli.json("bench", "context", "--n", "300", "--queries", "8", "--budget", "128", "--corpus-cache",
                 str(tmp_path))
    assert r["benchmark"] == "context" and r["queries"] == 8 and r["budget"] == 128
    assert r["p95_ms"] >= r["p50_ms"] > 0 and r["baseline"]["p50_ms"] > 0
    assert 0 < r["tokens"]["mean"] <= r["tokens"]["max"] <= 128 and r["memories_per_block"] > 0


def test_bench_http_times_one_client_and_several_against_the_same_recalls_in_process(cli, tmp_path):
    r = cli.json("bench", "http", "--n", "300", "--queries", "12", "--clients", "3", "--corpus-cache",
                 str(tmp_path))
    assert r["benchmark"] == "http" and r["queries"] == 12 and r["transport"] == "unix socket"
    assert r["p95_ms"] >= r["p50_ms"] > 0 and r["baseline"]["p50_ms"] > 0
    assert r["concurrent"]["clients"] == 3 and r["concurrent"]["requests"] == 12
    assert r["concurrent"]["requests_per_s"] > 0 and r["ratio_p50"] == round(r["p50_ms"] / r["baseline"]["p50_ms"], 3)


def test_bench_consolidate_runs_a_pass_and_the_idle_pass_after_it(cli, tmp_path):
    cache = tmp_path / "cache"
    r = cli.json("bench", "consolidate", "--n", "300", "--corpus-cache", str(cache), timeout=300)
    assert r["benchmark"] == "consolidate" and r["corpus_cached"] is False and r["memories"] > 250
    assert r["seconds"] > 0 and r["baseline"]["seconds"] > 0 and r["ratio"] > 0 and r["peak_mb"] > 0
    assert r["counts"]["replay"] > 0 and sum(r["second_pass_counts"].values()) == 0  # the same night: nothing
    words = r["own_words"]
    assert 250 < words["queries"] <= 300 and words["k"] == 10  # every memory of the corpus (repeats fold)
    assert words["recall_at_10_before"] >= 0.95 and words["recall_at_10_after"] >= 0.95
    assert words["ratio"] == round(words["recall_at_10_after"] / words["recall_at_10_before"], 4)
    assert r["by_tier"]["cold"] >= r["counts"]["archive"] and sum(r["by_tier"].values()) == r["memories"]
    again = cli.json("bench", "consolidate", "--n", "300", "--corpus-cache", str(cache))
    assert again["corpus_cached"] is True and again["counts"] == r["counts"]


def test_bench_capture_scores_both_labelled_sets(cli):
    r = cli.json("bench", "capture")
    assert r["benchmark"] == "capture" and set(r["sets"]) == {"dev", "held_out", "dev_talk", "held_out_talk"}
    assert "wrong" not in r["sets"]["held_out"] and "wrong" not in r["sets"]["held_out_talk"]  # only scored
    dev = r["sets"]["dev"]
    assert dev["lines"] >= 150 and dev["states"] + dev["events"] == dev["lines"]
    assert len(dev["wrong"]) == round((1 - dev["recall"]) * dev["states"]) + (dev["captured"] - round(
        dev["precision"] * dev["captured"]))


def test_bench_updates_ranks_the_newer_statement_first_against_a_home_without_statements(cli):
    r = cli.json("bench", "updates", "--n", "100", timeout=900)
    assert r["benchmark"] == "updates" and r["background"] == 100
    assert set(r["sets"]) == {"generated", "dev", "held_out", "chains_dev", "chains_held_out"}
    for name, s in r["sets"].items():
        assert s["pairs"] >= 50 and s["older_arrives_late"] == s["pairs"] // 2
        assert s["statements"] > (3 if name.startswith("chains") else 2) * s["pairs"] - 1  # every chain A, B, C at least
        assert 0 <= s["strata"]["newer_first"] <= 1 and s["strata"]["both_retrieved"] > 0
    generated = r["sets"]["generated"]  # the forms capture reads: the newer always wins
    assert generated["strata"]["older_above_newer"] == 0 and generated["strata"]["older_first"] == 0
    assert generated["strata"]["newer_first"] > generated["baseline"]["newer_first"]


def test_bench_cli_times_each_command_as_a_new_process_with_and_without_a_daemon(cli):
    r = cli.json("bench", "cli", "--n", "100", "--rounds", "2", timeout=600)
    assert r["baseline"]["p50_ms"] > 0 and r["first_daemon_recall_ms"] > 0
    for name in ("help", "observe", "fact_get", "status", "recall_daemon", "recall_no_daemon"):
        assert r[name]["p50_ms"] >= r["baseline"]["p50_ms"] and r[name]["ratio_p50"] >= 1, (name, r[name])


def test_bench_truth_scores_recall_the_block_and_the_facts_on_the_public_suites(cli):
    r = cli.json("bench", "truth", "--set", "memtrust", "--n", "100", timeout=900)
    m = r["sets"]["memtrust"]["pairs"]
    assert r["benchmark"] == "truth" and m["items"] == 7
    # The block shows the new value and no stale fact in every case; so do the facts.
    assert m["block"] == 1.0 and m["facts"] == 1.0 and m["stale_facts_in_block"] == 0
    assert m["ended_by_another"] == 0 and m["older_ended_by_another"] == 0  # no case's statement ended by another's
    assert 0 < m["block_tokens_median"] <= r["budget"]
    b = cli.json("bench", "truth", "--set", "benchd", "--n", "0", timeout=900)["sets"]["benchd"]
    assert b["items"] == 7 and b["top1"] == 7


def test_bench_truth_does_not_count_an_older_fact_another_item_ended_as_kept_true(tmp_path):
    """No stale value is left when a memory of another item ends the older statement's fact,
    but by a wrong reading: the facts do not pass for it."""
    import asyncio

    from strata_bench.newest import _facts_by_source, _judge
    from strata_daemon.app.memory import Memory
    from strata_daemon.config.home import init_home

    item = {"kind": "update", "said": ["My landlord is Gerrit Bosman.", "The flat was sold, Mirela owns it now."],
            "values": ["Gerrit Bosman", "Mirela"], "question": "Who is my landlord?", "distractors": []}

    async def judged(another: bool) -> dict:
        home = tmp_path / f"home-{another}"
        init_home(home)
        async with await Memory.open(home) as mem:
            said = [(await mem.observe(t, at=f"{30 - 10 * n} days ago"))["id"] for n, t in enumerate(item["said"])]
            if another:
                other = (await mem.observe("Switched gyms to Pulse Climbing.", at="1 day ago"))["id"]
                await mem.link(f"episode:{other}", f"episode:{said[0]}", "supersedes")
            await mem.embed_pending()
            return await _judge(mem, item, said, 256, await _facts_by_source(mem), {})

    alone, ended = asyncio.run(judged(False)), asyncio.run(judged(True))
    assert not alone["older_ended"] and ended["older_ended"] and not ended["facts"]


def test_bench_truth_keeps_items_about_one_thing_in_homes_apart():
    from strata_bench.newest import MAX_HOMES, SETS, homes_for, load

    items = load(SETS["dev"])
    homes = homes_for(items)
    assert sorted(i for h in homes for i in h) == list(range(len(items))) and len(homes) <= MAX_HOMES
    standup = [i for i, it in enumerate(items) if any("standup" in s.casefold() for s in it["said"])]
    assert len({next(n for n, h in enumerate(homes) if i in h) for i in standup}) == min(len(standup), MAX_HOMES)


def test_bench_truth_lists_the_items_it_missed_when_asked():
    from strata_bench.newest import format_truth

    part = {"items": 1, "recall_first": 0.0, "top1": 0.0, "block": 1.0, "facts": 0.0, "all_three": 0.0,
            "stale_facts_in_block": 0, "block_tokens_median": 40}
    r = {"background": 0, "budget": 256, "sets": {"dev": {"pairs": part, "homes": 1, "misses": [
        {"said": ["Rui has the pager.", "Bea took the pager over."], "question": "Who has the pager?",
         "recall": False, "block": True, "facts": False, "stale_keys": ["pager.owner"]}]}}}
    assert format_truth(r).splitlines()[-1] == ("    missed (recall, facts; stale pager.owner): Rui has the pager. -> "
                                                 "Bea took the pager over. | Who has the pager?")
