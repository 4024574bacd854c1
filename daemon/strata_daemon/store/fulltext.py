"""Full-text candidates with bounded cost.

FTS5's bm25() scans the whole doclist of every phrase to get its IDF, so a query holding a
word that half the memories contain ("cycle", "status") costs tens of milliseconds at 100k
however few rows are ranked. Document frequencies are nearly free from an fts5vocab table,
so the plan is:

- exact: when the phrases together occur in at most `budget` memories, rank with bm25().
- bounded: otherwise fetch membership only (no bm25): every memory holding a rare phrase
  (one in fewer than `budget` memories), which common phrases those memories also hold,
  and, when no phrase is rare, the newest `budget` memories holding every phrase, topped up
  by the newest holding any when too few hold every phrase. Each is scored as BM25 with
  tf = 1 at average length, i.e. the sum of the IDFs of the phrases it holds. `explain` names the strategy and the terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from strata_daemon.store import fts_tables
from strata_daemon.store.dialect import on_postgres
from strata_daemon.store.fts_query import MAX_TERMS, all_of, any_of, phrase, pieces, terms
from strata_daemon.store.postgres import fulltext as pg

_TOKENIZER = fts_tables.TOKENIZER


def _from(table: str) -> str:
    # CROSS JOIN pins the FTS table as the outer loop; left to itself the planner may walk the
    # namespace index and run the match once per episode.
    return f"FROM {table} CROSS JOIN episodes e ON e.id = {table}.rowid"


@dataclass
class Scope:
    """The rows a recall may see: namespace, states, kinds, and (for what draws on the hot tier
    only: dossiers) the tier. Always includes the namespace."""
    agent: str
    states: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    hot_only: bool = False

    def where(self, *, by_id: bool = False) -> tuple[str, list]:
        # When rows are fetched by id, "+" keeps SQLite on the primary key rather than the namespace index.
        sql = ["+e.agent = ?" if by_id else "e.agent = ?", f"e.state IN ({', '.join('?' * len(self.states))})", "e.irrelevant = 0"]
        params: list = [self.agent, *self.states]
        if self.kinds:
            sql.append(f"e.kind IN ({', '.join('?' * len(self.kinds))})")
            params += self.kinds
        if self.hot_only:
            sql.append("e.tier = 'hot'")
        return " AND ".join(sql), params


KEEP_COUNTS_FROM = 1000  # memories: a rarer term's doclist is read in well under a millisecond
COUNT_AGAIN_AFTER = 0.02  # growth of the index after which a kept count is counted again
_STEM_CACHE: dict[bool, dict[str, str]] = {False: {}, True: {}}  # by engine (on PostgreSQL?): they stem apart
_STEM_CACHE_MAX = 50_000


def _all(conn, sql: str, params=()) -> list:
    return conn.execute(sql, params).fetchall()


def _one(conn, sql: str, params=()):
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def table_of(conn, agent: str) -> str | None:
    """What names the namespace's index: its FTS5 table, or (PostgreSQL) the namespace."""
    return pg.table_of(conn, agent) if on_postgres(conn) else fts_tables.table_of(conn, agent)


def matching(conn, agent: str, expr: str) -> tuple[str, str] | None:
    """A condition on `e` that holds for the namespace's memories the FTS5 expression EXPR finds,
    and its parameter; None before the namespace's first memory. A subquery on SQLite: joined,
    the match would run once per row."""
    table = table_of(conn, agent)
    if table is None:
        return None
    if on_postgres(conn):
        return "e.search @@ ?::tsquery", pg.tsquery(expr, _stemmer(conn))
    return f"e.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)", expr


def _stems(conn, pieces: list[list[str]]) -> list[list[str]]:
    """The index's own stems of the query words: from a scratch FTS table in the temp schema, or
    PostgreSQL's dictionary; kept, a cache for each engine."""
    cache = _STEM_CACHE[on_postgres(conn)]
    words = {w for p in pieces for w in p}
    missing = sorted(w for w in words if w not in cache)
    if missing:
        if len(cache) + len(missing) > _STEM_CACHE_MAX:
            cache.clear()
            missing = sorted(words)
        for word, stem in zip(missing, _stem_words(conn, missing)):
            cache[word] = stem
    return [[cache[w] for w in p] for p in pieces]


def _stemmer(conn):
    return lambda words: _stems(conn, [words])[0]


def _stem_words(conn, words: list[str]) -> list[str]:
    if on_postgres(conn):
        return pg.stem_words(conn, words)
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5(x, tokenize='{_TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems_v "
                 "USING fts5vocab(temp, query_stems, 'instance')")
    stems = _tokens(conn, " ".join(words))
    if len(stems) != len(words):
        # Some scripts and marks split where Python's \w does not (or not at all): each word on
        # its own then, its tokens joined, the same on both sides of any comparison.
        return [" ".join(_tokens(conn, w)) for w in words]
    return stems


def _tokens(conn, text: str) -> list[str]:
    conn.execute("DELETE FROM temp.query_stems")
    conn.execute("INSERT INTO temp.query_stems(rowid, x) VALUES (1, ?)", (text,))
    return [r[0] for r in _all(conn, "SELECT term FROM temp.query_stems_v ORDER BY offset")]


def _counted(conn, table: str, terms: list[str], total: int) -> dict[str, int]:
    """Document frequencies of the terms in TABLE. fts5vocab counts a term by reading its whole
    doclist, which for a word in a third of a million memories takes ~10 ms; so the counts of
    common terms are kept in the connection's temp schema and counted again only once the
    index has grown by COUNT_AGAIN_AFTER since (an IDF weight moves little meanwhile)."""
    if on_postgres(conn):
        return pg.counted(conn, table, terms, total, keep_from=KEEP_COUNTS_FROM, again_after=COUNT_AGAIN_AFTER)
    conn.execute("CREATE TABLE IF NOT EXISTS temp.fts_term_counts "
                 "(tbl TEXT, term TEXT, doc INTEGER, total INTEGER, PRIMARY KEY (tbl, term))")
    marks = ", ".join("?" * len(terms))
    df = {r[0]: r[1] for r in _all(conn, f"SELECT term, doc FROM temp.fts_term_counts WHERE tbl = ? AND term IN "
                                         f"({marks}) AND total >= ?",
                                   (table, *terms, total / (1 + COUNT_AGAIN_AFTER)))}
    missing = [t for t in terms if t not in df]
    if missing:
        fresh = {r[0]: r[1] for r in _all(
            conn, f"SELECT term, doc FROM {fts_tables.vocab_of(table)} WHERE term IN ({', '.join('?' * len(missing))})",
            missing)}
        conn.executemany("INSERT OR REPLACE INTO temp.fts_term_counts VALUES (?, ?, ?, ?)",
                         [(table, t, d, total) for t, d in fresh.items() if d >= KEEP_COUNTS_FROM])
        df.update(fresh)
    return df


def _size(conn, agent: str) -> int:
    """How many memories the namespace's index holds: what its IDF weights count against."""
    return _one(conn, "SELECT episode_count FROM namespaces WHERE agent = ?", (agent,)) or 0


def _doc_freqs(conn, table: str, agent: str, pieces: list[list[str]]) -> tuple[list[int], int]:
    stems = _stems(conn, pieces)
    flat = sorted({s for ss in stems for s in ss})
    total = _size(conn, agent)
    df = _counted(conn, table, flat, total)
    # A phrase is in no more memories than its rarest word.
    return [min((df.get(s, 0) for s in ss), default=0) for ss in stems], total


def telling(conn, agent: str, query: str) -> list[list[str]]:
    """The query's phrases a search uses: all of them up to MAX_TERMS; of a longer text (a log
    pasted whole), the MAX_TERMS rarest in this namespace that some memory holds, rarest first
    (the first MAX_TERMS when no memory holds any)."""
    phrases = terms(query)
    table = table_of(conn, agent) if len(phrases) > MAX_TERMS else None
    if table is None:
        return phrases[:MAX_TERMS]
    dfs, _ = _doc_freqs(conn, table, agent, phrases)
    held = sorted((i for i in range(len(phrases)) if dfs[i]), key=lambda i: (dfs[i], i))
    return [phrases[i] for i in held[:MAX_TERMS]] or phrases[:MAX_TERMS]


def rarest_within(conn, agent: str, words: list[str], budget: int) -> list[str]:
    """The rarest of `words` whose memories together stay within `budget`, rarest first: what a
    search of them can rank exactly. Words in no memory, or too common to fit, are left out."""
    words = [w for w in words if terms(w)]
    table = table_of(conn, agent)
    if not words or table is None:
        return []
    dfs, _ = _doc_freqs(conn, table, agent, [terms(w)[0] for w in words])  # "gw-02" is one phrase of two pieces
    kept, held = [], 0
    for df, word in sorted(zip(dfs, words)):
        if df == 0:
            continue
        if held + df > budget:
            break
        kept.append(word)
        held += df
    return kept


def idf(df: int, total: int) -> float:
    return math.log((total - df + 0.5) / (df + 0.5) + 1.0)


SHARE_WORDS = 1000  # a memory's first words that count for word_shares: a long one costs no more than this


def word_shares(conn, agent: str, query: str, texts: list[str]) -> list[float]:
    """For each text, the share of the question's phrases it holds, each weighed by its IDF as
    the index stems and counts it: an absolute measure of the words it has in common with the
    question (1: every phrase; the rare ones weigh most), unlike bm25, which is only comparable
    within one question."""
    phrases = telling(conn, agent, query)
    table = table_of(conn, agent)
    if not phrases or not texts or table is None:
        return [0.0] * len(texts)
    dfs, total = _doc_freqs(conn, table, agent, phrases)
    weights = [idf(d, max(total, d)) for d in dfs]
    whole = sum(weights)
    question = _stems(conn, phrases)
    # All the texts' words stemmed at once: one pass through the scratch table, not one per text.
    held = [set(ss) for ss in _stems(conn, [pieces(text)[:SHARE_WORDS] for text in texts])]
    return [sum(w for w, ss in zip(weights, question) if all(s in h for s in ss)) / whole if whole > 0 else 0.0
            for h in held]


def _rowids(conn, table: str, expr: str, limit: int, *, dense: bool = False) -> list[int]:
    """The newest LIMIT memories EXPR finds; DENSE when its phrases are common (on PostgreSQL
    walking the memories newest first then finds them soonest; else the index's list)."""
    if on_postgres(conn):
        return pg.rowids(conn, table, expr, limit, _stemmer(conn), dense=dense)
    return [r[0] for r in _all(conn, f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
                               (expr, limit))]


def _bounded(conn, table: str, phrases: list[str], dfs: list[int], total: int, budget: int, limit: int) -> dict[int, float]:
    weights = {p: idf(d, total) for p, d in zip(phrases, dfs)}
    rare = [p for p, d in zip(phrases, dfs) if d < budget]
    common = [p for p in phrases if p not in rare]
    # Each rowid list holds a memory at most once, so adding a phrase's weight per list counts
    # every phrase a memory holds exactly once.
    scores: dict[int, float] = {}
    if rare:
        for p in rare:
            for rid in _rowids(conn, table, p, budget):
                scores[rid] = scores.get(rid, 0.0) + weights[p]
        gate = any_of(rare)
        for c in common:  # AND seeks through the long doclist instead of reading it
            for rid in _rowids(conn, table, f"{c} AND ({gate})", budget):
                scores[rid] = scores.get(rid, 0.0) + weights[c]
        return scores
    every = set()
    if len(phrases) > 1:
        every = set(_rowids(conn, table, all_of(phrases), budget))
        scores = dict.fromkeys(every, sum(weights.values()))
    if len(scores) < limit:
        for p in phrases:
            for rid in _rowids(conn, table, p, budget // len(phrases), dense=True):
                if rid not in every:
                    scores[rid] = scores.get(rid, 0.0) + weights[p]
    return scores


def search(conn, query: str, scope: Scope, columns: str, *, limit: int, budget: int,
           source_weight: float = 1.0) -> tuple[list[tuple[dict, float]], dict]:
    """Candidate rows with a relevance score (higher is better), and the plan for explanations.
    A word found in a memory's source (who said it) counts `source_weight` times one in its text."""
    pieces = telling(conn, scope.agent, query)
    if not pieces:
        return [], {"strategy": "none", "reason": "no searchable words"}
    table = table_of(conn, scope.agent)
    if table is None:
        return [], {"strategy": "none", "reason": "no memories yet"}
    phrases = [phrase(p) for p in pieces]
    dfs, total = _doc_freqs(conn, table, scope.agent, pieces)
    if sum(dfs) <= budget:
        where, params = scope.where()
        if on_postgres(conn):
            return (pg.exact(conn, scope.agent, columns, _stems(conn, pieces), where, params, limit=limit,
                             total=total, source_weight=source_weight, again_after=COUNT_AGAIN_AFTER),
                    {"strategy": "exact", "scorer": "bm25"})
        rows = _all(conn, f"SELECT {columns}, bm25({table}, 1.0, ?) AS bm {_from(table)} WHERE {table} MATCH ? "
                          f"AND {where} ORDER BY bm LIMIT ?", (source_weight, any_of(phrases), *params, limit))
        return [(dict(r), -r["bm"]) for r in rows], {"strategy": "exact", "scorer": "bm25"}
    scores = _bounded(conn, table, phrases, dfs, total, budget, limit)
    # Over-fetch before the filter of states and kinds. Only ids are read for the filter; full
    # rows only for those kept.
    best = sorted(scores, key=lambda rid: (-scores[rid], -rid))[: limit * 4]
    where, params = scope.where(by_id=True)
    kept: list[int] = []
    # A limit's worth at a time: in a home of one namespace the first is enough, and each id
    # checked is a random page read in a large database (4.5 ms for 200 at a million).
    for start in range(0, len(best), limit):
        chunk = best[start:start + limit]
        in_scope = {r[0] for r in _all(
            conn, f"SELECT e.id FROM episodes e WHERE e.id IN ({', '.join('?' * len(chunk))}) AND {where}",
            (*chunk, *params))}
        kept += [rid for rid in chunk if rid in in_scope]
        if len(kept) >= limit:
            break
    kept = kept[:limit]
    rows = {r["id"]: r for r in _all(conn, f"SELECT {columns}, 0 AS bm FROM episodes e WHERE e.id IN "
                                           f"({', '.join('?' * len(kept))})", kept)} if kept else {}
    ranked = [dict(rows[rid]) for rid in kept if rid in rows]
    plan = {"strategy": "bounded", "scorer": "idf-sum",
            "common_terms": [p for p, d in zip(phrases, dfs) if d >= budget]}
    return [(r, scores[r["id"]]) for r in ranked], plan
