"""The arena's tables: evaluation episodes, arm statistics, runs and choices. Functions take an
open connection (on the database thread) and the namespace they act in."""

from __future__ import annotations

import json

HOME = "*"  # the home-wide choice's row name: not a valid namespace, so never one's own


def add_episode(conn, agent: str, query: str, context: str, useful: list[int], origin: str,
                recall_id: int | None, asked_at: float | None, now: float) -> int:
    return conn.execute(
        "INSERT INTO arena_episodes (agent, query, context, useful, origin, recall_id, asked_at, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (agent, query, context, json.dumps(useful), origin, recall_id, asked_at, now)).lastrowid


def episodes(conn, agent: str, limit: int) -> list[dict]:
    """The newest `limit` episodes with their useful memories that still exist, as (id, session)
    and their texts (`texts`, in the same order), and when their question was asked (`at`: the
    recall's time, kept after the recall is pruned; None for a question set's); an episode none
    of whose memories is left is skipped."""
    rows = conn.execute("SELECT id, query, context, useful, origin, asked_at AS at FROM arena_episodes "
                        "WHERE agent = ? ORDER BY id DESC LIMIT ?", (agent, limit)).fetchall()
    wanted = {i for r in rows for i in json.loads(r["useful"])}
    found: dict[int, tuple[str | None, str]] = {}
    ids = list(wanted)
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        found.update((r[0], (r[1], r[2])) for r in conn.execute(
            f"SELECT id, session, content FROM episodes WHERE +agent = ? AND id IN ({', '.join('?' * len(part))})",
            (agent, *part)))
    out = []
    for r in reversed(rows):
        kept = [i for i in json.loads(r["useful"]) if i in found]
        if kept:
            out.append({"id": r["id"], "query": r["query"], "context": json.loads(r["context"]),
                        "useful": [(i, found[i][0]) for i in kept], "texts": [found[i][1] for i in kept],
                        "origin": r["origin"], "at": r["at"]})
    return out


def recall_asked(conn, recall_id: int):
    """The query, context and time of a recall (a row), or None."""
    return conn.execute("SELECT query, context, at FROM recalls WHERE id = ?", (recall_id,)).fetchone()


def episode_counts(conn, agent: str) -> dict[str, int]:
    return dict(conn.execute("SELECT origin, count(*) FROM arena_episodes WHERE agent = ? GROUP BY origin",
                             (agent,)).fetchall())


def stats(conn, agent: str) -> dict[str, tuple[int, float]]:
    """arm -> (pulls, reward sum)."""
    return {r[0]: (r[1], r[2]) for r in conn.execute(
        "SELECT arm, pulls, reward_sum FROM arena_arms WHERE agent = ?", (agent,))}


def save_stats(conn, agent: str, arms: dict, now: float) -> None:
    """Each arm's statistics (anything with pulls and reward_sum), arms never pulled left out."""
    conn.executemany("INSERT INTO arena_arms (agent, arm, pulls, reward_sum, updated_at) VALUES (?, ?, ?, ?, ?) "
                     "ON CONFLICT (agent, arm) DO UPDATE SET pulls = excluded.pulls, "
                     "reward_sum = excluded.reward_sum, updated_at = excluded.updated_at",
                     [(agent, name, s.pulls, s.reward_sum, now) for name, s in arms.items() if s.pulls])


def add_run(conn, agent: str, now: float, episodes: int, pulls: list, leader: str | None, confirm: dict | None,
            decision: str, reason: str, seconds: float, newest: int | None) -> int:
    return conn.execute(
        "INSERT INTO arena_runs (agent, at, episodes, pulls, leader, confirm, decision, reason, seconds, "
        "newest_episode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (agent, now, episodes, json.dumps(pulls), leader, None if confirm is None else json.dumps(confirm),
         decision, reason, seconds, newest)).lastrowid


def last_confirmation(conn, agent: str) -> dict | None:
    """The namespace's latest run that compared a leader with the default."""
    r = conn.execute("SELECT id, leader, decision, newest_episode FROM arena_runs WHERE agent = ? "
                     "AND confirm IS NOT NULL ORDER BY id DESC LIMIT 1", (agent,)).fetchone()
    return None if r is None else dict(r)


def newest_episode(conn, agent: str) -> tuple[int | None, int | None]:
    """(the namespace's newest evaluation episode, the newest its last arena run saw)."""
    newest = conn.execute("SELECT max(id) FROM arena_episodes WHERE agent = ?", (agent,)).fetchone()[0]
    seen = conn.execute("SELECT newest_episode FROM arena_runs WHERE agent = ? ORDER BY id DESC LIMIT 1",
                        (agent,)).fetchone()
    return newest, None if seen is None else seen[0]


def _run_row(r) -> dict:
    return {"id": r["id"], "at": r["at"], "episodes": r["episodes"], "pulls": json.loads(r["pulls"]),
            "leader": r["leader"], "confirm": None if r["confirm"] is None else json.loads(r["confirm"]),
            "decision": r["decision"], "reason": r["reason"], "seconds": r["seconds"]}


def runs(conn, agent: str, limit: int) -> list[dict]:
    """The namespace's runs, newest first."""
    return [_run_row(r) for r in conn.execute("SELECT * FROM arena_runs WHERE agent = ? ORDER BY id DESC LIMIT ?",
                                              (agent, limit))]


def last_run(conn, agent: str) -> dict | None:
    found = runs(conn, agent, 1)
    return found[0] if found else None


def add_choice(conn, agent: str, kind: str, arm: str | None, reason: str, run_id: int | None, actor: str,
               now: float) -> int:
    return conn.execute("INSERT INTO arena_choices (agent, kind, arm, reason, run_id, actor, at) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", (agent, kind, arm, reason, run_id, actor, now)).lastrowid


def _choice_row(r) -> dict:
    return {"id": r["id"], "kind": r["kind"], "arm": r["arm"], "reason": r["reason"], "run_id": r["run_id"],
            "actor": r["actor"], "at": r["at"]}


def choices(conn, agent: str, limit: int = 50) -> list[dict]:
    """The namespace's choices, newest first."""
    return [_choice_row(r) for r in conn.execute(
        "SELECT * FROM arena_choices WHERE agent = ? ORDER BY id DESC LIMIT ?", (agent, limit))]


def current(conn, agent: str) -> tuple[dict | None, dict | None]:
    """The namespace's latest choice and the home-wide one (each None when there is none)."""
    rows = {r["agent"]: _choice_row(r) for r in conn.execute(
        "SELECT * FROM arena_choices WHERE id IN (SELECT max(id) FROM arena_choices WHERE agent IN (?, ?) "
        "GROUP BY agent)", (agent, HOME))}
    return rows.get(agent), rows.get(HOME)


def votes(conn) -> list[tuple[str | None, int]]:
    """Each namespace's current own decision (its arm, or None for the default) weighted by the
    episodes of its last run: anonymous aggregates, the only thing one namespace's arena learns
    from another's (the rule that one agent's episodes never score another's)."""
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT c.arm, (SELECT r.episodes FROM arena_runs r WHERE r.agent = c.agent ORDER BY r.id DESC LIMIT 1) "
        "FROM arena_choices c WHERE c.agent <> ? AND c.kind <> 'clear' AND c.id IN "
        "(SELECT max(id) FROM arena_choices WHERE agent <> ? GROUP BY agent)", (HOME, HOME))]


def reset(conn, agent: str) -> int:
    return conn.execute("DELETE FROM arena_arms WHERE agent = ?", (agent,)).rowcount
