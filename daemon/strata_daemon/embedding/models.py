"""The models a process keeps loaded for one home: the embedder, deep recall's cross-encoder and
the in-memory copy of a namespace's vectors; and embedding what waits for a vector with them.
A long-lived process that uses them now and then (the daemon) releases them between uses."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from strata_daemon.embedding import backlog
from strata_daemon.embedding.loader import DEFAULT, load_embedder
from strata_daemon.store import vectors
from strata_daemon.store.db import Database

if TYPE_CHECKING:
    from strata_daemon.embedding.cache import VectorCache
    from strata_daemon.embedding.rerank import Loaded


class Models:
    def __init__(self, *, model: str | None, runtime: str, threads: int, with_source: bool, folder: Path,
                 agent: str, vector_cache: bool, exact_below: int):
        self.model, self.runtime, self.threads, self.folder = model, runtime, threads, folder
        self.with_source = with_source
        self.agent, self.vector_cache, self.exact_below = agent, vector_cache, exact_below
        self._embedder = None
        self._minilm = None
        self._vectors: VectorCache | None | bool = False  # False: not made yet
        self._reranker: Loaded | None = None

    # numpy, onnxruntime and the vector copy are loaded when a recall first needs them: a command
    # that only stores a memory never does.
    @property
    def reranker(self) -> "Loaded":
        if self._reranker is None:
            from strata_daemon.embedding.rerank import Loaded

            self._reranker = Loaded(self.threads)
        return self._reranker

    @property
    def vectors(self) -> "VectorCache | None":
        if self._vectors is False:
            self._vectors = self._new_vectors()
        return self._vectors

    def keep_vectors(self, kept: bool, exact_below: int) -> None:
        """A new copy of the vectors, as recall.vector_cache and its exact search now say."""
        self.vector_cache, self.exact_below = kept, exact_below
        self._vectors = False

    def _new_vectors(self) -> "VectorCache | None":
        from strata_daemon.embedding.cache import VectorCache

        return VectorCache(self.agent, exact_below=self.exact_below) if self.vector_cache else None

    async def embedder(self):
        """The configured embedder, loaded on first use (in a thread: it reads a model file)."""
        if self._embedder is None:
            self._embedder = await asyncio.to_thread(load_embedder, self.model, self.runtime, self.folder,
                                                     threads=self.threads)
        return self._embedder

    async def minilm(self):
        """The packaged MiniLM: the configured embedder when it is that model, else one of its own
        (what a measured similarity floor was measured with, whatever embeds the memories)."""
        if self.model in (None, DEFAULT):
            return await self.embedder()
        if self._minilm is None:
            self._minilm = await asyncio.to_thread(load_embedder, DEFAULT, "onnx", self.folder, threads=self.threads)
        return self._minilm

    def share_embedder(self, other: "Models") -> None:
        """Use another's embedder: one model in memory, whichever namespace asks."""
        self.embedder = other.embedder

    def release(self) -> None:
        """Unload the embedders, the cross-encoder and the vectors; the next use loads them again."""
        self._embedder = self._minilm = None
        if self._reranker is not None:
            self._reranker.release()
        self._vectors = False

    def embedded_text(self) -> str:
        """What of a memory is embedded: one of `vectors.TEXTS` (`embedding.with_source`)."""
        return vectors.TEXTS[1] if self.with_source else vectors.TEXTS[0]

    def spec_of(self, emb) -> vectors.Spec:
        return vectors.Spec(emb.name, emb.dim, self.embedded_text())

    async def spec(self) -> vectors.Spec:
        return self.spec_of(await self.embedder())

    async def embed_query(self, query: str) -> tuple[Any, asyncio.Future]:
        """Start embedding the query on its own thread: (embedder, future vector). Raises
        EmbeddingUnavailable when no model can be loaded."""
        emb = await self.embedder()
        return emb, asyncio.get_running_loop().run_in_executor(None, emb.embed_queries, [query])

    async def embed_pending(self, db: Database, *, agent: str | None, batch: int = backlog.EMBED_BATCH,
                            limit: int | None = None, progress: Callable[[int], None] | None = None) -> dict:
        """Embed memories that have no vector yet (of `agent` only, when given)."""
        if limit is not None and not await db.run(vectors.backlog):
            # Nothing waits: don't load the model just to find that out (the daemon asks every minute).
            return {"embedded": 0, "backlog": 0}
        emb, spec = await self.embedder(), await self.spec()
        await db.transact(vectors.prepare, spec, upkeep=True)  # the index's own bookkeeping
        done = await backlog.embed_waiting(db, emb, spec, agent=agent, batch=batch, limit=limit, progress=progress)
        return {"embedded": done, "backlog": await db.run(vectors.backlog), "model": emb.name,
                "dimension": emb.dim}

    async def reindex(self, db: Database, *, force: bool = False, progress: Callable[[int], None] | None = None
                      ) -> dict:
        """Embed everything as configured. Resets the index only when it was built otherwise (another
        model or embedded text) or when forced, so an interrupted reindex resumes where it stopped."""
        current = await db.run(vectors.indexed)
        reset = force or (current is not None and current != await self.spec())
        if reset:
            await db.transact(vectors.reset)
        result = await self.embed_pending(db, agent=None, progress=progress)
        return {**result, "reset": reset}
