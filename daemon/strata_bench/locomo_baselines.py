"""The baselines `strata bench locomo` ranks the same turns with, in the same run: bare FTS5
BM25 over their texts, flat cosine over the vectors the store holds for them, and plain
reciprocal rank fusion of the two. They show what strata's recall adds to its own parts.
"""

from __future__ import annotations

import asyncio
import re
from typing import Callable, Iterable, Sequence

import numpy as np

from strata_bench.locomo_data import Question
from strata_bench.locomo_home import Stored
from strata_daemon.app.memory import Memory
from strata_daemon.app.public import (
    EMBED_BATCH,
    FTS_TOKENIZER,
    embedded_document,
    fts_table,
    match_expression,
    sqlite_module,
)

BASELINES = ("bm25", "cosine", "rrf")
CANDIDATES = 50  # per-retriever list length fed to the RRF baseline (strata's recall.candidates default)
RRF_K = 60


def rrf(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Plain reciprocal rank fusion, equal weights, ranks from 1; ties keep first-seen order."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, 1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda d: -scores[d])


def cosine_rankings(queries: np.ndarray, docs: np.ndarray, doc_ids: Sequence[int], n: int) -> list[list[int]]:
    """Top n doc ids per query by cosine; the embedder's rows are unit length, so a dot product."""
    order = np.argsort(-(queries @ docs.T), axis=1, kind="stable")[:, :n]
    return [[doc_ids[j] for j in row] for row in order]


def fts_tokenize(schema_sql: str) -> str:
    """The tokenize option of the store's full-text tables, read from its schema so the BM25 baseline
    tokenizes exactly as the store does, whatever a later migration chooses."""
    m = re.search(r"tokenize\s*=\s*'([^']*)'", schema_sql)
    if m is None:
        raise ValueError(f"episodes_fts has no tokenize option: {schema_sql}")
    return m.group(1)


class Bm25:
    """Bare FTS5 over the same texts with the store's tokenizer: no planning, scoring or filters."""

    def __init__(self, tokenize: str, docs: Iterable[tuple[int, str]]):
        self.conn = sqlite_module().connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE docs USING fts5(content, tokenize='{tokenize}')")
        self.conn.executemany("INSERT INTO docs (rowid, content) VALUES (?, ?)", docs)

    def search(self, query: str, n: int) -> list[int]:
        expr = match_expression(query)
        if expr is None:
            return []
        return [r[0] for r in self.conn.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT ?", (expr, n))]

    def close(self) -> None:
        self.conn.close()


async def embed_all(embedder, texts: Sequence[str], progress: Callable[[int], None] | None = None, *,
                    queries: bool = False) -> np.ndarray:
    """Every text's vector, in order; embedded shortest first, as `embed_pending` does (less padding).
    `queries` embeds them as recall embeds a query (E5 marks queries apart from memories)."""
    embed = embedder.embed_queries if queries else embedder.embed
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for i in range(0, len(order), EMBED_BATCH):
        rows = order[i:i + EMBED_BATCH]
        out[rows] = await asyncio.to_thread(embed, [texts[j] for j in rows])
        if progress:
            progress(len(rows))
    return out


def embedded_documents(stored: Stored, text: str) -> list[str]:
    """Each episode's text as the store embeds it (`text` is one of `vectors.TEXTS`): by default
    with the speaker first, which lifts flat cosine alone from 0.24 to 0.37 @5 on the dev set."""
    return [embedded_document(t, s, text) for t, s in zip(stored.texts, stored.speakers, strict=True)]


async def nearest_by_cosine(embedder, stored: Stored, questions: Sequence[Question], text: str,
                            progress: Callable[[int], None] | None) -> list[list[int]]:
    """Each question's top CANDIDATES episodes by flat cosine over the vectors the store holds;
    every text is embedded once."""
    docs = await embed_all(embedder, embedded_documents(stored, text), progress)
    asked = await embed_all(embedder, [q.text for q in questions], queries=True)
    return cosine_rankings(asked, docs, stored.episodes, CANDIDATES)


async def bm25_over(mem: Memory, stored: Stored) -> Bm25:
    if mem.db.dialect != "sqlite":  # a home on PostgreSQL: the baseline is still SQLite's FTS5, as on a file
        return Bm25(FTS_TOKENIZER, zip(stored.episodes, stored.texts))
    table = await mem.db.run(fts_table, mem.agent)
    schema = await mem.db.fetchone("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
    return Bm25(fts_tokenize(schema[0]), zip(stored.episodes, stored.texts))
