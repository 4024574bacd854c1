"""`strata bench lived`'s summary over its conversations, and its table."""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

from strata_bench.locomo_data import KS

AGE_BANDS = ("under_30_days", "30_to_90_days", "over_90_days")
HOMES = ("lived", "fresh")
AT = (1, *KS)


def _mean(rows: list[tuple[int, dict]], metric: str) -> float | None:
    return round(statistics.fmean(s[metric] for _, s in rows), 4) if rows else None


def _pool(checkpoints: Sequence[Mapping], key: str) -> dict[str, dict[str, list]]:
    pooled: dict[str, dict[str, list]] = {name: {} for name in HOMES}
    for cp in checkpoints:
        for name in HOMES:
            for band, rows in cp.get(key, {}).get(name, {}).items():
                pooled[name].setdefault(band, []).extend(rows)
    return pooled


def _ages(pooled: Mapping[str, Mapping[str, list]]) -> dict:
    """Per age band and over all: questions, and each home's evidence recall at 1, 5 and 10."""
    out = {}
    for band in (*AGE_BANDS, "all"):
        rows = {n: ([r for b in pooled[n].values() for r in b] if band == "all" else pooled[n].get(band, []))
                for n in HOMES}
        out[band] = {"questions": len(rows["lived"]),
                     **{f"{n}_recall_at_{k}": _mean(rows[n], f"recall_at_{k}") for n in HOMES for k in AT}}
    return out


def _weighted(lives: Sequence[Mapping], key: str) -> float | None:
    pairs = [(life["shared_words"][key], life["shared_words"]["questions"]) for life in lives
             if life["shared_words"][key] is not None]
    total = sum(n for _, n in pairs)
    return round(sum(v * n for v, n in pairs) / total, 4) if total else None


def _updates(finals: Sequence[Mapping]) -> dict:
    out = {}
    for name in HOMES:
        got = [f["updates"][name] for f in finals if "updates" in f]
        pairs = sum(g["pairs"] for g in got)
        out[name] = {"pairs": pairs, "newer_first": round(sum(g["newer_first"] for g in got) / pairs, 4)
                     if pairs else None, "newest_ahead": round(sum(g.get("newest_ahead", 0) for g in got) / pairs, 4)
                     if pairs else None, "older_first": sum(g["older_first"] for g in got)}
    return out


def _arena(lives: Sequence[Mapping]) -> dict:
    """The arena's choice over time (each change, by day) and its share of each night."""
    nights = [n for life in lives for n in life["nights"]]
    shares = sorted(n["arena_seconds"] / n["seconds"] for n in nights if n["seconds"] > 0)
    days_on: dict[str, int] = {}
    for n in nights:
        days_on[n["strategy"]] = days_on.get(n["strategy"], 0) + 1
    return {
        "nights_it_ran": sum(n["arena_ran"] for n in nights), "nights": len(nights),
        "share_of_each_night": {"median": round(statistics.median(shares), 3),
                                "p95": round(shares[int(0.95 * (len(shares) - 1))], 3),
                                "max": round(shares[-1], 3)} if shares else None,
        "days_on_each_strategy": days_on,
        "choice_over_time": {life["name"]: [[day + 1, n["strategy"]] for day, n in enumerate(life["nights"])
                                            if day == 0 or n["strategy"] != life["nights"][day - 1]["strategy"]]
                             for life in lives},
    }


def summarise_life(lives: Sequence[Mapping]) -> dict:
    """Over every conversation: lived and fresh per age of the evidence (every checkpoint), the
    last day's questions as written and worded apart, knowledge updates, the own-words shares
    (the last day's), forgotten memories returned, and what nights and the arena cost."""
    finals = [life["checkpoints"][-1] for life in lives]
    own = {n: round(sum(f["own_words"][n] * f["own_words"]["memories"] for f in finals)
                    / max(1, sum(f["own_words"]["memories"] for f in finals)), 4) for n in HOMES}
    nights = [n["seconds"] for life in lives for n in life["nights"]]
    arena = [n["arena_seconds"] for life in lives for n in life["nights"]]
    by_month = [[round(statistics.fmean(n["seconds"] for n in life["nights"][i:i + 30]), 3)
                 for i in range(0, len(life["nights"]), 30)] for life in lives]
    return {
        "by_evidence_age": _ages(_pool([cp for life in lives for cp in life["checkpoints"]], "questions")),
        "worded_apart_by_evidence_age": _ages(_pool([cp for life in lives for cp in life["checkpoints"]],
                                                    "worded_apart")),
        "last_day": {"as_written": _ages(_pool(finals, "questions")),
                     "worded_apart": _ages(_pool(finals, "worded_apart")),
                     "shared_words": {"as_written": _weighted(lives, "as_written"),
                                      "worded_apart": _weighted(lives, "worded_apart")}},
        "updates": _updates(finals),
        "own_words_top10": {"memories": sum(f["own_words"]["memories"] for f in finals), **own},
        "forgotten": sum(f["forgotten"] for f in finals),
        "forgotten_returned": sum(cp["forgotten_returned"] for life in lives for cp in life["checkpoints"]),
        "night_seconds": {"median": round(statistics.median(nights), 3),
                          "p95": round(sorted(nights)[int(0.95 * (len(nights) - 1))], 3),
                          "max": round(max(nights), 3), "arena_share": round(sum(arena) / sum(nights), 3),
                          "mean_by_month": by_month},
        "arena": _arena(lives),
    }


def _age_lines(title: str, ages: Mapping[str, Mapping]) -> list[str]:
    lines = [f"{title:<50}lived @1 @5 @10         fresh @1 @5 @10"]
    if not ages["all"]["questions"]:
        return lines + ["  (no question)"]
    for band, a in ages.items():
        if a["questions"]:
            lines.append(f"  {band:<16}{a['questions']:>6}                            "
                         + " ".join(f"{a[f'lived_recall_at_{k}']:.4f}" for k in AT) + "    "
                         + " ".join(f"{a[f'fresh_recall_at_{k}']:.4f}" for k in AT))
    return lines


def format_months(r: Mapping[str, Any]) -> str:
    lines = [f"a home lived for months: {r['conversations']} conversations, each from its first session to "
             f"{r['tail_days']} days after its last; measured every {r['checkpoint_days']} days on copies; "
             f"mode {r['mode']}; the agent asks {r['asking'].replace('-', ' ')}"]
    lines += _age_lines("held-out questions by the age of their evidence", r["by_evidence_age"])
    lines += _age_lines("the same worded apart", r["worded_apart_by_evidence_age"])
    last = r["last_day"]
    sw = last["shared_words"]
    lines += _age_lines("last day, as written", last["as_written"])
    lines += _age_lines("last day, worded apart", last["worded_apart"])
    if sw["as_written"] is not None and sw["worded_apart"] is not None:
        lines.append(f"  question words found in the evidence: {sw['as_written']:.0%} as written, "
                     f"{sw['worded_apart']:.0%} worded apart")
    u = r["updates"]
    if u["lived"]["pairs"]:
        lines.append(f"knowledge updates, newest statement first ({u['lived']['pairs']} pairs and chains): lived "
                     f"{u['lived']['newest_ahead']:.4f} (the first hit {u['lived']['newer_first']:.4f}, older first "
                     f"{u['lived']['older_first']}), fresh {u['fresh']['newest_ahead']:.4f} (the first hit "
                     f"{u['fresh']['newer_first']:.4f}, older first {u['fresh']['older_first']})")
    o = r["own_words_top10"]
    lines.append(f"memories found by their own words in the top 10 (last day, {o['memories']} memories): "
                 f"lived {o['lived']:.4f}, fresh {o['fresh']:.4f}")
    lines.append(f"explicitly forgotten: {r['forgotten']} memories, returned {r['forgotten_returned']} times")
    n, a = r["night_seconds"], r["arena"]
    share = a["share_of_each_night"] or {"median": 0, "p95": 0, "max": 0}
    lines.append(f"nights: median {n['median']} s, p95 {n['p95']} s, max {n['max']} s; the arena ran on "
                 f"{a['nights_it_ran']} of {a['nights']} nights, {n['arena_share']:.0%} of night time (of each "
                 f"night: median {share['median']:.0%}, p95 {share['p95']:.0%})")
    lines.append("the arena's strategy, in days: " + ", ".join(f"{k} {v}" for k, v in a["days_on_each_strategy"].items()))
    return "\n".join(lines)
