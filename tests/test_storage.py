import asyncio
import stat

import pytest

from strata_daemon import Memory
from strata_daemon.errors import StorageError
from strata_daemon.store import driver
from strata_daemon.store.db import Database
from strata_daemon.store.migrate import MIGRATIONS, migrate


def test_driver_loads_sqlite_vec_and_fts5(tmp_path):
    conn = driver.connect(tmp_path / "x.db")
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.execute("CREATE VIRTUAL TABLE v USING vec0(e float[4])")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == driver.BUSY_TIMEOUT_MS


def test_database_and_wal_files_are_private(home):
    db_path = home / "state" / "memory.db"

    async def go():
        db = await Database.open(db_path)
        async with db.write() as w:
            await w.execute("INSERT INTO meta VALUES ('k', 'v')")
        return db
    db = asyncio.run(go())
    for p in home.glob("state/memory.db*"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    assert stat.S_IMODE((home / "state").stat().st_mode) == 0o700
    asyncio.run(db.close())


def test_migrations_recorded_once_and_rerun_is_noop(tmp_path):
    conn = driver.connect(tmp_path / "m.db")
    assert migrate(conn) == [n for n, _, _ in MIGRATIONS]
    assert migrate(conn) == []
    rows = conn.execute("SELECT id, name FROM _migrations ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [n for n, _, _ in MIGRATIONS]


def test_later_migrations_carry_existing_memories_over(tmp_path):
    conn = driver.connect(tmp_path / "old.db")
    migrate(conn, MIGRATIONS[:2])  # a database from before migration 3
    conn.execute("INSERT INTO namespaces (agent, created_at) VALUES ('default', 0)")
    conn.execute("INSERT INTO episodes (agent, kind, content, source, content_hash, event_at, recorded_at, "
                 "last_seen_at, importance, updated_at, embedded) "
                 "VALUES ('default', 'note', 'the bridge is down', 'Ines', 'h', 0, 0, 0, 0.5, 0, 1)")
    assert migrate(conn, MIGRATIONS) == list(range(3, len(MIGRATIONS) + 1))
    # 3: the vector sequence continues after the existing vectors
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'vector_%'"))
    assert meta == {"vector_seq": "1", "vector_epoch": "0"}
    # 4 and 28: the rebuilt full-text index (the namespace's own) holds the old memory, by its
    # text and by its source
    assert conn.execute("SELECT agent, n FROM fts_tables").fetchall() == [("default", 1)]
    for word in ("bridge", "ines"):
        assert conn.execute("SELECT rowid FROM episodes_fts_1 WHERE episodes_fts_1 MATCH ?", (word,)).fetchall() \
            == [(1,)]
    # 5: facts start empty beside the old memories
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)


@pytest.mark.sqlite_only
def test_memories_stored_before_migration_21_get_their_stated_times_when_the_home_opens(home):
    conn = driver.connect(home / "state" / "memory.db")
    migrate(conn, MIGRATIONS[:20])
    conn.execute("INSERT INTO namespaces (agent, created_at) VALUES ('default', 0)")
    conn.executemany("INSERT INTO episodes (agent, kind, content, content_hash, event_at, recorded_at, last_seen_at, "
                     "importance, updated_at) VALUES ('default', 'note', ?, ?, 1700000000, 0, 0, 0.5, 0)",
                     [("We met yesterday at noon", "a"), ("No time here", "b"), ("Back in May 2021", "c")])
    assert migrate(conn) == list(range(21, len(MIGRATIONS) + 1))
    # The migration only marks what is owed: reading times is the episodes layer's live code.
    assert conn.execute("SELECT value FROM meta WHERE key = 'stated_times_after'").fetchone() == ("0",)
    assert conn.execute("SELECT count(*) FROM stated_times").fetchone() == (0,)
    conn.close()

    async def opened():
        async with await Memory.open(home) as mem:
            return [dict(r) for r in await mem.db.fetchall(
                "SELECT episode_id, at, length FROM stated_times ORDER BY episode_id")], \
                await mem.db.fetchone("SELECT value FROM meta WHERE key = 'stated_times_after'")

    stated, marker = asyncio.run(opened())
    assert [s["episode_id"] for s in stated] == [1, 3] and marker is None
    assert asyncio.run(opened())[0] == stated  # read once


def test_newer_database_is_refused(tmp_path):
    conn = driver.connect(tmp_path / "n.db")
    migrate(conn)
    conn.execute("INSERT INTO _migrations VALUES (999, 'future', 0)")
    with pytest.raises(StorageError, match="newer strata"):
        migrate(conn)


def test_write_rolls_back_on_error(home):
    async def go():
        db = await Database.open(home / "state" / "memory.db")
        with pytest.raises(RuntimeError):
            async with db.write() as w:
                await w.execute("INSERT INTO meta VALUES ('a', '1')")
                raise RuntimeError("boom")
        value = await db.scalar("SELECT count(*) FROM meta WHERE key = 'a'")
        await db.close()
        return value
    assert asyncio.run(go()) == 0


def test_audit_trail_is_append_only(home):
    async def go():
        db = await Database.open(home / "state" / "memory.db")
        async with db.write() as w:
            await w.audit("a", "episode", 1, "create", "{}", "test", 0.0)
        with pytest.raises(StorageError, match="append-only"):
            async with db.write() as w:
                await w.execute("DELETE FROM audit")
        with pytest.raises(StorageError, match="append-only"):
            async with db.write() as w:
                await w.execute("UPDATE audit SET action = 'x'")
        n = await db.scalar("SELECT count(*) FROM audit")
        await db.close()
        return n
    assert asyncio.run(go()) == 1


def test_corrupt_database_gives_clear_error(home):
    (home / "state" / "memory.db").write_bytes(b"this is not a database" * 200)
    with pytest.raises(StorageError, match="damaged") as info:
        asyncio.run(Database.open(home / "state" / "memory.db"))
    assert "backup" in info.value.hint


def test_missing_folder_gives_clear_error(tmp_path):
    with pytest.raises(StorageError, match="does not exist"):
        asyncio.run(Database.open(tmp_path / "nowhere" / "memory.db"))


def test_run_and_transact_use_the_connection_thread_and_roll_back(home):
    async def go():
        db = await Database.open(home / "state" / "memory.db")
        assert await db.run(lambda conn, x: conn.execute("SELECT ? + 1", (x,)).fetchone()[0], 41) == 42
        await db.transact(lambda conn: conn.execute("INSERT INTO meta VALUES ('t', '1')"))

        def fails(conn):
            conn.execute("INSERT INTO meta VALUES ('u', '2')")
            raise RuntimeError("boom")
        with pytest.raises(RuntimeError):
            await db.transact(fails)
        with pytest.raises(StorageError, match="no such table"):
            await db.run(lambda conn: conn.execute("SELECT * FROM nowhere").fetchall())
        keys = [r[0] for r in await db.fetchall("SELECT key FROM meta WHERE key IN ('t', 'u') ORDER BY key")]
        await db.close()
        return keys
    assert asyncio.run(go()) == ["t"]


def test_an_unclosed_database_does_not_hang_process_exit(home):
    import subprocess
    import sys
    script = ("import asyncio; from strata_daemon.store.db import Database\n"
              f"asyncio.run(Database.open({str(home / 'state' / 'memory.db')!r}))\nprint('exiting')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "exiting" in proc.stdout


def test_migration_15_brings_what_consolidation_archived_back_into_recall_as_cold(tmp_path):

    conn = driver.connect(tmp_path / "old.db")
    migrate(conn, MIGRATIONS[:14])  # a database from before tiers
    conn.execute("INSERT INTO namespaces (agent, created_at) VALUES ('default', 0)")
    for i, (content, state) in enumerate((("archived by a night", "archived"), ("forgotten by a person", "archived"),
                                          ("forgotten after a night", "archived"), ("merged", "superseded"),
                                          ("still active", "active")), 1):
        conn.execute("INSERT INTO episodes (id, agent, kind, content, content_hash, event_at, recorded_at, "
                     "last_seen_at, importance, updated_at, state) VALUES (?, 'default', 'note', ?, ?, 0, 0, 0, "
                     "0.5, 7, ?)", (i, content, str(i), state))
    audit = [(1, "consolidate:archive"), (2, "state"), (3, "consolidate:archive"), (3, "state")]
    conn.executemany("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                     "VALUES (0, 'default', 'episode', ?, ?, '{}', 'test')", audit)
    conn.execute("INSERT INTO recalls (id, agent, query, mode, k, context, at) VALUES (7, 'default', 'q', 'fast', 10, "
                 "'{}', 5)")
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES (6, 'default', "
                 "'recall', 7, 'feedback', '{\"outcome\": \"success\", \"episodes\": [5, 99]}', 'test')")
    assert migrate(conn, MIGRATIONS)[0] == 15
    rows = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, state, tier FROM episodes")}
    assert rows == {1: ("active", "cold"), 2: ("archived", "hot"), 3: ("archived", "hot"),
                    4: ("superseded", "cold"), 5: ("active", "hot")}
    said = conn.execute("SELECT item_id, actor, data FROM audit WHERE actor = 'migration'").fetchall()
    assert [(r[0], r[1]) for r in said] == [(1, "migration")] and "cold tier" in said[0][2]
    # 17: the feedback the audit recorded, as events (a memory no longer there is left out)
    assert conn.execute("SELECT episode_id, recall_id, outcome, at FROM feedback_events").fetchall() == [
        (5, 7, "success", 6.0)]


def test_migration_22_takes_a_home_whose_migration_21_already_made_the_index(tmp_path):
    # Homes made between two commits of the development branch got the index from migration 21.

    conn = driver.connect(tmp_path / "early.db")
    migrate(conn, MIGRATIONS[:21])
    conn.execute("CREATE INDEX stated_times_by_start ON stated_times(start_at)")
    assert migrate(conn, MIGRATIONS[:22]) == [22]
    plan = conn.execute("EXPLAIN QUERY PLAN SELECT episode_id FROM stated_times WHERE start_at >= 0 AND start_at < 1"
                        ).fetchall()
    assert "stated_times_by_start" in str(plan)


def test_migration_23_puts_the_id_floor_back_above_every_id_given(tmp_path):
    from strata_daemon.store import floors

    conn = driver.connect(tmp_path / "lowered.db")
    migrate(conn, MIGRATIONS[:22])
    # Memories 1-3 made, 3 purged and then 2: the old floor ended at 2, and 3 could come back.
    conn.executemany("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                     "VALUES (0, 'default', 'episode', ?, 'create', '{}', 'test')", [(1,), (2,), (3,)])
    conn.execute("INSERT INTO meta (key, value) VALUES ('episode_id_floor', '2')")
    assert migrate(conn, MIGRATIONS[:23]) == [23]
    assert conn.execute(floors.highest_sql(floors.EPISODES)).fetchone()[0] == 3
    floors.raise_floor(conn, floors.EPISODES, 2)  # a later purge of a lower id
    assert conn.execute(floors.highest_sql(floors.EPISODES)).fetchone()[0] == 3


def test_migration_24_keeps_when_each_evaluation_episode_was_asked(tmp_path):

    conn = driver.connect(tmp_path / "before_pruning.db")
    migrate(conn, MIGRATIONS[:23])
    conn.execute("INSERT INTO namespaces (agent, created_at) VALUES ('default', 0)")
    conn.execute("INSERT INTO recalls (id, agent, query, mode, k, context, at) VALUES (7, 'default', 'q', 'fast', "
                 "10, '{}', 5)")
    conn.executemany("INSERT INTO arena_episodes (agent, query, useful, origin, recall_id, created_at) "
                     "VALUES ('default', 'q', '[1]', ?, ?, 9)", [("used", 7), ("questions", None)])
    assert migrate(conn, MIGRATIONS[:24]) == [24]
    assert conn.execute("SELECT origin, asked_at FROM arena_episodes ORDER BY id").fetchall() == [
        ("used", 5.0), ("questions", None)]
    assert "n" in {r[1] for r in conn.execute("PRAGMA table_info(access_events)")}


def test_migration_25_gives_back_what_consolidation_took_for_feedback_alone(tmp_path):
    import json


    conn = driver.connect(tmp_path / "buried.db")
    migrate(conn, MIGRATIONS[:24])
    conn.execute("INSERT INTO namespaces (agent, created_at) VALUES ('default', 0)")
    for i, (confidence, tier, state) in enumerate([(0.1, "cold", "active"), (0.7, "cold", "active"),
                                                   (0.1, "cold", "superseded"), (0.4, "hot", "active")], 1):
        conn.execute("INSERT INTO episodes (id, agent, kind, content, content_hash, event_at, recorded_at, "
                     "last_seen_at, importance, updated_at, confidence, tier, state) "
                     "VALUES (?, 'default', 'note', ?, ?, 0, 0, 0, 0.5, 0, ?, ?, ?)",
                     (i, f"memory {i}", f"h{i}", confidence, tier, state))

    def audit(episode, rule, reason, before):
        conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES "
                     "(1, 'default', 'episode', ?, ?, ?, 'daemon')",
                     (episode, f"consolidate:{rule}", json.dumps({"run": 1, "reason": reason, "before": before})))

    unhelpful = "never accessed, 90 days old > 60, unhelpful: 0 of 5 rated recalls succeeded: confidence 1 -> 0.85"
    audit(1, "stale", unhelpful, {"confidence": 1.0})
    audit(1, "stale", unhelpful.replace("1 -> 0.85", "0.85 -> 0.7"), {"confidence": 0.85})
    audit(1, "archive", "strength 0.010 < 0.05 ..., unhelpful: 0 of 5 rated recalls succeeded: to the cold tier",
          {"tier": "hot"})
    audit(2, "archive", "strength 0.010 < 0.05 ..., routine: memory 9 says the same later: to the cold tier",
          {"tier": "hot"})
    audit(3, "archive", "..., unhelpful: 0 of 4 rated recalls succeeded: to the cold tier", {"tier": "hot"})
    audit(4, "stale", "..., contradicted by a newer memory: confidence 0.55 -> 0.4", {"confidence": 0.55})
    assert migrate(conn, MIGRATIONS)[0] == 25
    rows = conn.execute("SELECT id, confidence, tier FROM episodes ORDER BY id").fetchall()
    # 1 comes back whole; 2 and 4 went for other reasons; 3 was superseded by a merge, which stays.
    assert rows == [(1, 1.0, "hot"), (2, 0.7, "cold"), (3, 0.1, "cold"), (4, 0.4, "hot")]


def test_migration_29_gives_fact_keys_their_identifiers_back(tmp_path):
    from strata_daemon.facts.keys import normalise_key

    conn = driver.connect(tmp_path / "keys.db")
    migrate(conn, MIGRATIONS[:28])
    conn.execute("INSERT INTO namespaces (agent, created_at) VALUES ('default', 0)")
    # Before, every `-` and `_` became a space: `db-01` was the key `db 01`.
    facts = [(1, "db 01 disk usage", "db-01 disk usage"), (2, "backup job", "Backup-Job"),
             (3, "dana whitfield.email", "Dana Whitfield's email"), (4, "node 2", "node_2")]
    conn.executemany("INSERT INTO facts (id, agent, key, label, created_at, updated_at) VALUES (?, 'default', ?, ?, 0, 0)",
                     facts)
    conn.executemany("INSERT INTO web_edges (agent, a, b, level, activations, created_at, last_at) "
                     "VALUES ('default', ?, ?, 0.5, 1, 0, 0)",
                     [("episode:1", "fact:db 01 disk usage"), ("fact:db 01 disk usage", "fact:node 2")])
    conn.execute("INSERT INTO web_links (agent, src, dst, type, created_at, actor) "
                 "VALUES ('default', 'episode:1', 'fact:node 2', 'mentions', 0, 'daemon')")
    conn.execute("INSERT INTO web_context (agent, node, activated_at, source) VALUES ('default', 'fact:node 2', 0, 'x')")
    assert migrate(conn, MIGRATIONS) == [29, 30]  # 30: the facts then owe their canonical keys
    keys = dict(conn.execute("SELECT id, key FROM facts").fetchall())
    assert keys == {1: "db-01 disk usage", 2: "backup job", 3: "dana whitfield.email", 4: "node-2"}
    assert all(keys[i] == normalise_key(label) for i, _, label in facts if i != 3)  # the rule the code has now
    assert conn.execute("SELECT a, b FROM web_edges ORDER BY a").fetchall() == [
        ("episode:1", "fact:db-01 disk usage"), ("fact:db-01 disk usage", "fact:node-2")]
    assert conn.execute("SELECT dst FROM web_links").fetchall() == [("fact:node-2",)]
    assert conn.execute("SELECT node FROM web_context").fetchall() == [("fact:node-2",)]


@pytest.fixture
def small_disk(tmp_path):
    """A real file system of 3 MiB (tmpfs), for a disk that fills; where mounting is not
    permitted (not root, a container without the capability) the test says so and skips."""
    import subprocess

    where = tmp_path / "disk"
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.strip() or r.returncode}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_full_disk_is_said_as_one_and_loses_nothing_committed(small_disk):
    """SQLite rolls a transaction back itself when the disk fills; the ROLLBACK strata then
    sent failed with 'cannot rollback - no transaction is active', which hid why."""
    from strata_daemon.config.home import init_home

    async def go():
        init_home(small_disk / "home")
        async with await Memory.open(small_disk / "home") as mem:
            ids = []
            with pytest.raises(StorageError, match="is full"):
                while True:
                    ids.append((await mem.observe(f"note {len(ids)} about the relay " + "lorem ipsum " * 20))["id"])
            for attempt in (mem.embed_pending(), mem.forget(ids[0], purge=True)):
                with pytest.raises(StorageError) as caught:
                    await attempt
                assert "is full" in caught.value.message and "rollback" not in caught.value.message
            assert (await mem.status())["episodes"] == len(ids) and (await mem.get(ids[0]))["content"].startswith("note 0")
    asyncio.run(go())
