"""Forget means forget: a purge reaches every derived layer and the file's bytes; forget by text
and by fact key; backups that still hold a purged memory; the MCP forget tool."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from conftest import on_postgres
from mcp_helpers import mcp_client
from sealed_pages import readable
from strata_bench import server_files
from strata_bench.forgetting import CASES, bench_forget
from strata_daemon.errors import StorageError
from strata_daemon.forgetting import folding
from strata_daemon.forgetting.redaction import REDACTED, Purged, redact_line, redact_lines


def raw_bytes(home) -> bytes:
    """The database's bytes: SQLite's file and WAL, or every file of the test's PostgreSQL database."""
    if on_postgres():
        return b"".join(server_files.database_files(os.environ["STRATA_DATABASE_URL"]).values())
    state = home / "state"
    return b"".join(readable(p) for p in sorted(state.glob("memory.db*")) if p.is_file())


# -- what a purge looks for (pure) -----------------------------------------------------------------

def test_a_line_is_touched_by_a_cite_a_needle_or_a_fact_line_and_keeps_its_list_marker():
    p = Purged()
    p.add_memory(12, "Locker code: 7Q4417. The gym is on Elm Street.")
    p.add_value(34, "locker code", "7Q4417")
    assert p.touches("- 2026-01-02 (note) something [e12]") and not p.touches("- something [e121]")
    assert p.touches("- a line [e3, f34]") and not p.touches("- a line [f341]")
    assert p.touches("- Locker Code: 7q4417") and p.touches("saw: The gym is on Elm Street.")
    assert not p.touches("- Bridge: UP") and not p.touches("the gym")  # shorter than a needle
    p.add_text("gym")  # what a person names is looked for however short
    assert p.touches("the gym")
    assert redact_line("- [ ] call about it [e12]") == f"- [ ] {REDACTED}"
    assert redact_line("  * a pin") == f"  * {REDACTED}"
    text, n = redact_lines("# Title\n- kept\n- Locker code: 7Q4417\n", p)
    assert n == 1 and text == f"# Title\n- kept\n- {REDACTED}\n"
    assert p.touches_json(json.dumps({"value": "Locker code: 7Q4417. The gym is on Elm Street."}))


# -- each derived layer ----------------------------------------------------------------------------

def test_purge_takes_the_fact_its_audit_and_the_words_from_the_file(memory, home):
    first = memory.observe("Dana Whitfield's email address is dana.w@oldmailbox.example")
    assert memory.get_fact("dana whitfield.email")["value"] == "dana.w@oldmailbox.example"
    assert b"oldmailbox" in raw_bytes(home)
    r = memory.forget(first["id"], purge=True)
    assert r["purged"] and r["facts"] == [{"key": "dana whitfield.email", "retracted": True, "values_removed": 1}]
    assert r["audit_redacted"] >= 1 and r["wal_cleared"] is not on_postgres() and r["heap_cleared"]
    assert r["store"] == ("postgres" if on_postgres() else "sqlite")
    history = memory.fact_history("dana whitfield.email")["history"]
    assert [h["value"] for h in history] == [None] and history[0]["rule"] == "purge"
    assert history[0]["value_id"] > 1  # the purged value's id (1) is never given again: dossiers cite it
    audit = memory.sql("SELECT action, data FROM audit WHERE item_kind = 'fact' ORDER BY id")
    assert [a["action"] for a in audit] == ["created", "redact"]
    assert json.loads(audit[0]["data"]) == {"redacted_by_purge": r["purge"]}
    purge = memory.sql("SELECT data FROM audit WHERE action = 'purge'")
    assert json.loads(purge[0]["data"])["hash"]  # that it happened, and a hash
    assert b"oldmailbox" not in raw_bytes(home) and b"dana.w" not in raw_bytes(home)
    assert memory.recall("Dana Whitfield email", mode="fast")["hits"] == []


def test_the_audit_stays_append_only_outside_a_purge(memory):
    memory.observe("Bridge: UP")
    with pytest.raises(StorageError, match="append-only"):
        memory.wait(memory.raw.db.transact(lambda c: c.execute("UPDATE audit SET data = '{}'")))
    with pytest.raises(StorageError, match="append-only"):
        memory.wait(memory.raw.db.transact(lambda c: c.execute("DELETE FROM audit")))
    with pytest.raises(StorageError, match="never deleted"):
        memory.wait(memory.raw.db.transact(lambda c: c.execute("DELETE FROM fact_values")))


def test_a_fact_keeps_what_its_other_sources_say(memory):
    old = memory.observe("Marek's phone number is 555-0111.", at="2d ago")
    memory.observe("Marek's phone number is now 555-0122.", at="1d ago")
    memory.forget(old["id"], purge=True)
    assert [h["value"] for h in memory.fact_history("marek.phone")["history"]] == ["555-0122"]

    memory.observe("Oskar's office is room B-12.", at="2d ago")
    newer = memory.observe("Oskar's office is now room Z-99.", at="1d ago")
    memory.forget(newer["id"], purge=True)
    fact = memory.get_fact("oskar.office")
    assert fact["value"] == "room B-12" and fact["valid_to"] is None  # the older value runs on again

    said = memory.observe("Door code: 5512-KK", at="3d ago")
    memory.observe("Door code: 5512-KK", at="1d ago")  # a confirmation: no value of its own
    memory.forget(said["id"], purge=True)
    assert memory.get_fact("door code")["value"] == "5512-KK"  # on the later memory's word
    assert memory.get_fact("door code")["source"] != f"episode:{said['id']}"


def test_purge_takes_what_consolidation_merged_into_it_and_never_gives_its_id_again(memory):
    keep = memory.observe("The gate code for the Larch Street depot is 6620-VBQ.")["id"]
    dup = memory.observe("Gate code, Larch Street depot: 6620-VBQ")["id"]
    memory.wait(memory.raw.db.transact(lambda c: c.execute(
        "UPDATE episodes SET state = 'superseded', superseded_by = ?, tier = 'cold' WHERE id = ?", (keep, dup))))
    r = memory.forget(keep, purge=True)
    assert sorted(r["memories"]) == sorted([keep, dup])
    assert memory.sql("SELECT count(*) AS n FROM episodes")[0]["n"] == 0
    assert memory.observe("a new memory")["id"] == max(keep, dup) + 1


def _merge(memory, keep: int, dup: int) -> None:
    memory.wait(memory.raw.db.transact(lambda c: c.execute(
        "UPDATE episodes SET state = 'superseded', superseded_by = ?, tier = 'cold' WHERE id = ?", (keep, dup))))


def test_purge_of_a_merged_twin_takes_the_memory_it_was_merged_into(memory):
    keep = memory.observe("The storage unit at Dock 9 opens with 4471-MZR.")["id"]
    dup = memory.observe("Storage unit, Dock 9: 4471-MZR")["id"]
    _merge(memory, keep, dup)
    assert sorted(memory.forget(dup, purge=True)["memories"]) == [keep, dup]


def test_archive_follows_merges_and_restore_brings_them_back_as_they_were(memory):
    keep = memory.observe("The gate code for the Larch Street depot is 6620-VBQ.")["id"]
    dup = memory.observe("Gate code, Larch Street depot: 6620-VBQ")["id"]
    _merge(memory, keep, dup)
    assert memory.forget(keep)["merged_archived"] == [dup]
    states = {r["id"]: r["state"] for r in memory.sql("SELECT id, state FROM episodes")}
    assert states == {keep: "archived", dup: "archived"}
    assert memory.recall("6620-VBQ", mode="fast")["hits"] == []
    assert memory.restore(keep)["merged_restored"] == [dup]
    rows = {r["id"]: (r["state"], r["superseded_by"]) for r in memory.sql("SELECT id, state, superseded_by "
                                                                           "FROM episodes")}
    assert rows == {keep: ("active", None), dup: ("superseded", keep)}
    assert memory.forget(dup)["merged_archived"] == [keep]  # from either side


def test_an_import_never_gives_a_purged_id_again(cli, home, tmp_path):
    first = cli.json("observe", "The alarm code at the cabin is 4471-QX.")["id"]
    cli.json("observe", "The cabin is by the lake.")
    cli("forget", str(first), "--purge", check=True)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": first, "content": "a new memory asking for an old id"}) + "\n")
    cli("import", str(rows), check=True)
    given = [m for m in map(json.loads, cli("export", "--plain", check=True).out.splitlines()) if m["content"].startswith("a new")]
    assert len(given) == 1 and given[0]["id"] != first
    trail = cli.json("show", str(given[0]["id"]))["history"]
    assert [a["action"] for a in trail] == ["create"]  # its own trail, not the purged memory's


def test_forget_matching_reaches_sources_sessions_contexts_keys_topics_and_entities(cli, home):
    said = cli.json("observe", "innocent words", "--source", "src-Pellucine", "--session", "s-Pellucine",
                    "--context", "code=Pellucine")["id"]
    cli("fact", "set", "Pellucine owner", "bob", check=True)
    cli("fact", "set", "printer", "10.0.0.9", "--source", "person:Pellucine", check=True)
    cli("dossier", "add", "pellucine plans", "--query", "innocent", check=True)
    cli("dossier", "refresh", "pellucine plans", check=True)
    cli("capsule", "render", check=True)
    assert cli.json("recall", "Pellucine", "--mode", "fast")["hits"]
    listed = cli.json("forget", "--matching", "pellucine")
    assert [m["id"] for m in listed["memories"]] == [said] and listed["topics"] == ["pellucine_plans"]
    assert {(f["key"], f["removed_whole"]) for f in listed["facts"]} == {("pellucine owner", True),
                                                                         ("printer", False)}
    assert listed["entities"]  # the source names a person
    done = cli.json("forget", "--matching", "pellucine", "--purge", "--yes")["result"]
    assert done["topics_removed"] == ["pellucine_plans"] and done["memories"] == [said]
    assert b"ellucine" not in raw_bytes(home).lower()
    for path in home.rglob("*"):
        assert not path.is_file() or b"ellucine" not in readable(path).lower(), path
    assert cli("fact", "get", "pellucine owner").returncode == 3
    assert cli.json("dossier", "list")["topics"] == [] or "pellucine_plans" not in [
        t["topic"] for t in cli.json("dossier", "list")["topics"]]


def test_forget_matching_finds_a_topic_named_with_the_words_in_its_kept_form(cli, home):
    # A topic's name is kept folded (`SECRET-ZEBRA-7741` is `secret_zebra_7741`): the spelling
    # asked for must reach it, its versions and the capsule that lists it.
    cli("observe", "the quarterly numbers look fine", check=True)
    cli("dossier", "add", "SECRET-ZEBRA-7741", "--query", "quarterly", check=True)
    cli("dossier", "refresh", "SECRET-ZEBRA-7741", check=True)
    cli("capsule", "render", check=True)
    cli("fact", "set", "Secret Zebra 7741", "on", check=True)  # a key folds its separators: `secret zebra 7741`
    listed = cli.json("forget", "--matching", "SECRET-ZEBRA-7741")
    assert listed["topics"] == ["secret_zebra_7741"]
    assert [f["key"] for f in listed["facts"]] == ["secret zebra 7741"]
    assert cli.json("forget", "--matching", "secret_zebra_7741")["topics"] == ["secret_zebra_7741"]
    cli.json("forget", "--matching", "SECRET-ZEBRA-7741", "--purge", "--yes")
    for path in home.rglob("*"):
        assert not path.is_file() or b"zebra" not in readable(path).lower(), path
    assert "zebra" not in cli("capsule", "show", check=True).out.lower()


def test_fact_forget_and_dossier_remove_take_words_too(cli, home):
    cli("fact", "set", "Tessaly door code", "4411", check=True)
    cli("fact", "set", "lamp", "on", check=True)
    listed = cli("fact", "forget", "--matching", "tessaly", check=True).out
    assert "fact tessaly door code: the fact itself, key and all" in listed and "lamp" not in listed
    cli("fact", "forget", "--matching", "tessaly", "--yes", check=True)
    assert [f["key"] for f in cli.json("fact", "list")] == ["lamp"]
    assert cli("fact", "forget", "--matching", "tessaly").returncode == 3  # nothing holds it now
    assert cli("fact", "forget").returncode == 4 and cli("fact", "forget", "lamp", "--matching", "x").returncode == 4

    cli("dossier", "add", "wexmoor orchard", check=True)
    cli("dossier", "add", "kettle lake", check=True)
    for topic in ("wexmoor orchard", "kettle lake"):
        cli("dossier", "refresh", topic, "--force", check=True)
    assert cli("dossier", "remove", "--matching", "wexmoor").returncode == 4  # for good only: --purge
    yes_alone = cli("dossier", "remove", "kettle lake", "--yes")  # --yes confirms a purge, nothing else
    assert yes_alone.returncode == 4 and "add --purge" in yes_alone.err
    assert "dossier topic wexmoor_orchard, every version" in cli("dossier", "remove", "--matching", "wexmoor",
                                                                 "--purge", check=True).out
    cli("dossier", "remove", "--matching", "wexmoor", "--purge", "--yes", check=True)
    gone = cli.json("dossier", "remove", "kettle lake", "--purge", "--yes")["result"]
    assert gone["topics_removed"] == ["kettle_lake"] and gone["dossier_versions_removed"] == 1
    assert not {"wexmoor_orchard", "kettle_lake"} & {t["topic"] for t in cli.json("dossier", "list")["topics"]}
    assert b"wexmoor" not in raw_bytes(home).lower() and b"kettle" not in raw_bytes(home).lower()


def test_a_purge_of_a_lower_id_after_a_higher_one_keeps_both_ids_unused(memory):
    ids = [memory.observe(f"note number {i} about the Larch Street depot")["id"] for i in range(3)]
    memory.forget(ids[2], purge=True)
    memory.forget(ids[1], purge=True)
    assert memory.observe("a new memory")["id"] == ids[2] + 1


def test_dossier_versions_lose_the_line_and_the_current_one_is_written_again(memory):
    secret = memory.observe("Project Falcon budget approved at 88k zorbles by the board.")["id"]
    memory.observe("Project Falcon kickoff moved to Thursday.")
    memory.add_topic("falcon", query="falcon")
    first = memory.refresh_dossier("falcon", force=True)
    assert "zorbles" in memory.show_dossier("falcon")["text"]
    r = memory.forget(secret, purge=True)
    assert r["dossier_lines_redacted"] >= 1 and r["dossiers_rewritten"] == ["falcon"]
    old = memory.show_dossier("falcon", version=first["version"])
    assert "zorbles" not in old["text"] and REDACTED in old["text"]
    assert all(s["id"] != f"e{secret}" for s in old["sources"])
    current = memory.show_dossier("falcon")
    assert current["version"] > first["version"] and "zorbles" not in current["text"]
    assert "kickoff" in current["text"]


def test_the_capsule_loses_the_line_without_taking_it_back_as_an_edit(memory, home):
    said = memory.observe("Locker combination: hunter-gx2")["id"]
    memory.observe("TODO: call Dr. Okonkwo about the biopsy results", kind="task")
    memory.render_capsule()
    path = memory.capsule_path
    assert "hunter-gx2" in path.read_text() and "biopsy" in path.read_text()
    memory.forget(said, purge=True)
    task = memory.sql("SELECT id FROM episodes WHERE kind = 'task'")[0]["id"]
    memory.forget(task, purge=True)
    text = path.read_text()
    assert "hunter-gx2" not in text and "biopsy" not in text and REDACTED not in text  # rendered again
    assert memory.capsule_overrides() == []  # neither pinned nor hidden
    assert "wifi password" not in {f["key"] for f in memory.list_facts()}  # not absorbed back as a fact
    for kept in (home / "state" / "capsule").rglob("CAPSULE-*.md"):
        assert "hunter-gx2" not in kept.read_text() and "biopsy" not in kept.read_text()


def test_a_capsule_shows_control_characters_escaped_and_a_purge_still_finds_the_line(memory, home):
    said = memory.observe("TODO: read the mail \x1b]0;pwned\x07 from Halvorsen-Quist", kind="task")["id"]
    memory.render_capsule()
    text = memory.capsule_path.read_text()
    assert "\\x1b]0;pwned\\x07 from Halvorsen-Quist" in text and "\x1b" not in text and "\x07" not in text
    memory.forget(said, purge=True)
    assert "Halvorsen" not in memory.capsule_path.read_text()
    for kept in (home / "state" / "capsule").rglob("CAPSULE-*.md"):
        assert "Halvorsen" not in kept.read_text()


def test_recall_logs_and_arena_episodes_forget_the_memory(memory):
    said = memory.observe("The vault PIN for the lab is 3141-PQZ.")["id"]
    other = memory.observe("The lab opens at nine.")["id"]
    found = memory.recall("vault PIN lab", mode="fast")
    memory.feedback(found["recall_id"], "success", used=[said, other])
    memory.forget(said, purge=True)
    assert memory.sql("SELECT query FROM recalls")[0]["query"] == REDACTED  # it found the purged memory
    assert memory.sql("SELECT count(*) AS n FROM access_events WHERE episode_id = ?", (said,))[0]["n"] == 0
    assert [(json.loads(r["useful"]), r["query"]) for r in memory.sql("SELECT useful, query FROM arena_episodes")
            ] == [([other], REDACTED)]


# -- forget by what --------------------------------------------------------------------------------

def test_forget_matching_lists_first_then_archives_or_purges(cli, home):
    a = cli.json("observe", "My phone number is 555-0199.")["id"]
    cli.json("observe", "Lunch at noon.")
    listed = cli("forget", "--matching", "555-0199", check=True)
    assert f"#{a}" in listed.out and "fact my phone" in listed.out and "--yes" in listed.out
    assert cli.json("show", str(a))["state"] == "active"  # a dry run changes nothing
    archived = cli.json("forget", "--matching", "555-0199", "--yes")
    assert archived["result"] == {"archived": [a], "retracted": ["my phone"]}
    cli("restore", str(a), check=True)  # an archive is undoable
    purged = cli.json("forget", "--matching", "555-0199", "--purge", "--yes")
    assert purged["result"]["memories"] == [a]
    assert b"555-0199" not in raw_bytes(home)
    assert cli("forget", "--matching", "ab").returncode != 0  # too short to mean anything
    assert cli("forget").returncode != 0


@pytest.mark.parametrize("needle, text, found", [
    ("MÜLLER", "Contact Jürgen Müller at the Straße office", {"Müller"}),
    ("Jurgen", "Contact Jürgen Müller at the Straße office", {"Jürgen"}),
    ("strasse", "Contact Jürgen Müller at the Straße office", {"Straße"}),
    ("café", "Cafe\u0301 noir, then CAFÉ crème", {"Cafe\u0301", "CAFÉ"}),  # decomposed and composed
    ("zebra", "Contact Jürgen Müller", set()),
])
def test_a_text_is_found_in_any_case_and_with_any_accents(needle, text, found):
    assert folding.spellings(needle, text) == found


def test_a_named_text_is_known_again_by_its_hash_alone():
    import hashlib

    from strata_daemon.app.restore import named_texts

    hashes = {hashlib.sha256(t.encode()).hexdigest() for t in ("kayak-xv", "Jürgen Müller")}
    assert named_texts("- Sasha's surprise present is a kayak-xv.", hashes) == {"kayak-xv"}
    assert named_texts("call (Jürgen Müller) today", hashes) == {"Jürgen Müller"}
    assert named_texts("a kayak for Jürgen", hashes) == set()


def test_forget_matching_finds_a_name_written_with_other_accents_and_purges_it(cli, home):
    a = cli.json("observe", "Contact Jürgen Müller at the Straße office")["id"]
    cli.json("observe", "Lunch at noon.")
    listed = cli.json("forget", "--matching", "MÜLLER")
    assert listed["spellings"] == ["Müller"] and [m["id"] for m in listed["memories"]] == [a]
    cli.json("forget", "--matching", "jurgen muller", "--purge", "--yes")
    assert "Müller".encode() not in raw_bytes(home)


def test_fact_forget_redacts_the_history_and_leaves_the_fact_retracted(cli, home):
    cli("fact", "set", "gate code", "8841-ZXW", check=True)
    cli("fact", "set", "gate code", "9902-ZXW", check=True)
    listed = cli("fact", "forget", "gate code", check=True)
    assert "fact gate code: 2 values" in listed.out and b"8841-ZXW" in raw_bytes(home)
    cli("fact", "forget", "gate code", "--yes", check=True)
    assert [h["value"] for h in cli.json("fact", "history", "gate code")["history"]] == [None]
    # Whole values: three bytes are found by chance in a sealed home's ciphertext (about one run in ten).
    assert b"8841-ZXW" not in raw_bytes(home) and b"9902-ZXW" not in raw_bytes(home)


def test_backups_that_still_hold_a_purged_memory_are_named_and_pruned(cli, home):
    a = cli.json("observe", "Our landlord is Mr. Brenwick-Hale.")["id"]
    cli("backup", check=True)
    r = cli.json("forget", str(a), "--purge")
    assert len(r["backups_holding"]) == 1
    listed = cli.json("backup", "--prune-containing", str(a))
    assert listed["backups"] == r["backups_holding"] and not listed["removed"]
    assert cli.json("backup", "--prune-containing", str(a), "--yes")["removed"]
    assert cli.json("backup", "--list") == []
    assert cli("backup", "--prune-containing", "999").returncode != 0  # never purged


def test_a_purge_removes_the_partial_copy_a_killed_backup_left(cli, home):
    import subprocess
    import sys

    a = cli.json("observe", "The vault code is 5512-QRT.")["id"]
    folder = home / "state" / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stem = folder / f".memory-20261207T090000Z.{int(dead.stdout)}.0badc0de.partial"
    stem.write_bytes(b"SQLite format 3\x00 ... The vault code is 5512-QRT.")  # a backup killed mid-copy
    stem.with_name(stem.name + "-wal").write_bytes(b"5512-QRT")
    alive = folder / f".memory-20261207T090001Z.{os.getpid()}.0badc0de.partial"  # a backup under way
    alive.write_bytes(b"")
    assert b"5512-QRT" in stem.read_bytes() and cli.json("backup", "--list") == []
    found = [f for f in cli.json("doctor")["findings"] if "backup cut short" in f["message"]]
    assert len(found) == 1 and found[0]["message"].startswith("2 files")  # the copy and its -wal, not the live one
    cli("forget", str(a), "--purge", check=True)
    assert sorted(p.name for p in folder.iterdir()) == [alive.name]


def test_an_export_made_before_a_purge_does_not_bring_the_words_back(cli, home, tmp_path):
    secret = cli.json("observe", "The alarm code at the cabin is 4471-QX.")["id"]
    kept = cli.json("observe", "The cabin is by the lake.")["id"]
    matched = cli.json("observe", "Spare key under the 4471 flowerpot.")["id"]
    old = tmp_path / "old.jsonl"
    cli("export", "-o", str(old), "--plain", check=True)  # read again below as text
    cli("forget", str(secret), "--purge", check=True)
    cli("forget", "--matching", "flowerpot", "--purge", "--yes", check=True)
    cli("forget", str(kept), "--purge", check=True)
    cli.json("observe", "The cabin is by the lake.")  # said anew after the purge: kept
    text = cli("import", str(old), check=True)
    assert "3 left out" in text.err and "purged" in text.err
    again = tmp_path / "again.jsonl"  # other bytes: not known as the import already run
    again.write_text(old.read_text() + "\n")
    report = cli.json("import", str(again))
    assert report["skipped_purged"] == 3 and report["created"] == 0 and report["duplicate"] == 0
    assert b"4471" not in raw_bytes(home)
    now = [json.loads(line) for line in cli("export", "--plain", check=True).out.splitlines()]
    assert not {m["id"] for m in now} & {secret, kept, matched}
    assert [m["content"] for m in now] == ["The cabin is by the lake."]


def test_purge_text_says_backups_still_hold_it(cli):
    a = cli.json("observe", "Our landlord is Mr. Brenwick-Hale.")["id"]
    cli("backup", check=True)
    out = cli("forget", str(a), "--purge", check=True).out
    assert "still held by the backup" in out and f"backup --prune-containing {a} --yes" in out
    # The log that keeps part of it is named as the store has it: no SQLite checkpoint on PostgreSQL.
    assert ("checkpoint" in out) is (not on_postgres() and "write-ahead" in out)
    assert ("server recycles" in out) is on_postgres()


# -- faces -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_mcp_forget_archives_and_purges_only_when_the_server_allows(home):
    async def go():
        async with mcp_client(home) as t:
            a = (await t.call("observe", content="The spare key hides under the blue gnomeqx."))["id"]
            assert (await t.call("forget", id=a))["state"] == "archived"
            assert "not_permitted" in await t.error("forget", id=a, purge=True)
            listed = await t.call("forget", matching="gnomeqx")
            assert not listed["applied"] and [m["id"] for m in listed["memories"]] == [a]
            assert "invalid_input" in await t.error("forget")
        async with mcp_client(home, flags=("--allow-purge",)) as t:
            done = await t.call("forget", matching="gnomeqx", purge=True, confirm=True)
            assert done["result"]["memories"] == [a]
            assert "not_found" in await t.error("memory_get", id=a)  # (a recall would log its own query)
    asyncio.run(go())
    assert b"gnomeqx" not in raw_bytes(home)


@pytest.mark.slow
def test_the_deletion_compliance_set_leaves_nothing_on_any_face_or_in_any_file():
    r = asyncio.run(bench_forget(servers=True))
    assert r["cases"] == len(CASES) >= 20
    assert r["unseen_before"] == [] and r["in_database_file_before"] == len(CASES)  # the probes can see
    assert set(r["faces"]) >= {"recall", "facts", "dossiers", "capsule", "export", "entities", "timeline", "file",
                               "http", "mcp"}
    assert r["leaked"] == [] and r["leaks"] == 0 and r["raw_bytes_clean"] and r["purged_ids_given_again"] == 0
    # An export and a backup made before the requests, put back after them, bring nothing back.
    assert r["brought_back"] == {"import": [], "restore": []}
    assert r["import_skipped_purged"] > 0 and r["restore_purged_again"]["memories"] > 0


def test_a_purge_stays_in_its_namespace(home):
    from strata_daemon import Memory

    async def go():
        async with await Memory.open(home, agent="alpha") as a, await Memory.open(home, agent="beta") as b:
            mine = (await a.observe("Locker code: 7Q4417"))["id"]
            theirs = (await b.observe("Locker code: 7Q4417"))["id"]
            await a.render_capsule()
            await b.render_capsule()
            with pytest.raises(Exception, match="no memory"):
                await a.forget(theirs, purge=True)
            await a.forget(mine, purge=True)
            assert (await b.get(theirs))["content"] == "Locker code: 7Q4417"
            assert (await b.get_fact("locker code"))["value"] == "7Q4417"
            assert "7Q4417" in b.capsule_path.read_text() and "7Q4417" not in a.capsule_path.read_text()
            audit = await b.db.fetchall("SELECT data FROM audit WHERE agent = 'beta' AND item_kind = 'fact'")
            assert "7Q4417" in audit[0][0]
            # An import leaves out only what this agent purged.
            rows = [{"content": "Locker code: 7Q4417", "event_at": 1.7e9}]
            assert (await a.observe_many(rows, skip_purged=True))["purged"] == 1
            assert (await b.observe_many(rows, skip_purged=True))["created"] == 1
    asyncio.run(go())


ON_SERVER = ("sentence", "phone by matching", "merged by consolidation", "cited in a dossier", "fact with history",
             "pinned by a person", "fact key by words", "dossier topic by words", "words in a capsule topic line")


@pytest.mark.postgres
def test_on_postgresql_the_set_leaves_nothing_in_the_servers_files(pg_server, monkeypatch):
    """A part of the set, each way of forgetting once, on a home kept on PostgreSQL (`bench
    forget --store-url` runs all of it with the HTTP and MCP faces)."""
    from strata_bench import stores

    monkeypatch.setattr(stores, "SERVER", pg_server.url())
    monkeypatch.delenv("STRATA_DATABASE_URL", raising=False)
    cases = tuple(c for c in CASES if c.name in ON_SERVER)
    try:
        r = asyncio.run(bench_forget(servers=False, cases=cases))
    finally:
        stores.drop_all()
    assert r["store"] == "postgres" and len(cases) == len(ON_SERVER) and {c.forget[0] for c in cases} == {
        "memory", "matching", "fact", "fact matching", "topic matching"}
    assert r["unseen_before"] == [] and r["in_database_file_before"] == len(cases)  # the probes can see
    assert any(f.startswith("episodes (") for f in r["files_checked"])
    assert r["leaked"] == [] and r["raw_bytes_clean"] and r["purged_ids_given_again"] == 0
    assert r["brought_back"] == {"import": [], "restore": []} and r["restore_purged_again"]["memories"] > 0
    assert r["wal_holds"]  # what the server's WAL keeps until it recycles it (docs/forgetting.md)
