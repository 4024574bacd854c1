"""`strata bench forget`: the deletion-compliance set. Secrets are planted the ways a home comes
to hold them (a sentence, a `key: value` line, repeated, merged by consolidation, cited in a
dossier, rendered in the capsule, pinned there by a person, asked about in a recall, a topic
named in another spelling, a backup killed mid-copy left in state/backups/), the home
lives a little (capsule render, dossier refresh, embedding, consolidation, feedback), each
secret is forgotten the way a person or agent would ask, and then every face is searched for it:
recall, facts, dossiers, the capsule, export, HTTP, MCP, every file in the home (the database's). With --store-url the home keeps its memories in a
database of its own on that PostgreSQL server, and the raw bytes searched are every file of
that database in the server's data directory (server_files.py); the server's WAL, which a purge
cannot empty (docs/forgetting.md), is searched too and reported apart.

Each secret must be found on some face before its request (else the probe proves nothing);
after all requests, a leak is a secret found on a face. Then the copies made before the
requests are put back as a person would: an export imported (`strata import`), then a backup
restored (`strata backup --restore`: an SQLite copy, or a pg_dump file on PostgreSQL); a
secret found on a face after either was brought back.
The purge of one memory in a 100k home is timed by `strata bench purge`.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from strata_bench import server_files, stores
from strata_daemon.app.memory import Memory
from strata_daemon.app.phases.runs import run_phase
from strata_daemon.app.public import copy_database, export_line, open_database, parse_jsonl
from strata_daemon.app.restore import restore_home
from strata_daemon.base import timeutil
from strata_daemon.config.home import Home, init_home
from strata_daemon.errors import StrataError
from strata_daemon.faces.http.client import UnixConnection


@dataclass(frozen=True)
class Case:
    name: str
    says: tuple[str, ...]  # memories, oldest first
    secret: str  # the words that must be gone
    # ("memory", index in says) | ("matching", text) | ("fact", key) | ("fact matching", text) |
    # ("topic", name) | ("topic matching", text)
    forget: tuple[str, object]
    kind: str | None = None
    fact: tuple[str, ...] = ()  # a fact a person sets: its key, then each value it is given in turn
    fact_source: str | None = None  # where the person says the fact came from
    topic: str | None = None  # a dossier kept on it
    query: str | None = None  # the words the dossier's recall looks for (default: the topic's)
    pin: str | None = None  # a line a person writes into the capsule's recent block
    capsule_line: str | None = None  # a line a person writes into the capsule, outside strata's blocks
    asked: str | None = None  # a recall that asks about it, with feedback
    context: dict = field(default_factory=dict)
    source: str | None = None  # where its memories came from
    session: str | None = None


CASES: tuple[Case, ...] = (
    Case("sentence", ("My medical history: I have diabetes and a heart murmur called Ventrix-7.",), "Ventrix-7",
         ("memory", 0)),
    Case("key-value line", ("Locker code: 7Q4417",), "7Q4417", ("memory", 0)),
    Case("attribute statement", ("Dana Whitfield's email address is dana.w@oldmailbox.example",), "oldmailbox",
         ("memory", 0)),
    Case("phone by matching", ("My phone number is 555-0199-KX.",), "555-0199-KX", ("matching", "555-0199-KX")),
    Case("repeated across memories", ("The safe combination is 31-22-8 crimsonfox.",
                                      "Reminder: safe is crimsonfox, 31-22-8.",
                                      "Told Ines the safe opens with crimsonfox"), "crimsonfox",
         ("matching", "crimsonfox")),
    Case("merged by consolidation", ("The gate code for the Larch Street depot is 6620-VBQ.",
                                     "The gate code for the Larch Street depot is 6620-VBQ!"), "6620-VBQ",
         ("memory", 0)),
    Case("cited in a dossier", ("Project Falcon budget approved at 88k zorbles by the board.",
                                "Project Falcon kickoff moved to Thursday."), "zorbles", ("memory", 0),
         topic="falcon"),
    Case("fact in the capsule", ("Wifi network: hunter-gx2",), "hunter-gx2", ("memory", 0)),  # a password never arrives
    Case("task in the capsule", ("TODO: call Dr. Okonkwo about the biopsy results",), "biopsy", ("memory", 0),
         kind="task"),
    Case("fact a person set", (), "8841-ZXW", ("fact", "gate code"), fact=("gate code", "8841-ZXW")),
    Case("fact with history", (), "qzy", ("fact", "diagnosis"), fact=("diagnosis", "fluqzy", "migrqzy")),
    Case("pinned by a person", ("Sasha's birthday is in June.",), "kayak-xv", ("matching", "kayak-xv"),
         pin="- Sasha's surprise present is a kayak-xv"),
    Case("asked about in a recall", ("The spare key hides under the blue gnomeqx.",), "gnomeqx",
         ("matching", "gnomeqx"), asked="where is the spare key, under the gnomeqx?"),
    Case("entity only it mentions", ("Write to ines.private@protonvault.example about the lease.",),
         "protonvault", ("memory", 0)),
    Case("context of a memory", ("Patient intake done.",), "ID-77QX", ("memory", 0),
         context={"patient": "ID-77QX"}),
    Case("multi-line note", ("Notes from the gym:\nLocker B: 9921-TTV\nClasses on Tuesdays",), "9921-TTV",
         ("memory", 0)),
    Case("moved address", ("Ines moved: her address is now 12 Quayvern Lane",), "Quayvern", ("memory", 0)),
    Case("older value purged", ("Marek's phone number is 555-0111-OLD.", "Marek's phone number is now 555-0122."),
         "555-0111-OLD", ("memory", 0)),
    Case("newer value purged", ("Oskar's office is room B-12.", "Oskar's office is now room Z-99Q."), "Z-99Q",
         ("memory", 1)),
    Case("used and fed back", ("The vault code for the lab is 3141-PQZ.",), "3141-PQZ", ("memory", 0),
         asked="vault PIN for the lab"),
    Case("matching a fact and memories", ("Insurance policy number: POL-55XQ-2",
                                          "Renewed policy POL-55XQ-2 today."), "POL-55XQ", ("matching", "POL-55XQ")),
    Case("said by a source", ("Our landlord is Mr. Brenwick-Hale.",), "Brenwick", ("memory", 0),
         source="person:ines"),
    Case("words in a fact key", (), "Quillborne", ("matching", "Quillborne"), fact=("Quillborne account owner", "bob")),
    Case("fact key by words", (), "Tessaly", ("fact matching", "Tessaly"), fact=("Tessaly door code", "4411")),
    Case("words in a fact's source", (), "Orvanti", ("matching", "Orvanti"), fact=("printer ip", "10.0.0.9"),
         fact_source="person:Orvanti"),
    Case("words in a memory's source", ("innocent words about lunch",), "Pellucine", ("matching", "Pellucine"),
         source="src-Pellucine"),
    Case("words in a memory's context", ("Patient called back.",), "MRN-88ZV", ("matching", "MRN-88ZV"),
         context={"code": "MRN-88ZV"}),
    Case("words in a context key", ("Ticket closed.",), "Vantrosk", ("matching", "Vantrosk"),
         context={"Vantrosk": "yes"}),
    Case("words in a session", ("Long meeting today.",), "Grimsholt", ("matching", "Grimsholt"),
         session="sess-Grimsholt"),
    Case("words in a dossier topic", ("Harbour refit planned for spring.",), "Zephrane", ("matching", "Zephrane"),
         topic="zephrane harbour", query="harbour refit"),
    Case("a topic named in another spelling", ("Dock survey notes filed.",), "quorvex", ("matching", "QUORVEX-7"),
         topic="Quorvex 7 docks", query="dock survey"),
    Case("dossier topic by name", ("Kettle lake cabin bookings open in May.",), "kettle_lake",
         ("topic", "kettle lake"), topic="kettle lake"),
    Case("dossier topic by words", ("Orchard survey done.",), "Wexmoor", ("topic matching", "Wexmoor"),
         topic="wexmoor orchard", query="orchard survey"),
    Case("words in a capsule topic line", ("Birch grove notes kept.",), "Talvenik", ("matching", "Talvenik"),
         capsule_line="Topics: talvenik-grove"),
    Case("merged twin forgotten by the other", ("The storage unit at Dock 9 opens with 4471-MZR.",
                                                "The storage unit at Dock 9 opens with 4471-MZR!"), "4471-MZR",
         ("memory", 1)),
)


async def plant(mem: Memory, cases=CASES) -> dict[str, list[int]]:
    """Every case's memories, facts, topics, pins and recalls, then a little life: embedding,
    consolidation, dossier refresh, capsule renders. Returns each case's memory ids."""
    ids: dict[str, list[int]] = {}
    start = timeutil.now() - 3600 * 24 * 3
    for n, c in enumerate(cases):
        ids[c.name] = []
        for i, text in enumerate(c.says):
            r = await mem.observe(text, kind=c.kind, context=c.context or None, at=start + n * 600 + i * 60,
                                  source=c.source, session=c.session)
            ids[c.name].append(r["id"])
        for value in c.fact[1:]:
            await mem.set_fact(c.fact[0], value, source=c.fact_source)
        if c.topic:
            await mem.add_topic(c.topic, query=c.query or c.topic)
    await run_phase(mem, "embed", actor="bench")
    await run_phase(mem, "consolidate", actor="bench")
    for c in cases:
        if c.asked:
            r = await mem.recall(c.asked, k=5)
            if r["hits"]:
                await mem.feedback(r["recall_id"], "success", used=[r["hits"][0]["id"]])
    await mem.render_capsule()
    pins = [c.pin for c in cases if c.pin]
    lines = [c.capsule_line for c in cases if c.capsule_line]
    if pins or lines:
        text = mem.capsule_path.read_text(encoding="utf-8")
        mark = "<!-- strata:begin recent -->\n"
        text = text.replace(mark, mark + "".join(p + "\n" for p in pins))
        mem.capsule_path.write_text(text + "".join(f"\n{line}\n" for line in lines), encoding="utf-8")
    for t in (await mem.list_dossiers())["topics"]:
        if t["enabled"]:
            await mem.refresh_dossier(t["topic"], force=True)
    await mem.render_capsule()
    return ids


async def request(mem: Memory, c: Case, ids: list[int]) -> dict:
    """Forget the case's secret the way its request says."""
    how, what = c.forget
    if how == "memory":
        return await mem.forget(ids[int(what)], purge=True)
    if how == "matching":
        return await mem.forget_matching(str(what), purge=True, apply=True)
    if how == "fact matching":
        return await mem.forget_fact(matching=str(what), apply=True)
    if how == "topic":
        return await mem.forget_topic(str(what), apply=True)
    if how == "topic matching":
        return await mem.forget_topic(matching=str(what), apply=True)
    return await mem.forget_fact(str(what), apply=True)


async def faces(mem: Memory, cases=CASES) -> dict[str, str]:
    """Each face as one text, in-process: what an agent or person could read there. MEM is
    read-only, so the probe's own recalls log nothing."""
    out: dict[str, list] = {"recall": [], "facts": [], "dossiers": [], "capsule": [], "export": [], "entities": [],
                            "timeline": []}
    for c in cases:
        for q in (c.secret, *c.says, c.asked or ""):
            if q.strip():
                r = await mem.recall(q[:200], k=10, include_archived=True)
                out["recall"].append({k: v for k, v in r.items() if k != "query"})  # not the probe's own words
    facts = await mem.list_facts()
    out["facts"].append(facts)
    for key in {f["key"] for f in facts} | {c.fact[0] for c in cases if c.fact} | {"locker code", "wifi password"}:
        try:
            out["facts"].append(await mem.fact_history(key))
        except StrataError:
            pass
    for t in (await mem.list_dossiers())["topics"]:
        for v in (await mem.dossier_history(t["topic"]))["versions"]:
            try:
                out["dossiers"].append(await mem.show_dossier(t["topic"], version=v["version"]))
            except StrataError:
                pass
    out["capsule"].append(await mem.show_capsule())
    out["export"] += [row async for row in mem.export()]
    out["entities"].append(await mem.entities(limit=10_000))
    out["timeline"].append(await mem.timeline(states=(), limit=10_000))
    return {k: json.dumps(v, ensure_ascii=False, default=str) for k, v in out.items()}


def files(home: Home) -> dict[str, bytes]:
    """Every file in the home but its backups: the database, its WAL, the capsule and its kept renders."""
    return {str(p.relative_to(home.root)): p.read_bytes() for p in sorted(home.root.rglob("*"))
            if p.is_file() and "backups" not in p.parts}


def _unechoed(text: str) -> str:
    """A response without the query it echoes: the probe's own words are no leak."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict):
        data.pop("query", None)
    return json.dumps(data, ensure_ascii=False)


def _http(home: Home, cases) -> str:
    from strata_bench.procs import serving, stop

    proc, path = serving(home.root, "serve")
    try:
        texts = []
        conn = UnixConnection(path, timeout=120)
        for method, target, body in ([("GET", "/v1/facts", None), ("GET", "/v1/capsule", None),
                                      ("GET", "/v1/dossiers", None)]
                                     + [("POST", "/v1/recall", {"query": q[:200], "k": 10})
                                        for c in cases for q in (c.secret, *c.says) if q.strip()]):
            conn.request(method, target, body=None if body is None else json.dumps(body),
                         headers={"Content-Type": "application/json"})
            texts.append(_unechoed(conn.getresponse().read().decode("utf-8", "replace")))
        conn.close()
        return "\n".join(texts)
    finally:
        stop(proc)


async def _mcp(home: Home, cases) -> str:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "strata_daemon", "--home", str(home.root), "mcp"])
    texts = []
    async with Client(params, cache=None, read_timeout_seconds=600) as client:
        calls = [("fact_list", {}), ("capsule_get", {}), ("dossier_list", {})]
        calls += [("recall", {"query": q[:200], "k": 10}) for c in cases for q in (c.secret, *c.says) if q.strip()]
        calls += [("dossier_get", {"topic": c.topic}) for c in cases if c.topic]
        for name, arguments in calls:
            r = await client.call_tool(name, arguments)
            texts += [_unechoed(getattr(part, "text", "")) for part in r.content]
    return "\n".join(texts)


def found(secret: str, seen: dict[str, str | bytes], *, lowered: bool = False) -> list[str]:
    """The faces on which SECRET appears (any case). Bytes are searched as bytes, ASCII's cases
    alike (LOWERED: they are lower-cased already), and decoded only for a secret beyond ASCII."""
    s = secret.casefold()
    needle = secret.lower().encode() if secret.isascii() else None
    out = []
    for face, text in seen.items():
        if isinstance(text, bytes):
            hit = (needle in (text if lowered else text.lower()) if needle is not None
                   else s in text.decode("utf-8", "replace").casefold())
        else:
            hit = s in text.casefold()
        if hit:
            out.append(face)
    return out


async def _probe(mem: Memory, url: str | None) -> Memory:
    """A read-only Memory on MEM's home: its recalls log nothing."""
    db = await open_database(mem.home.db_path, url, read_only="the forget benchmark only reads")
    return Memory(db, mem.home, mem.config, mem.agent, "bench")


def stored(home: Home, url: str | None) -> dict[str, bytes]:
    """Every file in the home (`file:`), and on PostgreSQL every file of its database (`server:`)."""
    out = {f"file:{k}": v for k, v in files(home).items()}
    if url is not None:
        out.update({f"server:{k}": v for k, v in server_files.database_files(url).items()})
    return out


async def _seen(home: Home, cases, url: str | None) -> dict[str, str | bytes]:
    """Every face, read through a read-only Memory, and every file."""
    async with await Memory.open(home, actor="bench") as mem:
        probe = await _probe(mem, url)
        try:
            return {**await faces(probe, cases), **stored(home, url)}
        finally:
            await probe.close()


async def _put_back(home: Home, exported: bytes, backup: Path, cases, purged: list[int], url: str | None) -> dict:
    """The old export imported, new memories that ask for the PURGED ids, then the old backup
    restored: the secrets found after each, and the purged ids given again."""
    async with await Memory.open(home, actor="bench") as mem:
        parsed = parse_jsonl(io.BytesIO(exported), mem.limits, agent=mem.agent, now=timeutil.now())
        imported = await mem.observe_many(parsed.rows, validated=True, skip_purged=True)
        asking = "".join(json.dumps({"id": i, "content": f"a new memory asking for id {i}"}) + "\n" for i in purged)
        parsed = parse_jsonl(io.BytesIO(asking.encode()), mem.limits, agent=mem.agent, now=timeutil.now())
        given = await mem.observe_many(parsed.rows, validated=True, skip_purged=True)
    reused = sorted(set(purged) & set(given["ids"]))
    after_import = await _seen(home, cases, url)
    restored = await restore_home(home, backup)
    after_restore = await _seen(home, cases, url)
    return {"import_skipped_purged": imported["purged"], "purged_ids_given_again": len(reused),
            "restore_purged_again": restored["purged_again"],
            "brought_back": {"import": [c.name for c in cases if found(c.secret, after_import)],
                             "restore": [c.name for c in cases if found(c.secret, after_restore)]}}


async def _backup(mem: Memory, url: str | None, folder: Path) -> Path:
    """A backup made before the requests, kept outside the home as a person keeps one: SQLite's
    copy, or the pg_dump file `strata backup` makes (moved out of state/backups/)."""
    if url is None:
        copy_database(mem.home.db_path, folder / "before-the-requests.db")
        return folder / "before-the-requests.db"
    made = Path((await mem.run_phase("backup"))["result"]["path"])
    for path in (made, made.with_name(made.name + ".hashes")):
        path.rename(folder / path.name)
    return folder / made.name


def _killed_backup(home: Home) -> None:
    """What a backup killed mid-copy leaves: the database under a partial name of a gone process."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (home.state_dir / "backups").mkdir(mode=0o700, exist_ok=True)
    copy_database(home.db_path, home.state_dir / "backups" / f".memory-20260101T000000Z.{int(gone.stdout)}.0.partial")


def _wal_holds(url: str | None, cases) -> list[str] | None:
    """The cases whose secret the server's WAL still holds (PostgreSQL: not a purge's to empty)."""
    if url is None:
        return None
    wal = {name: data.lower() for name, data in server_files.wal_files(url).items()}  # once, not per case
    return [c.name for c in cases if found(c.secret, wal, lowered=True)]


async def bench_forget(*, servers: bool = True, cases=CASES, progress: Callable[[int], None] | None = None) -> dict:
    url = stores.new_database()
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        home, _ = init_home(Path(tmp) / "home", store_url=url)
        async with await Memory.open(home, actor="bench") as mem:
            ids = await plant(mem, cases)
            if url is not None:
                server_files.analyze(url)
            exported = "".join([export_line(row) async for row in mem.export()]).encode()
            backup = await _backup(mem, url, Path(tmp))
            if url is None:
                _killed_backup(home)
            probe = await _probe(mem, url)
            before = {**await faces(probe, cases), **stored(home, url)}
            unseen = [c.name for c in cases if not found(c.secret, before)]
            database = {k: v for k, v in before.items() if k.startswith(("file:state/memory", "server:"))}
            in_file = sum(bool(found(c.secret, database)) for c in cases)
            results, seconds = [], []
            for c in cases:
                t = time.perf_counter()
                r = await request(mem, c, ids[c.name])
                seconds.append(time.perf_counter() - t)
                results.append({"case": c.name, "how": c.forget[0], "result": r.get("result", r)})
                if progress:
                    progress(1)
            after = await faces(probe, cases)
            await probe.close()
        after.update(stored(home, url))
        wal = _wal_holds(url, cases)
        # Before the servers: their recalls log what they ask, as any recall after a purge does.
        purged = sorted({i for r in results for i in r["result"].get("memories", ())})
        put_back = await _put_back(home, exported, backup, cases, purged, url)
        if servers:
            after["http"] = _http(home, cases)
            after["mcp"] = await _mcp(home, cases)
        leaks = [{"case": c.name, "secret": c.secret, "faces": found(c.secret, after)} for c in cases]
        leaks = [x for x in leaks if x["faces"]]
        return {**put_back, "benchmark": "forget", "store": "sqlite" if url is None else "postgres",
                "cases": len(cases), "faces": sorted({f.split(":")[0] for f in after}),
                "files_checked": sorted(k.partition(":")[2] for k in after if k.startswith(("file:", "server:"))),
                "unseen_before": unseen, "in_database_file_before": in_file, "leaks": len(leaks), "leaked": leaks,
                "raw_bytes_clean": not any(f.startswith(("file:state/memory.db", "server:"))
                                           for x in leaks for f in x["faces"]),
                "wal_holds": wal, "request_seconds_max": round(max(seconds), 3), "requests": results}
