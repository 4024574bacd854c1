"""Dossiers: topics, salience, closing of open items and the grounding check as pure functions;
refresh, versions, templates and namespaces through real SQLite and recall; the LLM
synthesizer for real through llama.cpp with a small packaged model; `strata dossier` in
subprocesses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_config
from strata_daemon.base.cpu import others_busy, threads_for
from strata_daemon.config.tuning import Dossier
from strata_daemon.dossier import grounding, salience, topics
from strata_daemon.dossier.extractive import Patterns, closes, is_open
from strata_daemon.dossier.llm import LlmFailed, LocalLlm, lines_schema, parse_lines
from strata_daemon.errors import ConfigError, InvalidInput, NotFound

T0 = 1_790_000_000.0  # 2026-09-21 14:13:20Z
H, DAY = 3600.0, 86400.0
GOLDEN = Path(__file__).parent / "data" / "dossier_bridge.md"
PATTERNS = Patterns(re.compile(Dossier().open_pattern),
                    re.compile(Dossier().closed_pattern))


# -- pure ------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", ["Memory Systems", "memory-systems", " MEMORY_systems ", "memory   systems"])
def test_topic_names_ignore_case_and_separators(raw):
    assert topics.normalise_topic(raw) == "memory_systems"


@pytest.mark.parametrize("raw", ["", "   ", "a/b", "x" * 65, "__", 42])
def test_bad_topic_names_are_refused(raw):
    with pytest.raises(InvalidInput):
        topics.normalise_topic(raw)


def test_capsule_topics_from_a_line_and_a_section_but_not_from_code():
    text = """# Capsule
Topics: revenue, Architecture
## Topics
- joel: Joel Kometz
- [ ] current loop
### Notes inside the section
- memory systems
## Pending tasks
- not a topic
```
Topics: inside, code
```
"""
    found = {t.name: t for t in topics.from_capsule(text)}
    assert set(found) == {"revenue", "architecture", "joel", "current_loop", "memory_systems"}
    assert found["joel"].query == "Joel Kometz" and found["revenue"].origin == "capsule"


def test_config_topics_are_validated():
    t, = topics.from_config({"Revenue": {"query": "revenue income", "facts": ["revenue", "billing"]}})
    assert (t.name, t.query, t.fact_prefixes, t.enabled) == ("revenue", "revenue income", ("revenue", "billing"), True)
    for bad in ({"x": {"facts": 3}}, {"x": {"query": " "}}, {"x": {"colour": "red"}}, {"a/b": {}}):
        with pytest.raises(ConfigError):
            topics.from_config(bad)


def test_discovery_proposes_frequent_entities_and_shared_key_prefixes():
    entities = [("person", "Amara Okafor", 40), ("host", "gw-01", 30), ("person", "Rare Person", 2)]
    keys = ["bridge", "bridge latency", "bridge uptime", "backup", "mail relay"]
    found = topics.discovered(entities, keys, min_mentions=25, min_keys=3, limit=10, enabled=False)
    assert [t.name for t in found] == ["amara_okafor", "gw_01", "bridge"]
    assert all(t.origin == "discovered" and not t.enabled for t in found)
    assert found[0].detail == {"entity": "person:Amara Okafor", "mentions": 40} and found[0].query == "Amara Okafor"
    assert len(topics.discovered(entities, keys, min_mentions=25, min_keys=3, limit=1, enabled=True)) == 1


def test_merge_order_and_a_persons_choices():
    config = [topics.Topic("revenue", "money", ("revenue",), "config", True)]
    capsule = [topics.Topic("revenue", "revenue", ("revenue",), "capsule", True),
               topics.Topic("joel", "joel", ("joel",), "capsule", True)]
    proposals = [topics.Topic("gw_01", "gw-01", ("gw 01",), "discovered", False)]
    choices = {"joel": topics.Choice(None, None, False, False), "gw_01": topics.Choice(None, None, True, True),
               "mine": topics.Choice("my words", ("x",), True, True)}
    got = {t.name: t for t in topics.merged(config, capsule, proposals, choices)}
    assert got["revenue"].origin == "config" and got["revenue"].query == "money"
    assert got["joel"].enabled is False  # removed by a person though the capsule names it
    assert got["gw_01"].enabled and got["gw_01"].origin == "person"
    assert got["mine"].query == "my words" and got["mine"].fact_prefixes == ("x",)


def test_due_topics_respect_the_minimum_interval():
    now = T0
    checked = {"never": None, "old": now - 3 * H, "fresh": now - 1 * H}
    assert topics.due(checked, now, min_hours=2) == ["never", "old"]
    assert topics.due(checked, now, min_hours=0) == ["never", "old", "fresh"]


def test_salience_is_recency_times_importance_times_relevance():
    assert salience.recency(T0 - 138 * H, T0, 138) == pytest.approx(0.5)
    assert salience.salience(T0, 0.8, 0.5, T0, 138) == pytest.approx(0.4)
    ranked = salience.ranked([{"id": 1, "event_at": T0 - 30 * DAY, "importance": 1.0, "relevance": 1.0},
                              {"id": 2, "event_at": T0, "importance": 0.5, "relevance": 0.5},
                              {"id": 3, "event_at": T0, "importance": 0.0, "relevance": 1.0}], T0, 138)
    assert [s["id"] for s in ranked] == [2, 1, 3] and ranked[2]["salience"] == 0


def _m(i, content, at, kind="observation"):
    return {"id": i, "content": content, "event_at": at, "kind": kind}


def test_open_items_close_by_identifier_or_by_most_words():
    todo = _m(1, "TODO T-12: rotate the TLS cert on gw-01", T0)
    assert is_open(todo, PATTERNS) and is_open(_m(2, "rotate certs", T0, kind="task"), PATTERNS)
    assert closes(_m(3, "Done T-12: rotated it", T0 + 1), todo, PATTERNS)
    assert not closes(_m(4, "Done T-13: rotated it", T0 + 1), todo, PATTERNS)
    assert not closes(_m(5, "Done T-12: rotated it", T0 - 1), todo, PATTERNS)  # before it was opened
    plain = _m(6, "need to write the bridge runbook", T0)
    assert closes(_m(7, "finished writing the bridge runbook", T0 + 1), plain, PATTERNS)
    assert not closes(_m(8, "finished the mail relay migration", T0 + 1), plain, PATTERNS)


SOURCES = {"e1": grounding.source_text("Revenue for October was 12,400 dollars, Joel said. Stripe failed on "
                                       "Nov 3 in 2023.", T0),
           "e2": grounding.source_text("The bridge on gw-01 is up.", T0)}


@pytest.mark.parametrize("text,cites,reason", [
    ("Revenue was 12400 dollars in October, per Joel.", ["e1"], None),
    ("Stripe failed on Nov 3.", ["e1"], None),
    ("Revenue was reported on 21 September 2026, a Monday.", ["e1"], None),
    ("The bridge on gw-01 is up.", ["e2"], None),
    ("Revenue was 13,000 dollars.", ["e1"], "number 13000"),
    ("Stripe failed 23 times.", ["e1"], "number 23"),  # 23 is inside 2023, not a number of it
    ("Anna confirmed the revenue.", ["e1"], "name 'Anna'"),
    ("The bridge on gw-01 is up.", ["e1"], "number 01"),  # true, but not in what it cites
    ("The bridge is up.", [], "cites no source"),
    ("The bridge is up.", ["e9"], "cites e9"),
    (" ", ["e1"], "empty line"),
])
def test_grounding_check(text, cites, reason):
    verdict = grounding.check(text, cites, SOURCES)
    assert verdict.kept is (reason is None)
    if reason:
        assert reason in verdict.reason


def test_llm_answers_cut_by_the_token_limit_keep_their_complete_lines():
    whole = '{"lines": [{"section": "context", "text": "a", "sources": ["e1"]}]}'
    assert parse_lines(whole) == ([{"section": "context", "text": "a", "sources": ["e1"]}], False)
    cut = whole[:-2] + ', {"section": "open", "te'
    assert parse_lines(cut) == ([{"section": "context", "text": "a", "sources": ["e1"]}], True)
    for bad in ('{"lines": [{"sect', "[]", '{"lines": 3}'):
        with pytest.raises(LlmFailed):
            parse_lines(bad)
    schema = lines_schema(["e1", "e2"], ("changes",), max_lines=4, max_chars=100)
    item = schema["properties"]["lines"]["items"]["properties"]
    assert item["sources"]["items"]["enum"] == ["e1", "e2"] and schema["properties"]["lines"]["maxItems"] == 4


# -- through SQLite and recall ---------------------------------------------------------------

def _bridge_history(memory):
    """A small, fixed history: a flapping status, tasks opened and closed, older decisions,
    and unrelated noise."""
    memory.observe("Bridge: DOWN (ETIMEDOUT from gw-01, check 4411)", at=T0 - 2 * H, importance=0.8)
    memory.observe("Bridge: UP (latency 40 ms, check 4412)", at=T0 - 2 * H + 240, importance=0.6)
    memory.observe("TODO T-12: rotate the TLS cert on the bridge host gw-01", kind="task", at=T0 - 2 * DAY)
    memory.observe("TODO T-13: write the bridge runbook", kind="task", at=T0 - 3 * DAY)
    memory.observe("Done T-13: wrote the bridge runbook and linked it from the wiki", at=T0 - DAY)
    memory.observe("Decided to move the bridge from gw-01 to gw-02 after repeated ETIMEDOUT errors",
                   kind="decision", importance=0.9, at=T0 - 20 * DAY)
    memory.observe("The bridge restarts every night at 03:00 for log rotation", importance=0.4, at=T0 - 30 * DAY)
    memory.observe("Lesson: a green bridge health check does not mean messages flow", kind="lesson",
                   importance=0.7, at=T0 - 40 * DAY)
    memory.observe("Paid the hosting bill for October", at=T0 - DAY)
    memory.observe("Mail relay: UP", at=T0 - H)


@pytest.fixture
def fast_home(home):
    write_config(home, '[experimental]\n"dossier.recall_mode" = "fast"\n\n[dossier.topics.bridge]\n')
    return home


@pytest.fixture
def bridge(fast_home, memory):
    _bridge_history(memory)
    return memory


def test_extractive_dossier_matches_the_golden_file(bridge):
    r = bridge.refresh_dossier("bridge", now=T0)
    text = bridge.show_dossier("bridge")["text"]
    assert r["status"] == "refreshed" and r["generator"] == "extractive"
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
        pytest.skip("golden file rewritten: review its diff")  # a rewrite is never a pass
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_extractive_dossier_is_deterministic_and_cites_every_line(bridge, home, tmp_path):
    first = bridge.refresh_dossier("bridge", now=T0, force=True)
    again = bridge.refresh_dossier("bridge", now=T0, force=True)
    a, b = bridge.show_dossier("bridge", version=1)["text"], bridge.show_dossier("bridge", version=2)["text"]
    assert a == b and first["input_hash"] == again["input_hash"]
    items = [ln for ln in a.splitlines() if ln.startswith("- ")]
    assert items and all(re.search(r"\[(?:[ef]\d+)(?:, [ef]\d+)*\]$", ln) for ln in items)
    ids = {int(i) for i in re.findall(r"\be(\d+)\b", a)}
    assert "hosting bill" not in a and "Mail relay" not in a  # another topic's memories
    rows = bridge.sql("SELECT id, content FROM episodes")
    assert ids <= {r["id"] for r in rows}


def test_a_contradiction_is_named_with_both_values_and_times(bridge):
    bridge.refresh_dossier("bridge", now=T0)
    text = bridge.show_dossier("bridge")["text"]
    section = text.split("## Contradictions", 1)[1].split("##", 1)[0]
    assert '"DOWN (ETIMEDOUT from gw-01, check 4411)" at 2026-09-21 12:13Z' in section
    assert '"UP (latency 40 ms, check 4412)" at 2026-09-21 12:17Z' in section and "4 min apart" in section


def test_a_fact_source_names_the_line_that_cites_it(bridge):
    bridge.refresh_dossier("bridge", now=T0)
    d = bridge.show_dossier("bridge")
    facts = [s for s in d["sources"] if s["id"].startswith("f")]
    assert facts and all(s["line"] in d["text"] and "Bridge" in s["line"] for s in facts), facts


def test_open_items_leave_out_what_a_later_memory_closed(bridge):
    bridge.refresh_dossier("bridge", now=T0)
    text = bridge.show_dossier("bridge")["text"]
    open_items = text.split("## Open items", 1)[1].split("##", 1)[0]
    assert "T-12" in open_items and "T-13" not in open_items


def test_unchanged_input_skips_and_a_change_makes_a_new_version(bridge):
    first = bridge.refresh_dossier("bridge", now=T0)
    same = bridge.refresh_dossier("bridge", now=T0 + 60)
    assert first["status"] == "refreshed" and same["status"] == "unchanged" and same["version"] == 1
    bridge.observe("Bridge: DOWN again (HTTP 502 from gw-02)", at=T0 + 120)
    changed = bridge.refresh_dossier("bridge", now=T0 + 180)
    assert changed["status"] == "refreshed" and changed["version"] == 2
    history = bridge.dossier_history("bridge")
    assert [v["version"] for v in history["versions"]] == [2, 1]
    assert history["versions"][0]["input_hash"] != history["versions"][1]["input_hash"]
    d = bridge.diff_dossier("bridge")
    assert d["from"] == 1 and d["to"] == 2 and '+- Bridge: "DOWN again (HTTP 502 from gw-02)"' in d["diff"]
    assert bridge.diff_dossier("bridge", old=2, new=2)["changed"] is False
    with pytest.raises(NotFound):
        bridge.show_dossier("bridge", version=9)
    state = bridge.sql("SELECT current_version, refreshed_at, checked_at FROM dossier_topics")[0]
    assert state == {"current_version": 2, "refreshed_at": T0 + 180, "checked_at": T0 + 180}


@pytest.mark.sqlite_only
def test_versions_cannot_be_rewritten_or_deleted(bridge, home):
    from strata_daemon.store import driver

    bridge.refresh_dossier("bridge", now=T0)
    conn = driver.connect(home / "state" / "memory.db")
    try:
        for sql in ("UPDATE dossier_versions SET text = 'x'", "DELETE FROM dossier_versions"):
            with pytest.raises(Exception, match="never"):
                conn.execute(sql)
    finally:
        conn.close()
    assert bridge.show_dossier("bridge")["version"] == 1


def test_a_template_override_in_the_home_changes_the_layout_and_the_input(bridge, home):
    bridge.refresh_dossier("bridge", now=T0)
    (home / "templates" / "dossier.md.j2").write_text(
        "TOPIC {{ topic.name }}\n{% for s in sections %}{% for l in s.lines %}* {{ l.text }} "
        "<{{ l.cites | join('+') }}>\n{% endfor %}{% endfor %}", encoding="utf-8")
    r = bridge.refresh_dossier("bridge", now=T0 + 60)
    text = bridge.show_dossier("bridge")["text"]
    assert r["status"] == "refreshed" and text.startswith("TOPIC bridge\n* Bridge:") and "<f2+e2>" in text
    (home / "templates" / "dossier.md.j2").write_text("{% for x in %}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"dossier\.md\.j2 has a syntax error on line 1"):
        bridge.refresh_dossier("bridge", now=T0 + 120)
    (home / "templates" / "dossier.md.j2").write_text("{{ nonsense.field }}", encoding="utf-8")
    with pytest.raises(ConfigError, match="failed to render"):
        bridge.refresh_dossier("bridge", now=T0 + 120)
    assert bridge.show_dossier("bridge")["version"] == 2  # nothing half-written


def test_topics_from_config_capsule_people_and_discovery(fast_home, memory):
    (fast_home / "capsule" / "CAPSULE.md").write_text("# Me\nTopics: revenue\n", encoding="utf-8")
    for i in range(30):
        memory.observe(f"asked Amara Okafor about invoice {i}", at=T0 + i)
    listing = {t["topic"]: t for t in memory.list_dossiers()["topics"]}
    assert listing["bridge"]["origin"] == "config" and listing["bridge"]["enabled"]
    assert listing["revenue"]["origin"] == "capsule" and listing["revenue"]["due"]
    assert listing["amara_okafor"]["origin"] == "discovered" and not listing["amara_okafor"]["enabled"]
    assert listing["amara_okafor"]["proposed_because"]["mentions"] == 30
    memory.add_topic("Amara Okafor")
    memory.remove_topic("revenue")
    listing = {t["topic"]: t for t in memory.list_dossiers()["topics"]}
    assert listing["amara_okafor"]["enabled"] and listing["amara_okafor"]["origin"] == "person"
    assert not listing["revenue"]["enabled"]
    r = memory.refresh_dossier("amara_okafor", now=T0 + 60)
    assert "Amara Okafor" in memory.show_dossier("amara_okafor")["text"] and r["lines"] > 0
    with pytest.raises(NotFound):
        memory.refresh_dossier("nobody")
    for mistyped in (lambda: memory.show_dossier("amara_okafr"), lambda: memory.remove_topic("amara_okafr")):
        with pytest.raises(NotFound) as info:
            mistyped()
        assert info.value.hint.startswith("did you mean amara_okafor?")
    with pytest.raises(NotFound) as info:  # kept, no version yet: what writes one
        memory.show_dossier("revenue")
    assert info.value.hint.startswith("`strata dossier refresh revenue` writes one")


def test_refresh_due_takes_each_due_topic_once(fast_home, memory):
    _bridge_history(memory)
    memory.add_topic("gw-01")
    first = memory.layers.dossiers.refresh_due()
    assert sorted(first["due"]) == ["bridge", "gw_01"] and not first["failed"]
    assert memory.layers.dossiers.refresh_due()["due"] == []  # checked just now, within min_interval_hours


def test_dossiers_are_private_to_their_namespace(home, memory):
    import asyncio

    from strata_daemon import Memory

    write_config(home, '[experimental]\n"dossier.recall_mode" = "fast"\n')
    _bridge_history(memory)

    async def other():
        async with await Memory.open(home, agent="other") as b:
            await b.observe("Bridge: maintenance window on Sunday", at=T0)
            await b.add_topic("bridge")
            with pytest.raises(NotFound):
                await b.show_dossier("bridge")
            await b.refresh_dossier("bridge", now=T0)
            return (await b.show_dossier("bridge"))["text"], await b.list_dossiers()

    text, listing = asyncio.run(other())
    assert "maintenance window" in text and "gw-01" not in text and "ETIMEDOUT" not in text
    assert [t["topic"] for t in listing["topics"] if t["enabled"]] == ["bridge"]
    with pytest.raises(NotFound):
        memory.show_dossier("bridge")  # agent default never refreshed its own


def test_capsule_topics_come_from_the_namespaces_own_capsule(home, memory):
    import asyncio

    from strata_daemon import Memory

    (home / "capsule" / "CAPSULE.md").write_text("# Capsule\nTopics: revenue\n", encoding="utf-8")
    (home / "capsule" / "other.md").write_text("# Capsule\nTopics: gardening\n", encoding="utf-8")

    async def listed():
        async with await Memory.open(home, agent="other") as b:
            return [t["topic"] for t in (await b.list_dossiers())["topics"] if t["origin"] == "capsule"]

    assert [t["topic"] for t in memory.list_dossiers()["topics"] if t["origin"] == "capsule"] == ["revenue"]
    assert asyncio.run(listed()) == ["gardening"]


def test_balanced_recall_feeds_the_dossier_without_recording_an_access(home, memory):
    _bridge_history(memory)
    memory.embed_pending()
    memory.add_topic("bridge")
    r = memory.refresh_dossier("bridge", now=T0)
    assert r["status"] == "refreshed" and not r["warnings"]
    assert memory.sql("SELECT count(*) AS n FROM recalls")[0]["n"] == 0
    assert memory.sql("SELECT count(*) AS n FROM access_events")[0]["n"] == 0


# -- the LLM synthesizer, for real -------------------------------------------------------------

def _llm_config(home, model, **extra):
    tuned = {"max_tokens": 160, **{k: v for k, v in extra.items() if k in ("max_tokens", "min_lines")}}
    settings = {"model": f'"{model}"', **{k: v for k, v in extra.items() if k not in tuned}}
    lines = ['[experimental]', '"dossier.recall_mode" = "fast"', *(f'"llm.{k}" = {v}' for k, v in tuned.items()),
             '', '[dossier.topics.bridge]', '', '[llm]'] + [f"{k} = {v}" for k, v in settings.items()]
    write_config(home, "\n".join(lines) + "\n")


@pytest.mark.slow
def test_llm_dossier_is_generated_checked_and_recorded(home, memory, small_llm):
    _llm_config(home, small_llm)
    r, shown = _refresh_bridge(home)
    stats = r["notes"]["llm"]
    assert stats["model"] == "SmolLM2-135M-Instruct.Q4_1" and stats["prompt_tokens"] > 50
    assert 1 <= stats["threads"] <= 2  # llm.threads is the most
    assert 0 < stats["completion_tokens"] <= 161 and stats["generation_tokens_per_s"] > 0
    assert r["notes"]["prompt_sources"] >= 3
    system, user = r["notes"]["prompt"]
    assert system["role"] == "system" and "Never write a name, number or date" in system["content"]
    assert "TODO T-12: rotate the TLS cert" in user["content"] and re.search(r"^\[e3\] ", user["content"], re.M)
    assert shown["notes"]["prompt"] == r["notes"]["prompt"]  # stored with the version
    assert r["intended_generator"] == "llm:SmolLM2-135M-Instruct.Q4_1"
    # The schema asks for one line at least, and every line is judged: kept or rejected.
    assert r["notes"]["kept_lines"] + len(r["notes"]["rejected"]) >= 1
    for rejected in r["notes"]["rejected"]:
        assert rejected["reason"] and rejected["text"] not in shown["text"]
    if r["generator"] == "extractive":  # a weak model: fell back, and said why
        assert "grounding check" in r["notes"]["fallback"] or "JSON" in r["notes"]["fallback"]
        assert shown["generator"] == "extractive (llm fell back)"
    else:
        assert shown["generator"] == r["intended_generator"] and r["notes"]["kept_lines"] >= 1
    assert "Current facts" in shown["text"] and "error" not in shown["text"].casefold()


def test_the_llm_prompt_offers_only_recalled_memories(fast_home, memory):
    """A fact change cites the memory its value came from, which recall need not return."""
    from strata_daemon.dossier.extractive import Line, Material, Section

    t = topics.Topic("bridge", "bridge", ("bridge",), "config", True)
    source = {"id": 5, "kind": "task", "content": "TODO T-1: fix the bridge", "event_at": T0, "importance": 0.5,
              "relevance": 1.0, "salience": 0.5}
    sections = [Section("facts", "Current facts", [Line("Bridge: UP", ("f2", "e2"))]),
                Section("changes", "What changed", [Line("Bridge changed", ("f1", "e1", "f2", "e2"))]),
                Section("open", "Open items", [Line("TODO T-1", ("e5",))])]
    material = Material(t, [], [], [source], {}, T0)
    facts, offered, checkable = memory.raw.layers.dossiers._prompt_parts(t, material, sections)
    assert [s["id"] for s in offered] == ["e5"] and set(checkable) == {"e5"}
    assert facts == [{"text": "Bridge: UP", "cites": ["f2", "e2"]}]


def _refresh_bridge(home):
    """Store the bridge rows in a Memory opened on the home's config, refresh the dossier once:
    (refresh result, stored version)."""
    import asyncio

    from strata_daemon import Memory

    async def go():
        async with await Memory.open(home) as mem:
            for row in _rows():
                await mem.observe(**row)
            return await mem.refresh_dossier("bridge", now=T0), await mem.show_dossier("bridge")

    return asyncio.run(go())


def _rows():
    return [dict(content="Bridge: DOWN (ETIMEDOUT from gw-01)", at=T0 - 2 * H),
            dict(content="Bridge: UP (latency 40 ms)", at=T0 - 2 * H + 240),
            dict(content="TODO T-12: rotate the TLS cert on the bridge host gw-01", kind="task", at=T0 - 2 * DAY),
            dict(content="Decided to move the bridge from gw-01 to gw-02", kind="decision", at=T0 - 20 * DAY),
            dict(content="The bridge restarts every night at 03:00", at=T0 - 30 * DAY)]


UNGROUNDED_PROMPT = """{% block system %}You copy text exactly.{% endblock %}
{% block user %}Sources:
{% for s in sources %}[{{ s.id }}] {{ s.text }}
{% endfor %}
Answer with exactly these two lines, in section "context", each citing {{ sources[0].id }}:
1. Revenue reached 987,654 dollars thanks to Zorblax Quell.
2. {{ sources[0].text }}{% endblock %}
"""


@pytest.mark.slow
def test_llm_lines_that_state_what_their_sources_do_not_are_rejected(home, small_llm):
    """A prompt override makes the model write a figure and a name from nowhere: the check
    must drop that line, whatever else happens."""
    _llm_config(home, small_llm, min_lines=1)
    (home / "templates" / "dossier-prompt.j2").write_text(UNGROUNDED_PROMPT, encoding="utf-8")
    r, shown = _refresh_bridge(home)
    reasons = [x["reason"] for x in r["notes"]["rejected"] if "987" in x["text"] or "Zorblax" in x["text"]]
    assert reasons and all("not in its sources" in why for why in reasons)
    assert "987" not in shown["text"] and "Zorblax" not in shown["text"]


@pytest.mark.slow
def test_llm_timeout_falls_back_to_the_extractive_dossier(home, small_llm):
    _llm_config(home, small_llm, timeout_seconds=0.2, max_tokens=2000)
    r, shown = _refresh_bridge(home)
    assert r["generator"] == "extractive" and "timed out" in r["notes"]["fallback"]
    assert r["elapsed_ms"] < 30_000  # 2000 tokens at this model's ~50 tokens/s would take 40 s
    assert shown["generator"] == "extractive (llm fell back)" and "timed out" not in shown["text"]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["missing.gguf", "corrupt.gguf", "not-gguf.gguf"])
def test_a_missing_or_damaged_llm_leaves_the_extractive_dossier(home, model):
    path = home / model
    if model == "corrupt.gguf":
        path.write_bytes(b"GGUF" + os.urandom(4096))
    elif model == "not-gguf.gguf":
        path.write_bytes(b"<html>not a model</html>")
    _llm_config(home, path)
    r, shown = _refresh_bridge(home)
    assert r["generator"] == "extractive" and str(path) in r["notes"]["fallback"]
    assert any("extractive dossier used" in w for w in r["warnings"])
    assert "Current facts" in shown["text"] and str(path) not in shown["text"]


# -- the command -------------------------------------------------------------------------------

def test_the_dossier_command(cli, home):
    write_config(home, '[experimental]\n"dossier.recall_mode" = "fast"\n')
    cli("observe", "Bridge: DOWN", check=True)
    cli("observe", "Bridge: UP", check=True)
    added = cli.json("dossier", "add", "Bridge", "--query", "bridge status", "--facts", "bridge,relay")
    assert added["topic"] == "bridge" and added["facts"] == ["bridge", "relay"]
    first = cli.json("dossier", "refresh", "bridge")
    assert first["status"] == "refreshed" and first["version"] == 1
    assert cli("dossier", "diff", "bridge", check=True).out == "only version 1 is kept yet: nothing to compare\n"
    assert cli.json("dossier", "refresh", "bridge")["status"] == "unchanged"
    assert cli.json("dossier", "refresh", "bridge", "--force")["version"] == 2
    shown = cli("dossier", "show", "bridge", check=True).out
    assert shown.startswith("# Bridge") and "## Contradictions" in shown
    history = cli.json("dossier", "history", "bridge")["versions"]
    assert [v["version"] for v in history] == [2, 1]
    # the lines a version holds are counted as its refresh counted them: those citing a source
    assert history[0]["lines"] == first["lines"] and history[0]["sources"] == first["sources"]
    assert cli.json("dossier", "diff", "bridge")["from"] == 1
    listing = cli.json("dossier", "list")
    assert listing["topics"][0]["topic"] == "bridge" and listing["min_interval_hours"] == 2.0
    assert cli.json("dossier", "refresh", "--all")["results"][0]["status"] == "unchanged"
    assert cli.json("dossier", "remove", "bridge")["enabled"] is False
    missing = cli("dossier", "show", "nothing")
    assert missing.returncode == 3 and "`strata dossier add nothing` starts one" in missing.err  # no such topic kept
    bad = cli("dossier", "add", "a/b")
    assert bad.returncode == 4 and "not a topic name" in bad.err
    assert cli("dossier", "refresh").returncode == 2


# -- threads beside other work ------------------------------------------------------------------

def test_llama_cpp_keeps_its_threads_only_while_the_others_leave_the_cores_free():
    assert threads_for(2, 2, None) == 2 and threads_for(2, 2, 0.1) == 2  # unknown or idle: as configured
    assert threads_for(2, 2, 0.3) == 1 and threads_for(2, 2, 1.9) == 1 and threads_for(4, 2, 3.0) == 1
    assert threads_for(8, 16, 6.5) == 8 and threads_for(8, 8, 2.5) == 5


def _busy(count: int):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


@pytest.mark.slow
def test_a_generation_beside_busy_processes_runs_on_the_cores_they_leave(small_llm):
    llm = LocalLlm(small_llm, threads=2, context=1024)
    schema = lines_schema(["e1"], ("Now",), max_lines=1, max_chars=40)
    ask = [{"role": "user", "content": "One line about e1: the bridge is up."}]
    busy = _busy(2)
    try:
        deadline = time.monotonic() + 30  # the loops' interpreters may start slowly on a loaded machine
        while others_busy() <= min(1.5, os.cpu_count() - 0.5):  # two busy loops, seen through /proc
            assert time.monotonic() < deadline, "the busy loops never showed in /proc"
        try:
            gen = llm.generate(ask, schema, max_tokens=160, temperature=0.0, deadline=time.monotonic() + 120)
        except LlmFailed:  # a tiny model may answer badly; the threads it ran on are what is tested
            gen = None
    finally:
        for p in busy:
            p.kill()
            p.wait()
    from llama_cpp import llama_n_threads, llama_n_threads_batch

    # on this project's two cores: one thread, not two stalled at every step
    expected = threads_for(2, os.cpu_count(), 2.0)
    assert llama_n_threads(llm.load().ctx) == llama_n_threads_batch(llm.load().ctx) == expected
    assert gen is None or gen.stats()["threads"] == expected


def test_fact_prefixes_are_read_as_keys_are(memory):
    # A person types `GW_02` or `Bridge`; the facts are stored under `gw 02 ...` and `bridge`.
    memory.set_fact("gw-02 status", "UP")
    memory.set_fact("bridge", "DOWN")
    memory.add_topic("gateway", query="gateway", facts=["GW_02", "Bridge"])
    text = memory.refresh_dossier("gateway")
    shown = memory.show_dossier("gateway")["text"]
    assert text["status"] == "refreshed" and "UP" in shown and "DOWN" in shown


def test_llama_cpp_is_loaded_with_passive_openmp_waiting(small_llm):
    # Busy-waiting OpenMP threads slowed generation 4-20x beside another process; the policy is
    # read once, when llama.cpp's OpenMP runtime loads, so it must be set before the import.
    code = ("import os\nfrom strata_daemon.dossier.llm import LocalLlm\n"
            f"LocalLlm({str(small_llm)!r}, threads=1, context=256).load()\n"
            "import llama_cpp\nprint(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.stdout.strip() == "PASSIVE", out.stderr[-500:]


def test_without_llama_cpp_every_path_that_needs_it_says_how_to_add_it(home, small_llm):
    # llama-cpp-python is an extra (the `llm` extra); a None in sys.modules makes its import
    # fail as it does where it was never installed.
    write_config(home, f'[llm]\nmodel = "{small_llm}"\n')
    code = ("import sys, json; sys.modules['llama_cpp'] = None\n"
            "from strata_daemon.faces.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))")

    def strata(*args):
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "STRATA_HOME": str(home)})
    strata("observe", "The bridge on gw-02 went DOWN at 09:12")
    refreshed = strata("--json", "dossier", "add", "bridge")
    assert refreshed.returncode == 0, refreshed.stderr
    shown = strata("--json", "dossier", "refresh", "bridge", "--force")
    notes = json.loads(shown.stdout)["notes"]
    assert "pip install 'llama-cpp-python" in json.dumps(notes), notes  # written extractively, and says why
    doctor = strata("doctor")
    assert "llama-cpp-python is not installed" in doctor.stdout and "pip install '.[llm]'" in doctor.stdout
    write_config(home, '[embedding]\nruntime = "llama"\n')
    embedded = strata("embed")
    assert embedded.returncode != 0 and "pip install 'llama-cpp-python" in embedded.stderr, embedded.stderr
