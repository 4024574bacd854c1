"""The spiderweb: the Hebbian edge arithmetic, spreading on hand-built graphs, the persisted
working set (across a killed process), namespaces, bad input, and `strata web` itself."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO
from strata_daemon.base import timeutil
from strata_daemon.config.load import overlay
from strata_daemon.config.tuning import Graph, Recall
from strata_daemon.errors import InvalidInput, NotFound
from strata_daemon.graph import hebbian
from strata_daemon.graph.entities import extract
from strata_daemon.graph.nodes import parse
from strata_daemon.graph.spread import spread, strength

RULES = Graph()


# -- pure ------------------------------------------------------------------------------------

def test_an_edge_starts_at_one_gains_one_per_co_activation_and_stops_at_ten():
    weights, w = [], None
    for _ in range(12):
        w = hebbian.strengthened(w, RULES)
        weights.append(w)
    assert weights == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 10.0, 10.0]


def test_lazy_decay_gives_the_seeds_weights_and_prunes_at_the_first_run_below_a_hundredth():
    level = hebbian.level_of(1.0, 0.0)
    clock = 0.0
    for run in range(1, 91):
        clock = hebbian.advanced(clock, RULES)
        assert hebbian.weight_of(level, clock) == pytest.approx(0.95 ** run, rel=1e-12)
        pruned = level < hebbian.prune_level(clock, RULES)
        assert pruned == (0.95 ** run < 0.01), run  # 0.95^89 = 0.0104 stays, 0.95^90 = 0.0099 goes


def test_pairs_are_unordered_distinct_and_never_self_loops():
    assert hebbian.pairs(["b", "a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert hebbian.pairs(["a", "a"]) == []


@pytest.mark.parametrize("raw, node", [("12", "episode:12"), (12, "episode:12"), ("Episode:007", "episode:7"),
                                       ("fact: Bridge ", "fact:bridge"), ("fact:Backup_Job", "fact:backup job"),
                                       ("entity:Host:gw-02", "entity:host:gw-02")])
def test_items_are_named_canonically(raw, node):
    assert parse(raw) == node


@pytest.mark.parametrize("raw", ["", "  ", "episode:", "episode:x", "episode:0", "thing:1", "entity:host", True,
                                 "fact:a\nb", None])
def test_malformed_items_are_refused(raw):
    with pytest.raises(InvalidInput):
        parse(raw)


GRAPH = {"A": [("B", 10.0), ("D", 1.0)], "B": [("A", 10.0), ("C", 5.0)], "C": [("B", 5.0), ("E", 10.0)],
         "D": [("A", 1.0)], "E": [("C", 10.0)]}


def lookup(nodes, floors=None, graph=GRAPH):
    return {n: [(o, w, "edge") for o, w in graph.get(n, [])] for n in nodes}


def test_spread_multiplies_normalised_weights_along_paths_and_honours_threshold_and_depth():
    got = {r.node: (round(r.activation, 6), r.depth, r.path) for r in
           spread(["A"], lookup, depth=2, threshold=0.15, cap=10.0, fan_out=False)}
    assert got == {"B": (1.0, 1, ("A", "B")), "C": (0.5, 2, ("A", "B", "C"))}
    deeper = {r.node: r.activation for r in spread(["A"], lookup, depth=3, threshold=0.05, cap=10.0, fan_out=False)}
    assert deeper == pytest.approx({"B": 1.0, "C": 0.5, "D": 0.1, "E": 0.5})


def test_fan_out_normalisation_divides_by_the_root_of_a_nodes_degree():
    got = {r.node: r.activation for r in spread(["A"], lookup, depth=1, threshold=0.01, cap=10.0, fan_out=True)}
    assert got == pytest.approx({"B": 1 / math.sqrt(2), "D": 0.1 / math.sqrt(2)})


def test_a_spread_follows_an_edge_exactly_when_its_strength_reaches_the_threshold():
    assert strength(1.0, 10.0) == 0.1 and strength(25.0, 10.0) == 1.0
    graph = {"S": [("once", 1.0), ("twice", 2.0), ("at", 1.5), ("full", 10.0)]}
    for threshold in (0.1, 0.15, 0.2, 0.5):
        got = {r.node for r in spread(["S"], lambda ns, floors: lookup(ns, floors, graph), depth=1,
                                      threshold=threshold, cap=10.0, fan_out=False)}
        assert got == {o for o, w in graph["S"] if strength(w, 10.0) >= threshold}, threshold


def test_a_node_keeps_its_best_activation_and_seeds_are_not_reported():
    graph = {"S": [("X", 2.0), ("Y", 10.0)], "Y": [("S", 10.0), ("X", 9.0)], "X": [("S", 2.0), ("Y", 9.0)]}
    got = {r.node: r for r in spread(["S"], lambda ns, floors: lookup(ns, floors, graph), depth=2, threshold=0.1, cap=10.0,
                                     fan_out=False)}
    assert set(got) == {"X", "Y"}
    assert got["X"].activation == pytest.approx(0.9) and got["X"].path == ("S", "Y", "X")


@pytest.mark.parametrize("text, source, expected", [
    ("paged Ines about gw-02", None, [("host", "gw-02"), ("person", "Ines")]),
    ("mail Ops@Example.com or ping @oncall_bot", None, [("email", "ops@example.com"), ("handle", "@oncall_bot")]),
    ("runbook at https://wiki.example.com/bridge.", None, [("url", "https://wiki.example.com/bridge")]),
    ("deployed to db1.prod.example.com, not notes.txt or v1.2.3", None, [("host", "db1.prod.example.com")]),
    ("edited /etc/nginx/nginx.conf and ~/notes/todo.md", None,
     [("path", "/etc/nginx/nginx.conf"), ("path", "~/notes/todo.md")]),
    ("I went to the support group", "Caroline", [("person", "Caroline")]),
    ("restarted nginx", "shell", [("source", "shell")]),  # a program, not someone
    ("met with Marta Lopez on Monday", None, [("person", "Marta Lopez")]),
    ("lunch with The team on Friday", None, []),
    ("", None, []),
])
def test_entities_are_extracted_by_rules(text, source, expected):
    assert extract(text, source) == expected


# -- through the store ------------------------------------------------------------------------

def observe(memory, *texts):
    return [memory.observe(t)["id"] for t in texts]


def weight(memory, a, b):
    rows = memory.neighbours(a)["neighbours"]
    return next((n["weight"] for n in rows if n["node"] == b), None)


def test_commit_applies_seed_004_arithmetic_and_decay_prunes(memory):
    a, b, c = observe(memory, "bridge gw-02 down", "restarted bridge", "paged Ines")
    memory.activate([a, b, c])
    r = memory.commit_working_set()
    assert r["edges_strengthened"] == 3 and memory.working_set()["items"] == []
    assert weight(memory, a, f"episode:{b}") == 1.0
    for _ in range(11):
        memory.activate([a, b])
        memory.commit_working_set()
    assert weight(memory, a, f"episode:{b}") == 10.0
    assert weight(memory, a, f"episode:{c}") == 1.0
    d = memory.decay_web()
    assert d["pruned"] == 0 and d["decay_runs"] == 1
    assert weight(memory, a, f"episode:{b}") == pytest.approx(9.5)
    for _ in range(89):
        memory.decay_web()
    # After 90 runs: 1.0 x 0.95^90 < 0.01 is pruned, 10 x 0.95^90 = 0.099 stays.
    assert weight(memory, a, f"episode:{c}") is None
    assert weight(memory, a, f"episode:{b}") == pytest.approx(10 * 0.95 ** 90, abs=1e-6)  # shown to 6 places
    assert memory.sql("SELECT count(*) AS n FROM web_edges")[0]["n"] == 1


def test_activating_one_item_twice_makes_no_self_loop(memory):
    (a,) = observe(memory, "alone")
    memory.activate([a, a, f"episode:{a}"])
    assert memory.commit_working_set()["edges_strengthened"] == 0
    assert memory.sql("SELECT count(*) AS n FROM web_edges")[0]["n"] == 0


def test_the_working_set_evicts_the_least_recent_beyond_capacity(memory, monkeypatch):
    ids = observe(memory, *[f"note {i}" for i in range(9)])
    clock = [1_790_000_000.0]
    monkeypatch.setattr(timeutil, "now", lambda: clock[0])
    for i in ids:
        clock[0] += 1
        r = memory.activate([i])
    assert r["evicted"] == [f"episode:{ids[1]}"]
    assert [c["node"] for c in memory.working_set()["items"]] == [f"episode:{i}" for i in ids[2:]]


def test_an_idle_working_set_is_committed_by_the_next_activation(memory, monkeypatch):
    a, b, c = observe(memory, "one", "two", "three")
    clock = [1_790_000_000.0]
    monkeypatch.setattr(timeutil, "now", lambda: clock[0])
    memory.activate([a, b])
    clock[0] += 1801  # web.context_ttl_seconds defaults to 1800
    assert memory.working_set()["expired"]
    r = memory.activate([c])
    assert r["expired_commit"]["reason"] == "expired" and r["expired_commit"]["edges_strengthened"] == 1
    assert [i["node"] for i in r["context"]] == [f"episode:{c}"]
    assert weight(memory, a, f"episode:{b}") == 1.0


def test_recalls_feed_their_best_hits_to_the_working_set(memory):
    observe(memory, "bridge gw-02 down", "bridge gw-02 restarted", "bridge gw-02 flapping", "bridge gw-02 stable",
            "lunch order")
    r = memory.recall("bridge gw-02", mode="fast", k=5)
    assert len(r["working_set"]["activated"]) == 3
    items = memory.working_set()["items"]
    assert [i["node"] for i in items] == sorted(f"episode:{h['id']}" for h in r["hits"][:3])
    assert {i["source"] for i in items} == {f"recall:{r['recall_id']}"}


def test_spread_over_stored_edges_leaves_out_archived_memories_unless_asked(memory):
    a, b, c = observe(memory, "alpha", "beta", "gamma")
    for _ in range(5):
        memory.activate([a, b])
        memory.commit_working_set()
    for _ in range(10):
        memory.activate([b, c])
        memory.commit_working_set()
    r = memory.spread(a)
    assert [(n["node"], n["activation"]) for n in r["reached"]] == [(f"episode:{b}", 0.5), (f"episode:{c}", 0.5)]
    assert r["reached"][1]["path"] == [f"episode:{a}", f"episode:{b}", f"episode:{c}"]
    memory.forget(c)
    assert [n["node"] for n in memory.spread(a)["reached"]] == [f"episode:{b}"]
    assert memory.spread(a, include_archived=True)["reached"][1]["state"] == "archived"
    assert memory.spread(c)["warnings"] == [f"episode:{c} is archived; spreading from it anyway"]
    assert [n["node"] for n in memory.related(c)["reached"]] == [f"episode:{b}", f"episode:{a}"]


def test_neighbours_and_related_agree_on_which_edges_count(memory):
    """`web neighbors` marks each edge with the strength a spread reads it by and whether a
    spread follows it; `related` reaches exactly the followed ones in one hop and counts the
    others as left out, with the strongest of them."""
    hub, *others = observe(memory, "hub", "once-1", "once-2", "twice", "thrice", "linked", "both")
    once_1, once_2, twice, thrice, linked, both = others
    for group in ([hub, once_1, once_2, twice, thrice, both], [hub, twice, thrice], [hub, thrice]):
        memory.activate(group)
        memory.commit_working_set()
    memory.link(hub, linked, "supports")
    memory.link(both, hub, "related")  # an edge of 1.0 and a link: the link carries it
    for threshold in (None, 0.1, 0.25, 0.6):
        n = memory.neighbours(hub, threshold=threshold)
        r = memory.related(hub, depth=1, threshold=threshold, limit=100)
        assert n["threshold"] == r["threshold"]
        edges = {e["node"]: e for e in n["neighbours"]}
        links = {(k["dst"] if k["src"] == f"episode:{hub}" else k["src"]): k for k in n["links"]}
        for e in (*edges.values(), *links.values()):
            assert e["followed"] is (e["strength"] >= n["threshold"])
        followed = {o for o, e in (*edges.items(), *links.items()) if e["followed"]}
        assert {x["node"] for x in r["reached"]} == followed, threshold
        weak = [e["strength"] for e in (*edges.values(), *links.values()) if not e["followed"]]
        assert r["left_out"] == {"below_threshold": len(weak), "strongest": max(weak) if weak else None}, threshold
    n = memory.neighbours(hub)
    assert {e["node"]: (e["weight"], e["strength"], e["followed"]) for e in n["neighbours"]} == {
        f"episode:{once_1}": (1.0, 0.1, False), f"episode:{once_2}": (1.0, 0.1, False),
        f"episode:{both}": (1.0, 0.1, False), f"episode:{twice}": (2.0, 0.2, True),
        f"episode:{thrice}": (3.0, 0.3, True)}
    assert [(k["strength"], k["followed"]) for k in n["links"]] == [(0.5, True), (0.5, True)]
    reached = {x["node"] for x in memory.related(hub)["reached"]}
    assert f"episode:{both}" in reached and f"episode:{once_1}" not in reached  # the link carries `both`


def test_facts_are_nodes(memory):
    memory.set_fact("Bridge", "DOWN")
    (a,) = observe(memory, "bridge alarm")
    memory.activate(["fact:bridge", a])
    memory.commit_working_set()
    assert memory.neighbours("fact:BRIDGE")["neighbours"][0]["node"] == f"episode:{a}"


def test_texts_say_what_each_node_holds(memory):
    memory.set_fact("Bridge", "DOWN")
    (a,) = observe(memory, "paged Ines about gw-02")
    ent = next(link["dst"] for link in memory.neighbours(a)["links"] if link["dst"].startswith("entity:"))
    memory.retract_fact("bridge")
    texts = memory.node_texts([a, "fact:BRIDGE", ent, "episode:999"])
    assert texts == {f"episode:{a}": "paged Ines about gw-02", "fact:bridge": "Bridge = (retracted)",
                     ent: ent.split(":", 2)[2], "episode:999": None}


@pytest.mark.parametrize("call, error", [
    (lambda m: m.activate([999]), NotFound), (lambda m: m.activate(["fact:nothing"]), NotFound),
    (lambda m: m.activate([]), InvalidInput), (lambda m: m.spread(1, depth=0), InvalidInput),
    (lambda m: m.spread(1, depth=6), InvalidInput), (lambda m: m.spread(1, threshold=0), InvalidInput),
    (lambda m: m.spread(1, threshold=1.5), InvalidInput), (lambda m: m.neighbours("entity:host:x"), NotFound),
])
def test_bad_web_input_is_refused_and_changes_nothing(memory, call, error):
    observe(memory, "one")
    with pytest.raises(error):
        call(memory)
    assert memory.working_set()["items"] == []


def test_namespaces_cannot_touch_each_others_web(home):
    import asyncio

    from strata_daemon import Memory

    async def go():
        async with await Memory.open(home, agent="alice") as a, await Memory.open(home, agent="bob") as b:
            x, y = (await a.observe("alice one"))["id"], (await a.observe("alice two"))["id"]
            await a.activate([x, y])
            await a.commit_working_set()
            with pytest.raises(NotFound):
                await b.activate([x])
            with pytest.raises(NotFound):
                await b.spread(x)
            assert (await b.working_set())["items"] == []
            await b.decay_web()
            assert (await a.neighbours(x))["neighbours"][0]["weight"] == 1.0
    asyncio.run(go())


def test_an_entity_named_many_times_in_one_batch_counts_every_mention(memory):
    memory.observe("paged Ines about gw-02")
    memory.observe_many([{"content": f"gw-02 check {i} by db-7", "at": 1_790_000_000 + i} for i in range(30)]
                        + [{"content": "db-7 vacuum done", "at": 1_790_000_100}])
    counts = {e["node"]: e["mentions"] for e in memory.entities()}
    assert counts["entity:host:gw-02"] == 31 and counts["entity:host:db-7"] == 31
    assert memory.sql("SELECT count(*) AS n FROM web_links WHERE dst = 'entity:host:gw-02'")[0]["n"] == 31


def test_purging_a_memory_removes_its_edges_links_and_the_entities_only_it_mentioned(memory):
    a, b = observe(memory, "keep gw-02", "purge me, gw-02 and db-7")
    memory.activate([a, b])
    memory.commit_working_set()
    memory.forget(b, purge=True)
    assert memory.sql("SELECT count(*) AS n FROM web_edges")[0]["n"] == 0
    assert [e["node"] for e in memory.entities()] == ["entity:host:gw-02"]
    assert memory.entities()[0]["mentions"] == 1
    assert memory.sql("SELECT src, dst FROM web_links") == [{"src": f"episode:{a}", "dst": "entity:host:gw-02"}]


def test_memories_sharing_an_entity_reach_each_other_through_it(memory):
    a, b, c = observe(memory, "paged Ines about gw-02", "gw-02 rebooted", "lunch order")
    r = memory.spread(a)
    assert {n["node"]: n["activation"] for n in r["reached"]} == {
        "entity:host:gw-02": 0.5, "entity:person:Ines": 0.5, f"episode:{b}": 0.25}
    hop = next(n for n in r["reached"] if n["node"] == f"episode:{b}")
    assert hop["path"] == [f"episode:{a}", "entity:host:gw-02", f"episode:{b}"] and hop["via"] == "mentions"
    assert [n["node"] for n in memory.related("entity:host:gw-02")["reached"]] == [f"episode:{a}", f"episode:{b}"]


def test_captured_facts_are_linked_to_the_memory_that_set_them(memory):
    (a,) = observe(memory, "Bridge: DOWN")
    assert memory.neighbours("fact:bridge")["links"][0]["src"] == f"episode:{a}"


def test_typed_links_are_directed_refuse_self_links_and_can_be_removed(memory):
    a, b = observe(memory, "old runbook", "new runbook")
    assert memory.link(b, a, "supersedes")["status"] == "created"
    assert memory.link(b, a, "supersedes")["status"] == "exists"
    assert [n["node"] for n in memory.spread(a)["reached"]] == [f"episode:{b}"]  # followed both ways
    with pytest.raises(InvalidInput, match="itself"):
        memory.link(a, a, "related")
    with pytest.raises(InvalidInput, match="unknown link type"):
        memory.link(a, b, "likes")
    with pytest.raises(NotFound):
        memory.link(a, 999, "related")
    assert memory.link(b, a, "supersedes", remove=True)["status"] == "removed"
    assert memory.spread(a)["reached"] == []


# -- processes --------------------------------------------------------------------------------

ACTIVATE_AND_HANG = """
import asyncio, sys, time
from strata_daemon import Memory
async def go():
    mem = await Memory.open(sys.argv[1])
    await mem.activate([int(i) for i in sys.argv[2:]])
    print("activated", flush=True)
    time.sleep(600)
asyncio.run(go())
"""


def test_a_process_killed_between_activation_and_commit_loses_nothing(home, memory):
    a, b = observe(memory, "first", "second")
    proc = subprocess.Popen([sys.executable, "-c", ACTIVATE_AND_HANG, str(home), str(a), str(b)],
                            stdout=subprocess.PIPE, cwd=REPO, env={**os.environ})
    try:
        assert proc.stdout.readline().decode().strip() == "activated"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert [i["node"] for i in memory.working_set()["items"]] == [f"episode:{a}", f"episode:{b}"]
    assert memory.commit_working_set()["edges_strengthened"] == 1
    assert weight(memory, a, f"episode:{b}") == 1.0


@pytest.mark.parametrize("command", [("web", "spread"), ("web", "neighbors"), ("web", "decay"), ("link",),
                                     ("related",)])
def test_the_help_names_each_tuned_constant_as_experimental_takes_it(cli, command):
    """`web.edge_cap` and its kin were renamed `graph.*` when they became tuned constants: a
    name the help gives must be one an `[experimental]` line accepts."""
    import dataclasses
    import re

    text = " ".join(cli(*command, "--help", check=True).out.split())
    named = re.findall(r"\b(web|graph)\.([a-z_]+)", text)
    constants = {f.name for f in dataclasses.fields(Graph)}
    assert named and [(s, n) for s, n in named if s != "graph" or n not in constants] == []


def test_strata_web_commands(cli):
    ids = [json.loads(cli("observe", t, "--json", check=True).out)["id"] for t in ("one", "two", "three")]
    cli("web", "activate", *map(str, ids), check=True)
    committed = json.loads(cli("web", "commit", "--json", check=True).out)
    assert committed["edges_strengthened"] == 3 and committed["reason"] == "committed"
    assert json.loads(cli("web", "commit", "--json", check=True).out)["reason"] == "empty"  # as the text says
    cli("observe", "restarted nginx on web-01", check=True)
    assert [e["value"] for e in json.loads(cli("web", "entities", "--type", "hosts", "--json", check=True).out)] == [
        "web-01"]  # a plural is the type
    refused = cli("web", "entities", "--type", "machine")  # said, not an empty list
    assert refused.returncode == 4 and "one of: person, handle, email, url, host, path" in refused.err
    cli("web", "activate", str(ids[0]), str(ids[1]), check=True)
    assert "co-activated 2 items: 1 edge strengthened" in cli("web", "commit", check=True).out
    out = json.loads(cli("web", "spread", str(ids[0]), "--threshold", "0.05", "--json", check=True).out)
    assert [(n["node"], n["activation"]) for n in out["reached"]] == [(f"episode:{ids[1]}", 0.2),
                                                                     (f"episode:{ids[2]}", 0.1)]
    assert "2.000     0.200  episode:" in cli("web", "neighbors", str(ids[0]), check=True).out
    assert "created" in cli("link", str(ids[0]), str(ids[2]), "--type", "supports", check=True).out
    assert json.loads(cli("link", str(ids[0]), str(ids[2]), "--type", "supports", "--json", check=True).out)[
        "status"] == "exists"
    assert cli("link", str(ids[0]), str(ids[0])).returncode == 4
    assert json.loads(cli("web", "decay", "--json", check=True).out)["decay_runs"] == 1
    missing = cli("web", "spread", "999")
    assert missing.returncode == 3 and "no memory 999 in namespace" in missing.err
    bad = cli("web", "spread", str(ids[0]), "--depth", "9")
    assert bad.returncode == 4 and "depth must be" in bad.err


def test_related_says_what_it_left_out_where_neighbors_shows_the_edges(cli):
    """The issue's case on a real home: memories used together once are neighbours at weight
    1.0, strength 0.1, below the threshold; `related` says so instead of only "nothing"."""
    ids = [json.loads(cli("observe", f"note {i} on the bridge", "--json", check=True).out)["id"] for i in range(7)]
    cli("web", "activate", *map(str, ids), check=True)
    cli("web", "commit", check=True)
    seed = f"episode:{ids[0]}"
    related = cli("related", str(ids[0]), check=True).out
    assert "nothing above the threshold" in related
    assert f"left out: 6 edges of {seed} weaker than the threshold" in related and "the strongest 0.100" in related
    assert f"`strata web neighbors {seed}` lists them; --threshold 0.1 follows them" in related
    neighbors = cli("web", "neighbors", seed, check=True).out
    assert "follow a strength of 0.15 or more (6 below)" in neighbors
    assert neighbors.count("1.000     0.100  episode:") == neighbors.count("below the threshold") == 6
    assert len(cli.json("related", str(ids[0]), "--threshold", "0.1")["reached"]) == 6
    cli("web", "activate", str(ids[0]), str(ids[1]), check=True)
    cli("web", "commit", check=True)
    again = cli.json("related", str(ids[0]))
    assert [n["node"] for n in again["reached"]] == [f"episode:{ids[1]}"]
    assert again["left_out"] == {"below_threshold": 5, "strongest": 0.1}
    marked = {e["node"]: e["followed"] for e in cli.json("web", "neighbors", seed)["neighbours"]}
    assert [n for n, followed in marked.items() if followed] == [f"episode:{ids[1]}"]


# -- deep recall -------------------------------------------------------------------------------

def test_deep_relevance_weighs_retrieval_graph_and_association_then_scales_to_the_best():
    from strata_daemon.recall.deep import combine, seeds_of
    from strata_daemon.recall.fusion import Candidate

    a, b = Candidate({"id": 1}, relevance=1.0), Candidate({"id": 2}, relevance=0.4)
    assert seeds_of([b, a], 1) == [1]
    reached = {2: {"activation": 0.5, "path": ["episode:1", "entity:host:x", "episode:2"], "via": "mentions"},
               3: {"activation": 0.25, "path": ["episode:1", "episode:3"], "via": "edge"},
               4: {"activation": 0.9, "path": ["episode:1", "episode:4"], "via": "edge"}}
    out = {c.row["id"]: c for c in combine([a, b], reached, {3: (0.8, 1)}, {3: {"id": 3}}, Recall())}
    assert set(out) == {1, 2, 3}  # 4 is outside the recall's scope (no row)
    raw = {1: 0.5, 2: 0.5 * 0.4 + 0.2 * 0.5, 3: 0.2 * 0.25 + 0.1 * 0.8}
    assert {i: c.relevance for i, c in out.items()} == pytest.approx({i: v / 0.5 for i, v in raw.items()})
    assert out[3].retrievers == {"graph": {"activation": 0.25, "path": ["episode:1", "episode:3"], "via": "edge"},
                                 "hebbian": {"weight": 0.8, "with": 1}}


def test_deep_recall_reaches_memories_through_entities_and_edges_and_explains_the_path(memory):
    # Full text and the graph only: a memory found by meaning or a second hop would be a seed, not reached.
    memory.reconfigure(overlay(memory.config, {"recall.embed_waiting": 0, "recall.hop_weight": 0}))
    a, b, c, _ = observe(memory, "the bridge on gw-02 went down during the night",
                         "rebooted gw-02 at noon", "ordered new fans for the rack", "lunch order for friday")
    for _ in range(6):
        memory.activate([a, c])
        memory.commit_working_set()
    balanced = memory.recall("bridge outage", mode="balanced", k=10)
    deep = memory.recall("bridge outage", mode="deep", k=10)
    assert deep["mode_used"] == "deep" and deep["hits"][0]["id"] == a
    by_id = {h["id"]: h for h in deep["hits"]}
    assert by_id[b]["explain"]["retrievers"]["graph"] == {
        "activation": 0.25, "path": [f"episode:{a}", "entity:host:gw-02", f"episode:{b}"], "via": "mentions"}
    assert by_id[c]["explain"]["retrievers"]["hebbian"] == {"weight": 0.6, "with": a}
    assert by_id[c]["explain"]["retrievers"]["graph"]["via"] == "edge"
    before = {h["id"]: h["rank"] for h in balanced["hits"]}
    assert c not in before or by_id[c]["rank"] < before[c]
