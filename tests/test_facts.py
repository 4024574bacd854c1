"""Persistent facts: keys, rules and ranking as pure functions; the store through real SQLite;
CAS races between real processes; the `strata fact` command in subprocesses."""

from __future__ import annotations

import asyncio
import multiprocessing
import time

import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.app import wiring
from strata_daemon.config.load import load_config
from strata_daemon.config.settings import KINDS
from strata_daemon.errors import CasMismatch, ConfigError, InvalidInput, NotFound
from strata_daemon.facts import ranking
from strata_daemon.facts.keys import Source, clean_value, normalise_key, parse_duration
from strata_daemon.facts.rules import capture, compile_rules

T0 = 1_790_000_000.0  # a fixed past time: 2026-09-21


# -- pure ------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", ["Bridge", " BRIDGE: ", "bridge", "ＢＲＩＤＧＥ"])
def test_keys_ignore_case_width_and_a_trailing_colon(raw):
    assert normalise_key(raw) == "bridge"


def test_keys_treat_spacing_underscores_and_hyphens_alike():
    assert {normalise_key(k) for k in ("backup job", "Backup_Job", "backup-job", "backup \t job")} == {"backup job"}


def test_a_hyphen_or_underscore_before_a_digit_keeps_a_name_whole(cli):
    assert {normalise_key(k) for k in ("db-01 disk usage", "DB_01 Disk Usage", "db--01 disk-usage")} == {
        "db-01 disk usage"}
    assert normalise_key("2026-11-28") == "2026-11-28" and normalise_key("v2-beta") == "v2 beta"
    cli("fact", "set", "db-01 disk usage", "91%", check=True)
    assert "db-01 disk usage = 91%" in cli("fact", "list", check=True).out
    assert cli.json("fact", "get", "DB_01 disk usage")["value"] == "91%"
    cli("observe", "gw-02 status: DOWN", check=True)
    cli("fold", check=True)
    named = cli.json("recall", "Is gw-02 healthy?", "--mode", "fast")["facts"]
    assert [(f["key"], f["value"]) for f in named] == [("gw-02", "DOWN")]  # a thing's own state: its name


@pytest.mark.parametrize("raw, message", [("", "empty"), ("   ", "empty"), (":", "empty"), ("a\nb", "line break"),
                                          ("x" * 201, "limit is 200"), ("a\x07", "control")])
def test_bad_keys_are_refused_with_a_reason(raw, message):
    with pytest.raises(InvalidInput, match=message):
        normalise_key(raw)


def test_values_keep_line_breaks_and_refuse_empty_control_and_huge():
    assert clean_value("  line one\r\nline two  ", 100) == "line one\nline two"
    for bad, message in (("", "empty"), (" \n ", "empty"), ("a\x00b", "U\\+0000"), ("é" * 60, "120 bytes")):
        with pytest.raises(InvalidInput, match=message):
            clean_value(bad, 100)


def test_sources_and_durations_parse_or_explain():
    assert str(Source.parse("episode:42", default=Source("person"))) == "episode:42"
    assert Source.parse(None, default=Source("person", "cli")) == Source("person", "cli")
    with pytest.raises(InvalidInput, match="unknown source kind"):
        Source.parse("telepathy:x", default=Source("person"))
    with pytest.raises(InvalidInput, match="episode id"):
        Source.parse("episode:abc", default=Source("person"))
    assert parse_duration("90") == 90 and parse_duration("2h") == 7200 and parse_duration("none") is None
    with pytest.raises(InvalidInput):
        parse_duration("soon")


def test_the_status_line_rule_reads_status_lines_and_leaves_prose_alone():
    rules = compile_rules({}, KINDS)
    got = capture(rules, "Bridge: DOWN", "observation")
    assert [(c.key, c.value, c.rule) for c in got] == [("bridge", "DOWN", "status-line")]
    report = "Nightly report\nBackup job: failed\nDisk usage: 81%\nBackup job: retried, ok"
    assert [(c.key, c.value) for c in capture(rules, report, "observation")] == [
        ("disk usage", "81%"), ("backup job", "retried, ok")]
    for text in ("meeting at 10:30 with Joel", "see https://example.org/x", "Note: call Joel tomorrow",
                 "A very long sentence with many words before the colon: value"):
        assert capture(rules, text, "observation") == [], text
    assert capture(rules, "Bridge: DOWN", "lesson") == []  # not one of the rule's kinds
    assert capture(rules, "\n".join(["Bridge: DOWN"] + ["prose"] * 30), "observation") == []
    # A thing of the key, then its state: the thing's own key, the state its value.
    for text, key, value in (("Host B: bridge back UP", "host b bridge", "UP"),
                             ("Host A: bridge is UP again", "host a bridge", "UP"),
                             ("Car: battery low", "car battery", "low"),
                             ("Kids: both asleep", "kids", "both asleep"),
                             ("Deploy: rolled back", None, None)):
        assert [(c.key, c.value) for c in capture(rules, text, "observation")] == ([(key, value)] if key else []), text


def test_host_a_and_host_b_are_two_things_dana_and_dana_whitfield_one():
    from strata_daemon.facts.subjects import same_subject

    assert not same_subject("Host A", "Host B") and not same_subject("Host A bridge", "bridge")
    assert not same_subject("Host", "Host B") and not same_subject("Server 2", "Server")
    assert same_subject("Dana", "Dana Whitfield") and same_subject("the billing-api service", "billing-api")
    assert same_subject("a bridge", "bridge")


def test_configured_rules_overlay_the_built_in_one():
    rules = compile_rules({"status-line": {"enabled": False},
                           "temp": {"pattern": r"temperature is (?P<value>-?\d+) ?C", "key": "Server room temp"}},
                          KINDS)
    assert [r.name for r in rules] == ["temp"]
    assert [(c.key, c.value) for c in capture(rules, "Bridge: DOWN. The temperature is 24 C", "note")] == [
        ("server room temp", "24")]


@pytest.mark.parametrize("spec, message", [
    ({"pattern": "(?P<key>x)(?P<value>["}, "not a valid regular expression"),
    ({"pattern": "(?P<key>x)"}, "named group `value`"),
    ({"pattern": "(?P<key>x)(?P<value>y)", "key": "fixed"}, "not both"),
    ({"pattern": "(?P<value>y)"}, "either with a group"),
    ({"pattern": "(?P<value>y)", "key": "k", "kinds": ["dream"]}, "unknown kind 'dream'"),
    ({"pattern": "(?P<value>y)", "key": "k", "colour": "red"}, "unknown field 'colour'"),
    ({"pattern": "(?P<value>y)", "key": "k", "confidence": 2}, "between 0 and 1"),
])
def test_a_broken_rule_is_named_in_a_config_error(spec, message):
    with pytest.raises(ConfigError, match=f"capture rule 'mine'.*{message}"):
        compile_rules({"mine": spec}, KINDS)


def test_a_broken_rule_fails_when_the_config_loads(home):
    write_config(home, '[facts.rules.mine]\npattern = "(?P<value>["\nkey = "k"\n')
    with pytest.raises(ConfigError, match="capture rule 'mine'"):
        wiring.check(load_config(home / "strata.toml"))  # fact capture checks the rules it is handed


def test_capsule_ranking_weighs_importance_against_fresh_change():
    now = T0
    facts = [{"key": "old but vital", "value": "x", "importance": 1.0, "valid_from": now - 90 * 86400},
             {"key": "fresh minor", "value": "x", "importance": 0.1, "valid_from": now - 60},
             {"key": "stale minor", "value": "x", "importance": 0.1, "valid_from": now - 30 * 86400},
             {"key": "retracted", "value": None, "importance": 1.0, "valid_from": now}]
    ranked = ranking.for_capsule(facts, now, limit=2)
    assert [f["key"] for f in ranked] == ["old but vital", "fresh minor"]
    assert ranked[0]["capsule_score"] > ranked[1]["capsule_score"]
    assert ranking.for_capsule(facts, now, limit=0) == []


# -- the store, through Memory and real SQLite --------------------------------------------------

@pytest.fixture
def mem(home):
    runner = asyncio.Runner()
    m = runner.run(Memory.open(home))

    class Facts:
        raw = m

        def __getattr__(self, name):
            return lambda *a, **kw: runner.run(getattr(m.layers.facts, name)(*a, **kw))

        def run(self, coro):
            return runner.run(coro)

    yield Facts()
    runner.run(m.close())
    runner.close()


def test_updates_keep_history_and_answer_as_of_any_time(mem):
    for i, value in enumerate(("DOWN", "UP", "DEGRADED")):
        mem.set("bridge", value, at=T0 + i * 3600)
    assert mem.get("Bridge")["value"] == "DEGRADED"
    assert mem.get("bridge", at=T0 + 1800)["value"] == "DOWN"
    assert mem.get("bridge", at=T0 + 3600)["value"] == "UP"
    with pytest.raises(NotFound, match="had no value"):
        mem.get("bridge", at=T0 - 1)
    h = mem.history("BRIDGE")
    assert [(r["value"], r["valid_from"], r["valid_to"], r["current"]) for r in h["history"]] == [
        ("DOWN", T0, T0 + 3600, False), ("UP", T0 + 3600, T0 + 7200, False), ("DEGRADED", T0 + 7200, None, True)]


def test_a_late_older_value_lands_in_history_without_displacing_the_current_one(mem):
    mem.set("bridge", "UP", at=T0 + 600)
    late = mem.set("bridge", "DOWN", at=T0)
    assert late["status"] == "recorded" and late["current"] is False and late["conflict"]["late"] is True
    assert mem.get("bridge")["value"] == "UP"
    assert mem.get("bridge", at=T0 + 300)["value"] == "DOWN"
    assert [r["value"] for r in mem.history("bridge")["history"]] == ["DOWN", "UP"]


def test_known_at_answers_as_strata_knew_it_then(mem):
    mem.set("owner", "alice", at=T0)
    before_correction = time.time()
    time.sleep(0.01)
    mem.set("owner", "bob", at=T0 + 10)  # learned now, true since T0 + 10
    assert mem.get("owner", at=T0 + 20)["value"] == "bob"
    assert mem.get("owner", at=T0 + 20, known_at=before_correction)["value"] == "alice"


def test_multi_line_values_round_trip_and_keys_differing_in_case_or_spacing_are_one(mem):
    mem.set("Postal Address", "1 Quay Street\r\nDublin")
    mem.set("postal_address", "2 Quay Street\nDublin")
    assert mem.get("POSTAL  ADDRESS")["value"] == "2 Quay Street\nDublin"
    assert [f["label"] for f in mem.list()] == ["Postal Address"]
    with pytest.raises(InvalidInput, match="limit is 4096"):
        mem.set("essay", "x" * 5000)
    with pytest.raises(InvalidInput, match="empty"):
        mem.set("  ", "x")


def test_the_same_value_again_confirms_without_new_history(mem):
    mem.set("bridge", "UP", at=T0)
    again = mem.set("BRIDGE ", "UP", at=T0 + 60)
    assert again["status"] == "confirmed" and again["conflict"] is None
    assert len(mem.history("bridge")["history"]) == 1
    assert mem.get("bridge")["confirmed_at"] == T0 + 60


def test_retract_then_set_again(mem):
    mem.set("deploy lock", "held by ci", at=T0)
    assert mem.retract("deploy lock", at=T0 + 10)["status"] == "retracted"
    with pytest.raises(NotFound, match="retracted"):
        mem.get("deploy lock")
    assert mem.list() == []
    assert mem.set("deploy lock", "held by alice", at=T0 + 20)["status"] == "changed"
    assert mem.get("deploy lock")["value"] == "held by alice"
    assert [r["value"] for r in mem.history("deploy lock")["history"]] == ["held by ci", None, "held by alice"]
    with pytest.raises(NotFound, match="no value to retract"):
        mem.retract("never set")


def test_a_preview_says_what_the_write_then_does_and_writes_nothing(mem):
    from strata_daemon.store import facts as store

    db, agent, now = mem.raw.db, mem.raw.agent, T0 + 1000
    steps = [("Bridge", "DOWN", T0, "created"), ("bridge", "DOWN", T0 + 60, "confirmed"),
             ("BRIDGE", "UP", T0 + 120, "changed"), ("bridge", "FLAPPING", T0 + 30, "recorded"),
             ("bridge", "SOON", T0 + 5000, "recorded"), ("bridge", None, T0 + 180, "retracted"),
             ("bridge", None, T0 + 190, "unchanged"), ("kettle", "on", None, "created")]
    for label, value, at, status in steps:
        a = store.Assertion(label=label, value=value, valid_from=at, source=Source("person"), importance=None)
        count = mem.run(db.scalar("SELECT count(*) FROM fact_values"))
        seen = mem.run(db.run(lambda c: store.preview(c, agent, normalise_key(label), a, now=now)))
        assert mem.run(db.scalar("SELECT count(*) FROM fact_values")) == count
        done = mem.run(db.transact(lambda c: store.write(c, agent, normalise_key(label), a, actor="test", now=now,
                                                         window=600)))
        assert seen["status"] == done["status"] == status
        assert {k: seen[k] for k in ("key", "previous", "current", "valid_from")} == \
               {k: done[k] for k in ("key", "previous", "current", "valid_from")}
        listed = {f["key"]: f for f in mem.run(db.run(lambda c: store.listing(c, agent, now=now)))}
        if seen["current"] and status in ("created", "changed"):  # the listing shows the new value as previewed
            assert {k: listed[seen["key"]][k] for k in ("label", "value", "importance", "valid_from")} == \
                   {k: seen[k] for k in ("label", "value", "importance", "valid_from")}
    with pytest.raises(NotFound, match="no value to retract"):
        mem.run(db.run(lambda c: store.preview(c, agent, "never set",
                                               store.Assertion("never set", None, None, Source("person")), now=now)))


def test_a_status_going_up_and_down_over_days_is_history_not_a_conflict(mem):
    for day, value in enumerate(("UP", "DOWN", "UP", "DOWN")):
        mem.run(mem.raw.observe(f"Bridge: {value}", at=T0 + day * 86400))  # each memory a source of its own
    assert [r["value"] for r in mem.history("bridge")["history"]] == ["UP", "DOWN", "UP", "DOWN"]
    assert mem.conflicts() == [] and mem.conflicts(flagged=True) == []
    changes = mem.run(mem.raw.db.fetchall("SELECT flagged FROM fact_conflicts"))
    assert [c["flagged"] for c in changes] == [0, 0, 0]  # every change is still recorded, as history


def test_one_source_changing_its_value_within_minutes_is_a_correction_not_a_conflict(mem):
    first = mem.set("bridge", "UP", at=T0, source="agent:monitor")
    fixed = mem.set("bridge", "DOWN", at=T0 + 60, source="agent:monitor")
    assert first["conflict"] is None and fixed["conflict"]["flagged"] is False and mem.conflicts() == []


def test_two_sources_disagreeing_within_minutes_are_a_conflict(mem):
    mem.set("bridge", "UP", at=T0, source="person:ines")
    near = mem.set("bridge", "DOWN", at=T0 + 300, source="agent:monitor")  # inside the 600 s window
    far = mem.set("bridge", "UP", at=T0 + 7200, source="person:ines")
    assert near["conflict"] == {"id": near["conflict"]["id"], "flagged": True, "reason": "disagree", "late": False}
    assert far["conflict"]["flagged"] is False
    (c,) = mem.conflicts()
    assert (c["reason"], c["old"]["value"], c["new"]["value"]) == ("disagree", "UP", "DOWN")
    assert (c["old"]["source"], c["new"]["source"]) == ("person:ines", "agent:monitor")
    assert (c["old"]["valid_from"], c["new"]["valid_from"]) == (T0, T0 + 300)
    mem.acknowledge(c["id"])
    assert mem.conflicts(flagged=True) == [] and mem.conflicts()[0]["acknowledged_at"] is not None
    with pytest.raises(NotFound):
        mem.acknowledge(999)
    with pytest.raises(NotFound, match="no fact conflict"):  # a change two hours later is history, no conflict
        mem.acknowledge(far["conflict"]["id"])


def test_two_memories_disagreeing_within_minutes_are_a_conflict(mem):
    mem.run(mem.raw.observe("Bridge: DOWN (ETIMEDOUT from gw-01)", at=T0))
    mem.run(mem.raw.observe("Bridge: UP (latency 40 ms)", at=T0 + 240))
    (c,) = mem.conflicts()
    assert c["reason"] == "disagree" and c["old"]["source"] != c["new"]["source"]


def test_a_person_setting_a_fact_over_what_a_memory_said_corrects_it(mem):
    # The README's quickstart: an observation says DOWN, a person sets UP. It printed a conflict.
    mem.run(mem.raw.observe("Bridge: DOWN", at=T0))
    fixed = mem.set("bridge", "UP", at=T0 + 60, source="person:alice")
    assert fixed["conflict"]["flagged"] is False and mem.conflicts() == []
    # Two people, or a memory after a person, still disagree.
    other = mem.set("bridge", "DOWN", at=T0 + 120, source="person:bob")
    assert other["conflict"]["reason"] == "disagree"
    mem.run(mem.raw.observe("Bridge: UP", at=T0 + 180))
    assert [c["new"]["source"].split(":")[0] for c in mem.conflicts()] == ["episode", "person"]


def test_a_late_arriving_older_value_is_a_conflict_and_one_that_agrees_is_not(mem):
    mem.set("bridge", "DOWN", at=T0 - 86400, source="agent:monitor")
    mem.set("bridge", "UP", at=T0, source="agent:monitor")
    agrees = mem.set("bridge", "UP", at=T0 - 3600, source="agent:monitor")  # late, but says what followed
    late = mem.set("bridge", "FLAPPING", at=T0 - 7200, source="agent:monitor")  # late, and says otherwise
    assert agrees["conflict"]["late"] is True and agrees["conflict"]["flagged"] is False
    assert late["status"] == "recorded" and late["conflict"]["reason"] == "late"
    (c,) = mem.conflicts()
    assert (c["reason"], c["old"]["value"], c["new"]["value"], c["next"]["value"]) == ("late", "DOWN", "FLAPPING", "UP")
    assert mem.get("bridge")["value"] == "UP"


def test_a_value_set_ahead_of_time_does_not_make_the_present_one_late(mem):
    mem.set("maintenance", "scheduled", at=time.time() + 86400, source="person:ines")
    now = mem.set("maintenance", "none", source="agent:planner")
    assert now["conflict"]["late"] is True and now["conflict"]["flagged"] is False and mem.conflicts() == []


def test_the_window_is_a_setting_and_applies_to_changes_already_recorded(home, mem):
    mem.set("bridge", "UP", at=T0, source="person:ines")
    mem.set("bridge", "DOWN", at=T0 + 900, source="agent:monitor")  # 15 min: outside the default 600 s
    assert mem.conflicts() == []
    write_config(home, "[experimental]\n\"facts.conflict_window_seconds\" = 1800\n")

    async def wider():
        async with await Memory.open(home) as m:
            return await m.fact_conflicts()
    assert [c["reason"] for c in asyncio.run(wider())] == ["disagree"]


def test_cas_sets_only_over_the_expected_value(mem):
    assert mem.cas("leader", None, "node-1")["status"] == "created"
    with pytest.raises(CasMismatch) as e:
        mem.cas("leader", None, "node-2")
    assert e.value.current == "node-1" and "node-1" in e.value.message and e.value.exit_code == 9
    assert mem.cas("Leader", "node-1", "node-2")["previous"] == "node-1"
    with pytest.raises(CasMismatch):
        mem.cas("leader", "node-1", "node-3")
    assert mem.get("leader")["value"] == "node-2"


def _racer(home: str, start, index: int, results) -> None:
    async def go():
        async with await Memory.open(home, actor=f"racer{index}") as m:
            start.wait()
            try:
                await m.cas_fact("leader", "none yet", f"racer {index}")
                results.put((index, "won"))
            except CasMismatch as e:
                results.put((index, f"lost to {e.current}"))
    asyncio.run(go())


def test_of_processes_racing_a_cas_exactly_one_wins(home, mem):
    ctx = multiprocessing.get_context("spawn")
    for round_ in range(3):
        mem.set("leader", "none yet")
        start, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_racer, args=(str(home), start, i, results)) for i in range(4)]
        for p in procs:
            p.start()
        outcome = dict(results.get(timeout=60) for _ in procs)
        for p in procs:
            p.join(60)
        winners = [i for i, o in outcome.items() if o == "won"]
        assert len(winners) == 1, (round_, outcome)
        assert all(o == f"lost to racer {winners[0]}" for i, o in outcome.items() if i != winners[0])
        assert mem.get("leader")["value"] == f"racer {winners[0]}"


def test_ttl_marks_unconfirmed_facts_stale_until_confirmed(mem):
    mem.set("certificate", "valid", at=time.time() - 120, ttl="1m")
    mem.set("hostname", "gw-02")
    assert [f["key"] for f in mem.list(stale=True)] == ["certificate"]
    assert mem.get("certificate")["stale"] is True
    mem.set("certificate", "valid")  # re-confirmed now
    assert mem.list(stale=True) == [] and mem.get("certificate")["ttl_seconds"] == 60


def test_history_rows_cannot_be_deleted_or_rewritten(mem):
    mem.set("bridge", "UP", at=T0)
    for sql in ("DELETE FROM fact_values", "UPDATE fact_values SET value = 'x'"):
        with pytest.raises(Exception, match="never"):
            mem.run(mem.raw.db.transact(lambda c, s=sql: c.execute(s)))
    assert mem.get("bridge")["value"] == "UP"


def test_observations_become_facts_with_the_observation_as_source(mem):
    m = mem.raw
    first = mem.run(m.observe("Bridge: DOWN", at=T0))
    assert first["facts"][0]["status"] == "created" and first["facts"][0]["episode_id"] == first["id"]
    mem.run(m.observe("Bridge: UP", at=T0 + 120))
    fact = mem.get("bridge")
    assert fact["value"] == "UP" and fact["source"].startswith("episode:") and fact["rule"] == "status-line"
    late = mem.run(m.observe("Bridge: FLAPPING", at=T0 + 60))
    assert late["facts"][0]["status"] == "recorded" and mem.get("bridge")["value"] == "UP"
    assert mem.conflicts(flagged=True)  # DOWN, FLAPPING and UP within minutes of each other
    batch = mem.run(m.observe_many([{"content": "Disk usage: 81%", "event_at": T0},
                                    {"content": "a plain sentence", "event_at": T0}]))
    assert batch["facts_captured"] == 1 and mem.get("disk usage")["value"] == "81%"


def test_a_fact_is_found_by_the_name_its_status_line_gave_it(mem):
    """`gateway port: 8443` is captured as gateway.port and `backup owner: Priya` as backup.owner:
    `fact get`, `fact history` and `fact forget` take the name as the line said it."""
    m = mem.raw
    for text in ("gateway port: 8443", "backup owner: Priya", "The database migration ticket is MIG-42",
                 "The database migration ticket is priority P2"):
        mem.run(m.observe(text, at=T0))
    assert mem.get("gateway port")["key"] == "gateway.port"
    assert mem.get("backup owner")["key"] == "backup.owner"
    assert mem.get("the database migration ticket")["value"] == "MIG-42"  # its own key, not its one attribute
    assert mem.history("gateway port")["key"] == "gateway.port"
    planned = mem.run(m.forget_fact("backup owner"))
    assert not planned["applied"] and [f["key"] for f in planned["facts"]] == ["backup.owner"]
    mem.set("gateway port", "9000")  # a person's own key stays as written, and is found first
    assert (mem.get("gateway port")["key"], mem.get("gateway.port")["value"]) == ("gateway port", "8443")


def test_capture_can_be_switched_off(home):
    write_config(home, "[facts]\ncapture = false\n")

    async def go():
        async with await Memory.open(home) as m:
            await m.observe("Bridge: DOWN")
            return await m.list_facts()
    assert asyncio.run(go()) == []


def test_a_recall_naming_a_key_returns_the_fact_first_then_its_episodes(mem):
    m = mem.raw
    mem.run(m.observe("Bridge: DOWN", at=T0))
    up = mem.run(m.observe("Bridge: UP", at=T0 + 3600))
    for i in range(20):
        mem.run(m.observe(f"bridge maintenance note {i}: cables checked", at=T0 + 100 + i))
    r = mem.run(m.recall("is the bridge up?", mode="fast", k=5))
    assert [(f["key"], f["value"]) for f in r["facts"]] == [("bridge", "UP")]
    assert r["facts"][0]["age_seconds"] > 0
    assert r["hits"][0]["id"] == up["id"] and r["hits"][0]["explain"]["retrievers"]["fact"]["key"] == "bridge"
    assert mem.run(m.recall("cables", mode="fast"))["facts"] == []


def test_namespaces_keep_their_facts_apart(home):
    async def go():
        async with await Memory.open(home, agent="alpha") as a, await Memory.open(home, agent="beta") as b:
            await a.set_fact("bridge", "UP")
            await b.set_fact("bridge", "DOWN")
            await a.set_fact("alpha only", "x")
            with pytest.raises(NotFound):
                await b.get_fact("alpha only")
            with pytest.raises(NotFound):
                await b.fact_history("alpha only")
            with pytest.raises(CasMismatch):
                await b.cas_fact("alpha only", "x", "y")
            return ((await a.get_fact("bridge"))["value"], (await b.get_fact("bridge"))["value"],
                    [f["key"] for f in await b.list_facts()], await b.fact_conflicts())
    assert asyncio.run(go()) == ("UP", "DOWN", ["bridge"], [])


# -- the command -------------------------------------------------------------------------------

def test_fact_commands_end_to_end(cli):
    assert cli.json("fact", "set", "Bridge", "DOWN", "--at", "10m ago")["status"] == "created"
    assert cli.json("fact", "set", "bridge", "UP")["previous"] == "DOWN"
    assert cli("fact", "get", "BRIDGE", "--value-only", check=True).out == "UP\n"
    assert cli.json("fact", "get", "bridge", "--at", "5m ago")["value"] == "DOWN"
    mismatch = cli("fact", "cas", "bridge", "DOWN", "UP")
    assert mismatch.returncode == 9 and "holds 'UP'" in mismatch.err
    assert cli("fact", "cas", "bridge", "DOWN", "UP", "--json").out.count('"current": "UP"') == 1
    assert cli.json("fact", "cas", "bridge", "UP", "DEGRADED")["value"] == "DEGRADED"
    assert cli.json("fact", "cas", "--absent", "lock", "mine")["status"] == "created"
    taken = cli("fact", "cas", "--absent", "lock", "yours")
    assert taken.returncode == 9 and "'lock' already holds 'mine'; nothing changed" in taken.err, taken.err
    assert [r["value"] for r in cli.json("fact", "history", "bridge")["history"]] == ["DOWN", "UP", "DEGRADED"]
    assert {f["key"] for f in cli.json("fact", "list")} == {"bridge", "lock"}
    assert cli.json("fact", "retract", "lock")["status"] == "retracted"
    assert cli("fact", "get", "lock").returncode == 3
    assert cli.json("fact", "conflicts") == [] and cli("fact", "conflicts", check=True).out == "no conflicts\n"
    flagged = cli("fact", "set", "bridge", "DOWN", "--source", "agent:monitor", check=True).out
    assert "conflict 4: another source set a different value within facts.conflict_window_seconds" in flagged
    listed = cli("fact", "conflicts", check=True).out
    assert listed.startswith("#4 bridge  [sources disagree]\n  was  DEGRADED  (since ")
    assert ", from person:cli)\n  new  DOWN  (since " in listed and listed.endswith(", from agent:monitor)\n")
    assert cli("fact", "set", "k", "").returncode == 4
    assert cli("fact", "set", "bad", "v", "--source", "oracle").returncode == 4
    assert "Compare-and-set" in cli("fact", "--help", check=True).out
