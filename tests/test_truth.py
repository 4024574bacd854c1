"""The truth now: a newer statement about a thing supersedes the older one however it is worded
and in whatever order the two arrive; the facts hold one key per subject and attribute and
its newest value (or stop being current, named stale); the block an agent reads leads with
what is true now. Real SQLite (and PostgreSQL), the real embedding model, the real CLI."""

from __future__ import annotations

import asyncio

import pytest
from strata_daemon.app.memory import Memory
from strata_daemon.facts.canonical import canonical
from strata_daemon.facts.keys import Source
from strata_daemon.facts.speaking import Known
from strata_daemon.facts.subjects import resolve, same_subject
from strata_daemon.facts.updates import update_of
from strata_daemon.store import facts as fact_store

OLD, NEW = "2026-03-01T10:00:00Z", "2026-04-01T10:00:00Z"
# (older, newer, question, key, newest value): the shapes the issue was filed with.
WORDINGS = {
    "escalated": ("The database migration ticket is priority P2.",
                  "The database migration ticket was escalated to priority P0.",
                  "What priority is the database migration ticket?", "database migration ticket.priority", "P0"),
    "moved": ("Our standup is in room Kite.", "Standup moved to room Lark.", "Where is standup held?",
              "standup.location", "room Lark"),
    "port": ("Gateway runs on 8080.", "Changed the gateway port to 8443.", "Which port does the gateway use?",
             "gateway.port", "8443"),
    "no capture words": ("My mobile is 555-0181.", "Got a new SIM, reach me on 555-0192 instead.",
                         "What is my phone number?", "my phone", "555-0192"),
    "first name": ("Dana Whitfield's email is dana@old.example", "Dana's email changed to dana@new.example",
                   "What is Dana Whitfield's email address?", "dana whitfield.email", "dana@new.example"),
    "at a time": ("The standup is at 9:30.", "Standup moved to 10:00.", "What time is standup?", "standup.time",
                  "10:00"),
    "runs on a host": ("Grafana runs on mon-1.internal.example.",
                       "We rebuilt monitoring; Grafana lives on obs-2.internal.example now.",
                       "Which machine serves Grafana?", "grafana.location", "obs-2.internal.example"),
    "head noun": ("The analytics warehouse lives in us-east-2.", "Warehouse is in ap-southeast-1 after the APAC move.",
                  "Where is the analytics warehouse?", "analytics warehouse.location", "ap-southeast-1"),
    "from old to new": ("The backup job moved to nas-2.", "We moved the backup job from nas-2 to nas-3.",
                        "Where does the backup job run?", "backup job.location", "nas-3"),
    "switched from": ("The DNS provider is Cloudflare.", "We switched the DNS provider from Cloudflare to deSEC.",
                      "Who is our DNS provider?", "dns.provider", "deSEC"),
    "won the election": ("leader: node-1", "node-4 won the election and is leader", "Which node is leader now?",
                         "leader", "node-4"),
}

# A key is named as its subject was first said: said first, `Warehouse` names the key the
# analytics warehouse's later statement lands on.
LATE_KEYS = {"head noun": "warehouse.location"}


def _stored(memory, older: str, newer: str, late: bool) -> tuple[int, int]:
    order = [(newer, NEW), (older, OLD)] if late else [(older, OLD), (newer, NEW)]
    ids = {text: memory.observe(text, at=at)["id"] for text, at in order}
    memory.observe_many([{"content": f"relay-{i}: restarted nginx after config change {i}"} for i in range(12)])
    return ids[older], ids[newer]


@pytest.mark.parametrize("late", [False, True], ids=["in-order", "older-arrives-late"])
@pytest.mark.parametrize("case", sorted(WORDINGS))
def test_the_newest_value_is_the_fact_recall_and_the_block_lead_with(memory, case, late):
    older, newer, question, key, value = WORDINGS[case]
    old_id, new_id = _stored(memory, older, newer, late)
    key = LATE_KEYS.get(case, key) if late else key
    fact = memory.get_fact(key)
    assert (fact["value"], fact["source"]) == (value, f"episode:{new_id}")
    assert all(f["source"] != f"episode:{old_id}" for f in memory.list_facts())  # no stale key beside it
    assert memory.get(old_id)["supersession"]["superseded_by"] == [new_id]
    memory.embed_pending()
    ids = [h["id"] for h in memory.recall(question, k=10)["hits"]]
    assert new_id in ids and (old_id not in ids or ids.index(new_id) < ids.index(old_id))
    block = memory.context(question, budget=200, record=False)
    shown = [m["id"] for m in block["parts"]["memories"]]
    assert shown.index(new_id) < (shown.index(old_id) if old_id in shown else len(shown))
    assert all(f["value"] == value for f in block["parts"]["facts"] if f["key"] == key)


def test_the_block_of_a_small_home_keeps_to_the_question(memory, cli):
    """The issue's home: three changes and a lunch order. Each question's block holds its own
    two statements, newest first, and none of the others; the lunch order is no fact."""
    ids = {}
    for case in ("escalated", "moved", "port"):
        older, newer, *_ = WORDINGS[case]
        ids[case] = [memory.observe(newer, at=NEW)["id"], memory.observe(older, at=OLD)["id"]]
    memory.observe("Lunch order: two salads and a soup.", at=NEW)
    memory.embed_pending()
    for case in ("escalated", "moved", "port"):
        *_, question, _, value = WORDINGS[case]
        block = memory.context(question, budget=300, record=False)
        assert [f["value"] for f in block["parts"]["facts"]] == [value]
        assert [m["id"] for m in block["parts"]["memories"]] == ids[case]
    assert sorted(f["key"] for f in memory.list_facts()) == ["database migration ticket.priority",
                                                             "gateway.port", "standup.location"]
    # A subject alone reads its one attribute, or names them all.
    assert memory.get_fact("the database migration ticket")["value"] == "P0"
    history = cli.json("fact", "history", "the database migration ticket")  # as get reads it
    assert history["key"] == "database migration ticket.priority" and len(history["history"]) == 2
    assert cli.json("fact", "retract", "standup")["key"] == "standup.location"  # and retract too
    assert "standup.location" not in {f["key"] for f in memory.list_facts()}
    memory.set_fact("gateway.owner", "Ana")
    got = cli("fact", "get", "gateway")
    assert got.returncode != 0 and "gateway.owner, gateway.port" in got.err and 'strata fact get "gateway.owner"' in got.err


def test_a_value_ended_without_a_new_one_is_stale_and_names_what_ended_it(memory, cli):
    a = memory.observe("I'm vegetarian.", at=OLD)["id"]
    b = memory.observe("Doctor's orders: I'm no longer vegetarian, I eat fish and chicken again.", at=NEW)["id"]
    assert "my diet" not in {f["key"] for f in memory.list_facts()}
    got = memory.get_fact("my diet")
    assert got["value"] == "vegetarian" and got["stale"] and got["superseded_by"] == f"episode:{b}"
    assert f"STALE: memory #{b} says it changed" in cli("fact", "get", "my diet", check=True).out
    assert memory.get(a)["supersession"]["superseded_by"] == [b]
    # With no value read, it is for a person to look at.
    assert [(c["key"], c["reason"]) for c in memory.fact_conflicts(flagged=True)] == [("my diet", "ended")]


def test_a_shorter_name_of_a_subject_is_pointed_to_its_keys(memory, cli):
    memory.observe("Dana Whitfield's email address is dana@whitfield.example")
    for action in ("get", "history", "retract"):  # a name, not a guess
        got = cli("fact", action, "dana")
        assert got.returncode == 3 and 'did you mean dana whitfield.email? (strata fact get "dana whitfield.email")' \
            in got.err, got.err
    assert memory.get_fact("dana whitfield.email")["value"] == "dana@whitfield.example"


def test_what_no_longer_holds_ends_its_fact_and_makes_no_key(memory):
    memory.observe("Jenkins runs on ci-1.", at=OLD)
    newer = memory.observe("Jenkins no longer runs on ci-1", at=NEW)["id"]
    got = memory.get_fact("jenkins.location")
    assert got["stale"] and got["superseded_by"] == f"episode:{newer}"
    assert [f["key"] for f in memory.list_facts()] == []  # no `jenkins no longer.location`


def test_things_true_at_once_stay_true(memory):
    work = memory.observe("Sven's work phone is +46 8 555 219 40.", at=OLD)["id"]
    home = memory.observe("Sven's home phone is +46 8 555 873 12, call after six.", at=NEW)["id"]
    memory.observe("Priya's email is priya@example.com", at=OLD)
    memory.observe("Dana's email changed to dana@example.com", at=NEW)
    keys = {f["key"]: f["value"] for f in memory.list_facts()}
    assert keys["sven.work phone"] == "+46 8 555 219 40" and keys["sven.home phone"] == "+46 8 555 873 12"
    assert keys["priya.email"] == "priya@example.com"
    assert memory.get(work)["supersession"] == {"supersedes": [], "superseded_by": []}
    assert memory.get(home)["supersession"] == {"supersedes": [], "superseded_by": []}


def test_a_change_in_the_first_person_updates_only_the_fact_it_speaks_of(memory):
    # A person's home holds many of their own facts; a switch names none of them by its words.
    memory.observe("My rent is 950 a month.", at=OLD)
    memory.observe("My dentist is Dr Ilse Verhoeven.", at=OLD)
    provider = memory.observe("My phone provider is Verizon.", at=OLD)["id"]
    switch = memory.observe("Switched dentists: I now see Dr Amaral.", at=NEW)
    carrier = memory.observe("Switched carriers; I'm on Kestrel Mobile now.", at=NEW)["id"]
    assert [f["key"] for f in switch["facts"]] == ["my dentist"]
    facts = {f["key"]: f["value"] for f in memory.list_facts()}
    assert facts["my rent"] == "950 a month" and "my dentist" not in facts  # ended: no value read
    assert memory.get_fact("my phone provider")["superseded_by"] == f"episode:{carrier}"
    assert memory.get(provider)["supersession"]["superseded_by"] == [carrier]


def test_a_plan_or_a_question_changes_nothing_yet(memory):
    memory.observe("I live in Austin.", at=OLD)
    memory.observe("I got a job offer in Denver and I'm moving there next week.", at=NEW)
    memory.observe("Should I move to Denver?", at=NEW)
    assert memory.get_fact("my location")["value"] == "Austin"


def test_a_person_s_supersedes_link_ends_the_older_memory_s_facts_and_unlinking_restores_them(memory):
    a = memory.observe("My favourite tea is Earl Grey.", at=OLD)["id"]
    b = memory.observe("These days I drink lapsang souchong most.", at=NEW)["id"]
    assert memory.get_fact("my favourite tea")["value"] == "Earl Grey"  # no rule reads this as an update
    r = memory.link(f"episode:{b}", f"episode:{a}", "supersedes")
    assert [(f["key"], f["status"]) for f in r["facts"]] == [("my favourite tea", "retracted")]
    assert memory.get_fact("my favourite tea")["superseded_by"] == f"episode:{b}"
    memory.link(f"episode:{b}", f"episode:{a}", "supersedes", remove=True)
    back = memory.get_fact("my favourite tea")
    assert (back["value"], back["source"], back.get("stale")) == ("Earl Grey", f"episode:{a}", False)


def test_a_person_s_value_is_kept_under_the_key_they_wrote(memory):
    memory.set_fact("Standup room", "Heron", source="person:alice")
    memory.observe("Our standup is in room Kite.", at=OLD)
    assert memory.get_fact("standup room")["value"] == "Heron"
    assert memory.get_fact("standup.location")["value"] == "room Kite"


def test_a_home_captured_before_canonical_keys_moves_them_once_when_opened(memory, home):
    e = memory.observe("relay-9: restarted nginx")["id"]

    def old_keys(conn):
        for key, value in (("gateway.runs", "on 8080"), ("our standup", "in room Kite")):
            fact_store.write(conn, "default", key, fact_store.Assertion(
                label=key, value=value, valid_from=None, source=Source("episode", str(e)), rule="statement"),
                actor="test", now=1_790_000_000.0, window=60)
        conn.execute("UPDATE episodes SET content = ? WHERE id = ?", ("Gateway runs on 8080. Our standup is in room "
                                                                      "Kite.", e))
        conn.execute("INSERT INTO meta (key, value) VALUES ('fact_keys_owed', '1')")
    memory.wait(memory.raw.db.transact(old_keys))
    assert memory.rekey_facts()["count"] == 2  # a dry run changes nothing

    async def reopen():
        mem = await Memory.open(home)
        try:
            return {f["key"]: f["value"] for f in await mem.list_facts()}, await mem.rekey_facts()
        finally:
            await mem.close()
    keys, again = asyncio.run(reopen())
    assert keys == {"gateway.port": "8080", "standup.location": "room Kite"} and again["count"] == 0


@pytest.mark.parametrize("subject, attribute, value, expected", [
    ("", "gateway port", "8443", ("gateway", "port", "8443")),
    ("", "The database migration ticket", "priority P2", ("database migration ticket", "priority", "P2")),
    ("", "contact at Veridian Print", "Saoirse Doyle", ("Veridian Print", "contact", "Saoirse Doyle")),
    ("", "consulting tier", "1500 per month", ("consulting tier", "", "1500 per month")),
    ("", "New number", "555-0202", ("my", "phone", "555-0202")),
    ("Keiko", "leads", "the mobile team", ("mobile team", "owner", "Keiko")),
    ("nightly backup", "runs", "at 01:00", ("nightly backup", "time", "01:00")),
    ("Staging", "lives", "at https://staging.example.com", ("Staging", "endpoint", "https://staging.example.com")),
    ("our", "address", "14 Alder Lane", ("my", "location", "14 Alder Lane")),
])
def test_one_key_per_subject_and_attribute(subject, attribute, value, expected):
    assert canonical(subject, attribute, value) == expected


def test_a_general_remark_is_no_fact():
    from strata_daemon.facts.statements import statements
    assert statements("The key is to find something that keeps you motivated.") == []
    assert statements("Kids are our future.") == []
    assert statements("Rent is 1,250 a month.") == [("Rent", "1,250 a month")]


def test_a_subject_named_another_way_finds_its_key():
    assert same_subject("Dana", "Dana Whitfield") and same_subject("billing-api", "the billing-api service")
    assert same_subject("Atlas Migration", "Atlas Migration project") and same_subject("Wi-Fi", "wifi")
    assert not same_subject("analytics warehouse", "billing warehouse") and not same_subject("web-1", "web-2")
    # A head noun names the one thing it heads, its modifiers plain words; not a named one.
    assert same_subject("Warehouse", "the analytics warehouse") and not same_subject("bridge", "Host A bridge")
    assert not same_subject("room", "Kite room") and not same_subject("whitfield", "dana whitfield", loose=True)
    assert resolve("warehouse", [("analytics warehouse.location", "analytics warehouse"),
                                 ("billing warehouse.location", "billing warehouse")]) is None
    assert resolve("Dana", [("dana whitfield.email", "Dana Whitfield"), ("dana okafor.email", "Dana Okafor")]) is None


@pytest.mark.parametrize("known, text, value", [
    (Known("my phone", "my", "phone", "555-0181"), "Got a new SIM, reach me on 555-0192 instead.", "555-0192"),
    (Known("rafael.employer", "Rafael", "employer", "Brightwell Analytics"),
     "Rafael left Brightwell and is now a data engineer at Korvo Labs.", "Korvo Labs"),
    (Known("leader", "leader", "", "node-2"), "leader election finished, node-4 is leader", "node-4"),
    (Known("garage door", "Garage door", "", "open"), "Garage door: closed at 22:10", "closed"),
    (Known("project heron.owner", "Project Heron", "owner", "Imogen Achterberg"),
     "Imogen handed Project Heron over to Raj Pillai", "Raj Pillai"),
    (Known("my diet", "my", "diet", "vegetarian"), "I'm no longer vegetarian.", None),
    # Words of the old value in it, but another value given: `night` is no restatement.
    (Known("standup.location", "Standup", "location", "Lark"), "Standup moved to Heron while Lark is repainted.",
     "Heron"),
    (Known("checkout replicas", "checkout replicas", "", "4"), "scaled checkout to 9 replicas for the sale",
     "9 replicas"),
    # Someone who now does what the old holder did; a possessive names its owner.
    (Known("head chef", "Head chef", "", "Anton"), "Kemi took over as head chef.", "Kemi"),
    (Known("eastgate store.owner", "Eastgate store", "owner", "Evie"),
     "Evie transferred to head office, Marcus runs Eastgate now.", "Marcus"),
    (Known("mia.swim coach", "Mia", "swim coach", "Mr Ortiz"), "Coach Bettina took over Mia's squad.", "Bettina"),
    (Known("release.owner", "Release", "owner", "Olu"), "Fernanda became the new release captain", "Fernanda"),
    (Known("marisol.diet", "Marisol", "diet", "pescatarian"), "Marisol stopped eating fish too, she's fully vegetarian",
     "vegetarian"),
    (Known("my car insurance", "my", "car insurance", "Caldera Mutual"),
     "Renewed the car insurance with Brightshore instead - cheaper by 80 a year.", "Brightshore"),
])
def test_a_newer_memory_updates_a_fact_it_does_not_state_in_capture_s_words(known, text, value):
    u = update_of(known, text)
    assert u is not None and u.value == value


def test_a_possessive_names_its_owner_and_a_pronoun_names_nothing():
    from strata_daemon.facts.speaking import mentions
    from strata_daemon.facts.statements import claims

    assert mentions("Leo", "Coach Dimitra took over Leo's team.")
    assert not mentions("it", "We moved Pepper to Ashdown Animal Clinic, it's closer.")
    # Whose `it` is, the sentence before says: no key `it.location` for every thing to land on.
    assert claims("Wiki moved off web-4; it lives on app-9 now.") == []
    assert [c.label for c in claims("The wiki lives on app-9 now.")] == ["wiki.location"]


def test_a_key_of_an_attribute_in_two_words_is_read_back_whole():
    from strata_daemon.facts.speaking import parse_key

    k = parse_key("sam.pocket money", "Sam.pocket money")
    assert (k.subject, k.attribute) == ("Sam", "pocket money")
    for host in ("gw-02.example.com cpu temp", "db-01.internal disk usage"):  # a host name's dots
        assert parse_key(host, host).attribute == ""


def test_an_update_no_word_of_which_names_the_attribute_is_weak():
    assert update_of(Known("milk.provider", "Milk", "provider", "Dale Farm"), "Switched milk to Green Pastures.").weak
    assert not update_of(Known("my phone", "my", "phone", "555-0181"), "My new number is 555-0192.").weak
    # Only a change said ties it: weighed against a higher likeness (facts.loose_floor).
    assert update_of(Known("sam.pocket money", "Sam", "pocket money", "5 pounds a week"),
                     "Sam now gets 7 pounds a week since his birthday.").weak


@pytest.mark.parametrize("known, text", [
    (Known("sven.work phone", "Sven", "work phone", "+46 8 555 219 40"), "Sven's home phone: +46 8 555 873 12"),
    (Known("dana.email", "Dana", "email", "dana@a.example"), "Priya's email changed to priya@b.example"),
    (Known("my location", "my", "location", "Bergen"), "My sister just moved to Oslo."),
    (Known("my location", "my", "location", "Austin"), "I'm moving to Denver next week."),
    (Known("mail relay", "Mail relay", "", "DOWN"), "Cycle 4193 notes: mail relay was flaky, now up again"),
    (Known("dana.email", "Dana", "email", "dana@a.example"), "What is Dana's email now?"),
    (Known("joanna.diet", "Joanna", "diet", "lactose intolerant"),  # spoken to Joanna, not of her
     "Hey Joanna, something awesome happened: I got to teach people vegan ice cream recipes on my new show!"),
    # A to-do is still to happen; a way of reaching someone is no address; what follows a thing
    # named as the place something else happened is not its state.
    (Known("ledger-sync.version", "ledger-sync", "version", "4.0.1"),
     "TODO T-344 (Sofia Marin asked): upgrade ledger-sync to 4.7.7"),
    (Known("hana novak.email", "Hana Novak", "email", "hana@mailbox.org"),
     "Decision in cycle 4332: answer Hana by email instead of chat; reason: it cost about 38 min a week."),
    (Known("nas-01", "nas-01", "", "OK"), "Done T-316: found why the metrics exporter restarts on nas-01: ECONNREFUSED"),
    # A change said of the subject with no value of the attribute read: not the version's.
    (Known("photo-archive.version", "photo-archive", "version", "4.0.3"), "Done T-312: renewed the domain for photo-archive"),
    # Someone doing something else, or the old holder still doing it.
    (Known("head chef", "Head chef", "", "Anton"), "Anton runs the head chef's birthday dinner tonight?"),
    (Known("head chef", "Head chef", "", "Anton"), "Anton still runs the kitchen as head chef."),
])
def test_what_is_not_an_update_of_the_fact_leaves_it(known, text):
    assert update_of(known, text) is None
