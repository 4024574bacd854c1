"""Full text on PostgreSQL: the primitives store/fulltext.py's plan is made of, over the
`search` tsvector of episodes (migration 1) and its GIN index on (namespace, words).

FTS5 kept one index a namespace and ranked with BM25 from its statistics; here one index serves
every namespace, each count is taken within the namespace, and BM25 is computed the way FTS5's
bm25() computes it (k1 1.2, b 0.75, a phrase's frequency in each column weighed by the column's
weight, the row's length in tokens against the namespace's mean), from the positions the
tsvector keeps. Stems are Snowball's English, where FTS5's were Porter's: a few words stem
apart (measured in docs/benchmarks.md)."""

from __future__ import annotations

import math
import re
from typing import Callable

from strata_daemon.store.fts_query import pieces

K1, B = 1.2, 0.75
WEIGHTS = {"A": 0, "B": 1}  # tsvector weight -> column: A the text, B who said it (D, unset, reads as A)
# What store/fulltext.py keeps in SQLite's temp schema, kept here in the process: the counts of
# common stems and each namespace's mean length, by (store, namespace[, stem]).
_COUNTS: dict[tuple[str, str, str], tuple[int, int]] = {}  # -> (docs, namespace's size then)
_LENGTHS: dict[tuple[str, str], tuple[float, int]] = {}  # -> (mean tokens, namespace's size then)


def table_of(conn, agent: str) -> str | None:
    """What stands for the namespace's index: its name, once it holds a memory."""
    found = conn.execute("SELECT episode_count FROM namespaces WHERE agent = ?", (agent,)).fetchone()
    return agent if found is not None and found[0] > 0 else None


def stem_words(conn, words: list[str]) -> list[str]:
    """Each word as the index stems it (store/fulltext.py keeps them)."""
    return [r[0] for r in conn.execute("SELECT coalesce((ts_lexize('strata_stem', w))[1], w) "
                                       "FROM unnest(?::text[]) WITH ORDINALITY AS t(w, i) ORDER BY i",
                                       (words,)).fetchall()]


def _stale(kept: tuple | None, total: int, again_after: float) -> bool:
    return kept is None or total > kept[1] * (1 + again_after) or total < kept[1]


def _lexeme(stem: str) -> str:
    return "'" + stem.replace("'", "''") + "'"


_EXPR = re.compile(r'"([^"]*)"(\s*\*)?|\(|\)|\bAND\b|\bOR\b|\bNOT\b|([^\s()"*]+)(\*)?')
NOTHING = "'\x01'"  # a lexeme no text holds: what a phrase without a word finds, as in FTS5


def tsquery(expr: str, stem: Callable[[list[str]], list[str]]) -> str:
    """An FTS5 expression of quoted phrases, AND, OR and brackets (store/fts_query.py) as a
    tsquery, its words stemmed by STEM. A phrase of no word (punctuation alone) finds nothing,
    as FTS5's does."""
    out = []
    for m in _EXPR.finditer(expr):
        words = m.group(1) if m.group(1) is not None else m.group(3)
        if words is not None:  # a phrase, or a bare word; with `*`, its last word a prefix (not stemmed)
            prefix = bool(m.group(2) or m.group(4))
            found = pieces(words)
            stems = stem(found[:-1] if prefix else found) + (found[-1:] if prefix else [])
            lexemes = [_lexeme(s) for s in stems]
            if prefix and lexemes:
                lexemes[-1] += ":*"
            out.append("(" + " <-> ".join(lexemes) + ")" if lexemes else NOTHING)
        else:
            out.append({"AND": "&", "OR": "|", "NOT": "& !"}.get(m.group(0), m.group(0)))
    return " ".join(out)


def counted(conn, agent: str, stems: list[str], total: int, *, keep_from: int, again_after: float) -> dict[str, int]:
    """How many of the namespace's memories hold each stem; those in KEEP_FROM or more kept and
    counted again once the namespace has grown by AGAIN_AFTER since, as on SQLite."""
    store = getattr(conn, "url", "")
    out = {}
    for s in stems:
        kept = _COUNTS.get((store, agent, s))
        if _stale(kept, total, again_after):
            docs = conn.execute("SELECT count(*) FROM episodes WHERE agent = ? AND search @@ ?::tsquery",
                                (agent, _lexeme(s))).fetchone()[0]
            kept = (docs, total)
            if docs >= keep_from:
                _COUNTS[(store, agent, s)] = kept
        out[s] = kept[0]
    return out


def rowids(conn, agent: str, expr: str, limit: int, stem: Callable[[list[str]], list[str]], *,
           dense: bool = False) -> list[int]:
    """The newest LIMIT ids EXPR finds. The server keeps no statistics of the words (migration 5),
    so the caller says which plan: DENSE walks the ids newest first until LIMIT match (fast when
    the words are common); otherwise `id + 0`, which no index orders, makes it read the GIN
    index's list and sort it (fast when they are rare: a walk would read every memory)."""
    order = "id" if dense else "id + 0"
    return [r[0] for r in conn.execute("SELECT id FROM episodes WHERE agent = ? AND search @@ ?::tsquery "
                                       f"ORDER BY {order} DESC LIMIT ?", (agent, tsquery(expr, stem), limit))]


def mean_length(conn, agent: str, total: int, again_after: float) -> float:
    """The namespace's mean tokens a memory (text and source), counted again as counts are."""
    store = getattr(conn, "url", "")
    kept = _LENGTHS.get((store, agent))
    if _stale(kept, total, again_after):
        mean = conn.execute("SELECT avg(search_tokens) FROM episodes WHERE agent = ?", (agent,)).fetchone()[0]
        kept = _LENGTHS[(store, agent)] = (float(mean or 1.0), total)
    return max(kept[0], 1.0)


_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def positions(doc: str) -> dict[str, list[tuple[int, int]]]:
    """A tsvector's text as {lexeme: [(position, column), ...]}."""
    out = {}
    for m in _ENTRY.finditer(doc):
        where = []
        for p in (m.group(2) or "").split(","):
            if p:
                weight = p[-1] if p[-1] in "ABCD" else "D"
                where.append((int(p.rstrip("ABCD")), WEIGHTS.get(weight, 0)))
        out[m.group(1).replace("''", "'")] = where
    return out


def frequency(doc: dict[str, list[tuple[int, int]]], stems: list[str], columns: int = 2) -> list[int]:
    """How often the phrase of STEMS occurs in each column (its words at consecutive positions)."""
    counts = [0] * columns
    for start, column in doc.get(stems[0], []):
        if all((start + i, column) in doc.get(s, ()) for i, s in enumerate(stems[1:], 1)):
            counts[column] += 1
    return counts


def bm25(doc: dict, phrases: list[list[str]], idfs: list[float], tokens: int, mean: float,
         column_weights: tuple[float, float]) -> float:
    """FTS5's bm25() of one row: higher is better here (FTS5 returns it negated)."""
    score = 0.0
    for stems, idf in zip(phrases, idfs):
        tf = sum(w * n for w, n in zip(column_weights, frequency(doc, stems)))
        score += idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * tokens / mean))
    return score


def idf(hits: int, total: int) -> float:
    # FTS5's: never below a millionth, so a word in most rows still counts for a little.
    return max(math.log((total - hits + 0.5) / (hits + 0.5)), 1e-6)


def exact(conn, agent: str, columns: str, phrases: list[list[str]], where: str, params: list, *, limit: int,
          total: int, source_weight: float, again_after: float) -> list[tuple[dict, float]]:
    """Every row in scope holding a phrase (its stems), ranked by BM25 (the plan's exact branch)."""
    queries = ["(" + " <-> ".join(_lexeme(s) for s in ss) + ")" for ss in phrases]
    hits = [conn.execute("SELECT count(*) FROM episodes WHERE agent = ? AND search @@ ?::tsquery",
                         (agent, q)).fetchone()[0] for q in queries]
    idfs = [idf(h, max(total, h)) for h in hits]
    mean = mean_length(conn, agent, total, again_after)
    rows = conn.execute(f"SELECT {columns}, e.search::text AS strata_doc, e.search_tokens AS strata_tokens "
                        f"FROM episodes e WHERE e.agent = ? AND e.search @@ ?::tsquery AND {where}",
                        (agent, " | ".join(queries), *params)).fetchall()
    scored = []
    for r in rows:
        row = dict(zip(r.keys(), r))
        doc, tokens = positions(row.pop("strata_doc")), row.pop("strata_tokens")
        row["bm"] = 0
        scored.append((row, bm25(doc, phrases, idfs, tokens, mean, (1.0, source_weight))))
    scored.sort(key=lambda x: (-x[1], x[0]["id"]))
    return scored[:limit]
