"""Facts in SQLite: every function takes a connection and runs on the database thread; the
writes run inside the caller's transaction (Database.transact, or an episode write).

History is bitemporal. Each row of fact_values is one assertion: a value (NULL: retracted)
true in the world from `valid_from` until the next assertion's `valid_from` (kept in
`valid_to`), learned at `recorded_at`. The value of a key at time T is the assertion with the
latest valid_from <= T (the later-recorded one on a tie); a late assertion with an older
valid time therefore lands in history and never displaces a newer current value. Rows are
never deleted, and only valid_to ever changes (triggers enforce both).

Keys arrive normalised (strata_daemon.facts.keys.normalise_key): the facts layer checks and
normalises what people write, the store only reads and writes rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Protocol

from strata_daemon.base.timeutil import iso
from strata_daemon.errors import NotFound
from strata_daemon.store import floors

_VALUE_COLUMNS = ("v.id AS value_id, v.value, v.valid_from, v.valid_to, v.recorded_at, v.source_kind, v.source_ref, "
                  "v.confidence, v.rule, v.actor")
_FACT_COLUMNS = "f.id AS fact_id, f.key, f.label, f.importance, f.ttl_seconds, f.confirmed_at, f.created_at"
_AT = "SELECT id FROM fact_values WHERE fact_id = f.id AND valid_from <= ? ORDER BY valid_from DESC, id DESC LIMIT 1"
DEFAULT_IMPORTANCE = 0.5  # a new key's, until someone says otherwise


class SourceRef(Protocol):
    """Where a value came from, as the store reads it (strata_daemon.facts.keys.Source is one)."""
    kind: str
    ref: str | None


def _source_text(kind: str, ref: str | None) -> str:
    """A stored source as text: `kind`, or `kind:ref` (what str() of a facts.keys.Source gives)."""
    return kind if ref is None else f"{kind}:{ref}"


@dataclass(frozen=True)
class Assertion:
    """One change to write: the value (None retracts) and where and when it holds."""
    label: str
    value: str | None
    valid_from: float | None  # None: from the moment of writing, read inside the transaction
    source: SourceRef
    confidence: float = 1.0
    rule: str | None = None
    importance: float | None = None
    ttl_seconds: float | None = None
    set_ttl: bool = False  # ttl_seconds given explicitly (None then clears it)


# A change of a key's value (a row of fact_conflicts: the new value n, the value o before it and
# the value x after it in world time, as they stood when n was written) is a conflict when
# - the new value arrived late: a different value after it had already begun when it was
#   recorded (`late`); or
# - it and the value before it differ, hold from within the window (the one "?") of each
#   other, and came from different sources (`disagree`: each memory is a source of its own),
#   unless a person set the new value over one read from a memory: that corrects it; or
# - a newer memory ended a value with no new one strata could read (`ended`: rule `update`).
# Any other change (a status going UP, DOWN, UP over days; a source correcting itself) is
# history, not a conflict: the reason is NULL. docs/concepts.md says the same.
CONFLICT_REASON = (
    "CASE WHEN n.value IS NULL AND n.rule = 'update' AND o.value IS NOT NULL THEN 'ended' "
    "WHEN n.value IS NULL THEN NULL "
    "WHEN x.value IS NOT NULL AND x.value <> n.value AND x.valid_from <= n.recorded_at THEN 'late' "
    "WHEN o.value IS NOT NULL AND o.value <> n.value AND abs(n.valid_from - o.valid_from) <= ? "
    "AND (o.source_kind IS NOT n.source_kind OR o.source_ref IS NOT n.source_ref) "
    "AND NOT (n.source_kind = 'person' AND o.source_kind = 'episode') THEN 'disagree' END")
CHANGES = ("fact_conflicts c JOIN fact_values n ON n.id = c.new_value_id LEFT JOIN fact_values o ON "
           "o.id = c.old_value_id LEFT JOIN fact_values x ON x.id = c.next_value_id")


def _fact(conn, agent: str, key: str):
    return conn.execute(f"SELECT {_FACT_COLUMNS} FROM facts f WHERE f.agent = ? AND f.key = ?", (agent, key)).fetchone()


def _value_at(conn, fact_id: int, at: float, known_at: float | None = None):
    if known_at is None:
        return conn.execute(f"SELECT {_VALUE_COLUMNS} FROM fact_values v WHERE v.fact_id = ? AND v.valid_from <= ? "
                            "ORDER BY v.valid_from DESC, v.id DESC LIMIT 1", (fact_id, at)).fetchone()
    return conn.execute(f"SELECT {_VALUE_COLUMNS} FROM fact_values v WHERE v.fact_id = ? AND v.valid_from <= ? "
                        "AND v.recorded_at <= ? ORDER BY v.valid_from DESC, v.id DESC LIMIT 1",
                        (fact_id, at, known_at)).fetchone()


def _next_after(conn, fact_id: int, at: float):
    return conn.execute(f"SELECT {_VALUE_COLUMNS} FROM fact_values v WHERE v.fact_id = ? AND v.valid_from > ? "
                        "ORDER BY v.valid_from, v.id LIMIT 1", (fact_id, at)).fetchone()


def shaped(fact, value, now: float) -> dict:
    """A fact as the faces show it: the key, its value at the time asked, and how fresh it is."""
    ttl = fact["ttl_seconds"]
    confirmed = fact["confirmed_at"]
    out = {
        "key": fact["key"], "label": fact["label"], "fact_id": fact["fact_id"],
        "value": None if value is None else value["value"],
        "importance": fact["importance"], "ttl_seconds": ttl, "confirmed_at": confirmed,
        "confirmed_at_iso": iso(confirmed),
        "stale": bool(ttl is not None and confirmed is not None and now - confirmed > ttl),
    }
    if value is not None:
        out.update({
            "value_id": value["value_id"], "valid_from": value["valid_from"], "valid_from_iso": iso(value["valid_from"]),
            "valid_to": value["valid_to"], "recorded_at": value["recorded_at"],
            "source": _source_text(value["source_kind"], value["source_ref"]), "rule": value["rule"],
            "confidence": value["confidence"], "age_seconds": round(now - value["valid_from"], 3),
        })
    return out


def next_value_id(conn) -> int:
    """The id of the next value: never one a purge removed (dossiers cite values by id)."""
    return conn.execute(floors.highest_sql(floors.FACT_VALUES)).fetchone()[0] + 1


def _outcome(key: str, a: Assertion, before, after, now: float) -> tuple[str, bool]:
    """(status, current) of asserting A (valid_from set) between the values BEFORE and AFTER
    it: what write() does and preview() says it would do."""
    # Whether this assertion is the value now (a future valid time becomes current later).
    current = a.valid_from <= now and (after is None or after["valid_from"] > now)
    if before is not None and before["value"] == a.value:
        return ("unchanged" if a.value is None else "confirmed"), current
    if a.value is None and before is None:
        raise NotFound(f"the fact {key!r} has no value to retract", hint="`strata fact list` shows the current facts")
    if a.value is None:
        return "retracted", current
    if before is None and after is None:
        return "created", current
    return ("changed" if current else "recorded"), current


def preview(conn, agent: str, key: str, a: Assertion, *, now: float) -> dict:
    """What write() would do with A (under KEY, its label normalised) now, reading only: its
    status, and the key as a listing would show it afterwards (label, value, importance, valid_from)."""
    if a.valid_from is None:
        a = replace(a, valid_from=now)
    fact = _fact(conn, agent, key)
    before = None if fact is None else _value_at(conn, fact["fact_id"], a.valid_from)
    after = None if fact is None else _next_after(conn, fact["fact_id"], a.valid_from)
    status, current = _outcome(key, a, before, after, now)
    importance = a.importance if a.importance is not None or fact is None else fact["importance"]
    return {"status": status, "key": key, "label": a.label if fact is None else fact["label"], "value": a.value,
            "previous": None if before is None else before["value"], "current": current,
            "valid_from": a.valid_from, "importance": DEFAULT_IMPORTANCE if importance is None else importance}


def write(conn, agent: str, key: str, a: Assertion, *, actor: str, now: float, window: float) -> dict:
    """Record an assertion under KEY (its label normalised). Returns what happened: `created` (a
    new key), `changed` (a new current value), `confirmed` (the value it already had then: no new
    history, only a fresher confirmation), `unchanged` (a retraction of what was already
    retracted), `recorded` (an older valid time: history only), `retracted`."""
    if a.valid_from is None:
        # Read the clock only once the write lock is held: a writer that waited behind another
        # must not assert its value at an earlier time than the one it waited for.
        a = replace(a, valid_from=now)
    conn.execute("INSERT OR IGNORE INTO namespaces (agent, created_at) VALUES (?, ?)", (agent, now))
    fact = _fact(conn, agent, key)
    if fact is None:
        conn.execute("INSERT INTO facts (agent, key, label, importance, ttl_seconds, confirmed_at, created_at, "
                     "updated_at) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
                     (agent, key, a.label, DEFAULT_IMPORTANCE if a.importance is None else a.importance,
                      a.ttl_seconds, now, now))
        fact = _fact(conn, agent, key)
    elif a.importance is not None or a.set_ttl:
        conn.execute("UPDATE facts SET importance = coalesce(?, importance), ttl_seconds = "
                     "CASE WHEN ? = 1 THEN ? ELSE ttl_seconds END, updated_at = ? WHERE id = ?",
                     (a.importance, a.set_ttl, a.ttl_seconds, now, fact["fact_id"]))
    fid = fact["fact_id"]
    before = _value_at(conn, fid, a.valid_from)
    after = _next_after(conn, fid, a.valid_from)
    status, current = _outcome(key, a, before, after, now)
    if status in ("unchanged", "confirmed"):
        if current and a.value is not None:
            conn.execute("UPDATE facts SET confirmed_at = max(coalesce(confirmed_at, 0), ?), updated_at = ? "
                         "WHERE id = ?", (min(a.valid_from, now), now, fid))
        _audit(conn, agent, fid, status, key, a, before["value"], actor, now)
        return {"status": status, "key": key, "previous": before["value"], "value_id": before["value_id"],
                "conflict": None, "current": current, "valid_from": a.valid_from, "recorded_at": now}
    cur = conn.execute(
        "INSERT INTO fact_values (id, fact_id, agent, value, valid_from, valid_to, recorded_at, source_kind, source_ref, "
        "confidence, rule, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (next_value_id(conn), fid, agent, a.value, a.valid_from, None if after is None else after["valid_from"], now,
         a.source.kind, a.source.ref, a.confidence, a.rule, actor))
    value_id = cur.lastrowid
    if before is not None:
        conn.execute("UPDATE fact_values SET valid_to = ? WHERE id = ?", (a.valid_from, before["value_id"]))
    if current and a.value is not None:
        conn.execute("UPDATE facts SET confirmed_at = ?, updated_at = ? WHERE id = ?", (min(a.valid_from, now), now, fid))
    conflict = None
    if any(r is not None and r["value"] != a.value for r in (before, after)):
        # Every change of value is an event (what changed, for dossiers); the conflicts among
        # them are flagged for a person to look at rather than silently ordered.
        old, nxt = (None if r is None else r["value_id"] for r in (before, after))
        reason = conn.execute(f"SELECT {CONFLICT_REASON} FROM fact_values n LEFT JOIN fact_values o ON o.id = ? "
                              "LEFT JOIN fact_values x ON x.id = ? WHERE n.id = ?",
                              (window, old, nxt, value_id)).fetchone()[0]
        cid = conn.execute(
            "INSERT INTO fact_conflicts (agent, fact_id, old_value_id, new_value_id, next_value_id, flagged, late, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (agent, fid, old, value_id, nxt, int(reason is not None), int(after is not None), now)).lastrowid
        conflict = {"id": cid, "flagged": reason is not None, "reason": reason, "late": after is not None}
    _audit(conn, agent, fid, status, key, a, None if before is None else before["value"], actor, now)
    return {"status": status, "key": key, "previous": None if before is None else before["value"],
            "value_id": value_id, "conflict": conflict, "current": current, "valid_from": a.valid_from,
            "recorded_at": now, "replaces": _source_of(before), "replaced_by": _source_of(after)}


def _source_of(row) -> dict | None:
    """The value an assertion now follows or is followed by, and where it came from."""
    if row is None:
        return None
    return {"value": row["value"], "source": _source_text(row["source_kind"], row["source_ref"])}


def _audit(conn, agent, fid, action, key, a: Assertion, previous, actor, now) -> None:
    conn.execute("INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor) VALUES (?, ?, 'fact', ?, ?, ?, ?)",
                 (now, agent, fid, action, json.dumps({"key": key, "value": a.value, "previous": previous,
                                                       "valid_from": a.valid_from,
                                                       "source": _source_text(a.source.kind, a.source.ref),
                                                       "rule": a.rule}, ensure_ascii=False), actor))


def current_value(conn, agent: str, key: str, now: float):
    """(fact row, value row) now, or (fact, None) / (None, None)."""
    fact = _fact(conn, agent, key)
    return (None, None) if fact is None else (fact, _value_at(conn, fact["fact_id"], now))


UPDATE = "update"  # the rule a change a newer memory made (facts/superseding.py) is recorded under


def _ended(conn, fact, value, now: float) -> dict | None:
    """A fact a newer memory ended with no value: its last value, stale, naming that memory."""
    before = conn.execute(f"SELECT {_VALUE_COLUMNS} FROM fact_values v WHERE v.fact_id = ? AND v.valid_from <= ? "
                          "AND v.id <> ? AND v.value IS NOT NULL ORDER BY v.valid_from DESC, v.id DESC LIMIT 1",
                          (fact["fact_id"], value["valid_from"], value["value_id"])).fetchone()
    if before is None:
        return None
    return {**shaped(fact, before, now), "stale": True, "current": False,
            "superseded_by": _source_text(value["source_kind"], value["source_ref"]),
            "superseded_at": value["valid_from"], "superseded_at_iso": iso(value["valid_from"])}


def get(conn, agent: str, key: str, *, at: float, known_at: float | None, now: float) -> dict:
    fact = _fact(conn, agent, key)
    if fact is None:
        raise NotFound(f"no fact {key!r} in this namespace", hint="`strata fact list` shows the keys")
    value = _value_at(conn, fact["fact_id"], at, known_at)
    if value is not None and value["value"] is None and value["rule"] == UPDATE and \
            (ended := _ended(conn, fact, value, now)) is not None:
        return ended
    if value is None or value["value"] is None:
        when = ("" if at >= now else f" at {iso(at)}") + ("" if known_at is None else f" as known at {iso(known_at)}")
        what = f"was retracted at {iso(value['valid_from'])}" if value is not None else f"had no value{when}"
        raise NotFound(f"the fact {key!r} {what}", hint=f"`strata fact history {key!r}` shows its values")
    return shaped(fact, value, now)


def current_count(conn, agent: str, now: float) -> int:
    return conn.execute(f"SELECT count(*) FROM facts f JOIN fact_values v ON v.id = ({_AT}) "
                        "WHERE f.agent = ? AND v.value IS NOT NULL", (now, agent)).fetchone()[0]


def listing(conn, agent: str, *, now: float, stale_only: bool = False, prefix: str | None = None) -> list[dict]:
    """The current facts, by key; PREFIX (a normalised key): only it and the keys that begin
    with it as whole words."""
    sql = (f"SELECT {_FACT_COLUMNS}, {_VALUE_COLUMNS} FROM facts f JOIN fact_values v ON v.id = ({_AT}) "
           "WHERE f.agent = ? AND v.value IS NOT NULL")
    params: list = [now, agent]
    if prefix:
        sql += " AND (f.key = ? OR f.key >= ? AND f.key < ?)"
        params += [prefix, prefix + " ", prefix + " \U0010ffff"]
    rows = conn.execute(sql + " ORDER BY f.key", params).fetchall()
    out = [shaped(r, r, now) for r in rows]
    return [f for f in out if f["stale"]] if stale_only else out


def history(conn, agent: str, key: str, *, now: float) -> dict:
    fact = _fact(conn, agent, key)
    if fact is None:
        raise NotFound(f"no fact {key!r} in this namespace", hint="`strata fact list` shows the keys")
    current = _value_at(conn, fact["fact_id"], now)
    rows = conn.execute(f"SELECT {_VALUE_COLUMNS} FROM fact_values v WHERE v.fact_id = ? "
                        "ORDER BY v.valid_from, v.id", (fact["fact_id"],)).fetchall()
    return {**shaped(fact, current, now), "history": [
        {"value_id": r["value_id"], "value": r["value"], "valid_from": r["valid_from"],
         "valid_from_iso": iso(r["valid_from"]), "valid_to": r["valid_to"], "valid_to_iso": iso(r["valid_to"]),
         "recorded_at": r["recorded_at"], "recorded_at_iso": iso(r["recorded_at"]),
         "source": _source_text(r["source_kind"], r["source_ref"]), "rule": r["rule"], "confidence": r["confidence"],
         "actor": r["actor"], "current": current is not None and r["value_id"] == current["value_id"]}
        for r in rows]}


def conflicts(conn, agent: str, *, window: float, open_only: bool, since: float | None, limit: int) -> list[dict]:
    """The changes of value that are conflicts (CONFLICT_REASON, judged now, so a new window
    applies to past changes too), newest first; `open_only`: those not acknowledged yet."""
    sql = (f"SELECT c.id, c.fact_id, c.late, c.at, c.acknowledged_at, {CONFLICT_REASON} AS reason, "
           "o.value AS old_value, o.valid_from AS old_from, o.source_kind AS old_kind, o.source_ref AS old_ref, "
           "n.value AS new_value, n.valid_from AS new_from, n.source_kind AS new_kind, n.source_ref AS new_ref, "
           "x.value AS next_value, x.valid_from AS next_from, x.source_kind AS next_kind, x.source_ref AS next_ref "
           f"FROM {CHANGES} WHERE c.agent = ?")
    params: list = [window, agent]
    if open_only:
        sql += " AND c.acknowledged_at IS NULL"
    if since is not None:
        sql += " AND c.at >= ?"
        params.append(since)
    # The key is looked up for the conflicts found only: most changes are not conflicts.
    rows = conn.execute(f"SELECT k.*, f.key FROM (SELECT * FROM ({sql}) WHERE reason IS NOT NULL ORDER BY id DESC "
                        "LIMIT ?) k JOIN facts f ON f.id = k.fact_id ORDER BY k.id DESC", (*params, limit)).fetchall()

    def side(r, p: str) -> dict | None:
        if r[f"{p}_from"] is None:
            return None
        return {"value": r[f"{p}_value"], "valid_from": r[f"{p}_from"], "valid_from_iso": iso(r[f"{p}_from"]),
                "source": _source_text(r[f"{p}_kind"], r[f"{p}_ref"])}

    return [{"id": r["id"], "key": r["key"], "reason": r["reason"], "late": bool(r["late"]), "at": r["at"],
             "at_iso": iso(r["at"]), "acknowledged_at": r["acknowledged_at"], "old": side(r, "old"),
             "new": side(r, "new"), "next": side(r, "next")} for r in rows]


def acknowledge(conn, agent: str, conflict_id: int, now: float, *, window: float) -> dict:
    """Mark a conflict looked at; a change of value that is no conflict (judged as conflicts()
    judges it) is not one to acknowledge."""
    row = conn.execute(f"SELECT c.id, c.acknowledged_at, {CONFLICT_REASON} AS reason FROM {CHANGES} "
                       "WHERE c.id = ? AND c.agent = ?", (window, conflict_id, agent)).fetchone()
    if row is None or row["reason"] is None:
        raise NotFound(f"no fact conflict {conflict_id} in this namespace",
                       hint="`strata fact conflicts` lists them; a change of value that is no conflict is history "
                            "(`strata fact history KEY`)")
    if row["acknowledged_at"] is None:
        conn.execute("UPDATE fact_conflicts SET acknowledged_at = ? WHERE id = ?", (now, conflict_id))
    return {"id": conflict_id, "acknowledged_at": row["acknowledged_at"] or now}


def current_of_keys(conn, agent: str, keys: list[str], now: float) -> list[dict]:
    """The current facts of these (normalised) keys, in no particular order."""
    found = []
    # In parts: SQLite bounds the number of parameters of one statement.
    for start in range(0, len(keys), 400):
        part = keys[start:start + 400]
        found += conn.execute(
            f"SELECT {_FACT_COLUMNS}, {_VALUE_COLUMNS} FROM facts f JOIN fact_values v ON v.id = ({_AT}) "
            f"WHERE f.agent = ? AND f.key IN ({', '.join('?' * len(part))}) AND v.value IS NOT NULL",
            (now, agent, *part)).fetchall()
    return [shaped(r, r, now) for r in found]


def current_of_subjects(conn, agent: str, subjects: list[str], now: float) -> list[dict]:
    """The current facts whose key is `subject.attribute` for one of these (normalised, at most
    a few hundred) subjects, in no particular order."""
    if not subjects:
        return []
    # Each subject's keys run from "subject." up to "subject/" ("/" follows "." in code order).
    rows = conn.execute(
        f"WITH s(k) AS (VALUES {', '.join(['(?)'] * len(subjects))}) "
        f"SELECT {_FACT_COLUMNS}, {_VALUE_COLUMNS} FROM s JOIN facts f ON f.agent = ? AND f.key > s.k || '.' "
        f"AND f.key < s.k || '/' JOIN fact_values v ON v.id = ({_AT}) WHERE v.value IS NOT NULL",
        (*subjects, agent, now)).fetchall()
    return [shaped(r, r, now) for r in rows]


REJUDGE = "rejudge"  # the rule name a re-judging retraction is recorded under


def judged_values(conn, agent: str, rules: list[str], now: float) -> list[dict]:
    """Current facts whose value one of `rules` captured: what a re-judge reads."""
    if not rules:
        return []
    rows = conn.execute(f"SELECT {_FACT_COLUMNS}, {_VALUE_COLUMNS} FROM facts f JOIN fact_values v ON v.id = ({_AT}) "
                        f"WHERE f.agent = ? AND v.value IS NOT NULL AND v.rule IN ({', '.join('?' * len(rules))}) "
                        "ORDER BY f.key", (now, agent, *rules)).fetchall()
    return [shaped(r, r, now) for r in rows]


def rejudged(conn, agent: str, now: float) -> list[dict]:
    """Facts whose current state is a re-judge's retraction, each with the value it retracted."""
    out = []
    for r in conn.execute(f"SELECT {_FACT_COLUMNS}, {_VALUE_COLUMNS} FROM facts f JOIN fact_values v ON v.id = ({_AT}) "
                          "WHERE f.agent = ? AND v.value IS NULL AND v.rule = ? ORDER BY f.key", (now, agent, REJUDGE)):
        before = conn.execute(f"SELECT {_VALUE_COLUMNS} FROM fact_values v WHERE v.fact_id = ? AND v.id <> ? AND "
                              "v.valid_from <= ? ORDER BY v.valid_from DESC, v.id DESC LIMIT 1",
                              (r["fact_id"], r["value_id"], r["valid_from"])).fetchone()
        if before is not None and before["value"] is not None:
            out.append({"key": r["key"], "label": r["label"], "value": before["value"], "rule": before["rule"],
                        "source": _source_text(before["source_kind"], before["source_ref"]),
                        "confidence": before["confidence"], "retracted_at": r["valid_from"]})
    return out
