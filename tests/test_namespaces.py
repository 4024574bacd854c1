"""Agent A can never read or change agent B's memories, facts, dossiers or edges, through any
face (Python, CLI, MCP), unless strata.toml shares B, and then only for reading."""

from __future__ import annotations

import asyncio

import pytest

from conftest import CLI, write_config
from mcp_helpers import mcp_client
from strata_daemon import Memory
from strata_daemon.errors import StrataError

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

SECRET = "Vault-07 unseal keys rotate every Friday at 18:00"


@pytest.fixture
def two_agents(home):
    """B holds a memory, a fact, a dossier, an edge and a recall; returns B's ids and a snapshot
    function of everything B holds."""
    async def fill():
        async with await Memory.open(home, agent="b") as b:
            first = (await b.observe(SECRET, kind="lesson"))["id"]
            second = (await b.observe("Rotated the vault-07 keys; unseal took 4 minutes"))["id"]
            await b.set_fact("vault", "sealed")
            await b.add_topic("vault", query="vault-07 keys")
            await b.refresh_dossier("vault")
            await b.activate([f"episode:{first}", f"episode:{second}"])
            await b.commit_working_set()
            recall_id = (await b.recall("vault keys", mode="fast"))["recall_id"]
            return {"episode": first, "recall": recall_id}
    ids = asyncio.run(fill())

    def snapshot():
        async def read():
            async with await Memory.open(home, agent="b") as b:
                return {"episodes": [(e["id"], e["content"], e["state"], e["factual"], e["irrelevant"])
                                     for e in await b.timeline()],
                        "fact": (await b.fact_history("vault"))["history"],
                        "dossier": (await b.show_dossier("vault"))["version"],
                        "edges": await b.neighbours(f"episode:{ids['episode']}"),
                        "feedback": await b.db.fetchall("SELECT outcome FROM recalls WHERE agent = 'b'")}
        return asyncio.run(read())
    ids["snapshot"] = snapshot
    return ids


def test_python_api(home, two_agents):
    before = two_agents["snapshot"]()
    eid, rid = two_agents["episode"], two_agents["recall"]

    async def probe():
        async with await Memory.open(home, agent="a") as a:
            assert (await a.recall("vault-07 unseal keys Friday"))["hits"] == []
            assert await a.get_many([eid]) == {}
            kinds = []
            for call in (lambda: a.get(eid), lambda: a.get_fact("vault"), lambda: a.fact_history("vault"),
                         lambda: a.show_dossier("vault"), lambda: a.related(f"episode:{eid}"),
                         lambda: a.feedback(rid, "failure"), lambda: a.forget(eid), lambda: a.mark(eid, factual=True),
                         lambda: a.link(f"episode:{eid}", f"episode:{eid + 1}"),
                         lambda: a.cas_fact("vault", "sealed", "open"), lambda: a.shared("b")):
                with pytest.raises(StrataError) as caught:
                    await call()
                kinds.append(caught.value.kind)
            assert kinds == ["not_found"] * 9 + ["cas_mismatch", "not_permitted"]
            await a.set_fact("vault", "open")  # A's own fact of the same name
            assert (await a.status())["episodes"] == 0
    asyncio.run(probe())
    assert two_agents["snapshot"]() == before


def test_cli(home, two_agents):
    cli = CLI(home)
    before = two_agents["snapshot"]()
    eid, rid = str(two_agents["episode"]), str(two_agents["recall"])
    assert cli.json("--agent", "a", "recall", "vault-07 unseal keys Friday")["hits"] == []
    for args, code in ((["show", eid], 3), (["fact", "get", "vault"], 3), (["fact", "history", "vault"], 3),
                       (["dossier", "show", "vault"], 3), (["related", eid], 3), (["feedback", rid, "failure"], 3),
                       (["forget", eid], 3), (["mark", eid, "--factual"], 3), (["web", "spread", eid], 3),
                       (["fact", "cas", "vault", "sealed", "open"], 9), (["--scope", "b", "recall", "vault"], 11)):
        proc = cli("--agent", "a", *args)
        assert proc.returncode == code, (args, proc.err)
        assert proc.err.startswith("strata:") and "Traceback" not in proc.err
    assert cli.json("--agent", "a", "timeline") == []
    assert two_agents["snapshot"]() == before


def test_mcp(home, two_agents):
    before = two_agents["snapshot"]()
    eid, rid = two_agents["episode"], two_agents["recall"]

    async def probe():
        async with mcp_client(home, agent="a") as t:
            assert (await t.call("recall", query="vault-07 unseal keys Friday"))["hits"] == []
            for tool, args in (("memory_get", {"id": eid}), ("fact_get", {"key": "vault"}),
                               ("fact_get", {"key": "vault", "history": True}), ("dossier", {"topic": "vault"}),
                               ("related", {"item": str(eid)}), ("related", {"item": f"episode:{eid}", "depth": 2}),
                               ("feedback", {"recall_id": rid, "outcome": "failure"})):
                assert "not_found" in await t.error(tool, **args), tool
            assert "cas_mismatch" in await t.error("fact_set", key="vault", expected="sealed", value="open")
            assert "not_permitted" in await t.error("fact_get", scope="b")
            await t.call("fact_set", key="vault", value="open")
            assert (await t.call("status"))["agent"] == "a"
    asyncio.run(probe())
    assert two_agents["snapshot"]() == before


def test_a_shared_namespace_is_readable_by_every_face_and_writable_by_none(home, two_agents):
    write_config(home, '[agent]\nshared = ["b"]\n')
    before = two_agents["snapshot"]()
    eid = two_agents["episode"]

    async def python_face():
        async with await Memory.open(home, agent="a") as a:
            b = await a.shared("b")
            found = await b.recall("vault-07 unseal keys Friday", mode="fast")
            assert found["hits"][0]["id"] == eid and found["recall_id"] is None  # reading leaves no trace
            assert (await b.get_fact("vault"))["value"] == "sealed"
            for write in (lambda: b.observe("planted"), lambda: b.set_fact("vault", "open"),
                          lambda: b.forget(eid), lambda: b.refresh_dossier("vault", force=True),
                          lambda: b.activate([f"episode:{eid}"]), lambda: b.render_capsule(),
                          lambda: b.db.run(lambda c: c.execute("DELETE FROM episodes"))):
                with pytest.raises(StrataError) as caught:
                    await write()
                assert caught.value.kind == "not_permitted"
            assert (await a.recall("vault-07 unseal keys Friday"))["hits"] == []  # own namespace still own
    asyncio.run(python_face())

    cli = CLI(home)
    assert cli.json("--agent", "a", "--scope", "b", "fact", "get", "vault")["value"] == "sealed"
    shown = cli("--agent", "a", "--scope", "b", "recall", "vault", check=True).out
    assert shown.startswith("recall (read-only namespace: not logged)") and "None" not in shown
    proc = cli("--agent", "a", "--scope", "b", "observe", "planted")
    assert proc.returncode == 11 and "read only through a scope" in proc.err
    # A scope only reads, also when it names the agent's own namespace (that wrote).
    proc = cli("--agent", "a", "--scope", "a", "observe", "planted")
    assert proc.returncode == 11 and "read only through a scope" in proc.err
    assert cli("--agent", "a", "--scope", "b", "run").returncode == 2  # --scope means nothing there

    async def mcp_face():
        async with mcp_client(home, agent="a") as t:
            assert (await t.call("recall", query="unseal keys Friday", scope="b", mode="fast"))["hits"][0]["id"] == eid
            schemas = {tool.name: tool.input_schema["properties"] for tool in (await t.client.list_tools()).tools}
            assert not any("scope" in schemas[name] for name in ("observe", "feedback", "fact_set", "dossier", "forget"))
            assert (await t.call("fact_get", key="vault", scope="b"))["value"] == "sealed"
            assert eid in [m["id"] for m in (await t.call("timeline", scope="b"))["memories"]]
    asyncio.run(mcp_face())
    assert two_agents["snapshot"]() == before


def test_a_bad_shared_namespace_is_a_configuration_error(home):
    write_config(home, '[agent]\nshared = ["team", "no spaces allowed"]\n')
    proc = CLI(home)("recall", "anything")
    assert proc.returncode == 7 and "agent.shared" in proc.err and "no spaces allowed" in proc.err


@pytest.mark.parametrize("name", ["ops\n", "ops\n\n", "_ops", "o" * 65])
def test_a_namespace_name_is_all_of_the_argument(home, name):
    proc = CLI(home)("--agent", name, "observe", "a note")
    assert proc.returncode == 4 and "agent namespace" in proc.err


@pytest.mark.parametrize("name", ["CAPSULE", "capsule"])
def test_no_namespace_can_share_the_home_capsule_file(home, name):
    cli = CLI(home)
    cli("observe", "the home namespace's own note", check=True)
    capsule = (home / "capsule" / "CAPSULE.md").read_bytes()
    proc = cli("--agent", name, "observe", "another agent's note")
    assert proc.returncode != 0 and "reserved" in proc.err and "Traceback" not in proc.err
    proc = cli("--agent", name, "capsule", "render")
    assert proc.returncode != 0 and "reserved" in proc.err
    assert (home / "capsule" / "CAPSULE.md").read_bytes() == capsule
    assert not list((home / "capsule").glob("capsule*.md"))


def test_a_new_home_namespace_takes_nothing_from_the_capsule_the_old_one_rendered(home):
    cli = CLI(home)
    cli("fact", "set", "wifi_password", "hunter2", check=True)
    cli("observe", "Deployed the old namespace's build", check=True)
    cli("capsule", "render", check=True)
    write_config(home, '[agent]\nnamespace = "ops"\n')
    rendered = cli.json("capsule", "render")
    assert rendered["absorbed"] == [] and rendered["pinned"] == []
    assert cli("--agent", "ops", "fact", "get", "wifi_password").returncode == 3
    assert cli.json("--agent", "ops", "capsule", "overrides") == []
    assert "hunter2" not in (home / "capsule" / "CAPSULE.md").read_text()
    # A person's edit of the file after the change is still theirs to make.
    text = (home / "capsule" / "CAPSULE.md").read_text()
    begin = "<!-- strata:begin facts -->\n"
    (home / "capsule" / "CAPSULE.md").write_text(text.replace(begin, begin + "- door code: 4411\n"))
    cli("capsule", "render", check=True)
    assert cli.json("--agent", "ops", "fact", "get", "door code")["value"] == "4411"


@pytest.mark.parametrize("budget", [None, 2])  # ranked by bm25, and by IDF sums (the bounded plan)
def test_full_text_statistics_tell_an_agent_nothing_of_another_agents_words(home, budget):
    if budget:
        write_config(home, f'[experimental]\n"recall.fts_budget" = {budget}\n')

    async def go():
        async with await Memory.open(home, agent="b") as b:
            await b.observe_many([{"content": "the kestrel nests on the bridge"}, {"content": "the kestrel flew"},
                                  {"content": "lunch at noon"}, {"content": "the bridge is up"}])

            async def scores():
                hits = (await b.recall("kestrel bridge", mode="fast", explain=True))["hits"]
                return [(h["id"], h["explain"]["retrievers"]["fts"]) for h in hits]
            before = await scores()
            async with await Memory.open(home, agent="a") as a:
                await a.observe_many([{"content": f"kestrel sighting {i}"} for i in range(40)])
            return before, await scores()
    before, after = asyncio.run(go())
    assert before and before == after
