"""An update no rule ties to its fact (facts/near.py): the newer memory says a change, shares a
word with the fact and is very alike the memory that gave it; the fact ends (or takes a value
said outright) and the older memory ranks below the newer. Real SQLite, the real MiniLM."""

from __future__ import annotations

import pytest
from strata_daemon.facts import near
from strata_daemon.facts.speaking import Known, parse_key
from strata_daemon.facts.updates import may_update, says_change
from strata_daemon.facts.vocabulary import DEFAULT

OLD, NEW = "2026-03-01T10:00:00Z", "2026-04-01T10:00:00Z"
# (older, newer, key, the value after): worded so that no rule of facts/updates.py reads them.
PAIRS = {
    "another name": ("Support SLA for Gold customers: 8 hours", "Gold SLA updated: 4 hours.",
                     "support sla for gold customers", None),
    "a value of its form": ("Nightly ETL runs at 02:00 UTC.", "ETL now kicks off at 03:30 UTC after the DST mess.",
                            "nightly etl.time", "03:30"),
    # The old value named leaving says whose it was, though the subject is not named.
    "the old value leaving": ("Ops on-call was handed over to Priya", "Priya handed on-call over to Marco",
                              "ops.on call", "Marco"),
}


@pytest.mark.parametrize("late", [False, True], ids=["in-order", "older-arrives-late"])
@pytest.mark.parametrize("case", sorted(PAIRS))
def test_a_change_said_in_other_words_ends_the_fact_or_gives_its_value(memory, case, late):
    older, newer, key, value = PAIRS[case]
    order = [(newer, NEW), (older, OLD)] if late else [(older, OLD), (newer, NEW)]
    ids = {text: memory.observe(text, at=at)["id"] for text, at in order}
    fact = memory.get_fact(key)
    if value is None:  # ended: kept in history, served as stale, naming what ended it, for review
        assert fact["stale"] and fact["superseded_by"] == f"episode:{ids[newer]}"
        assert key in [c["key"] for c in memory.fact_conflicts(flagged=True)]
    else:
        assert (fact["value"], fact["source"]) == (value, f"episode:{ids[newer]}")
    assert memory.get(ids[older])["supersession"]["superseded_by"] == [ids[newer]]


@pytest.mark.parametrize("older, newer, key", [
    ("Download timeout: 30s", "Upload timeout raised to 45s.", "download timeout"),  # another qualifier
    ("Sam's pocket money is 5 pounds a week.", "Maya gets 3 pounds a week.", "sam.pocket money"),  # another person
    ("Bea is on the billing team.", "Bea gave a demo at the all-hands.", "bea"),  # no change said
    ("Mail relay: mail-1.example.com", "Lesson learned in cycle 4356: ERR_CONN_RESET from the mail relay usually "
     "means the VPN dropped, so I check the VPN first now.", "mail relay"),  # a lesson, not a state
])
def test_what_only_shares_words_with_a_fact_leaves_it(memory, older, newer, key):
    first = memory.observe(older, at=OLD)["id"]
    memory.observe(newer, at=NEW)
    fact = memory.get_fact(key)
    assert not fact["stale"] and fact["source"] == f"episode:{first}"
    assert memory.get(first)["supersession"]["superseded_by"] == []


def test_only_the_most_alike_of_the_facts_sharing_words_is_taken(memory):
    gold = memory.observe("Support SLA for Gold customers: 8 hours", at=OLD)["id"]
    silver = memory.observe("Support SLA for Silver customers: 24 hours", at=OLD)["id"]
    newer = memory.observe("Gold SLA updated: 4 hours.", at=NEW)["id"]
    assert memory.get(gold)["supersession"]["superseded_by"] == [newer]
    assert memory.get(silver)["supersession"]["superseded_by"] == []
    assert not memory.get_fact("support sla for silver customers")["stale"]


def _known(label: str, value: str) -> Known:
    k = parse_key(label.casefold(), label)
    return Known(k.key, k.subject, k.attribute, value)


@pytest.mark.parametrize("label, value, text, other", [
    ("download timeout", "30s", "Upload timeout raised to 45s.", True),
    ("refunds webhook.endpoint", "https://a.example/r", "Point the payments webhook at https://b.example now.", True),
    ("Tomasz's sister.location", "Riga", "Tomasz lives in Gdansk now, he moved there last spring.", True),
    ("Ana.phone", "555-0101", "Ana went freelance; her address is now ana@freelance.example.", True),
    ("Cleaner Marta.time", "Wednesdays", "Marta's cleaning day has changed to Fridays.", False),
    ("Support SLA for Gold customers", "8 hours", "Gold SLA updated: 4 hours.", False),
    ("dog.vet", "Riverside Vets", "We take Rufus to Oakfield Animal Clinic now that Riverside closed.", False),
    ("db-main-02.plan", "PostgreSQL 15", "orders-db upgraded to PostgreSQL 16 last night, no issues.", True),
    ("CI image", "Node 20", "Upgraded CI to Node 22 today.", False),
    ("Oskar.location", "Riga", "Oskar Brandt moved: their email address is now oskar@mailbox.org.", True),
    ("Ingrid Salo.email", "ingrid@salo-design.fi", "Ingrid Salo moved to Porto last month.", True),
    ("Ingrid Salo.email", "ingrid@salo-design.fi", "Ingrid Salo changed: reach her at ingrid@mailbox.org.", False),
    ("my mobile plan", "20GB for 15 a month", "Switched to the unlimited plan at 25 a month.", False),
])
def test_another_thing_is_told_from_the_fact_s_own(label, value, text, other):
    assert near.another_thing(_known(label, value), label, text, DEFAULT) is other


def test_candidates_are_the_few_facts_sharing_most_words():
    index = near.Index()
    for label, value in [("support sla for gold customers", "8 hours"), ("support sla for silver customers", "24 h"),
                         ("gold price", "1,900"), ("printer.location", "the basement")]:
        index.add(_known(label, value))
    found = index.sharing("Gold SLA updated: 4 hours.", skip=set())
    assert found[0] == "support sla for gold customers" and "printer.location" not in found
    index.drop("support sla for gold customers")
    assert "support sla for gold customers" not in index.sharing("Gold SLA updated: 4 hours.", skip=set())
    assert index.sharing("Gold SLA updated", skip={"gold price", "support sla for silver customers"}) == []


def test_the_old_value_leaving_is_no_repeat_of_it():
    assert not near.repeats("Priya", "Priya handed the on-call rota over to Marco.")
    assert not near.repeats("Priya", "Priya passed demo hosting on to Marco.")
    assert near.repeats("Priya", "Priya is still on call, Marco shadows her.")


def test_a_hyphenated_word_says_no_change_and_a_lesson_updates_nothing():
    assert not says_change("Bea gave a demo at the all-hands.") and says_change("The ticket was de-escalated to P3.")
    assert may_update("New task T-315: answer Lucía about the invoice for December") is None
    assert may_update("Note to self from cycle 4377: exit status 137 from the web proxy") is None


def test_observe_says_what_it_did_to_the_facts(cli):
    first = cli("observe", "Gateway runs on 8080.", "--at", "3 days ago", check=True)
    assert first.out.strip().isdigit() and "strata: fact gateway.port = 8080 (now)" in first.err
    changed = cli("observe", "Changed the gateway port to 8443.", check=True)
    assert changed.out.strip().isdigit() and "strata: fact gateway.port = 8443 (now, was 8080)" in changed.err
    cli("observe", "Support SLA for Gold customers: 8 hours", "--at", "3 days ago", check=True)
    ended = cli("observe", "Gold SLA updated: 4 hours.", check=True)
    assert "strata: fact support sla for gold customers ended by this memory" in ended.err
    assert "strata fact conflicts" in ended.err
    plain = cli("observe", "Had lunch with the team.", check=True)
    assert "fact" not in plain.err
