import pytest

from conftest import indexed, write_config
from strata_daemon import Memory
from strata_daemon.config.home import init_home
from strata_daemon.errors import Conflict, InvalidInput, NotFound


def test_observe_stores_every_feature(memory):
    r = memory.observe("Deploy of api v2 finished", kind="event", importance=0.8,
                       context={"environment": "prod", "goal": "ship"}, at="2026-03-01T10:00:00Z",
                       source="shell", session="loop-7")
    ep = memory.get(r["id"])
    assert r["status"] == "created"
    assert ep["kind"] == "event" and ep["importance"] == 0.8 and ep["source"] == "shell"
    assert ep["session"] == "loop-7" and ep["context"] == {"environment": "prod", "goal": "ship"}
    assert ep["event_at_iso"] == "2026-03-01T10:00:00Z"
    assert ep["recorded_at"] > ep["event_at"]  # learned now, happened in March
    assert ep["state"] == "active" and ep["occurrences"] == 1 and len(ep["content_hash"]) == 32
    assert [h["action"] for h in ep["history"]] == ["create"]


def test_a_large_batch_is_stored_whole_and_every_row_is_searchable(memory):
    # More rows than one INSERT statement carries (500), so the batch spans several statements.
    rows = [{"content": f"token{i:04d} sighting of probe {i}", "at": 1_790_000_000 + i} for i in range(1101)]
    result = memory.observe_many(rows)
    assert result["created"] == 1101 and result["ids"] == list(range(1, 1102))
    for i in (0, 499, 500, 999, 1000, 1100):
        assert [h["id"] for h in memory.recall(f"token{i:04d}", mode="fast")["hits"]] == [i + 1]
        assert memory.get(i + 1)["content"] == rows[i]["content"]
    assert indexed(memory, "probe") == 1101


def test_attention_filter_collapses_repeats_within_window(memory):
    a = memory.observe("Bridge: DOWN", at="2026-03-01T10:00:00Z")
    b = memory.observe("Bridge: DOWN", at="2026-03-01T10:04:00Z")
    c = memory.observe("Bridge: DOWN", at="2026-03-01T10:30:00Z")  # 26 min after the last sighting
    facts = b.pop("facts")
    assert b == {"id": a["id"], "status": "repeat", "occurrences": 2}
    assert [(f["key"], f["status"]) for f in facts] == [("bridge", "confirmed")]  # the repeat re-confirms
    assert c["status"] == "created" and c["id"] != a["id"]
    ep = memory.get(a["id"])
    assert ep["occurrences"] == 2 and ep["last_seen_at_iso"] == "2026-03-01T10:04:00Z"
    assert memory.status()["episodes"] == 2


def test_attention_window_zero_keeps_every_observation(home):
    write_config(home, "[store]\nattention_window_seconds = 0\n")
    import asyncio

    async def go():
        async with await Memory.open(home) as mem:
            ids = {(await mem.observe("same", at=1000.0 + i))["id"] for i in range(3)}
            return ids
    assert len(asyncio.run(go())) == 3


@pytest.mark.parametrize("kwargs, message", [
    ({"content": ""}, "empty"),
    ({"content": "   \n\t "}, "empty"),
    ({"content": "x" * 70000}, "over the limit"),
    ({"content": b"\xff\xfeabc"}, "UTF-8"),
    ({"content": "a\x00b"}, "NUL"),
    ({"content": "ok", "kind": "dream"}, "unknown kind"),
    ({"content": "ok", "importance": 1.5}, "outside 0-1"),
    ({"content": "ok", "importance": -0.1}, "outside 0-1"),
    ({"content": "ok", "importance": float("nan")}, "outside 0-1"),
    ({"content": "ok", "at": "last tuesday-ish"}, "cannot read time"),
    ({"content": "ok", "context": {"a": {"b": {"c": {"d": {"e": 1}}}}}}, "nested"),
    ({"content": "ok", "source": "s" * 300}, "source"),
    ({"content": "ok", "source": "s\udcff"}, "the source is not valid UTF-8"),
    ({"content": "ok", "session": "\ud800"}, "the session is not valid UTF-8"),
    ({"content": "ok", "context": {"env": ["prod", "\udfff"]}}, r"the context at env\[1\] is not valid UTF-8"),
    ({"content": "ok", "context": '{"a": 1' + "0" * 5000 + "}"}, "context must be an object of KEY: VALUE pairs"),
    ({"content": "ok", "context": "env=prod"}, r"pairs \(or the JSON text of one\), not the text 'env=prod'"),
])
def test_bad_input_is_refused_and_nothing_stored(memory, kwargs, message):
    kwargs = dict(kwargs)  # the parameters are shared by each store's run
    content = kwargs.pop("content")
    with pytest.raises(InvalidInput, match=message):
        memory.observe(content, **kwargs)
    assert memory.status()["episodes"] == 0


def test_the_write_path_refuses_what_is_not_text_that_a_layer_let_through(memory):
    # The net under every layer's own check: SQLite takes UTF-8 only, and its driver raised
    # UnicodeEncodeError out of any write or read that bound a lone surrogate.
    db = memory.raw.db
    with pytest.raises(InvalidInput, match="not valid UTF-8 text"):
        memory.wait(db.transact(lambda c: c.execute("SELECT ?", ("\ud800",))))
    with pytest.raises(InvalidInput, match="not valid UTF-8 text"):
        memory.wait(db.fetchall("SELECT ?", ("\udcff",)))
    for query in ("dossier", "fact"):
        with pytest.raises(InvalidInput, match="not valid UTF-8"):
            memory.add_topic("topic", query="\udcff") if query == "dossier" else \
                memory.set_fact("k", "v", source="person:\udcff")


def test_multibyte_text_at_the_byte_limit(home):
    write_config(home, "[store]\nmax_content_bytes = 12\n")
    import asyncio

    async def go():
        async with await Memory.open(home) as mem:
            ok = await mem.observe("ééééé🙂")  # 10 + 4 bytes = 14 > 12
            return ok
    with pytest.raises(InvalidInput, match="14 bytes"):
        asyncio.run(go())


def test_forget_archives_restore_and_purge(memory):
    i = memory.observe("secret token is hunter2")["id"]
    assert memory.forget(i)["state"] == "archived"
    assert memory.recall("hunter2")["hits"] == []
    assert [h["id"] for h in memory.recall("hunter2", include_archived=True)["hits"]] == [i]
    memory.restore(i)
    assert memory.get(i)["state"] == "active"
    memory.forget(i, purge=True)
    with pytest.raises(NotFound):
        memory.get(i)
    audit = memory.sql("SELECT action, data FROM audit WHERE item_id = ? ORDER BY id", (i,))
    assert [a["action"] for a in audit] == ["create", "state", "state", "purge"]
    assert all("hunter2" not in a["data"] for a in audit)  # the audit outlives the text, never holds it
    assert indexed(memory, "hunter2") == 0


def test_feedback_is_shared_by_every_hit_and_counted_once(memory):
    a = memory.observe("backup job on nas-01 failed")["id"]
    b = memory.observe("backup job on nas-02 failed")["id"]
    r = memory.recall("backup job failed")
    assert {h["id"] for h in r["hits"]} == {a, b}
    memory.feedback(r["recall_id"], "success")
    assert memory.get(a)["success_count"] == 1 and memory.get(b)["success_count"] == 1
    with pytest.raises(Conflict, match="already has feedback"):
        memory.feedback(r["recall_id"], "failure")
    with pytest.raises(NotFound):
        memory.feedback(99999, "success")
    assert memory.status()["feedback"] == 1


def test_recall_appends_access_events_and_fold_turns_them_into_features(memory):
    i = memory.observe("rotate the TLS cert on gw-02")["id"]
    before = memory.get(i)
    memory.recall("TLS cert")
    memory.recall("gw-02 cert")
    mid = memory.get(i)
    assert mid["access_count"] == before["access_count"] == 0  # reads never rewrite episodes
    assert mid["pending_access_events"] == 2
    assert memory.fold() == {"events": 2, "episodes": 1}
    after = memory.get(i)
    assert after["access_count"] == 2 and after["last_access_at"] is not None
    assert after["pending_access_events"] == 0
    assert memory.fold() == {"events": 0, "episodes": 0}


def test_mark_factual_and_irrelevant(memory):
    i = memory.observe("the NAS admin login is on port 5001")["id"]
    assert memory.mark(i, factual=True)["changed"] == {"factual": True}
    assert memory.get(i)["scores"]["recency"] == 1.0  # factual memories never decay
    memory.mark(i, irrelevant=True)
    assert memory.recall("NAS admin port")["hits"] == []


@pytest.mark.sqlite_only
def test_export_import_round_trip_is_lossless(memory, tmp_path, home):
    memory.observe("first", kind="note", context={"x": "1"}, at="2026-01-01T00:00:00Z", importance=0.3)
    j = memory.observe("second one", kind="lesson", factual=True)["id"]
    memory.observe("second one")  # a repeat, occurrences 2
    r = memory.recall("second")
    memory.feedback(r["recall_id"], "failure")
    memory.fold()
    memory.forget(j)
    memory.sql("UPDATE episodes SET confidence = 0.4, quality = 'good', strength_factor = 0.5, "
               "stale_at = 1767225600, replayed_at = 1767225600, potentiated_at = 1767225600 WHERE id = ?", (j,))
    exported = memory.collect(memory.export())
    assert exported[1]["quality"] == "good" and exported[1]["stale_at_iso"].startswith("2026-01-01")
    import asyncio

    async def reimport():
        async with await Memory.open(init_home(tmp_path / "other")[0]) as other:
            first = await other.observe_many(exported)
            again = await other.observe_many(exported)
            back = [e async for e in other.export()]
            return first, again, back
    first, again, back = asyncio.run(reimport())
    assert first["created"] == 2 and again["duplicate"] == 2 and again["created"] == 0
    strip = lambda es: [{k: v for k, v in e.items() if k != "updated_at" and k != "updated_at_iso"} for e in es]
    assert strip(back) == strip(exported)


def test_namespaces_are_isolated(home):
    import asyncio

    async def go():
        async with await Memory.open(home, agent="alice") as a, await Memory.open(home, agent="bob") as b:
            secret = (await a.observe("alice's private plan: move to Lisbon"))["id"]
            seen = await b.recall("Lisbon plan")
            with pytest.raises(NotFound):
                await b.get(secret)
            with pytest.raises(NotFound):
                await b.forget(secret)
            recall_a = await a.recall("Lisbon")
            with pytest.raises(NotFound):
                await b.feedback(recall_a["recall_id"], "failure")
            return seen, [e async for e in b.export()], (await a.get(secret))["failure_count"]
    seen, exported, failures = asyncio.run(go())
    assert seen["hits"] == [] and exported == [] and failures == 0


def test_bad_namespace_name(home):
    import asyncio
    with pytest.raises(InvalidInput, match="namespace"):
        asyncio.run(Memory.open(home, agent="../etc"))


@pytest.mark.parametrize("field, value, complaint", [
    ("quality", "great", "unknown quality"), ("confidence", 1.5, "confidence 1.5 is outside"),
    ("strength_factor", 0, "strength_factor 0 is outside"), ("stale_at", "not a time", "time"),
])
def test_consolidation_fields_in_an_import_are_checked(memory, field, value, complaint):
    with pytest.raises(InvalidInput) as e:
        memory.validate({"content": "x", field: value})
    assert complaint in e.value.message
