"""What each derived text loses in a purge: the audit trail, dossier versions, the capsule's
renders and overrides, recall queries, arena episodes and phase results. Every function takes
a connection and runs inside the purge's transaction; SQLite narrows the rows
(strata_daemon/store/purge.py), each is tested here line by line.
"""

from __future__ import annotations

import json

from strata_daemon.forgetting.redaction import REDACTED, Purged, redact_line, redact_lines
from strata_daemon.store import purge as store

# Audit actions whose data holds ids, counts, hashes and kinds, never words: a purge's scan of
# the trail (one row a memory stored, and more) skips them. Consolidation's reasons quote fact
# values ("changed from 'room B-12' to ..."), so its entries are read.
WORDLESS = ("create", "repeat", "flags", "purge", "feedback", "decay", "redact")


def touching(rows, column: str, purged: Purged) -> list:
    """The ROWS whose COLUMN (text or JSON) the purge touches."""
    return [r for r in rows if r[column] is not None and purged.touches_json(r[column])]


def redact_audit(conn, agent: str, purged: Purged, fact_ids: set[int], sources: set[str], purge_id: int,
                 whole: set[int] = frozenset()) -> int:
    """Audit rows that hold purged words keep their when, who and what; their data becomes a
    pointer to the purge. A fact's rows are matched by source and value as well as by text;
    every row of a fact removed WHOLE is redacted."""
    hit = {r["id"] for r in touching(store.audit_rows(conn, agent, purged.search_terms(), skip=WORDLESS), "data",
                                     purged)}
    # A purged memory's own entries (its creation's source, a reason given when it was archived)
    # speak of it whatever their words: they keep only that they happened.
    if purged.episodes:
        hit |= store.episode_audit(conn, sorted(purged.episodes))
    if fact_ids:
        left = store.values_left(conn, list(fact_ids))
        gone = {v for _, v in purged.fact_lines}
        for r in store.fact_audit(conn, list(fact_ids)):
            d = json.loads(r["data"])
            words = [w for w in (d.get("value"), d.get("previous")) if w is not None
                     and (r["item_id"], w) not in left]
            if d.get("source") in sources or any(w.strip().casefold() in gone for w in words):
                hit.add(r["id"])
    if whole:
        hit |= {r["id"] for r in store.fact_audit(conn, list(whole))}
    store.set_audit_data(conn, [(i, {"redacted_by_purge": purge_id}) for i in sorted(hit)])
    return len(hit)


def redact_dossiers(conn, agent: str, purged: Purged) -> tuple[int, set[str]]:
    """Dossier versions: lines that cite or quote what is purged, sources that name it, and the
    prompt or raw output a model version kept. Returns (lines redacted, topics whose current
    version changed)."""
    n, topics = 0, set()
    for r in store.dossier_versions(conn, agent, purged.search_terms()):
        text, lines = redact_lines(r["text"], purged)
        were = json.loads(r["sources"])
        sources = [s for s in were if not purged.cites(str(s.get("id", "")))]
        notes = json.loads(r["notes"])
        quoted = [k for k in ("prompt", "raw") if k in notes and
                  purged.touches_json(json.dumps(notes[k], ensure_ascii=False))]
        notes.update({k: REDACTED for k in quoted})
        if lines or len(sources) != len(were) or quoted:
            store.set_dossier_version(conn, r["id"], text, sources, notes)
            n += lines
            if r["version"] == store.latest_version(conn, agent, r["topic"]):
                topics.add(r["topic"])
    return n, topics


def redact_capsule(conn, agent: str, purged: Purged, now: float) -> int:
    """Capsule renders lose the lines the purge touches (list markers kept); a person's override
    that quotes it is cleared and loses its words. Returns the lines redacted."""
    n = 0
    for r in store.capsule_renders(conn, agent, purged.search_terms()):
        blocks = json.loads(r["blocks"])
        changed = {name: [redact_line(line) if purged.touches(line) else line for line in lines]
                   for name, lines in blocks.items()}
        if changed != blocks:
            n += sum(a != b for name in blocks for a, b in zip(blocks[name], changed[name]))
            store.set_render_blocks(conn, r["id"], changed)
    for r in store.capsule_overrides(conn, agent, purged.search_terms()):
        if purged.touches(r["line"]):
            store.clear_override(conn, r["id"], REDACTED, now)
            n += 1
    return n


def redact_logs(conn, agent: str, purged: Purged, ids: list[int]) -> dict:
    """Recall queries and contexts, arena episodes, phase results that quote or list what goes."""
    # A query that found a purged memory was most likely about it: its words go too.
    found = store.recalls_finding(conn, ids)
    for column in store.RECALL_TEXTS:
        found |= {r["id"] for r in touching(store.recall_texts(conn, agent, column, purged.search_terms()), column,
                                            purged)}
    store.set_recall_texts(conn, found, REDACTED, "{}")
    arena = 0
    for r in store.arena_episodes(conn, agent):
        useful = json.loads(r["useful"])
        kept = [i for i in useful if i not in set(ids)]
        # Its question was answered by what goes: about it, as a recall that found it (and one
        # whose recall the history no longer holds has only this to tell).
        quoted = kept != useful or r["recall_id"] in found or purged.touches(r["query"])
        if not kept:
            store.drop_arena_episode(conn, r["id"])
            arena += 1
        elif kept != useful or quoted:
            store.set_arena_episode(conn, r["id"], kept, REDACTED if quoted else r["query"])
            arena += 1
    phases = 0
    for r in touching(store.phase_results(conn, purged.search_terms()), "result", purged):
        store.set_phase_result(conn, r["id"], {"redacted": True})
        phases += 1
    return {"recalls": len(found), "arena_episodes": arena, "phase_runs": phases}
