"""How long a home keeps the record of each recall.

Every recall appends a row to `recalls` (its question and context) and one access event per
hit: about 700 bytes a recall of 10 hits, so an agent recalling a thousand times a day would add
some 250 MB a year that nothing reads again once the accesses are folded. The decay phase prunes the
recalls older than `daemon.recalls_keep_days`:

- their question and context go (feedback can no longer be given to them);
- their folded access events become one row per memory and UTC day (`day_rows`: new rows;
  a later night adds to the day's row), carrying how many they were (`n`) and the latest time:
  what a memory's use was as of any moment (the arena's replays, `reads.usage_before`) stays
  exact to the day;
- accesses that feedback passed over, which count for nothing, go;
- feedback events and evaluation episodes stay, no longer pointing at the recall.

A recall whose accesses are not folded yet is left for a later night.
"""

from __future__ import annotations

DAY = 86400.0
BATCH = 2000  # recalls per transaction: a stop waits for one batch, not for a year of history


def prune_batch(conn, before: float, batch: int = BATCH) -> dict[str, int]:
    """One transaction's worth (the caller's): up to `batch` recalls made before `before`."""
    ids = [r[0] for r in conn.execute(
        "SELECT id FROM recalls r WHERE at < ? AND NOT EXISTS (SELECT 1 FROM access_events a "
        "WHERE a.recall_id = r.id AND a.folded = 0) ORDER BY id LIMIT ?", (before, batch))]
    if not ids:
        return {"recalls": 0, "access_events": 0, "day_rows": 0}
    marks = ", ".join("?" * len(ids))
    # Days are counted here, not in SQL: CAST(x AS INTEGER) truncates in SQLite but rounds in
    # PostgreSQL, which put an afternoon's accesses on the next day.
    days: dict[tuple[int, int], list[float]] = {}
    for episode_id, at, n in conn.execute(
            f"SELECT episode_id, at, n FROM access_events WHERE recall_id IN ({marks}) AND folded = 1", ids):
        total = days.setdefault((episode_id, int(at // DAY)), [0, at])
        total[0] += n
        total[1] = max(total[1], at)
    added = 0
    for (episode_id, day), (n, last) in days.items():
        merged = conn.execute(
            "UPDATE access_events SET n = n + ?, at = max(at, ?) WHERE id = (SELECT id FROM access_events "
            "WHERE episode_id = ? AND recall_id IS NULL AND at >= ? AND at < ? LIMIT 1)",
            (n, last, episode_id, day * DAY, (day + 1) * DAY)).rowcount
        if not merged:
            conn.execute("INSERT INTO access_events (episode_id, recall_id, rank, score, at, folded, n) "
                         "VALUES (?, NULL, NULL, NULL, ?, 1, ?)", (episode_id, last, n))
            added += 1
    conn.execute(f"UPDATE feedback_events SET recall_id = NULL WHERE recall_id IN ({marks})", ids)
    events = conn.execute(f"DELETE FROM access_events WHERE recall_id IN ({marks})", ids).rowcount
    conn.execute(f"DELETE FROM recalls WHERE id IN ({marks})", ids)  # evaluation episodes: SET NULL
    return {"recalls": len(ids), "access_events": events, "day_rows": added}
