"""The inspector driven by Textual pilots against real homes: what each screen shows, and that
its actions change the database through the same API as the CLI."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time

import pytest

from strata_daemon import Memory
from strata_daemon.faces.tui.format import age, explain
from strata_daemon.faces.tui.widgets.bars import KeyBar
from strata_daemon.store import phases as phase_records
from tests.tui_helpers import drive, notes, rows, settle, switch, type_in

NGINX = "deployed web-01 with nginx 1.25 after error E502"
TEA = "Alice prefers tea over coffee in the morning"
BACKUP = "the backup job on the home server runs at night"


async def cli(home, *args: str) -> None:
    """Another process writing, as the daemon or the CLI would."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "strata_daemon", "--home", str(home), *args,
                                                stdout=asyncio.subprocess.DEVNULL)
    assert await proc.wait() == 0


def on(home, body) -> object:
    async def go():
        async with await Memory.open(home, actor="test") as mem:
            return await body(mem)
    return asyncio.run(go())


@pytest.fixture
def filled(home):
    """Three memories, a fact with a history and a conflict, and a failed phase run."""
    async def fill(mem):
        for text in (NGINX, TEA, BACKUP):
            await mem.observe(text)
        await mem.set_fact("user.drink", "tea", source="person:alice")
        await mem.set_fact("user.drink", "coffee")  # another source, at once: a conflict
        rid = await mem.db.transact(phase_records.start_run, "embed", 1_790_000_000.0, "daemon", os.getpid())
        await mem.db.transact(phase_records.end_run, rid, 1_790_000_001.0, "failed", None, "model file is damaged")
    on(home, fill)
    return home


def test_format_helpers():
    assert age(None) == "never" and age(5) == "5 s" and age(150) == "2.5 min" and age(7200) == "2 h"
    assert age(86400) == "1 day" and age(-3) == "0 s"  # a clock a little ahead is not a negative age
    hit = {"score": 0.5, "kind": "lesson", "factual": False, "context": {},
           "explain": {"signals": {"relevance": 1.0, "recency": 0.5, "trust": 0.9},
                       "retrievers": {"fts": {"rank": 2, "bm25": 1.5}, "graph": {"path": ["a", "b"]}},
                       "features": {"access_count": 3}}}
    out = explain(hit, {"relevance": 0.5, "recency": 0.1})
    assert ("signal", "relevance (vs best)", "1.000 × 0.5 = 0.500") in out
    assert ("signal", "trust", "× 0.900") in out
    assert ("retriever", "fts", "rank 2, bm25 1.5") in out
    assert ("retriever", "graph", "path a → b") in out
    assert ("feature", "access_count", "3") in out
    hit["explain"]["superseded_by"] = [7]
    assert ("order", "superseded by", "#7: a newer memory replaces it (a supersedes link)") in explain(hit, {})


@pytest.mark.slow
def test_overview_shows_daemon_phases_layers_and_errors(filled):
    async def body(app, pilot):
        layers = dict((r[0], r[1]) for r in rows(app, "#layers"))
        assert layers["memories"] == "3 (3 hot, 0 cold, 0 forgotten)"
        # user.drink, Alice.preference from TEA, and the schedule BACKUP states
        assert layers["current facts"] == "3"
        assert layers["embedding backlog"] == "3"
        phases = {r[0]: r for r in rows(app, "#phases")}
        assert {"heartbeat", "fold", "embed", "decay", "consolidate", "dossiers", "capsule", "backup"} <= set(phases)
        assert phases["embed"][3] == "failed"
        assert any("model file is damaged" in r[2] for r in rows(app, "#errors"))
        assert "daemon: not running" in str(app.screen.query_one("#daemon").render())
    drive(filled, body)


def test_the_other_screens_are_built_while_the_first_is_read(filled):
    from strata_daemon.faces.tui.app import SCREENS

    async def body(app, pilot):
        titles = {cls.TITLE for cls in SCREENS.values()}
        deadline = time.monotonic() + 30
        while set(app.loaded_at) != titles and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert set(app.loaded_at) == titles and type(app.screen).TITLE == "Overview"  # built, none shown
        await pilot.press("3")  # no wait: the screen is there with its data
        assert type(app.screen).TITLE == "Facts" and "user.drink" in [r[0] for r in rows(app, "#facts")]
    drive(filled, body)


async def settle_until(pilot, done, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        await settle(pilot)


@pytest.mark.slow
def test_screens_reload_when_another_process_writes(filled):
    """Live refresh: a write through another connection (as the daemon's) shows up unasked."""
    async def body(app, pilot):
        assert rows(app, "#layers")[0][1].startswith("3 ")
        await cli(filled, "observe", "a fourth memory written by someone else")
        await settle_until(pilot, lambda: rows(app, "#layers")[0][1].startswith("4 "))
        assert rows(app, "#layers")[0][1].startswith("4 ")
        await switch(pilot, "2")
        assert any("a fourth memory" in r[0] for r in rows(app, "#hits"))
        await cli(filled, "observe", "a fifth one")
        await settle_until(pilot, lambda: any("a fifth one" in r[0] for r in rows(app, "#hits")))
        assert any("a fifth one" in r[0] for r in rows(app, "#hits"))
    drive(filled, body, refresh=0.1)


@pytest.mark.slow
def test_memories_search_explain_and_actions(filled):
    async def body(app, pilot):
        await switch(pilot, "2")
        assert BACKUP.startswith(rows(app, "#hits")[0][0].rstrip("…"))  # newest first before any search
        app.screen.query_one("#mode").value = "fast"
        await type_in(pilot, "#query", "nginx")
        hits = rows(app, "#hits")
        assert len(hits) == 1 and NGINX.startswith(hits[0][0].rstrip("…"))
        why = {(r[0], r[1]): r[2] for r in rows(app, "#explain")}
        assert why[("retriever", "fts")].startswith("rank 1")
        assert "× 0.55 =" in why[("signal", "relevance (vs best)")]
        assert why[("score", "match")] == "1.000 (words 1.000)"  # every word of the question: as measured
        assert hits[0][1] == "1.00"
        assert str(app.screen.query_one("#why").render()).startswith("why: found by words")
        nid = int(hits[0][3])
        rid = app.screen.result["recall_id"]

        await pilot.press("f")
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("plus")
        await settle(pilot)
        row = await app.memory.get(nid)
        assert row["factual"] and row["irrelevant"]
        outcome = await app.memory.db.fetchone("SELECT outcome FROM recalls WHERE id = ?", (rid,))
        assert outcome[0] == "success"
        assert "factual irrelevant" in rows(app, "#hits")[0][4]

        await pilot.press("plus")  # feedback twice: refused, said, and the app goes on
        await settle(pilot)
        assert any("already" in n for n in notes(app))

        await pilot.press("a")
        await settle(pilot)
        await pilot.press("n")  # the confirmation protects it
        await settle(pilot)
        assert (await app.memory.get(nid))["state"] == "active"
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert (await app.memory.get(nid))["state"] == "archived"
        assert rows(app, "#hits")[0][4].startswith("archived")
        await pilot.press("a")  # restoring needs no confirmation
        await settle(pilot)
        assert (await app.memory.get(nid))["state"] == "active"

        await pilot.press("d")
        await settle(pilot)
        details = dict(app.screen.rows)
        assert details["content"] == NGINX and details["factual"] == "yes" and details["superseded by"] == "—"
        assert details["event at"].endswith(" ago)") and "T" not in details["event at"]
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        assert app.screen.node == f"episode:{nid}"
    drive(filled, body)


@pytest.mark.slow
def test_the_selected_memory_is_shown_whole(filled):
    long = "the runbook for web-01: " + " ".join(f"step {i} check the nginx upstream and the error log" for i in range(8))
    on(filled, lambda mem: mem.observe(long))

    async def body(app, pilot):
        await switch(pilot, "2")
        assert rows(app, "#hits")[0][0].endswith("…")  # the list cuts it to a line
        assert str(app.screen.query_one("#text").render()) == long
        assert str(app.screen.query_one("#why").render()) == ""  # listed, not recalled
        app.screen.query_one("#mode").value = "fast"
        await type_in(pilot, "#query", "upstream error log")
        assert str(app.screen.query_one("#text").render()) == long
        assert "found by words" in str(app.screen.query_one("#why").render())
    drive(filled, body)


@pytest.mark.slow
def test_purge_asks_and_shows_what_goes_with_the_memory(filled):
    on(filled, lambda mem: mem.observe("Locker code: 7Q4417"))

    async def body(app, pilot):
        await switch(pilot, "2")
        app.screen.query_one("#mode").value = "fast"
        await type_in(pilot, "#query", "locker")
        lid = int(rows(app, "#hits")[0][3])
        await pilot.press("P")
        await settle(pilot)
        question = str(app.screen.query_one("#question").render())
        assert "nothing can undo it" in question and "Fact locker code" in question
        # Wrapped inside the dialog, not cut at its edge: every word is on screen.
        shown = app.screen.query_one("#question")
        assert shown.size.height >= 2 and shown.region.right <= shown.parent.region.right
        await pilot.press("n")
        await settle(pilot)
        assert (await app.memory.get(lid))["content"] == "Locker code: 7Q4417"
        await pilot.press("P")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert (await app.memory.db.fetchone("SELECT count(*) FROM episodes WHERE id = ?", (lid,)))[0] == 0
        assert any("purged" in n for n in notes(app))
    drive(filled, body)


@pytest.mark.slow
def test_a_memory_outside_a_recall_shows_its_standing_in_words(filled):
    async def body(app, pilot):
        await switch(pilot, "2")  # no query yet: the newest memories, each with its standing scores
        why = {(r[0], r[1]): r[2] for r in rows(app, "#explain")}
        assert why[("standing", "eligible")] == "yes" and why[("standing", "reason")] == "—"
        assert why[("memory", "factual")] == "no" and why[("memory", "state")] == "active"
        assert "None" not in str(why) and "True" not in str(why) and "False" not in str(why)
    drive(filled, body)


@pytest.mark.slow
def test_balanced_search_shows_each_retriever(filled):
    on(filled, lambda mem: mem.embed_pending())

    async def body(app, pilot):
        await switch(pilot, "2")
        assert app.screen.query_one("#mode").value == "balanced"
        await type_in(pilot, "#query", "which hot drink does Alice like")
        hits = rows(app, "#hits")
        assert TEA.startswith(hits[0][0].rstrip("…"))
        why = {(r[0], r[1]): r[2] for r in rows(app, "#explain")}
        assert why[("retriever", "vector")].startswith("rank 1, cosine")
        assert "balanced" in str(app.screen.query_one("#summary").render())
    drive(filled, body)


@pytest.mark.slow
def test_facts_history_edit_new_retract(filled):
    async def body(app, pilot):
        await switch(pilot, "3")
        # TEA states a preference, which capture reads as a fact of its own.
        assert [r[:2] for r in rows(app, "#facts")] == [["Alice.preference", "tea over coffee in the morning"],
                                                        ["backup job on the home server.time", "night"],
                                                        ["user.drink", "coffee"]]
        app.screen.query_one("#facts").move_cursor(row=2)
        await settle(pilot)
        history = rows(app, "#history")
        assert [h[0] for h in history] == ["coffee", "tea"] or [h[0] for h in history] == ["tea", "coffee"]
        assert any(r[1] == "user.drink" for r in rows(app, "#conflicts"))
        await pilot.press("d")
        await settle(pilot)
        details = app.screen.rows
        assert details[:2] == [("label", "user.drink"), ("value", "coffee")]
        assert dict(details)["stale"] == "no" and dict(details)["valid to"] == "—"
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("e")
        await settle(pilot)
        field = app.screen.query_one("#field-value")
        field.value = ""
        await pilot.press(*"cocoa", "enter")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert (await app.memory.get_fact("user.drink"))["value"] == "cocoa"
        assert dict(r[:2] for r in rows(app, "#facts"))["user.drink"] == "cocoa"
        assert (await app.memory.get_fact("user.drink"))["source"] == "person:tui"

        await pilot.press("n")
        await settle(pilot)
        await pilot.press(*"user.city", "enter", *"Lisbon", "enter")
        await settle(pilot)
        assert (await app.memory.get_fact("user.city"))["value"] == "Lisbon"

        app.screen.query_one("#facts").move_cursor(row=[r[0] for r in rows(app, "#facts")].index("user.drink"))
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert [r[0] for r in rows(app, "#facts")] == ["Alice.preference", "backup job on the home server.time",
                                                      "user.city"]
        current = [h for h in (await app.memory.fact_history("user.drink"))["history"] if h["current"]]
        assert [h["value"] for h in current] == [None]
    drive(filled, body)


@pytest.mark.slow
def test_spiderweb_tree_picture_jump_and_spread(filled):
    async def link(mem):
        for _ in range(3):  # used together often enough that a spread passes graph.spread_threshold
            await mem.activate(["episode:1", "episode:2"])
            await mem.commit_working_set()
    on(filled, link)

    async def body(app, pilot):
        await switch(pilot, "4")
        await type_in(pilot, "#node", "episode:1")
        tree = app.screen.query_one("#web")
        assert str(tree.root.label).startswith(f"#1 {NGINX}")  # what it says, not a bare id
        children = [c.data for c in tree.root.children]
        assert "episode:2" in children and "entity:host:web-01" in children
        tea = str(tree.root.children[children.index("episode:2")].label)
        assert tea == f"w 3.000 · 3×  #2 {TEA}"
        assert str(tree.root.children[children.index("entity:host:web-01")].label) == "mentions link  web-01 (host)"
        picture = "\n".join(app.screen.query_one("#picture").lines)
        assert "#1 deployed web-01" in picture and "─3.000─" in picture and "─mentions─" in picture
        assert "┤" in picture and "╭" in picture
        tree.focus()
        tree.move_cursor(tree.root.children[children.index("episode:2")])
        await settle(pilot)
        picture = "\n".join(app.screen.query_one("#picture").lines)
        assert "#2 Alice prefers" in picture.split("─3.000─")[-1] or "│ #2 Alice" in picture  # now in the middle
        await pilot.press("space")  # open the next hop
        await settle(pilot)
        assert "episode:1" in [c.data for c in tree.root.children[children.index("episode:2")].children]
        await pilot.press("s")
        await settle(pilot)
        reached = rows(app, "#reached")
        assert any(r[3] == f"#1 {NGINX}" and r[1] == "#2 → #1" for r in reached)
        await type_in(pilot, "#node", "episode:999")
        assert any("999" in n for n in notes(app))  # a missing node is said, not a crash
    drive(filled, body)


@pytest.mark.slow
def test_a_spread_that_reaches_nothing_says_why(filled):
    async def link(mem):  # used together once: weight 1, under the 1.5 a spread needs
        quiet = [(await mem.observe(text))["id"] for text in ("a quiet note", "another quiet note")]
        assert (await mem.neighbours(quiet[0]))["links"] == []  # names nothing a link could go to
        await mem.activate(quiet)
        await mem.commit_working_set()
        return quiet[0]
    quiet = on(filled, link)

    async def body(app, pilot):
        await switch(pilot, "4")
        await type_in(pilot, "#node", f"episode:{quiet}")
        app.screen.query_one("#web").focus()
        await pilot.press("s")
        await settle(pilot)
        assert rows(app, "#reached") == []
        note = str(app.screen.query_one("#spread-note").render())
        assert "every edge is below the threshold: the strongest weighs 1.000" in note and "0.15" in note
        assert any(n.startswith("nothing reached: every edge") for n in notes(app))
    drive(filled, body)


@pytest.mark.slow
def test_dossiers_show_sources_versions_and_refresh(filled):
    async def make(mem):
        await mem.add_topic("alice")
        await mem.refresh_dossier("alice", force=True)
    on(filled, make)

    async def body(app, pilot):
        await switch(pilot, "5")
        assert rows(app, "#topics")[0][:2] == ["alice", "1"]
        assert app.screen.document.startswith("# Alice")
        assert any(TEA[:40] in r[2] for r in rows(app, "#sources"))
        await pilot.press("d")
        await settle(pilot)
        details = dict(app.screen.rows)
        assert details["topic"] == "alice" and details["enabled"] == "yes" and details["version"] == "1"
        assert details["refreshed at"].endswith(" ago)")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot, 0.2)
        versions = await app.memory.dossier_history("alice")
        assert len(versions["versions"]) == 2
        assert len(rows(app, "#versions")) == 2
    drive(filled, body)


@pytest.mark.slow
def test_capsule_problems_with_lines_diff_and_render(filled):
    async def render(mem):
        return await mem.render_capsule()
    on(filled, render)
    path = filled / "capsule" / "CAPSULE.md"
    lines = path.read_text().splitlines()
    broken = next(i for i, line in enumerate(lines) if line.startswith("<!-- strata:end"))
    lines[broken] = "<!-- strata:end nonsense -->"
    lines.append("a note I added by hand")
    path.write_text("\n".join(lines) + "\n")

    async def body(app, pilot):
        await switch(pilot, "6")
        problems = rows(app, "#problems")
        assert any(p[0] == str(broken + 1) and p[1] == "error" for p in problems)
        state = str(app.screen.query_one("#capsule-state").render())
        assert re.search(r"\b\d+ errors? · \d+ problems? ·", state) and "(s)" not in state, state
        assert "a note I added by hand" in app.screen.document
        diff = str(app.screen.query_one("#diff").render())
        assert "+a note I added by hand" in diff and "+<!-- strata:end nonsense -->" in diff
    drive(filled, body)


@pytest.mark.slow
def test_help_and_command_palette(filled):
    async def body(app, pilot):
        await switch(pilot, "3")
        await pilot.press("question_mark")
        await settle(pilot)
        text = app.screen.text
        assert "Retract" in text and "Everywhere" in text and "Quit" in text
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"Go to Capsule")
        await settle(pilot, 0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "CapsuleScreen"
    drive(filled, body)


def test_what_a_narrow_pane_cuts_is_shown_whole_and_focus_leaves_an_input_after_enter(filled):
    async def body(app, pilot):
        await switch(pilot, "2")
        await pilot.press("slash")
        await pilot.press(*"tea", "enter")
        await settle(pilot)
        assert app.focused.id == "hits"
        # The why panel is narrow (its values were cut at 16 characters even at 220 columns):
        # Enter on it shows every row whole.
        app.screen.query_one("#explain").focus()
        await pilot.press("enter")
        await settle(pilot)
        why = dict(app.screen.rows)
        assert why["score · match"].startswith("1.000 (meaning ") and why["score · match"].endswith(")")
        assert why["retriever · fts"].startswith("rank 1, bm25 ")
        await pilot.press("escape")
        await switch(pilot, "3")
        await pilot.press("slash")
        await pilot.press(*"user.drink", "enter")
        await settle(pilot)
        assert app.focused.id == "facts"  # `e` now edits instead of typing into the filter
        app.screen.query_one("#facts").move_cursor(row=0)
        await settle(pilot)
        app.screen.query_one("#history").focus()
        await pilot.press("enter")
        await settle(pilot)
        value = dict(app.screen.rows)
        assert value["source"] in ("person:alice", "agent") and value["valid from"].startswith("20")
        await pilot.press("escape")
        await switch(pilot, "4")
        await pilot.press("slash")
        await pilot.press(*"episode:1", "enter")
        await settle(pilot)
        assert app.focused.id == "web"
        await pilot.press("slash", *"episode:2", "enter")  # a second jump starts from an empty field
        await settle(pilot)
        assert app.screen.query_one("#web").root.data == "episode:2"
    drive(filled, body, size=(100, 40))


@pytest.mark.slow
def test_at_80x24_a_list_s_rows_fit_the_screen_and_use_it(filled):
    """Columns measured on what they show: a factual memory's state whole, a fact's value as
    wide as the room the key, source and age leave."""
    async def fill(mem):
        await mem.set_fact("Dana Whitfield's email address", "dana.whitfield@example-mail.org")
        await mem.set_fact("nightly backup target host", "nas-2.storage.internal.example.com", source="person:ana")
        await mem.set_fact("nightly backup target host", "nas-3.storage.internal.example.com")  # a conflict
    on(filled, fill)

    async def body(app, pilot):
        await switch(pilot, "2")
        first = int(rows(app, "#hits")[0][3])
        await app.memory.mark(first, factual=True)
        app.screen.reload()
        await settle(pilot)
        table = app.screen.query_one("#hits")
        assert "active factual" in [r[4] for r in rows(app, "#hits")]
        bar = str(app.screen.query_one(KeyBar).render())  # keys whole, Help and Quit among them
        assert len(bar) <= 80 and bar.startswith(" ?  Help ") and bar.rstrip().endswith("q  Quit"), bar
        assert table.virtual_size.width <= table.size.width, [(str(c.label), c.content_width) for c in table.columns.values()]
        await switch(pilot, "3")
        facts = app.screen.query_one("#facts")
        assert facts.virtual_size.width <= facts.size.width
        assert any(r[1] == "dana.whitfield@example-mail.org" for r in rows(app, "#facts")), rows(app, "#facts")
        conflicts = app.screen.query_one("#conflicts")  # long values cut: when and state stay on screen
        assert conflicts.virtual_size.width <= conflicts.size.width, rows(app, "#conflicts")
    drive(filled, body, size=(80, 24))
