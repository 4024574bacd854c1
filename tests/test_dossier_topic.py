"""A dossier holds only what is about its topic: memories that name it (its name, query, fact
prefixes; a person by first name), or are linked to it in the spiderweb. Recall hands a
refresh its nearest memories, related or not; the rest never fill a line. Tasks are what is
stated as to do, wherever they are shown."""

from __future__ import annotations

import re

import pytest

from conftest import write_config
from strata_daemon.config.tuning import Dossier
from strata_daemon.dossier import relevance
from strata_daemon.dossier.extractive import Patterns, is_open
from strata_daemon.dossier.topics import Topic

T0 = 1_790_000_000.0
H, DAY = 3600.0, 86400.0
PATTERNS = Patterns(re.compile(Dossier().open_pattern),
                    re.compile(Dossier().closed_pattern))
ROUTINE = ("Backup: OK (run {i})", "Vpn: CONNECTED (check {i})", "relay-2: restarted nginx (cycle {i})",
           "nas-1: cpu temp 5{d}C (check {i})", "Disk usage on web-03 at 6{d}% (check {i})")


def _terms(name, query=None, facts=None):
    words = name.replace("_", " ")
    return relevance.terms_of(Topic(name, query or words, tuple(facts or (words,)), "config", True))


# -- pure ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Revenue for October was 12,400 dollars", "revenues fell", "the REVENUE report",
    "gw-01 rebooted", "GW_01 is up", "restarted gw 01",
])
def test_a_topic_is_named_whatever_the_case_separators_or_plural(text):
    terms = _terms("revenue", query="revenue, gw-01")
    assert relevance.mentions(text, terms)


@pytest.mark.parametrize("text", [
    "Backup: OK", "the mail archive export finished", "irrevenue",  "gw-011 rebooted", "relay-2: restarted nginx",
])
def test_words_that_only_look_alike_do_not_name_it(text):
    assert not relevance.mentions(text, _terms("revenue", query="revenue, gw-01"))
    assert not relevance.mentions(text, _terms("mail_relay"))  # a name is a phrase: "mail" alone is not it


def test_a_name_of_plain_words_is_named_by_its_words_apart_an_identifier_only_whole():
    nas = _terms("nas_backups")
    assert relevance.mentions("Decided to move nightly backups to nas-2 next week", nas)
    assert relevance.mentions("The nightly backup job failed on nas-1 at 03:00", nas)  # a plural names one
    assert not relevance.mentions("The nightly backup job failed", nas)
    assert not relevance.mentions("01 reboots of gw happen", _terms("gw_01"))


def test_query_phrases_follow_recall_and_the_separators_a_person_writes():
    assert relevance.query_phrases("bridge gw-01 -staging") == [("bridge",), ("gw", "01")]
    assert relevance.query_phrases("revenue, monthly income | MRR") == [("revenue",), ("monthly", "income"), ("mrr",)]
    assert relevance.query_phrases('"mail relay" OR smtp') == [("mail", "relay"), ("smtp",)]
    assert relevance.query_phrases("the of, and") == []  # stopwords alone name nothing
    assert _terms("the_bridge").phrases == (("bridge",),)
    assert relevance.mentions("the policies changed", _terms("policy"))
    # The topic's own words as the query add nothing: its name stays one phrase.
    assert _terms("mail_relay").phrases == (("mail", "relay"),)
    assert _terms("bridge", query="bridge gw-01", facts=("bridge", "relay")).phrases == (
        ("bridge",), ("relay",), ("gw", "01"))


def test_a_person_topic_is_named_by_first_name_but_not_for_another_person():
    terms = _terms("amara_okafor").with_person("Amara Okafor")
    assert relevance.mentions("Amara on chat: can you look at the relay?", terms)
    assert relevance.mentions("Email from Amara Okafor: invoice", terms)
    assert not relevance.mentions("Amara Lopez called about the flat", terms)
    assert not relevance.mentions("amara is a word here", terms)  # a name is written with its capital
    assert relevance.mentions("Lucía Ferreira replied", _terms("lucía_ferreira"))
    assert relevance.mentions("Lucia Ferreira replied", _terms("lucía_ferreira"))


@pytest.mark.parametrize("text", [
    "TODO: renew the TLS cert", "need to call the landlord", "- [ ] write the report", "Task: migrate the NAS",
    "remind me to pay the rent", "follow up with Dana about the contract", "TODO T-12: rotate the cert on gw-01",
    "New task T-5: prune snapshots; estimate 4 min", "Fixed the relay. Need to update the runbook.",
    "notes from the call\n- [ ] send the minutes",
])
def test_a_task_is_stated_as_to_do(text):
    assert is_open({"content": text, "kind": "observation"}, PATTERNS)


@pytest.mark.parametrize("text", [
    "apt upgrade ran on web-3, nothing to do",
    "Dana approved the launch for 2026-05-19, pending the penetration test results.",
    "Decided to postpone the follow-up on the invoice to next week",
    "Email from Dana: reminder about the server migration, due 2026-04-15",
    "Followed up with Dana about the contract", "Waiting for Dana", "The cert has to be renewed",
])
def test_a_word_inside_a_clause_is_not_a_task(text):
    assert not is_open({"content": text, "kind": "observation"}, PATTERNS)


def test_a_task_kind_memory_is_a_task_unless_it_reports_one_done():
    assert is_open({"content": "rotate the keys", "kind": "task"}, PATTERNS)
    assert not is_open({"content": "Done T-13: wrote the bridge runbook", "kind": "task"}, PATTERNS)
    assert is_open({"content": "TODO: check the backup is done", "kind": "task"}, PATTERNS)


# -- through SQLite, recall and the spiderweb --------------------------------------------------------

def _routine(memory, count, start):
    for i in range(count):
        memory.observe(ROUTINE[i % len(ROUTINE)].format(i=i, d=i % 10), at=start + i * 600, importance=0.9)


def _lines(text):
    return [ln for ln in text.splitlines() if ln.startswith("- ")]


def test_a_topic_with_three_relevant_memories_shows_those_three_lines(home, memory):
    """Balanced recall hands the refresh its nearest memories; only three are about revenue:
    two name it, one is linked to one of those by a person."""
    memory.add_topic("revenue")
    a = memory.observe("Revenue for October was 12,400 dollars", at=T0 - 20 * DAY, importance=0.6)["id"]
    b = memory.observe("Consulting revenues fell in November", at=T0 - 2 * DAY, importance=0.5)["id"]
    c = memory.observe("Stripe payout for the consulting tier delayed to Monday", at=T0 - DAY, importance=0.4)["id"]
    memory.link(f"episode:{c}", f"episode:{b}", "related")
    _routine(memory, 45, T0 - 30 * DAY)
    memory.embed_pending()
    r = memory.refresh_dossier("revenue", now=T0)
    text = memory.show_dossier("revenue")["text"]
    # Recall did hand it routine lines (fewer since it leaves out the least alike, recall.min_similarity).
    assert r["notes"]["off_topic"] >= 5
    assert sorted(int(i) for i in re.findall(r"\be(\d+)\b", text)) == sorted([a, b, c])
    assert len(_lines(text)) == 3 and "Backup" not in text and "Vpn" not in text and "nginx" not in text
    assert r["lines"] == 3


def test_the_spiderweb_brings_in_what_names_the_topic_only_through_an_entity(home, memory):
    """A memory whose source is the person mentions her entity though its text does not name
    her; one a person linked to her entity counts too; another Amara does not."""
    memory.add_topic("Amara Okafor")
    memory.observe("Email from Amara Okafor: the contract is signed", at=T0 - 3 * DAY)
    said = memory.observe("the invoice total looks wrong to me", source="Amara Okafor", at=T0 - DAY)["id"]
    chat = memory.observe("Amara on chat: invoice 42 is paid", at=T0 - 2 * H)["id"]
    filed = memory.observe("filed the signed contract PDF in the shared drive", at=T0 - 2 * DAY)["id"]
    memory.link(f"episode:{filed}", "entity:person:Amara Okafor", "related")
    memory.observe("Amara Lopez sent an invoice for the flat", at=T0 - 3 * H)
    memory.observe("paid the hosting invoice", at=T0 - 4 * H)
    _routine(memory, 10, T0 - 30 * DAY)
    memory.embed_pending()
    r = memory.refresh_dossier("amara_okafor", now=T0)
    text = memory.show_dossier("amara_okafor")["text"]
    cited = {int(i) for i in re.findall(r"\be(\d+)\b", text)}
    assert r["notes"]["off_topic"] >= 2  # recall handed it unrelated lines, and they were left out
    assert {said, chat, filed} <= cited and len(cited) == 4 and "Lopez" not in text and "hosting" not in text


@pytest.fixture
def fast_home(home):
    write_config(home, '[experimental]\n"dossier.recall_mode" = "fast"\n\n[dossier.topics.launch]\n')
    return home


def test_open_items_are_tasks_and_a_pending_clause_is_context(fast_home, memory):
    approved = memory.observe("Dana approved the launch for 2026-05-19, pending the penetration test results.",
                              at=T0 - 10 * DAY)["id"]
    venue = memory.observe("TODO: book the launch venue", at=T0 - 9 * DAY)["id"]
    memory.observe("need to print the launch flyers", at=T0 - 9 * DAY)
    memory.observe("printed the launch flyers, done", at=T0 - 8 * DAY)
    memory.refresh_dossier("launch", now=T0)
    text = memory.show_dossier("launch")["text"]
    open_items = text.split("## Open items", 1)[1].split("##", 1)[0]
    assert f"[e{venue}]" in open_items and f"[e{approved}]" not in open_items and "flyers" not in open_items
    assert f"[e{approved}]" in text  # about the launch, so it stays, as context
