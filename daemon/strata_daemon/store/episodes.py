"""Every change to episodes, each inside a transaction handed out by Database.write()."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from strata_daemon.base.timeutil import iso
from strata_daemon.errors import Conflict, InvalidInput, NotFound
from strata_daemon.store import floors, fts_tables
from strata_daemon.store.db import Writer

# The episodes table's columns in table order after the id; inserts and exports share this list.
COLUMNS = (
    "agent", "kind", "content", "content_hash", "event_at", "recorded_at", "last_seen_at", "occurrences",
    "source", "session", "importance", "factual", "irrelevant", "context", "access_count", "last_access_at",
    "success_count", "failure_count", "state", "superseded_by", "updated_at",
    "confidence", "quality", "strength_factor", "potentiated_at", "stale_at", "replayed_at", "tier", "tier_at",
)
_TIMES = ("event_at", "recorded_at", "last_seen_at", "last_access_at", "updated_at", "potentiated_at", "stale_at",
          "replayed_at", "tier_at")
_INSERT = f"INSERT INTO episodes (id, {', '.join(COLUMNS)}) VALUES "
_ROW = f"({', '.join('?' for _ in range(len(COLUMNS) + 1))})"
_CHUNK = 400  # stays under SQLite's bound-parameter limit with room to spare
# Many rows to one INSERT: the full-text trigger runs inside the statement's savepoint, and FTS5
# writes its pending terms out as a new segment at every savepoint, so one statement a row (as
# executemany runs) cost a segment and its merging a row: 107 against 47 us a row stored.
_ROWS_PER_INSERT = 500  # x 30 values, under SQLite's 32,766 bound parameters


def _chunks(seq: Sequence, size: int = _CHUNK):
    for i in range(0, len(seq), size):
        yield seq[i:i + size]


async def _ensure_namespace(w: Writer, agent: str, now: float) -> None:
    await w.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))
    await w.run(lambda c: fts_tables.ensure(c, agent))  # its own full-text index, before its first memory


async def purged_among(w: Writer, agent: str, hashes: list[str]) -> set[str]:
    """Those of `hashes` whose words a purge took from this agent's memories (its audit row keeps
    the hashes, never the words)."""
    purged = {h for (h,) in await w.fetchall(
        "SELECT DISTINCT m ->> 'hash' FROM audit a, jsonb_array_elements(a.data::jsonb -> 'memories') m "
        "WHERE a.agent = ? AND a.action = 'purge' AND jsonb_typeof(a.data::jsonb -> 'memories') = 'array'"
        if w.dialect == "postgres" else
        "SELECT DISTINCT json_extract(m.value, '$.hash') FROM audit a, json_each(a.data, '$.memories') m "
        "WHERE a.agent = ? AND a.action = 'purge'", (agent,))}
    return purged.intersection(hashes)


async def insert_episodes(w: Writer, agent: str, rows: list[dict], *, window: float, actor: str,
                          now: float, skip_purged: bool = False) -> list[dict]:
    """Insert validated rows. An identical active episode whose last sighting is within `window`
    seconds absorbs the row as a repeat (the attention filter); the same content at the
    same event time is a duplicate (so re-running an import changes nothing). Rows that carry
    their own id come from an export and are restored as they were, never folded together.
    With `skip_purged` (an import) a row holding the very words of a purged memory is left out
    as "purged": an export made before the purge does not bring them back."""
    await _ensure_namespace(w, agent, now)
    hashes = list({r["content_hash"] for r in rows})
    # A text redacted on arrival is also known by the hash of its words as given: a memory purged
    # before redaction existed keeps that hash in its audit, and its export must stay out.
    purged = await purged_among(w, agent, list({*hashes, *(r["said_hash"] for r in rows if r.get("said_hash"))})) \
        if skip_purged else set()
    known: dict[str, list[dict]] = {}
    for part in _chunks(hashes):
        for e in await w.fetchall(
                f"SELECT id, content_hash, event_at, last_seen_at, occurrences, state FROM episodes "
                f"WHERE agent = ? AND content_hash IN ({', '.join('?' * len(part))})", (agent, *part)):
            known.setdefault(e["content_hash"], []).append(dict(e))
    wanted_ids = [r["id"] for r in rows if r.get("id")]
    taken: set[int] = set()
    for part in _chunks(wanted_ids):
        # Taken: held now, or given once (its audit trail names it) and purged since.
        marks = ", ".join("?" * len(part))
        taken.update(r[0] for r in await w.fetchall(
            f"SELECT id FROM episodes WHERE id IN ({marks}) UNION "
            f"SELECT item_id FROM audit WHERE item_kind = 'episode' AND item_id IN ({marks})", (*part, *part)))
    next_id = max([(await w.fetchone(floors.highest_sql(floors.EPISODES)))[0],
                   *[i for i in wanted_ids if i not in taken]]) + 1

    inserts, repeats, results, audits = [], {}, [], []
    for r in rows:
        if r["content_hash"] in purged or r.get("said_hash") in purged:
            results.append({"id": None, "status": "purged", "occurrences": 0})
            continue
        same = known.get(r["content_hash"], [])
        dup = next((e for e in same if e["event_at"] == r["event_at"]), None)
        if dup is not None:
            results.append({"id": dup["id"], "status": "duplicate", "occurrences": dup["occurrences"]})
            continue
        live = [e for e in same if e["state"] == "active"]
        latest = max(live, key=lambda e: e["last_seen_at"], default=None)
        # A row with its own id is a restored episode (an export): it was already one memory.
        if (window > 0 and latest is not None and r["state"] == "active" and not r.get("id")
                and abs(r["event_at"] - latest["last_seen_at"]) <= window):
            latest["occurrences"] += r["occurrences"]
            latest["last_seen_at"] = max(latest["last_seen_at"], r["event_at"])
            repeats[latest["id"]] = latest
            results.append({"id": latest["id"], "status": "repeat", "occurrences": latest["occurrences"]})
            continue
        rid = r.get("id")
        if not rid or rid in taken:
            rid, next_id = next_id, next_id + 1
        taken.add(rid)
        inserts.append((rid, *(r[c] for c in COLUMNS)))
        entry = {"id": rid, "content_hash": r["content_hash"], "event_at": r["event_at"],
                 "last_seen_at": r["last_seen_at"], "occurrences": r["occurrences"], "state": r["state"]}
        known.setdefault(r["content_hash"], []).append(entry)
        results.append({"id": rid, "status": "created", "occurrences": r["occurrences"]})
        audits.append((now, agent, "episode", rid, "create",
                       json.dumps({"kind": r["kind"], "source": r["source"], "hash": r["content_hash"]}), actor))

    for part in _chunks(inserts, _ROWS_PER_INSERT):
        await w.execute(_INSERT + ", ".join([_ROW] * len(part)), [v for row in part for v in row])
    if repeats:
        await w.executemany("UPDATE episodes SET occurrences = ?, last_seen_at = ?, updated_at = ? WHERE id = ?",
                            [(e["occurrences"], e["last_seen_at"], now, e["id"]) for e in repeats.values()])
        audits += [(now, agent, "episode", e["id"], "repeat", json.dumps({"occurrences": e["occurrences"]}), actor)
                   for e in repeats.values()]
    if audits:
        await w.executemany("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", audits)
    if inserts:
        await w.execute("UPDATE namespaces SET episode_count = episode_count + ? WHERE agent = ?",
                        (len(inserts), agent))
    return results


STATED_AFTER = "stated_times_after"  # meta: memories past this id owe their stated times (migration 21)


async def add_stated_times(w: Writer, rows: list[tuple]) -> None:
    """Rows of stated_times: (episode id, at, length, start, end)."""
    if rows:
        await w.executemany("INSERT INTO stated_times (episode_id, at, length, start_at, end_at) "
                            "VALUES (?, ?, ?, ?, ?)", rows)


async def owing_stated_times(w: Writer, limit: int) -> tuple[int | None, list]:
    """(the id after which memories owe their stated times, up to `limit` of them as (id,
    content, event_at)); (None, []) when none owes any."""
    row = await w.fetchone("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", (STATED_AFTER,))
    if row is None:
        return None, []
    return row[0], [tuple(r) for r in await w.fetchall(
        "SELECT id, content, event_at FROM episodes WHERE id > ? ORDER BY id LIMIT ?", (row[0], limit))]


async def owe_stated_times_after(w: Writer, last: int | None) -> None:
    """Memories after `last` owe their stated times; None: none does any more."""
    if last is None:
        await w.execute("DELETE FROM meta WHERE key = ?", (STATED_AFTER,))
    else:
        await w.execute("UPDATE meta SET value = ? WHERE key = ?", (str(last), STATED_AFTER))


async def record_import(w: Writer, agent: str, input_sha256: str, stored: int, *, now: float,
                        finished: bool = False) -> None:
    """Count `stored` more rows of this input, in the transaction that stored them."""
    await w.execute(
        "INSERT INTO imports (agent, input_sha256, rows_stored, rows_total, started_at, finished_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent, input_sha256) DO UPDATE SET "
        "rows_stored = imports.rows_stored + excluded.rows_stored, rows_total = max(imports.rows_total, "
        "imports.rows_stored + excluded.rows_stored), finished_at = coalesce(excluded.finished_at, imports.finished_at)",
        (agent, input_sha256, stored, stored, now, now if finished else None))


async def _owned(w: Writer, agent: str, episode_id: int):
    row = await w.fetchone("SELECT id, state, tier, factual, irrelevant, content_hash FROM episodes "
                           "WHERE id = ? AND agent = ?", (episode_id, agent))
    if row is None:
        raise NotFound(f"no memory {episode_id} in namespace {agent!r}", hint="`strata timeline` lists what this namespace holds")
    return row


async def set_state(w: Writer, agent: str, episode_id: int, state: str, *, actor: str, now: float,
                    reason: str | None = None) -> str:
    """Set a memory's state. Back to active is a restore: it also undoes a merge (the memory
    stands on its own again) and brings it back to the hot tier."""
    row = await _owned(w, agent, episode_id)
    restore = state == "active"
    if row["state"] == state and not (restore and row["tier"] == "cold"):
        return state
    await w.execute("UPDATE episodes SET state = ?, updated_at = ?, "
                    "superseded_by = CASE WHEN ? = 1 THEN NULL ELSE superseded_by END, "
                    "tier = CASE WHEN ? = 1 THEN 'hot' ELSE tier END, "
                    "tier_at = CASE WHEN ? = 1 AND tier = 'cold' THEN ? ELSE tier_at END WHERE id = ?",
                    (state, now, restore, restore, restore, now, episode_id))
    change = {"from": row["state"], "to": state, "reason": reason}
    if restore and row["tier"] == "cold":
        change["tier"] = "hot"
    await w.audit(agent, "episode", episode_id, "state", json.dumps(change), actor, now)
    return row["state"]


async def set_flags(w: Writer, agent: str, episode_id: int, *, actor: str, now: float,
                    factual: bool | None = None, irrelevant: bool | None = None) -> dict:
    row = await _owned(w, agent, episode_id)
    changes = {}
    for name, value in (("factual", factual), ("irrelevant", irrelevant)):
        if value is not None and bool(row[name]) != value:
            changes[name] = int(value)
    if changes:
        sets = ", ".join(f"{k} = ?" for k in changes)
        await w.execute(f"UPDATE episodes SET {sets}, updated_at = ? WHERE id = ?",
                        (*changes.values(), now, episode_id))
        await w.audit(agent, "episode", episode_id, "flags", json.dumps(changes), actor, now)
    return changes


def record_recall(conn, agent: str, query: str, mode: str, k: int, context: str,
                  hits: list[tuple[int, int, float]], now: float, arm: str | None = None) -> int:
    """Append the recall and one access event per hit: a cheap insert, no episode is rewritten.
    Runs inside Database.transact (one hop: it is on every recall's path)."""
    conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))
    recall_id = conn.execute("INSERT INTO recalls (agent, query, mode, k, context, at, arm) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", (agent, query, mode, k, context, now, arm)).lastrowid
    conn.executemany("INSERT INTO access_events (episode_id, recall_id, rank, score, at) VALUES (?, ?, ?, ?, ?)",
                     [(eid, recall_id, rank, score, now) for eid, rank, score in hits])
    return recall_id


async def feedback(w: Writer, agent: str, recall_id: int, outcome: str, *, actor: str, now: float,
                   used: list[int] | None = None) -> list[int]:
    """The outcome of a recall, on the memories it concerns; returns their ids. Without `used`,
    shared feedback: every memory the recall returned shares it. With `used` (what
    the agent used, found by this recall or not), a success goes to those alone and a failure to
    the hits offered in their place. `used` is also what was accessed: a hit it leaves out was
    passed over and its access is not counted, or else every memory a recall shows would gain
    on the ones the agent needed. A used memory in the cold tier is back in the hot one."""
    if outcome not in ("success", "failure"):
        raise InvalidInput(f"outcome must be success or failure, not {outcome!r}")
    row = await w.fetchone("SELECT outcome FROM recalls WHERE id = ? AND agent = ?", (recall_id, agent))
    if row is None:
        raise NotFound(f"no recall {recall_id} in namespace {agent!r}",
                       hint="a recall's id is its `recall_id` (recall --json); the decay phase prunes recalls "
                            "older than daemon.recalls_keep_days")
    if row["outcome"] is not None:
        raise Conflict(f"recall {recall_id} already has feedback ({row['outcome']})",
                       hint="feedback is counted once per recall")
    hits = [r[0] for r in await w.fetchall("SELECT episode_id FROM access_events WHERE recall_id = ?", (recall_id,))]
    ids = hits if not used else used if outcome == "success" else [i for i in hits if i not in set(used)]
    column = "success_count" if outcome == "success" else "failure_count"
    await w.executemany(f"UPDATE episodes SET {column} = {column} + 1, updated_at = ? WHERE id = ? AND agent = ?",
                        [(now, eid, agent) for eid in ids])
    await w.executemany("INSERT INTO feedback_events (episode_id, recall_id, outcome, at) VALUES (?, ?, ?, ?)",
                        [(eid, recall_id, outcome, now) for eid in ids])
    warmed = []
    if used:
        await _passed_over(w, recall_id, hits, used, now)
        for part in _chunks(used):
            warmed += [r[0] for r in await w.fetchall(
                f"UPDATE episodes SET tier = 'hot', tier_at = ? WHERE agent = ? AND tier = 'cold' "
                f"AND state = 'active' AND id IN ({', '.join('?' * len(part))}) RETURNING id", (now, agent, *part))]
    await w.execute("UPDATE recalls SET outcome = ?, outcome_at = ? WHERE id = ?", (outcome, now, recall_id))
    await w.execute("UPDATE namespaces SET feedback_count = feedback_count + 1 WHERE agent = ?", (agent,))
    await w.audit(agent, "recall", recall_id, "feedback",
                  json.dumps({"outcome": outcome, "episodes": ids, "shared": not used,
                              **({"warmed": warmed} if warmed else {})}), actor, now)
    return ids


PASSED_OVER = 2  # access_events.folded: 0 waiting, 1 counted, 2 passed over by the feedback (not counted)


async def _passed_over(w: Writer, recall_id: int, hits: list[int], used: list[int], now: float) -> None:
    keep = set(used)
    passed = [i for i in hits if i not in keep]
    if passed:
        marks = ", ".join("?" * len(passed))
        await w.execute(f"UPDATE access_events SET folded = {PASSED_OVER} WHERE recall_id = ? AND folded = 0 "
                        f"AND episode_id IN ({marks})", (recall_id, *passed))
        counted = [r[0] for r in await w.fetchall(
            f"UPDATE access_events SET folded = {PASSED_OVER} WHERE recall_id = ? AND folded = 1 "
            f"AND episode_id IN ({marks}) RETURNING episode_id", (recall_id, *passed))]
        await w.executemany("UPDATE episodes SET access_count = max(access_count - 1, 0) WHERE id = ?",
                            [(i,) for i in counted])
    found_elsewhere = [i for i in used if i not in set(hits)]
    await w.executemany("INSERT INTO access_events (episode_id, recall_id, rank, score, at) "
                        "VALUES (?, ?, NULL, NULL, ?)", [(i, recall_id, now) for i in found_elsewhere])


async def fold_access_events(w: Writer, *, limit: int = 50_000) -> dict:
    """Turn pending access events into access counts and last-access times (all namespaces)."""
    bound = await w.fetchone("SELECT max(id) FROM (SELECT id FROM access_events WHERE folded = 0 "
                             "ORDER BY id LIMIT ?)", (limit,))
    if bound is None or bound[0] is None:
        return {"events": 0, "episodes": 0}
    top = bound[0]
    groups = await w.fetchall("SELECT episode_id, count(*), max(at) FROM access_events "
                              "WHERE folded = 0 AND id <= ? GROUP BY episode_id", (top,))
    await w.executemany("UPDATE episodes SET access_count = access_count + ?, "
                        "last_access_at = max(coalesce(last_access_at, 0), ?) WHERE id = ?",
                        [(n, at, eid) for eid, n, at in groups])
    cur = await w.execute("UPDATE access_events SET folded = 1 WHERE folded = 0 AND id <= ?", (top,))
    return {"events": cur.rowcount, "episodes": len(groups)}


def episode_dict(row: Mapping[str, Any]) -> dict:
    """A stored row as the API and --json show it: times as floats plus ISO strings, flags as booleans."""
    out = {"id": row["id"]}
    for col in COLUMNS:
        out[col] = row[col]
    out["context"] = json.loads(row["context"])
    out["factual"] = bool(row["factual"])
    out["irrelevant"] = bool(row["irrelevant"])
    for col in _TIMES:
        out[col + "_iso"] = iso(row[col])
    return out
