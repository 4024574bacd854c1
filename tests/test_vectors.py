"""Vectors in sqlite-vec: the backlog, nearest neighbours per namespace, reindex."""

import asyncio
import contextlib
import json

import numpy as np
import pytest

from conftest import write_config
from strata_daemon import Memory
from strata_daemon.embedding.cache import VectorCache, cutoff
from strata_daemon.errors import EmbeddingUnavailable
from strata_daemon.store import vectors

NOTES = ["The bridge went down on gw-02", "Connectivity to gateway two was lost",
         "I baked a lemon cake for Sunday", "disk usage on nas-01 at 91%"]


def run(coro):
    return asyncio.run(coro)


@contextlib.asynccontextmanager
async def _filled(home, agent="default", texts=NOTES):
    """An open Memory holding texts, closed however the test ends (an open one would hang the run)."""
    async with await Memory.open(home, agent=agent) as mem:
        for t in texts:
            await mem.observe(t)
        yield mem


def test_backlog_drains_and_nearest_finds_the_paraphrase(home):
    async def go():
        async with _filled(home) as mem:
            before = (await mem.status())["embedding_backlog"]
            first = await mem.embed_pending(batch=3)
            q = (await mem.embedder()).embed(["the network link to the gateway failed"])[0]
            hits = await mem.db.run(vectors.nearest, "default", q, 4)
            return before, first, hits, await mem.status()
    before, first, hits, status = run(go())
    assert before == 4 and first["embedded"] == 4 and first["backlog"] == 0
    assert {hits[0][0], hits[1][0]} == {1, 2}  # both network notes before the cake and the disk
    assert all(0 <= d <= 2 for _, d in hits)
    assert status["embedding_backlog"] == 0
    assert status["embedding_model"] == {"name": "all-MiniLM-L6-v2-int8", "dimension": 384,
                                         "text": "source: content"}


def test_namespaces_are_partitions_of_the_index(home):
    async def go():
        async with _filled(home, "alice", ["alice plans a move to Lisbon"]) as a, \
                _filled(home, "bob", ["bob fixes the garden sensors"]) as b:
            await a.embed_pending()
            q = (await a.embedder()).embed(["moving to Portugal"])[0]
            return await b.db.run(vectors.nearest, "bob", q, 5)
    assert [eid for eid, _ in run(go())] == [2]  # bob's own memory only, however far


def test_purge_removes_the_vector_and_limit_leaves_a_resumable_backlog(home):
    async def go():
        async with _filled(home) as mem:
            part = await mem.embed_pending(limit=2)
            rest = await mem.embed_pending()
            await mem.forget(1, purge=True)
            left = await mem.db.fetchall(f"SELECT rowid FROM {vectors.TABLE}")
            return part, rest, sorted(r[0] for r in left)
    part, rest, left = run(go())
    assert (part["embedded"], part["backlog"]) == (2, 2) and rest["embedded"] == 2
    assert left == [2, 3, 4]


def test_another_model_needs_reindex_which_resumes(home):
    async def first_index():
        async with _filled(home) as mem:
            await mem.embed_pending()
            return (await mem.embedder()).runtime
    assert run(first_index()) == "onnx"
    write_config(home, '[embedding]\nruntime = "llama"\n')  # the same network as GGUF: other vectors

    async def switch():
        async with await Memory.open(home) as mem:
            with pytest.raises(EmbeddingUnavailable, match="indexed with all-MiniLM-L6-v2-int8") as info:
                await mem.embed_pending()
            assert "strata reindex" in info.value.hint
            result = await mem.reindex()
            again = await mem.reindex()  # nothing left: no second reset
            return result, again, await mem.db.run(vectors.indexed)
    result, again, model = run(switch())
    assert result["reset"] and result["embedded"] == 4 and result["backlog"] == 0
    assert not again["reset"] and again["embedded"] == 0
    assert model == vectors.Spec("all-MiniLM-L6-v2", 384, "source: content")


def test_missing_model_is_a_clear_error(home):
    write_config(home, '[embedding]\nmodel = "/nowhere/model.gguf"\n')

    async def go():
        async with _filled(home, texts=["a note"]) as mem:
            await mem.embed_pending()
    with pytest.raises(EmbeddingUnavailable, match="does not exist"):
        run(go())


@pytest.mark.slow
def test_cli_import_embeds_inline_unless_told_not_to(cli, tmp_path, home):
    data = tmp_path / "notes.jsonl"
    data.write_text("".join(json.dumps({"content": t}) + "\n" for t in NOTES))
    later = cli.json("import", str(data), "--no-embed")
    assert later["embedded"] == 0 and later["embedding_backlog"] == 4
    assert cli.json("embed")["embedded"] == 4
    other = tmp_path / "more.jsonl"
    other.write_text(json.dumps({"content": "rotated the TLS cert on web-01"}) + "\n")
    inline = cli.json("import", str(other))
    assert inline["embedded"] == 1 and inline["embedding_backlog"] == 0
    assert cli.json("status")["embedding_backlog"] == 0
    write_config(home, '[embedding]\nmodel = "/nowhere/model.gguf"\n')
    third = tmp_path / "third.jsonl"
    third.write_text(json.dumps({"content": "one more"}) + "\n")
    proc = cli("import", str(third), "--json")
    assert proc.returncode == 0 and json.loads(proc.out)["embedding_backlog"] == 1
    assert "not embedded" in proc.err
    failed = cli("embed")
    assert failed.returncode == 8 and "does not exist" in failed.err and "Traceback" not in failed.err


def test_the_in_memory_copy_agrees_with_sqlite_vec_and_keeps_in_step(home):
    """One process recalls while another writes, embeds and purges: the copy catches up with
    new vectors and drops purged ones, and ranks exactly as sqlite-vec does."""
    async def go():
        async with _filled(home) as reader, await Memory.open(home) as writer:
            await reader.embed_pending()
            emb = await reader.embedder()
            q = emb.embed(["the network link to the gateway failed"])[0]
            cache = VectorCache("default")
            await reader.db.run(cache.sync)
            seen = [len(cache), cache.search(q, 4), await reader.db.run(vectors.nearest, "default", q, 4)]
            assert cache.cosines([i for i, _ in seen[2]] + [10**9], q) == pytest.approx(
                {i: 1.0 - d for i, d in seen[2]}, abs=1e-5)  # an id held nowhere is left out
            new = await writer.observe("the uplink to the gateway dropped again")
            await writer.embed_pending()
            await reader.db.run(cache.sync)
            seen += [len(cache), cache.search(q, 2)]
            await writer.forget(new["id"], purge=True)
            await reader.db.run(cache.sync)
            seen += [len(cache), cache.search(q, 5), new["id"]]
            return seen
    size, cached, scanned, grown, top2, shrunk, after_purge, new_id = run(go())
    assert size == 4 and [i for i, _ in cached] == [i for i, _ in scanned]
    assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(cached, scanned))
    assert grown == 5 and new_id in [i for i, _ in top2]
    assert shrunk == 4 and new_id not in [i for i, _ in after_purge] and len(after_purge) == 4


def test_each_stored_batch_gets_the_next_sequence_number(home):
    async def go():
        async with _filled(home) as mem:
            await mem.embed_pending(batch=3)
            return [r[0] for r in await mem.db.fetchall("SELECT embedded FROM episodes ORDER BY id")], \
                await mem.db.scalar("SELECT value FROM meta WHERE key = 'vector_seq'")
    seqs, last = run(go())
    # Shortest first: memory 4 (27 characters), 1 (29), 3 (31), then 2 (36) alone.
    assert seqs == [1, 2, 1, 1] and int(last) == 2


def test_pending_memories_are_read_a_window_at_a_time_and_embedded_shortest_first(home, monkeypatch):
    from strata_daemon.embedding import backlog

    monkeypatch.setattr(backlog, "EMBED_WINDOW", 3)
    texts = ["a much longer note about the backup job on nas-01 failing twice", "short", "medium sized note",
             "tiny", "the longest of them all: gw-02 lost its uplink during the storm last night", "mid note x"]

    async def go():
        async with _filled(home, texts=texts) as mem:
            done = await mem.embed_pending(batch=2)
            rows = await mem.db.fetchall(f"SELECT e.id, e.embedded, v.embedding FROM episodes e "
                                         f"JOIN {vectors.TABLE} v ON v.rowid = e.id ORDER BY e.id")
            alone = (await mem.embedder()).embed(texts)
            return done, [(r[0], r[1]) for r in rows], np.stack([np.frombuffer(r[2], np.float32) for r in rows]), alone
    done, seqs, stored, alone = run(go())
    assert done["embedded"] == 6 and done["backlog"] == 0
    # Ids 1-3 are the first window, 4-6 the second; in each, the shorter texts' batch is stored first.
    assert dict(seqs) == {2: 1, 3: 1, 1: 2, 4: 3, 6: 3, 5: 4}
    assert np.allclose(stored, alone, atol=1e-6)  # the order changes the speed, not the vectors


def test_balanced_recall_with_and_without_the_copy_ranks_alike(home):
    async def go(cached):
        write_config(home, f"[recall]\nvector_cache = {'true' if cached else 'false'}\n")
        async with await Memory.open(home) as mem:
            if not await mem.db.scalar("SELECT count(*) FROM episodes"):
                for t in NOTES:
                    await mem.observe(t)
                await mem.embed_pending()
            r = await mem.recall("gateway connection problems", mode="balanced")
            return [(h["id"], h["explain"]["retrievers"].get("vector")) for h in r["hits"]]
    assert run(go(True)) == run(go(False))


def test_large_namespaces_shortlist_by_sign_bits_and_score_exactly(home):
    """Above exact_below the copy ranks by sign bits first; the shortlist is then scored exactly,
    so a stored vector looked up with a little noise is still found first."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((30, 384)).astype(np.float32)
    data = centres[rng.integers(0, 30, 3000)] + 0.6 * rng.standard_normal((3000, 384)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)

    async def go():
        async with await Memory.open(home) as mem:
            await mem.observe_many([{"content": f"memory {i}"} for i in range(len(data))])
            await mem.db.transact(vectors.prepare, vectors.Spec("synthetic", 384, "content"))
            ids = [r[0] for r in await mem.db.fetchall("SELECT id FROM episodes ORDER BY id")]
            await mem.db.transact(vectors.store, [(i, "default", v) for i, v in zip(ids, data)])
            shortlisted = VectorCache("default", exact_below=100, shortlist=300)
            exact = VectorCache("default")
            await mem.db.run(shortlisted.sync)
            await mem.db.run(exact.sync)
            return ids, shortlisted, exact
    ids, shortlisted, exact = run(go())
    overlap = []
    for n in range(0, 3000, 150):
        q = data[n] + 0.05 * rng.standard_normal(384).astype(np.float32)
        q /= np.linalg.norm(q)
        fast, slow = shortlisted.search(q, 10), exact.search(q, 10)
        assert fast[0][0] == slow[0][0] == ids[n]
        overlap.append(len({i for i, _ in fast} & {i for i, _ in slow}) / 10)
    assert np.mean(overlap) >= 0.9


@pytest.mark.parametrize("seed", range(6))
def test_shortlist_cutoff_is_the_smallest_distance_keeping_enough(seed):
    """The cut-off found from a sample is exact: at least `keep` distances are at or below it
    and fewer below it, whatever the guess (a skewed sample, ties, a keep of one or all)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000))
    distance = rng.binomial(384, rng.uniform(0.05, 0.95), n).astype(np.uint16)
    if seed % 2:
        distance[::16] = 0  # the sample sees only zeros: the guess is far too low
    for keep in {1, max(1, n // 50), max(1, n // 2), n}:
        d = cutoff(distance, keep)
        assert np.count_nonzero(distance <= d) >= keep
        assert d == 0 or np.count_nonzero(distance < d) < keep
