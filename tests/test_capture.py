"""Fact capture keeps states and leaves events alone; attribute statements in sentences become
facts. Pure functions, then the labelled sets, then through a real home."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from conftest import write_config
from strata_bench.capture import SETS, held_out, labelled, score
from strata_daemon import Memory
from strata_daemon.config.settings import KINDS
from strata_daemon.errors import NotFound
from strata_daemon.facts.attributes import canonical
from strata_daemon.facts.judge import judge
from strata_daemon.facts.keys import label_of, normalise_key
from strata_daemon.facts.rules import capture, compile_rules
from strata_daemon.facts.statements import statements

RULES = compile_rules({}, KINDS)


def captured(text: str, source: str | None = None) -> list[tuple[str, str]]:
    return [(c.key, c.value) for c in capture(RULES, text, "observation", source=source, sentences=True)]


@pytest.mark.parametrize("line", ["relay-2: restarted nginx", "nas-1: cpu temp 54C", "web-3: rotated logs",
                                  "backup: copied 3 files to nas", "ERROR: connection refused by 10.0.0.4",
                                  "Meeting: talked with Dana about the launch", "Fixed: the cron typo",
                                  "Alice: can you check the router?", "Dana Whitfield moved: and that is that",
                                  "Caroline: I went to the support group yesterday and it was great",
                                  "Build 97533 of strata failed: ETIMEDOUT in step 7",
                                  "New mail baeccace from Hana: wants a call about the report",
                                  "pi-attic memory: 3275 MiB free (check 97133)",
                                  "Amara on chat: please look at the relay", "db-primary: failover completed in 11s"])
def test_event_lines_are_not_captured(line):
    assert captured(line) == []


@pytest.mark.parametrize("line, key, value", [
    ("Bridge: DOWN", "bridge", "DOWN"), ("Backup job: failed at 03:00", "backup job", "failed at 03:00"),
    ("leader: node-2", "leader", "node-2"), ("consulting tier: 1500 per month", "consulting tier", "1500 per month"),
    ("relay-2: DOWN", "relay-2", "DOWN"), ("Backup job: retried, ok", "backup job", "retried, ok"),
    ("Landlord: Mrs. Okafor", "landlord", "Mrs. Okafor"), ("Invoice #4471: overdue", "invoice #4471", "overdue"),
    ("Disk usage: 83%", "disk usage", "83%"), ("Opening hours: 8am to 8pm, closed Sundays", "opening hours",
                                                "8am to 8pm, closed Sundays"),
    # A sentence's full stop is no part of the value; an abbreviation's is.
    ("Gold SLA: 4 hours.", "gold sla", "4 hours"), ("Office: Washington D.C.", "office", "Washington D.C.")])
def test_state_lines_are_captured(line, key, value):
    assert captured(line) == [(key, value)]


def test_the_judge_says_why_a_line_is_an_event():
    assert judge("relay 2", "restarted nginx").startswith("an act")
    assert judge("nas 1", "cpu temp 54C").startswith("a reading")
    assert judge("web 3", "removed 3 stale sessions").startswith("an act")
    assert judge("nas 1", "smart test passed on all disks").startswith("host chatter")
    assert judge("bridge", "DOWN") is None


@pytest.mark.parametrize("line, why", [
    ("freezer: temp -17C", "a reading"), ("kitchen plug: power 1,840 W", "a reading"),
    ("Rain gauge: 11 mm overnight", "a reading"), ("ping gw-02: 38 ms", "a reading"),
    ("Front door: opened at 07:52 by Leo", "an act"), ("Front door: closed at 18:03", "an act"),
    ("fw-1: blocked 34 connections from 203.0.113.8", "an act"), ("PR #932: merged by Ximena", "an act"),
    ("Backup job: failed to copy 3 files, retrying in 5 minutes", "an act"),
    ("Customer call: Pinewood Bakery wants invoices in Dutch.", "a message"),
    ("Mail from the landlord: inspection on the 20th.", "a message"),
    ("Sentry: new issue TypeError in CartSummary", "a notification"), ("Traceback: KeyError in billing.py", "the key"),
    ("Washing machine: cycle complete at 21:14", "a report"), ("pytest: 1,204 passed, 3 skipped", "a sentence"),
    ("Fridge: door-open alarm at 19:20", "something that happened"), ("Bob: lol yes", "a remark"),
    ("[03:00:02] backup-offsite: started", "a log record"), ("Weighed myself this morning: 78.4 kg", "the key"),
])
def test_event_lines_stay_memories_and_say_why(line, why):
    rules = compile_rules(None, KINDS)
    m = rules[0].pattern.search(line)
    label = label_of(m.group("key"))
    stamped = m.start("key") > 0
    assert judge(normalise_key(label), m.group("value"), label, stamped=stamped).startswith(why)
    assert captured(line) == []


@pytest.mark.parametrize("line, key, value", [
    ("Milestone 3: in progress", "milestone 3", "in progress"), ("Budget remaining: 12,400 EUR", "budget remaining",
                                                                   "12,400 EUR"),
    ("Search v2: deferred to Q4", "search v2", "deferred to Q4"), ("Garlic: ready to lift", "garlic", "ready to lift"),
    ("Robot vacuum: stuck under the sofa", "robot vacuum", "stuck under the sofa"),
    ("Medication: sertraline 50 mg daily", "medication", "sertraline 50 mg daily"),
    ("Payment terms: net 30", "payment terms", "net 30"), ("Staging DB: postgres 16.2", "staging db", "postgres 16.2"),
    ("2024-03-02 09:14 billing-gateway: DEGRADED", "billing gateway", "DEGRADED"),
    ("Quarterly VAT return: due 7 Aug", "quarterly vat return.deadline", "7 Aug"),
    ("Nightly restic job: OK at 02:40", "nightly restic job", "OK at 02:40")])
def test_conditions_worded_many_ways_are_states(line, key, value):
    assert captured(line) == [(key, value)]


@pytest.mark.parametrize("text, expected", [
    ("Dana Whitfield's email address is dana.whitfield@oldmail.example",
     [("dana whitfield.email", "dana.whitfield@oldmail.example")]),
    ("Dana Whitfield moved: her email address is now dana@whitfield.example",
     [("dana whitfield.email", "dana@whitfield.example")]),
    ("My phone number is 555-0101.", [("my phone", "555-0101")]),
    ("Actually I got a new phone number. It's 555-0202 now.", [("my phone", "555-0202")]),
    ("My dog's name is Rex.", [("my dog.name", "Rex")]),
    ("The price of the pro plan is 49 EUR.", [("pro plan.price", "49 EUR")]),
    ("The billing service is now owned by Lena.", [("billing service.owner", "Lena")]),
    ("web-3's version is 2.4.1.", [("web-3.version", "2.4.1")]),
    ("I work at Acme Corp.", [("my employer", "Acme Corp")]),
    ("I'm vegan now", [("my diet", "vegan")]),
    ("Tom moved to Lisbon.", [("tom.location", "Lisbon")]),
    ("My doctor is Dr. Alvarez at Riverside Clinic.", [("my doctor", "Dr. Alvarez at Riverside Clinic")]),
    ("Jenna is the on-call engineer this week.", [("on call engineer", "Jenna")]),
    ("The docs repo is owned by the platform team.", [("docs repo.owner", "the platform team")]),
    ("Production is frozen until the audit ends.", [("production", "frozen until the audit ends")]),
    ("Our rent went up, it's 1600 a month now.", [("rent", "1600 a month")]),
    ("The deadline for the Q2 report is April 10.", [("q2 report.deadline", "April 10")]),
    ("Mum is in hospital (Ward 7, St Luke's).", [("mum", "in hospital (Ward 7, St Luke's)")]),
    ("The homelab wiki now lives at wiki.lan:8080.", [("homelab wiki.location", "wiki.lan:8080")]),
    ("I changed my email to kai@example.org.", [("my email", "kai@example.org")]),
    ("Switched the lab DNS resolver to 9.9.9.9.", [("lab dns resolver", "9.9.9.9")]),
    # What it was switched for is not its value (it was `node-2 for maintenance`).
    ("Switched the cluster leader to node-2 for maintenance", [("cluster leader", "node-2")]),
    ("We changed the backup window to 03:00 because of the load", [("backup window", "03:00")]),
    ("Home Assistant is on 2024.6.1.", [("home assistant.version", "2024.6.1")]),
    ("Dr. Haines is my GP now.", [("my doctor", "Dr. Haines")]),
    ("Actually the meeting room is now Lovelace, not Turing.", [("meeting room", "Lovelace, not Turing")]),
    # Neither what it replaced, nor when it changed, nor what it is for is its value.
    ("Backups now run at 04:00 instead of 03:00", [("backups.time", "04:00")]),
    ("The mail relay was moved to mx-2 last night", [("mail relay.location", "mx-2")]),
    ("The team switched to Postgres 16 for the main database", [("team", "Postgres 16")]),
    ("We switched the DNS provider from Cloudflare to deSEC", [("dns.provider", "deSEC")]),
])
def test_attribute_statements_become_subject_attribute_keys(text, expected):
    assert captured(text) == expected


@pytest.mark.parametrize("text", ["My sister is coming to visit next week.", "Caroline's birthday party was great.",
                                  "I think Dana's team is growing fast.", "I'm not sure what my plan is",
                                  "The backup finished at 03:12.", "Jenkins no longer runs on ci-1",
                                  "Grafana doesn't run on mon-2 anymore"])
def test_sentences_that_state_no_attribute_set_nothing(text):
    assert captured(text) == []


@pytest.mark.parametrize("text, expected", [
    ("Callum pays 950 GBP a month for Flat B.", [("callum.pay", "950 GBP a month for Flat B")]),
    ("We rehearse on Tuesdays at 19:30.", [("our rehearse", "on Tuesdays at 19:30")]),
    ("There are 5 appointment slots left tomorrow.", [("appointment slots", "5")]),
    ("Mum's amlodipine was increased to 10 mg.", [("mum's amlodipine", "10 mg")]),
    ("Kennel 4 is still occupied by the Wiltshire greyhound.", [("kennel 4",
                                                                 "occupied by the Wiltshire greyhound")]),
    ("Royal Mail collection time is 15:30 on weekdays.", [("royal mail collection.time", "15:30 on weekdays")]),
    ("I drive a 2014 Golf.", [("my car", "a 2014 Golf")]),
    # Relations that take many values, or clauses that are no state, are left alone.
    ("I love painting.", []), ("Caroline loves hiking with her kids.", []), ("I went to the park yesterday.", []),
    ("The router will run firmware 7.60 next week.", []), ("Does the router run firmware 7.57?", []),
    ("load average on gw-01 is 6.85 (check 82062)", []), ("Jonas said the dinner on Friday is cancelled.", []),
    ("the TLS certificate of web-01 has been renewed", []),  # what was done, not how it is
    ("The bridge is closed.", [("bridge", "closed")]),  # one statement, one key
    ("Dana's email is d@x.example and Dana's phone is 555-0101.", [("dana.email", "d@x.example")]),
])
def test_plain_clauses_of_one_valued_relations_are_statements(text, expected):
    assert captured(text) == expected


def test_capture_never_fails_on_odd_text():
    # Capture runs inside every observation's transaction: whatever the text, it returns.
    import random
    rng = random.Random(7)
    pieces = ["a", "A", "1", " ", ":", ": ", "(x) ", " (y)", "()", "(", ")", ".", ",", "'", "’", "-", "#", "/", "@",
              "?", "!", "\t", "\n", "\u00e9", "\u4e2d", "12:30 ", "[03:00] "]
    lines = [text for _, text in labelled(SETS["dev"])]
    for _ in range(5000):
        base = rng.choice(lines)
        cut = rng.randrange(len(base) + 1)
        noise = "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
        key, colon, value = base.partition(": ")
        text = rng.choice([base[:cut] + noise, noise + base[cut:], base[:cut] + " " * rng.randrange(3), noise,
                           key + colon + noise + value])
        for c in capture(RULES, text, "observation", sentences=True):
            assert c.key and c.value
    assert captured("Office line for Cobalt Legal: (312) 555-0170") == [("office line for cobalt legal",
                                                                         "(312) 555-0170")]


@pytest.mark.sqlite_only
def test_a_fault_in_capture_costs_the_facts_not_the_observation(memory, monkeypatch, caplog):
    import strata_daemon.facts.api as facts_api

    def broken(*args, **kwargs):
        raise IndexError("a pattern's fault")
    monkeypatch.setattr(facts_api, "capture", broken)  # fault injection: no pattern fails today
    r = memory.observe("Bridge: DOWN")
    assert r["status"] == "created" and r["facts"][0]["status"] == "skipped"
    assert memory.get(r["id"])["content"] == "Bridge: DOWN"
    assert "fact capture failed on episode" in caplog.text


def test_a_later_clause_of_the_same_shape_updates_the_fact(memory):
    memory.observe("Callum pays 950 GBP a month for Flat B.", at="40d ago")
    new = memory.observe("Callum pays 990 GBP a month for Flat B.", at="2d ago")
    assert memory.get_fact("Callum.pay")["value"] == "990 GBP a month for Flat B"
    assert [f["status"] for f in new["facts"]] == ["changed"]


def test_in_a_transcript_first_person_belongs_to_the_speaker():
    assert statements("My phone number is 555-0101.", source="Caroline") == [("Caroline.phone", "555-0101")]
    assert statements("My dog's name is Max.", source="Caroline") == []  # whose dog: not guessed
    assert statements("My phone number is 555-0101.", source="user") == [("my phone", "555-0101")]
    assert statements("I drive a Skoda now.", source="Caroline") == [("Caroline.car", "a Skoda")]


def test_attributes_have_one_canonical_name():
    assert {canonical(a) for a in ("email address", "E-mail", "new email")} == {"email"}
    assert {canonical(a) for a in ("phone number", "mobile", "cell number")} == {"phone"}


def test_the_labelled_sets_are_well_formed_and_large_enough():
    dev, held = labelled(SETS["dev"]), held_out(SETS)["held_out"]
    assert len(dev) >= 300 and len(held) >= 300
    assert not {text for _, text in dev} & {text for _, text in held}
    for pairs in (dev, held):
        labels = [label for label, _ in pairs]
        assert min(labels.count("state"), labels.count("event")) >= 0.4 * len(labels)
        assert len({text for _, text in pairs}) == len(pairs)


def test_capture_on_the_development_set_meets_its_targets():
    r = score(labelled(SETS["dev"]))
    assert r["precision"] >= 0.95 and r["recall"] >= 0.90, r["wrong"]


def test_capture_on_the_held_out_set_stays_where_it_was_measured():
    # Written apart from the code and never tuned on: the figure docs/benchmarks.md reports
    # (0.966 / 0.824 when the ninth author's set was new). A floor just below it catches a change
    # that makes capture worse on lines it was not tuned on.
    r = score(held_out(SETS)["held_out"])
    assert r["precision"] >= 0.96 and r["recall"] >= 0.82


def test_a_home_captures_statements_and_skips_events(memory):
    mem = memory
    r = mem.observe("Dana Whitfield's email address is dana.whitfield@oldmail.example")
    assert [(f["key"], f["rule"]) for f in r["facts"]] == [("dana whitfield.email", "statement")]
    assert mem.observe("relay-2: restarted nginx")["facts"] == []
    assert mem.get_fact("Dana Whitfield.email")["value"] == "dana.whitfield@oldmail.example"


def test_statements_can_be_switched_off(home):
    write_config(home, "[experimental]\n\"facts.statements\" = false\n")

    async def go():
        async with await Memory.open(home) as m:
            return (await m.observe("My phone number is 555-0101."))["facts"]
    assert asyncio.run(go()) == []


@pytest.mark.sqlite_only
def test_rejudge_lists_then_retracts_then_restores_events_captured_before_the_judge(cli, memory):
    from strata_daemon.facts.keys import Source
    from strata_daemon.store import facts as store

    memory.observe("Bridge: DOWN")
    events = {"relay-2": "restarted nginx", "nas-1": "cpu temp 54C"}

    def old_capture(conn):  # what the status-line rule stored before it judged lines
        for key, value in events.items():
            store.write(conn, "default", key, store.Assertion(label=key, value=value, valid_from=None,
                                                              source=Source("episode", "1"), confidence=0.9,
                                                              rule="status-line"), actor="test", now=time.time(),
                        window=600)
    memory.wait(memory.raw.db.transact(old_capture))
    doctor = {f["check"]: f for f in json.loads(cli("doctor", "--json").out)["findings"]}["facts"]
    assert doctor["status"] == "warn" and "strata fact rejudge" in doctor["fix"]
    dry = cli.json("fact", "rejudge")
    assert dry["action"] == "dry-run" and {f["key"] for f in dry["facts"]} == set(events)
    assert {f["key"] for f in cli.json("fact", "list")} == {"bridge", *events}  # a dry run changes nothing
    assert cli.json("fact", "rejudge", "--apply")["count"] == 2
    assert [f["key"] for f in cli.json("fact", "list")] == ["bridge"]
    assert [h["value"] for h in cli.json("fact", "history", "relay-2")["history"]] == ["restarted nginx", None]
    assert cli.json("fact", "rejudge")["count"] == 0
    assert {f["key"]: f["value"] for f in cli.json("fact", "rejudge", "--undo")["facts"]} == events
    assert {f["key"] for f in cli.json("fact", "list")} == {"bridge", *events}
    assert cli("fact", "rejudge", "--apply", "--undo").returncode == 2


def test_fact_get_reads_a_key_worded_as_the_statement_put_it(memory):
    memory.observe("Dana Whitfield's email address is dana@whitfield.example")
    memory.observe("My dog's name is Rex.")
    memory.observe("My phone number is 555-0101.")
    assert memory.get_fact("Dana Whitfield's email address")["value"] == "dana@whitfield.example"
    assert memory.get_fact("my dog's name")["value"] == "Rex"
    assert memory.get_fact("My phone number")["value"] == "555-0101"
    with pytest.raises(NotFound, match="no fact \"sam's email\""):
        memory.get_fact("Sam's email")
