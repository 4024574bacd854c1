"""The consolidation rules as pure functions: memories in, proposed changes out, each with
the reason a person reads in `strata consolidate --dry-run`. No I/O; the clock is an argument.

A memory here is a dict of its episode row. Each rule proposes at most one change per
memory, and none for a memory it already changed within `min_interval_hours` (or ever, for
the marks that are set once), so a second run right after the first changes nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass

from strata_daemon.base.wording import counted
from strata_daemon.config.tuning import Consolidation
from strata_daemon.scoring import hybrid_strength

RULES = ("merge", "replay", "potentiate", "promote", "interference", "stale", "archive", "associate")
DAY = 86400.0


# Slots, and no `extra` dict where there is nothing to say: a first pass over a million
# memories proposes over a million actions.
@dataclass(slots=True)
class Action:
    rule: str
    episode: int
    set: dict  # column -> new value
    reason: str
    extra: dict | None = None  # merged: {"into"}, its survivor: {"absorbed"}; interference: {"by"}; associate: {"with"}

    def as_dict(self, before: dict | None = None) -> dict:
        out = {"rule": self.rule, "episode": self.episode, "set": self.set, "reason": self.reason,
               **(self.extra or {})}
        if before is not None:
            out["before"] = {k: before[k] if before else None for k in self.set}
        return out


_KEY_TOKEN = re.compile(r"[\w.:/@%-]*\d[\w.:/@%-]*|\b[A-Z][A-Z_]{1,}\b|\b\w+[-_./]\w[\w./-]*")


def key_tokens(text: str) -> frozenset[str]:
    """The words two near-duplicates must share: numbers, identifiers (gw-02, nas-01.lan,
    ERR_CONN_RESET) and words in capitals (DOWN, UP). Embeddings put "disk 83% on nas-01" and
    "disk 91% on nas-01" side by side; they are not the same memory."""
    # A sentence's full stop or colon is not part of its last token ("at 91%." says 91%).
    return frozenset(t.lower().rstrip(".:/-") for t in _KEY_TOKEN.findall(text))


def _recent(when: float | None, now: float, s: Consolidation) -> bool:
    return when is not None and now - when < s.min_interval_hours * 3600.0


def strength(m: dict, now: float, potentiation_accesses: int) -> float:
    return m["strength_factor"] * hybrid_strength((now - m["event_at"]) / DAY, m["access_count"],
                                                  potentiation_accesses=potentiation_accesses)


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def shape(text: str) -> str:
    """A text with its numbers masked: what a routine line ("nas-01: cpu temp 54C") has in
    common with its next reading."""
    return " ".join(_NUMBER.sub("#", text.lower()).split())


def routine(memories) -> dict[int, int]:
    """Memory id -> the newest memory of the same kind and source that says the same with other
    (or the same) numbers, for every memory that has a newer such memory."""
    keys = [(m["kind"], m["source"], hash(shape(m["content"]))) for m in memories]
    newest: dict[tuple, tuple[float, int]] = {}
    for m, key in zip(memories, keys):
        when = (m["event_at"], m["id"])
        if key not in newest or when > newest[key]:
            newest[key] = when
    return {m["id"]: newest[key][1] for m, key in zip(memories, keys) if newest[key][1] != m["id"]}


def cold_reason(m, newer: dict[int, int]) -> str | None:
    """Why a memory may leave the hot tier, or None: forgetting demotes only what is redundant
    (a routine line a newer one repeats) or superseded (contradicted by a newer memory); a
    unique old memory stays where it is.

    Feedback is not a reason here. A recall's failure falls on every hit the agent passed over,
    so a memory that only sat beside other questions' answers collects failures; the success
    penalty already ranks it lower for them, and stale decay and the cold tier on top of it
    buried such memories (x0.35 in all) until their own words no longer found them."""
    if m["id"] in newer:
        return f"routine: memory {newer[m['id']]} says the same later"
    if m["strength_factor"] < 1.0:
        return "contradicted by a newer memory"
    return None


def replay(memories: list[dict], now: float, s: Consolidation, replayed: list[float | None] | None = None) -> list[Action]:
    """Replay: the most important memories get an implicit access, as the hippocampus replays
    them in sleep. At most `replay_limit` a night, most important first; `replayed` holds when
    every memory (archived ones too) was last replayed, default those of `memories`."""
    times = [m["replayed_at"] for m in memories] if replayed is None else replayed
    budget = s.replay_limit - sum(_recent(t, now, s) for t in times)
    due = [m for m in memories if m["importance"] >= s.replay_importance and not _recent(m["replayed_at"], now, s)]
    due.sort(key=lambda m: (-m["importance"], -m["id"]))
    return [Action("replay", m["id"], {"access_count": m["access_count"] + 1, "last_access_at": now,
                                       "replayed_at": now},
                   f"importance {m['importance']:g} >= {s.replay_importance:g}: replayed as an implicit access")
            for m in due[:max(0, budget)]]


def potentiate(memories: list[dict], now: float, accesses: int) -> list[Action]:
    """Long-term potentiation: after `accesses` (scoring's potentiation_accesses) a memory decays
    ten times slower for good. Scoring reads the access count; the mark records when it happened."""
    return [Action("potentiate", m["id"], {"potentiated_at": now},
                   f"{m['access_count']} accesses >= {accesses}: decays ten times slower from now on")
            for m in memories if m["potentiated_at"] is None and m["access_count"] >= accesses]


def promote(memories: list[dict], now: float, s: Consolidation) -> list[Action]:
    """Promotion: used often, trusted and proven -> quality good, which lifts its rank. Proven
    means more successes than failures: how often a memory was returned says little on its own."""
    return [Action("promote", m["id"], {"quality": "good"},
                   f"{m['access_count']} accesses >= {s.promote_accesses}, confidence {m['confidence']:g} >= "
                   f"{s.promote_confidence:g}, {counted(m['success_count'], 'success', 'successes')} vs "
                   f"{counted(m['failure_count'], 'failure')}")
            for m in memories if m["quality"] != "good" and m["access_count"] >= s.promote_accesses
            and m["confidence"] >= s.promote_confidence and m["success_count"] > m["failure_count"]]


def stale(memories: list[dict], now: float, s: Consolidation, newer: dict[int, int]) -> list[Action]:
    """Stale decay: never accessed, older than `stale_days`, and redundant or superseded
    (`cold_reason`) loses `stale_step` confidence a night, down to the floor. Age alone does
    not make a memory stale: recency already ranks it, and its words may be the only answer."""
    out = []
    for m in memories:
        age_days = (now - m["event_at"]) / DAY
        if m["access_count"] or m["factual"] or age_days <= s.stale_days or m["confidence"] <= s.stale_floor \
                or _recent(m["stale_at"], now, s):
            continue
        why = cold_reason(m, newer)
        if why is None:
            continue
        new = round(max(s.stale_floor, m["confidence"] - s.stale_step), 6)
        out.append(Action("stale", m["id"], {"confidence": new, "stale_at": now},
                          f"never accessed, {age_days:.0f} days old > {s.stale_days:g}, {why}: confidence "
                          f"{m['confidence']:g} -> {new:g}"))
    return out


def interference(memories: dict[int, dict], contradicted: list[tuple[int, int, str]], now: float,
                 s: Consolidation) -> list[Action]:
    """Interference: a newer memory that contradicts an older one weakens it. `contradicted` holds
    (older id, newer id, how it was found) pairs not applied before; each weakens once."""
    out, factor = [], {}
    for older, newer, how in contradicted:
        m = memories.get(older)
        if m is None:
            continue
        now_factor = factor.get(older, m["strength_factor"])
        new = round(max(s.interference_floor, now_factor * s.interference_factor), 6)
        factor[older] = new
        out.append(Action("interference", older, {"strength_factor": new},
                          f"contradicted by newer memory {newer} ({how}): strength x{s.interference_factor:g}",
                          {"by": newer}))
    return out


def archive(memories: list[dict], now: float, s: Consolidation, newer: dict[int, int],
            potentiation_accesses: int) -> list[Action]:
    """The archive rule, as a move to the cold tier (still recalled, ranked lower; out of what
    the capsule, dossiers and working set draw on): weak, hardly used, not factual, old, and
    redundant or superseded (`cold_reason`). Hybrid strength falls below 0.05
    three days after a memory is made, so the rule also waits `archive_min_days`."""
    out = []
    for m in memories:
        age_days = (now - m["event_at"]) / DAY
        if m["tier"] == "cold" or m["factual"] or m["access_count"] >= s.archive_max_accesses \
                or age_days < s.archive_min_days:
            continue
        value = strength(m, now, potentiation_accesses)
        why = cold_reason(m, newer) if value < s.archive_strength else None
        if why is not None:
            out.append(Action("archive", m["id"], {"tier": "cold", "tier_at": now},
                              f"strength {value:.3f} < {s.archive_strength:g} with {m['access_count']} accesses "
                              f"< {s.archive_max_accesses}, {age_days:.0f} days old, {why}: to the cold tier"))
    return out


# Words that turn a statement into its opposite. Two memories that differ by one of them can
# sit closer in meaning than the merge threshold ("The deploy succeeded" / "The deploy failed":
# cosine 0.94 with MiniLM), and merging them would keep one and hide the other.
_NEGATIONS = frozenset("not no never none nothing nobody without cannot cant dont doesnt didnt isnt wasnt arent "
                       "werent wont wouldnt shouldnt couldnt hasnt havent hadnt neither nor".split())
_OPPOSITES = tuple(frozenset(p.split("/")) for p in (
    "succeeded/failed", "success/failure", "succeed/fail", "passed/failed", "pass/fail", "up/down", "on/off",
    "yes/no", "true/false", "enabled/disabled", "enable/disable", "open/closed", "started/stopped",
    "start/stop", "allow/deny", "allowed/denied", "accepted/rejected", "approved/rejected", "online/offline",
    "healthy/unhealthy", "added/removed", "installed/uninstalled", "increase/decrease", "increased/decreased",
    "more/less", "before/after", "above/below", "higher/lower", "win/lose", "won/lost", "like/dislike",
    "likes/dislikes", "love/hate", "loves/hates", "always/never", "do/dont", "does/doesnt", "did/didnt"))


def _plain_words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower().replace("n't", "nt").replace("'", "")))


def disagree(one: str, other: str) -> bool:
    """Whether two texts differ by a negation or by a pair of opposites: close in meaning, but
    saying different things, so never one memory."""
    a, b = _plain_words(one), _plain_words(other)
    if (a ^ b) & _NEGATIONS:
        return True
    return any((a & pair) and (b & pair) and (a & pair) != (b & pair) for pair in _OPPOSITES)


def merge(groups: list[list[int]], memories: dict[int, dict], similarity: dict[tuple[int, int], float],
          now: float, s: Consolidation) -> list[Action]:
    """Merge: near-duplicates (cosine above `merge_threshold`, same kind) become one. The
    survivor is the most used (then the oldest); it takes the others' accesses and feedback,
    and they are superseded by it: kept, readable, restorable."""
    out = []
    for group in groups:
        members = sorted((memories[i] for i in group), key=lambda m: (-m["access_count"], m["id"]))
        keep = members[0]
        # A group joins through pairs: two of its members can still say opposite things.
        rest = [m for m in members[1:] if not disagree(keep["content"], m["content"])]
        members = [keep, *rest]
        if not rest:
            continue
        carried = {"access_count": keep["access_count"] + sum(m["access_count"] for m in rest),
                   "success_count": keep["success_count"] + sum(m["success_count"] for m in rest),
                   "failure_count": keep["failure_count"] + sum(m["failure_count"] for m in rest),
                   "importance": max(m["importance"] for m in members)}
        accessed = [m["last_access_at"] for m in members if m["last_access_at"] is not None]
        if accessed:
            carried["last_access_at"] = max(accessed)
        out.append(Action("merge", keep["id"], carried, f"survivor of {len(rest)} near-duplicate{'s' if len(rest) > 1 else ''}",
                          {"absorbed": [m["id"] for m in rest]}))
        for m in rest:
            cos = similarity.get((min(m["id"], keep["id"]), max(m["id"], keep["id"])))
            how = f"cosine {cos:.3f}" if cos is not None else "in the same near-duplicate group"
            out.append(Action("merge", m["id"], {"state": "superseded", "superseded_by": keep["id"], "tier": "cold",
                                                 "tier_at": now},
                              f"near-duplicate of {keep['id']} ({how} >= {s.merge_threshold:g}, same kind)",
                              {"into": keep["id"]}))
    return out
