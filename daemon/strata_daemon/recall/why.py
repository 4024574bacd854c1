"""A hit's reasons in one line of plain words, for an agent's context and a person's eye:
"found by words and meaning; next to a match; recent; used 3×, 2 helped". Pure: it reads the
explanation recall already worked out for the hit (`explain`), nothing else."""

from __future__ import annotations

from typing import Mapping, Sequence

# What found a memory, in the order a person would say it.
_FOUND = (("fts", "words"), ("vector", "meaning"), ("date", "the time named"), ("fact", "a fact it states"),
          ("second_hop", "what the best hits say"), ("graph", "links in the web"), ("hebbian", "memories used with it"))
# What raised a memory that something else found.
_RAISED = (("neighbours", "next to a match"), ("session", "in a session that matches"), ("when", "says when"),
           ("source_named", "from the source named"))
RECENT = 7 * 86400  # seconds: within the default recency half-life a memory reads as recent


def why_line(explain: Mapping, *, age: float, tier: str = "hot", led: bool = False, above: Sequence[int] = ()) -> str:
    """One line saying why a hit was recalled, from its `explain` (retrievers, features, what
    ranked it down), its age in seconds and its tier; and why it stands out of score order
    when it does (it LED, or was moved ABOVE older memories alike it)."""
    found = explain.get("retrievers", {})
    features = explain.get("features", {})
    by = [words for name, words in _FOUND if name in found]
    parts = ["found by " + " and ".join(by) if by else "brought in by what matched"]
    if led:
        parts.append("leads: it states a fact the question names")
    if above:
        parts.append("moved above " + ", ".join(f"#{i}" for i in above) + ": newer, and alike it")
    parts += [words for name, words in _RAISED if name in found]
    read = found.get("cross_encoder")
    if read and read["rank"] == 1 and read["of"] > 1:
        parts.append(f"read as the best answer of {read['of']}")
    if "asks" in found:
        parts.append("mostly asks" if found["asks"]["told_share"] < 0.5 else "partly asks")
    if "supersedes" in found:
        parts.append(f"newer than #{found['supersedes']['memory']}")
    if age < RECENT:
        parts.append("recent")
    used = features.get("access_count", 0)
    if used:
        helped, failed = features.get("successes", 0), features.get("failures", 0)
        outcome = ", ".join(s for s in (f"{helped} helped" if helped else "", f"{failed} did not" if failed else "") if s)
        parts.append(f"used {used}×" + (f", {outcome}" if outcome else ""))
    if "superseded_by" in explain:
        parts.append("superseded by " + ", ".join(f"#{i}" for i in explain["superseded_by"]))
    if "newer_alike" in explain:
        parts.append("ranked below a newer memory alike it")
    if "penalised" in explain:
        parts.append(f"marked down: {explain['penalised']}")
    if tier == "cold":
        parts.append("from the cold tier")
    return "; ".join(parts)
