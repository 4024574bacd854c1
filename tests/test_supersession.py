"""The newer statement wins: capture links a memory that states a new value of a fact to the
memory it replaces (`supersedes`), and recall ranks the newer first, whichever arrived first.
Real SQLite, the real embedding model, the real CLI."""

from __future__ import annotations

import re

import pytest

from strata_daemon.config.load import overlay

OLD_AT, NEW_AT = "2026-03-01T10:00:00Z", "2026-04-01T10:00:00Z"
CASES = {
    "email": ("Dana Whitfield's email address is dana.whitfield@oldmail.example",
              "Dana Whitfield moved: her email address is now dana@whitfield.example",
              "What is Dana Whitfield's email address?", "dana whitfield.email"),
    "phone": ("My phone number is 555-0101.", "Actually I got a new phone number. It's 555-0202 now.",
              "What is my phone number?", "my phone"),
    "owner": ("The owner of the billing service is Lena.", "The billing service is now owned by Marek.",
              "Who owns the billing service?", "billing service.owner"),
    "version": ("web-3's version is 2.4.1.", "web-3's version is now 2.5.0.", "Which version runs on web-3?",
                "web-3.version"),
    "price": ("The price of the pro plan is 49 EUR.", "The price of the pro plan has changed to 59 EUR.",
              "How much does the pro plan cost?", "pro plan.price"),
    "location": ("Tom moved to Lisbon.", "Tom moved to Porto.", "Where does Tom live now?", "tom.location"),
    "place": ("The analytics warehouse lives in us-east-2.", "The analytics warehouse moved to ap-southeast-1.",
              "Where is the analytics warehouse hosted?", "analytics warehouse.location"),
    "rent": ("Callum pays 950 GBP a month for Flat B.", "Callum pays 990 GBP a month for Flat B now.",
             "How much rent does Callum pay?", "callum.pay"),
}
NOISE = [f"relay-{i % 4}: restarted nginx after config change {i}" for i in range(20)] + [
    "Lena fixed the billing bug yesterday.", "Tom sent the quarterly report.", "We talked about pricing.",
    "Dana approved the launch plan.", "web-3: rotated logs"]


def _stored(memory, case: str, newer_first: bool) -> tuple[int, int]:
    old, new, _, _ = CASES[case]
    order = [(new, NEW_AT), (old, OLD_AT)] if newer_first else [(old, OLD_AT), (new, NEW_AT)]
    ids = {text: memory.observe(text, at=at)["id"] for text, at in order}
    memory.observe_many([{"content": text} for text in NOISE])
    return ids[old], ids[new]


@pytest.mark.parametrize("newer_first", [False, True], ids=["in-order", "older-arrives-late"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mode", ["fast", "balanced"])
def test_the_newer_value_ranks_first(memory, case, newer_first, mode):
    old_id, new_id = _stored(memory, case, newer_first)
    _, _, query, key = CASES[case]
    if mode == "balanced":
        memory.embed_pending()
    r = memory.recall(query, mode=mode, k=10)
    ids = [h["id"] for h in r["hits"]]
    assert new_id in ids and ids.index(new_id) < (ids.index(old_id) if old_id in ids else len(ids)), ids
    if old_id in ids:
        old_hit = r["hits"][ids.index(old_id)]
        assert old_hit["explain"]["superseded_by"] == [new_id]
    assert memory.get_fact(key)["source"] == f"episode:{new_id}"


def test_capture_links_the_newer_memory_and_the_link_can_be_undone(memory):
    old_id, new_id = _stored(memory, "email", False)
    shown = memory.get(old_id)["supersession"]
    assert shown == {"supersedes": [], "superseded_by": [new_id]}
    assert memory.get(new_id)["supersession"]["supersedes"] == [old_id]
    memory.link(f"episode:{new_id}", f"episode:{old_id}", "supersedes", remove=True)
    assert memory.get(old_id)["supersession"]["superseded_by"] == []
    r = memory.recall("Dana Whitfield email address", mode="fast", k=5)
    assert all("superseded_by" not in h["explain"] for h in r["hits"])


def test_a_repeat_or_an_unrelated_fact_links_nothing(memory):
    a = memory.observe("Dana Whitfield's email address is dana@whitfield.example", at=OLD_AT)["id"]
    memory.observe("Dana Whitfield's email address is dana@whitfield.example.", at=NEW_AT)
    memory.observe("Sam's phone number is 555-0199.")
    assert memory.get(a)["supersession"] == {"supersedes": [], "superseded_by": []}


def test_a_memory_superseded_twice_ranks_below_the_newest(memory):
    ids = [memory.observe(f"Bridge: {state}", at=f"2026-03-0{day}T10:00:00Z")["id"]
           for day, state in ((1, "DOWN"), (2, "DEGRADED"), (3, "UP"))]
    memory.set_fact("bridge", "UP")  # a person's value links nothing
    r = memory.recall("bridge", mode="fast", k=3)
    assert [h["id"] for h in r["hits"]][:3] == ids[::-1]


def test_a_superseder_outside_the_hits_is_brought_in(memory):
    memory.reconfigure(overlay(memory.config, {"recall.hop_weight": 0}))  # the second hop would find it first
    old_id, new_id = _stored(memory, "location", False)
    r = memory.recall("Lisbon", mode="fast", k=5)  # the newer memory does not say Lisbon
    ids = [h["id"] for h in r["hits"]]
    assert ids.index(new_id) < ids.index(old_id)
    assert r["hits"][ids.index(new_id)]["explain"]["retrievers"]["supersedes"] == {"memory": old_id}


def test_show_and_explain_name_the_supersession(cli):
    cli("observe", "Dana Whitfield's email address is dana.whitfield@oldmail.example", "--at", OLD_AT, check=True)
    cli("observe", "Dana Whitfield moved: her email address is now dana@whitfield.example", "--at", NEW_AT,
        check=True)
    assert re.search(r"\n  superseded by +#2\n", cli("show", "1", check=True).out)
    out = cli("recall", "What is Dana Whitfield's email address?", "--mode", "fast", "--explain", check=True).out
    assert "superseded by #2: a newer memory replaces it (a supersedes link)" in out
    assert "fact  dana whitfield.email = dana@whitfield.example" in out
    assert cli.json("fact", "get", "Dana Whitfield.email")["value"] == "dana@whitfield.example"


# -- questions about the present (episodes/currency.py) -----------------------------------------

@pytest.mark.parametrize("query, present", [
    ("Where is the analytics warehouse hosted?", True), ("Who is my boss?", True),
    ("What does the pro plan cost us these days?", True), ("Where was the warehouse hosted?", False),
    ("When did Dana move?", False), ("What was my first car?", False), ("How long ago did we switch?", False),
    ("Dana email", False), ("When is the Atlas migration due?", True)])
def test_questions_about_the_present_are_told_from_questions_about_the_past(query, present):
    from strata_daemon.recall.currency import asks_present
    assert asks_present(query) is present


def test_alike_memories_of_the_same_subject_order_older_below_newer():
    import numpy as np

    from strata_daemon.recall.currency import newer_alike

    near = np.array([1.0, 0.0]), np.array([0.8, 0.6]), np.array([0.0, 1.0]), np.array([0.9, 0.436])
    items = [(1, 100.0, "The analytics warehouse lives in us-east-2"),
             (2, 200.0, "The analytics warehouse moved to ap-southeast-1 after the APAC move"),
             (3, 300.0, "The analytics warehouse team had lunch"),  # no update word: only when parallel
             (4, 400.0, "The billing warehouse moved to eu-west-1")]  # another subject: `billing` warehouse
    vectors = dict(zip((1, 2, 3, 4), near))
    query = "Where is the analytics warehouse hosted?"
    assert {o: set(n) for o, n in newer_alike(items, vectors, query, similarity=0.5, parallel=0.9).items()} == {1: {2}}
    assert {o: set(n) for o, n in newer_alike(items, vectors, query, similarity=0.5, parallel=0.5).items()} == {
        1: {2}, 2: {3}}
    assert newer_alike(items, vectors, query, similarity=0.9, parallel=0.9) == {}
    # A question naming none of their words: only texts parallel to each other (here 2 and 4, 0.98).
    assert newer_alike(items, vectors, "Which region is it in?", similarity=0.5, parallel=1.0) == {}
    assert {o: set(n) for o, n in newer_alike(items, vectors, "Which region is it in?", similarity=0.5,
                                              parallel=0.95).items()} == {2: {4}}


def test_a_very_alike_newer_hit_moves_up_from_further_down_a_less_alike_one_only_within_the_top_5():
    from strata_daemon.recall.ranking import _newer_above

    ids = list(range(10, 20))  # positions 0..9 hold ids 10..19, best first
    far = {13: {17: 0.62}}  # the older at 4th, a very alike newer at 8th
    order, moved = _newer_above(list(range(10)), ids, far, window=5, reach=0.5)
    assert [ids[p] for p in order][:5] == [10, 11, 12, 17, 13] and moved == {13: [17]}
    assert _newer_above(list(range(10)), ids, {13: {17: 0.45}}, window=5, reach=0.5)[0] == list(range(10))
    assert _newer_above(list(range(10)), ids, {13: {14: 0.45}}, window=5, reach=0.5)[0][3:5] == [4, 3]
    # Nothing moves from past the top 10; an older hit below the top 5 pulls nothing up; a chain
    # ends newest first.
    assert _newer_above(list(range(12)), list(range(10, 22)), {13: {21: 0.9}}, window=5, reach=0.5)[0] == list(
        range(12))
    assert _newer_above(list(range(10)), ids, {16: {18: 0.9}}, window=5, reach=0.5)[0] == list(range(10))
    chain, _ = _newer_above(list(range(10)), ids, {10: {12: 0.6, 18: 0.7}, 12: {18: 0.8}}, window=5, reach=0.5)
    assert [ids[p] for p in chain][:4] == [18, 12, 10, 11]


@pytest.mark.parametrize("query, older, newer, same", [
    ("Which company employs Mateo Quiroga?", "Mateo Quiroga works as a data engineer at Brightloom",
     "Mateo started at Coralfin Analytics last Monday", True),  # a name shortened
    ("How much is the ledger-sync plan?", "The ledger-sync plan costs 30 EUR a month",
     "The homepage plan costs 40 EUR a month", False),  # another identifier
    ("What is Dana Whitfield's email address?", "Dana Whitfield's email is dana@old.example",
     "Dana Whitfield's mobile is now 555-0199", False),  # another attribute
    ("Where does Oskar live now?", "Oskar moved to Brno", "Oskar Brandt moved: their email is now o@x.example",
     False),  # an attribute other than the one asked
    ("How do I reach Lorcan by email?", "Lorcan uses lorcan@gorsefield.ie for email",
     "Lorcan Whelan no longer uses his Gorsefield address, write to lorcan.whelan@fastmail.com", True),  # the value
    ("Who looks after the billing service?", "The billing-api service is owned by team Ledger",
     "Ownership of billing-api was transferred to team Quokka", True),  # an identifier's parts
    ("What URL do I call for the payments service?", "Payments API base URL: https://pay.internal.example/v1",
     "payments api endpoint is now https://payments-gw.internal.example/v2", True),  # URL is no name
    ("Who's in charge of Project Aurora?", "Project Aurora is led by Sunita.",
     "Sunita stepped back; Koen is now leading Aurora.", True),  # `leading` is a verb, not `billing`
    ("What build of api-gateway is live?", "api-gateway: v2.3.1", "api-gateway v2.4.0 rolled out to prod", True),
    ("Which city is Benedikt based in?", "Our cousin Benedikt lives in Graz.",
     "Benedikt relocated; he's been in Leipzig since March.", True),
])
def test_same_subject_reads_names_identifiers_and_attributes(query, older, newer, same):
    from strata_daemon.recall.currency import names_in, same_subject, wanted_attributes, words_of
    assert same_subject(older, newer, words_of(query), names_in(query), wanted_attributes(query)) is same


@pytest.mark.parametrize("text, parallel, restates", [
    ("Email from Dana Whitfield <dana@old.example>: asks about the launch", True, False),
    ("Lesson: pin invoice-bot versions before deploying on a Friday", True, False),
    ("Sent Oskar Brandt the status summary", True, False),
    ("Ownership of billing-api was transferred to team Quokka", False, True),
    ("Ezra Kowalczyk lives in Portland", False, False), ("Ezra Kowalczyk lives in Portland", True, True)])
def test_only_a_statement_worded_as_an_update_or_parallel_restates(text, parallel, restates):
    from strata_daemon.recall.currency import restates as restating
    assert restating(text, parallel) is restates


def test_a_fact_read_from_the_older_statement_gives_way_to_an_update_capture_could_not_read(memory):
    old = memory.observe("My phone number is +44 7700 900412", at="30d ago")["id"]
    new = memory.observe("Got a new SIM, reach me on +44 7700 900877 instead", at="2d ago")["id"]  # no form reads it
    other = memory.observe("My email address has changed to me@new.example", at="1d ago")["id"]
    memory.observe_many([{"content": text} for text in NOISE])
    memory.embed_pending()
    fact = memory.get_fact("my phone")  # the update took the fact (facts/updates.py) and linked the two
    assert (fact["value"], fact["source"]) == ("+44 7700 900877", f"episode:{new}")
    r = memory.recall("What's my phone number?", mode="balanced", k=5)
    ids = [h["id"] for h in r["hits"]]
    assert ids[0] == new and ids.index(old) > 0, ids
    assert r["hits"][ids.index(old)]["explain"]["superseded_by"] == [new]
    assert other not in ids[:1]  # an update of another attribute does not displace the fact


def test_a_present_question_ranks_the_newer_of_two_alike_memories_first(memory):
    old = memory.observe("The analytics warehouse lives in us-east-2", at="30d ago")["id"]
    # Capture reads both (`lives in`, `moved to`) and links them; this wording it does not link.
    new = memory.observe("Warehouse data now served from ap-southeast-1 after the APAC move", at="2d ago")["id"]
    memory.observe_many([{"content": text} for text in NOISE])
    memory.embed_pending()
    r = memory.recall("Where is the analytics warehouse hosted?", mode="balanced", k=5)
    ids = [h["id"] for h in r["hits"]]
    assert ids.index(new) < ids.index(old)
    assert r["hits"][ids.index(old)]["explain"]["newer_alike"] == [new]
    moved = r["hits"][ids.index(new)]
    assert moved["moved_above"] == [old] and f"moved above #{old}: newer, and alike it" in moved["why"]
    past = memory.recall("Where was the analytics warehouse hosted before?", mode="balanced", k=5)
    assert all("newer_alike" not in h["explain"] for h in past["hits"])


def test_recall_text_says_why_a_hit_is_out_of_score_order(cli):
    cli("observe", "The analytics warehouse lives in us-east-2", "--at", "30d ago", check=True)
    cli("observe", "Warehouse data now served from ap-southeast-1 after the APAC move", "--at", "2d ago", check=True)
    for text in NOISE:
        cli("observe", text, check=True)
    out = cli("recall", "Where is the analytics warehouse hosted?", "--mode", "balanced", "-k", "5", check=True).out
    assert "a newer memory alike an older one ranks just above it, marked ↑; the rest follow their scores" in out
    # The match line wraps at 80 columns as the header does.
    assert re.search(r"\n +1\. #2 +↑[0-9.]+ .*\n +Warehouse data .*\n .*moved above #1: newer, and\s+alike it", out), out


@pytest.mark.parametrize("shown", [[1, 2, 3], [1, 3, 2], [2, 1, 3], [3, 2, 1], [2, 3, 1]])
def test_a_chain_of_alike_updates_ends_newest_first_whatever_the_order(shown):
    from strata_daemon.recall.ranking import _newer_above

    ids = [0, 10, 20, 30, 99]  # positions 1, 2, 3: a chain said in that order; 4 and 0 outside it
    alike = {10: {20: 0.6, 30: 0.6}, 20: {30: 0.6}}
    order, _ = _newer_above([0, *shown, 4], ids, alike, window=5, reach=1.0)
    assert order == [0, 3, 2, 1, 4]
    # Only B -> C read as alike (A -> C not): C still ends above B, as B above A.
    order, moved = _newer_above([1, 2, 3], ids, {10: {20: 0.6}, 20: {30: 0.6}}, window=5, reach=1.0)
    assert order == [3, 2, 1] and moved == {10: [20], 20: [30]}


def test_a_present_question_ranks_the_last_of_three_updates_first(memory):
    chain = ["atlas repo default branch: master", "Renamed atlas default branch to main.",
             "atlas: default branch switched to trunk for the new release flow"]
    ids = [memory.observe(text, at=f"{days}d ago")["id"] for text, days in zip(chain, (60, 30, 2))]
    memory.observe_many([{"content": text} for text in NOISE])
    memory.embed_pending()
    r = memory.recall("What's the default branch of the atlas repository now?", mode="balanced", k=5)
    assert [h["id"] for h in r["hits"][:3]] == ids[::-1]
