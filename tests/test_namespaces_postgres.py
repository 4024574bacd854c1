"""Namespaces kept by the server: a role bound to one namespace (`strata store grant`) cannot
read or change another's rows, by raw SQL or through any face; it reads, and never changes, the
shared ones. On a real PostgreSQL with row-level security (migration 3)."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import CLI, write_config
from http_helpers import serving
from mcp_helpers import mcp_client
from strata_daemon import Memory
from strata_daemon.errors import StrataError
from strata_daemon.store.postgres import connection
from strata_daemon.store.postgres.migrations.m003_namespaces_by_role import BY_MEMORY, TABLES

pytestmark = pytest.mark.postgres
SECRET = "alpha's vault code is 4471-zebra"


def _as(url: str, role: str) -> str:
    return url.replace("postgres:@", f"{role}:@", 1)


@pytest.fixture
def bound(pg_url, home, monkeypatch):
    """Namespaces alpha (a secret), beta and shared (readable by all) on one database; roles
    agent_a and agent_b bound to alpha and beta by the owner."""
    admin = connection.connect(pg_url)
    for role in ("agent_a", "agent_b"):  # the server's, so kept from an earlier test (its grants with it)
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = ?", (role,)).fetchone():
            admin.execute(f"CREATE ROLE {role} LOGIN")
    write_config(home, f'store.url = "{pg_url}"\n[agent]\nshared = ["shared"]\n')

    async def fill():
        ids = {}
        for agent, text in (("alpha", SECRET), ("beta", "beta keeps the relay notes"), ("shared", "the team rota")):
            async with await Memory.open(home, agent=agent) as mem:
                ids[agent] = (await mem.observe(text))["id"]
                await mem.set_fact(f"{agent} key", f"{agent} value")
                await mem.activate([f"episode:{ids[agent]}", f"fact:{agent} key"])
                await mem.commit_working_set()
                await mem.recall(text, mode="fast")
        async with await Memory.open(home, agent="alpha") as mem:
            await mem.grant_role("agent_a")
            await mem.grant_role("agent_b", "beta")
        return ids

    ids = asyncio.run(fill())
    yield ids, admin
    admin.close()


def _alpha_rows(admin) -> list:
    return admin.execute("SELECT id, content, state FROM episodes WHERE agent = 'alpha' ORDER BY id").fetchall()


def test_a_role_reaches_its_namespace_and_reads_the_shared_one_only(bound, pg_url, home, monkeypatch):
    ids, admin = bound
    before = _alpha_rows(admin)
    b = connection.connect(_as(pg_url, "agent_b"))
    attempts, leaks = 0, []

    def refused_or_empty(sql: str, params=()):
        nonlocal attempts
        attempts += 1
        try:
            rows = b.execute(sql, params).fetchall()
        except connection.driver_errors():
            return
        if any(SECRET in str(r) or "alpha" in str(r) for r in rows):
            leaks.append(sql)

    for table in TABLES:  # reading alpha's rows, table by table
        refused_or_empty(f"SELECT * FROM {table} WHERE agent = 'alpha'")
    for table in BY_MEMORY:
        refused_or_empty(f"SELECT * FROM {table} WHERE episode_id = ?", (ids["alpha"],))
    refused_or_empty("SELECT * FROM episodes WHERE id = ?", (ids["alpha"],))
    refused_or_empty("SELECT content FROM episodes WHERE search @@ 'vault'::tsquery")
    refused_or_empty("SELECT * FROM audit")
    for statement in (  # changing them, and the rules themselves
            "UPDATE episodes SET content = 'gone' WHERE agent = 'alpha'",
            "DELETE FROM episodes WHERE agent = 'alpha'",
            "UPDATE facts SET label = 'x' WHERE agent = 'alpha'",
            "DELETE FROM fact_values WHERE agent = 'alpha'",
            "UPDATE access_events SET folded = 1",
            "INSERT INTO namespaces (agent, created_at) VALUES ('alpha2', 0)",
            "INSERT INTO episodes (agent, kind, content, content_hash, event_at, recorded_at, last_seen_at, "
            "importance, updated_at) VALUES ('alpha', 'note', 'planted', 'h', 0, 0, 0, 0.5, 0)",
            "UPDATE episodes SET agent = 'alpha' WHERE agent = 'beta'",
            "UPDATE episodes SET content = 'x' WHERE agent = 'shared'",
            "DELETE FROM episodes WHERE agent = 'shared'",
            "UPDATE strata_roles SET agent = 'alpha' WHERE role = 'agent_b'",
            "INSERT INTO strata_shared (agent) VALUES ('alpha')",
            "DELETE FROM strata_roles",
            "ALTER TABLE episodes DISABLE ROW LEVEL SECURITY",
            "DROP POLICY own ON episodes",
            "SET ROLE agent_a",
            "SET ROLE postgres",
            "CREATE FUNCTION strata_agent() RETURNS text LANGUAGE sql AS $$ SELECT 'alpha' $$"):
        refused_or_empty(statement)
    assert b.execute("SELECT agent FROM episodes ORDER BY agent").fetchall() == [("beta",), ("shared",)]
    assert b.execute("UPDATE episodes SET content = content WHERE agent = 'shared'").rowcount == 0

    async def faces():  # the facade as agent_b's daemon: asking for alpha by name, id and words
        nonlocal attempts
        monkeypatch.setenv("STRATA_DATABASE_URL", _as(pg_url, "agent_b"))
        async with await Memory.open(home, agent="beta") as mem:
            calls = [mem.get(ids["alpha"]), mem.get_many([ids["alpha"]]), mem.forget(ids["alpha"]),
                     mem.forget(ids["alpha"], purge=True), mem.restore(ids["alpha"]),
                     mem.mark(ids["alpha"], factual=True), mem.spread([f"episode:{ids['alpha']}"]),
                     mem.neighbours(f"episode:{ids['alpha']}"), mem.get_fact("alpha key"),
                     mem.fact_history("alpha key"), mem.recall("vault code zebra", mode="fast"),
                     mem.context("vault code", budget=256), mem.timeline(), mem.list_facts(), mem.entities()]
            for call in calls:
                attempts += 1
                try:
                    r = await call
                except StrataError:
                    continue
                if SECRET in str(r) or "alpha value" in str(r):
                    leaks.append(str(call))
            shared = await mem.shared("shared")
            assert (await shared.recall("team rota", mode="fast"))["hits"]
        async with await Memory.open(home, agent="alpha") as mem:  # a role bound to beta, asking as alpha
            for call in (mem.recall("vault code", mode="fast"), mem.get(ids["alpha"]), mem.observe("planted")):
                attempts += 1
                try:
                    r = await call
                except StrataError:
                    continue
                if SECRET in str(r):
                    leaks.append(str(call))

    asyncio.run(faces())
    b.close()
    assert attempts >= 50 and leaks == []
    assert _alpha_rows(admin) == before  # nothing of alpha's changed


def test_a_bound_role_purges_its_own_memory_from_the_servers_files(bound, pg_url, home, monkeypatch):
    from strata_bench import server_files

    ids, admin = bound
    assert any(b"4471-zebra" in data for data in server_files.database_files(pg_url).values())

    async def purge():
        monkeypatch.setenv("STRATA_DATABASE_URL", _as(pg_url, "agent_a"))
        async with await Memory.open(home, agent="alpha") as mem:
            return await mem.forget(ids["alpha"], purge=True)

    r = asyncio.run(purge())
    assert r["memories"] == [ids["alpha"]] and r["heap_cleared"]  # MAINTAIN, granted with the namespace
    assert not any(b"4471-zebra" in data for data in server_files.database_files(pg_url).values())
    assert admin.execute("SELECT count(*) FROM episodes WHERE agent = 'beta'").fetchone()[0] == 1


def test_a_bound_role_reaches_no_other_namespace_through_the_cli_http_or_mcp(bound, pg_url, home, monkeypatch):
    """agent_b's login on every face, asking for namespace alpha by name, id and words."""
    ids, admin = bound
    before = _alpha_rows(admin)
    monkeypatch.setenv("STRATA_DATABASE_URL", _as(pg_url, "agent_b"))
    alpha, seen = str(ids["alpha"]), []
    cli = CLI(home)
    for args in (("recall", "vault code zebra"), ("get", alpha), ("export",), ("fact", "get", "alpha key"),
                 ("fact", "list"), ("fact", "history", "alpha key"), ("timeline",), ("context", "vault code"),
                 ("forget", alpha, "--purge"), ("forget", "--matching", "zebra", "--purge", "--yes"),
                 ("web", "neighbours", f"episode:{alpha}"), ("status",)):
        for agent in ("alpha", "beta"):
            seen.append(cli("--agent", agent, "--json", *args).out)
    refused = cli("--agent", "alpha", "observe", "x")  # said as a namespace not permitted, not a database error
    assert refused.returncode == 11 and "bound to another namespace" in refused.err, refused.err
    with serving(home, agent="alpha") as api:
        for method, path, body in (("GET", f"/v1/memories/{alpha}", None), ("GET", "/v1/facts", None),
                                   ("GET", "/v1/facts/alpha%20key", None), ("GET", "/v1/timeline", None),
                                   ("POST", "/v1/recall", {"query": "vault code zebra"}),
                                   ("POST", "/v1/context", {"text": "vault code"}),
                                   ("POST", "/v1/memories/get", {"ids": [ids["alpha"]]}),
                                   ("DELETE", f"/v1/memories/{alpha}", None), ("GET", "/v1/capsule", None),
                                   ("GET", f"/v1/memories/{alpha}/related", None)):
            seen.append(str(api.raw(method, path, None if body is None else json.dumps(body).encode())))

    async def mcp():
        async with mcp_client(home, agent="alpha", flags=("--allow-purge",)) as t:
            for name, arguments in (("recall", {"query": "vault code zebra"}), ("memory_get", {"id": ids["alpha"]}),
                                    ("fact_get", {"key": "alpha key"}), ("timeline", {}), ("capsule_get", {}),
                                    ("forget", {"id": ids["alpha"], "purge": True}),
                                    ("related", {"id": ids["alpha"]})):
                r = await t.client.call_tool(name, arguments)
                seen.append(str(r.content))

    asyncio.run(mcp())
    assert len(seen) >= 40
    assert [s for s in seen if SECRET in s or "alpha value" in s or "4471" in s] == []
    assert _alpha_rows(admin) == before  # nothing of alpha's changed


def test_a_bound_role_may_not_embed_the_shared_store_anew(bound, pg_url, home, monkeypatch):
    ids, admin = bound
    CLI(home)("reindex", check=True)  # as the owner: every namespace's memories
    vectors = admin.execute("SELECT count(*) FROM episode_vectors").fetchone()[0]
    assert vectors == 3
    monkeypatch.setenv("STRATA_DATABASE_URL", _as(pg_url, "agent_b"))
    proc = CLI(home)("--agent", "beta", "reindex", "--force")
    assert proc.returncode != 0 and "only the tables' owner" in proc.err and "owner's URL" in proc.err
    assert admin.execute("SELECT count(*) FROM episode_vectors").fetchone()[0] == vectors
