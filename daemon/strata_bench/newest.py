"""`strata bench truth`: is what an agent reads first what is true now? Statements of one thing
in turn (an older value, then a newer one, or a chain of three or four) are stored among the
synthetic corpus's memories, with distractors about something close; half the items arrive
newest first. Each item's question is then asked three ways:

- recall: is the newest statement among the first ten hits with no older one of the item above
  it (`recall_first`)? Is it the first hit of all (`top1`)?
- the context block (`strata context`): does it hold the newest statement, with no older one
  of the item ahead of it, and no fact whose value an older statement gave?
- the facts: does no current fact hold a value an older statement gave?

Items of kind `coexist` state things that are all true at once: the statement asked about
must come first and must not be superseded by the others (a false update).

Besides the written sets (tests/data/LABELLING.md), two public suites are read from their
installed packages: memtrust-cli's contradiction cases (the block must show the new value and
no stale fact) and benchd-harness's reliability stale-memory items (the first hit must hold
the current value)."""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path
from typing import Callable

from strata_daemon.app.memory import Memory
from strata_daemon.config.home import init_home
from strata_daemon.errors import InvalidInput

from strata_bench.corpus import observations
from strata_bench.updates import written_pairs

DAY = 86400.0
START = 1_767_225_600.0  # the corpus's first day
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
# The written sets, by name: JSON lines (truth_*.jsonl) or the older tab-separated update pairs and
# chains (attribute, statements oldest first, question). `dev` sets were looked at while tuning;
# `held_out` ones only scored.
SETS = {
    "dev": (DATA / "truth_dev.jsonl",),
    "dev_pairs": (DATA / "updates_dev.tsv", DATA / "updates_dev2.tsv", DATA / "updates_heldout.tsv",
                  DATA / "updates_heldout2.tsv"),
    "dev_chains": (DATA / "chains_dev.tsv", DATA / "chains_heldout.tsv"),
    "held_out": (DATA / "truth_heldout.jsonl",),
}
PUBLIC = ("memtrust", "benchd")


def _jsonl_items(path: Path, text: str) -> list[dict]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            said, values = list(item["said"]), list(item["values"])
            kind = item["kind"]
            if kind not in ("update", "coexist") or len(said) != len(values) or len(said) < 2:
                raise ValueError
            out.append({"kind": kind, "attribute": str(item["attribute"]), "said": said, "values": values,
                        "question": str(item["question"]), "asks": int(item.get("asks", len(said) - 1)),
                        "distractors": list(item.get("distractors", []))})
        except (ValueError, KeyError, TypeError):
            raise InvalidInput(f"{path.name} line {n}: not an item as tests/data/LABELLING.md describes") from None
    return out


def load(paths: tuple[Path, ...]) -> list[dict]:
    """The items of JSON-lines sets, and of the tab-separated pairs and chains of `bench updates`
    (no values, no distractors)."""
    items = []
    for path in paths:
        if path.suffix != ".jsonl":
            items += [{**p, "kind": "update", "values": [None] * len(p["said"]), "distractors": []}
                      for p in written_pairs((path,))]
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise InvalidInput(f"cannot read {path}: {e.strerror}",
                               hint="`strata bench truth` reads tests/data/ of a source checkout") from None
        items += _jsonl_items(path, text)
    return items


def memtrust_items() -> list[dict]:
    """memtrust-cli's contradiction cases (its bundled fixture), as update pairs."""
    try:
        from importlib import resources
        text = (resources.files("memtrust") / "data" / "contradiction_cases.json").read_text(encoding="utf-8")
    except (ModuleNotFoundError, OSError):
        raise InvalidInput("memtrust-cli is not installed",
                           hint="pip install --no-deps memtrust-cli==0.3.8 (make test installs it)") from None
    return [{"kind": "update", "attribute": c["subject"], "said": [c["initial_fact"], c["contradicting_fact"]],
             "values": [c["initial_value"], c["updated_value"]], "question": c["query"], "distractors": [],
             "case": c["case_id"]} for c in json.loads(text)["cases"]]


def benchd_items() -> list[dict]:
    """benchd-harness's reliability stale-memory items: a conversation's turns, in order."""
    try:
        from benchd_harness.benchmarks.reliability import STALE_ITEMS
    except ModuleNotFoundError:
        raise InvalidInput("benchd-harness is not installed",
                           hint="pip install --no-deps benchd-harness==0.2.0 (make test installs it)") from None
    return [{"case": it["id"], "turns": [(t["role"], t["content"]) for t in it["turns"]], "question": it["query"],
             "expected": it["expected_keywords"], "trap": it["trap_keywords"]} for it in STALE_ITEMS]


def _arrivals(rng: random.Random, n: int, late: bool) -> list[tuple[int, float]]:
    """(index, event time) of an item's statements in the order they arrive: each said 1 to 31
    days after the one before; with `late`, newest first."""
    at = [START + rng.uniform(10, 150) * DAY]
    for _ in range(n - 1):
        at.append(at[-1] + rng.uniform(1, 31) * DAY)
    order = list(enumerate(at))
    return order[::-1] if late else order


async def _fill(mem: Memory, items: list[dict], background: int, seed: int,
                captured: dict[int, list[str]]) -> list[list[int]]:
    """Store the items among the corpus; CAPTURED gets the keys each statement made current."""
    if background:
        await mem.observe_many(list(observations(background, seed=seed)))
    rng = random.Random(seed)
    ids = []
    for i, item in enumerate(items):
        arrivals = _arrivals(rng, len(item["said"]), late=i % 2 == 1)
        got = {}
        for j, at in arrivals:
            r = await mem.observe(item["said"][j], at=at)
            got[j] = r["id"]
            captured[r["id"]] = [f["key"] for f in r["facts"] if f.get("current")]
        span = (min(at for _, at in arrivals), max(at for _, at in arrivals))
        for text in item["distractors"]:
            await mem.observe(text, at=rng.uniform(span[0] - 5 * DAY, span[1] + 5 * DAY))
        ids.append([got[j] for j in range(len(item["said"]))])
    return ids


def _has(text: str, value: str | None) -> bool:
    return bool(value) and value.casefold() in text.casefold()


async def _facts_by_source(mem: Memory) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for f in await mem.list_facts():
        src = f.get("source") or ""
        if src.startswith("episode:"):
            out.setdefault(int(src.split(":", 1)[1]), []).append(f)
    return out


def _stale_value(value: str, item: dict, target: int) -> bool:
    """A fact value that an older (or, coexisting, another) statement of the item gave and the
    target's does not."""
    want = item["values"][target]
    return any(_has(value, v) and not _has(value, want or "") and not _has(v, want or "")
               for j, v in enumerate(item["values"]) if j != target and v)


async def _judge(mem: Memory, item: dict, said: list[int], budget: int, by_source: dict[int, list[dict]],
                 captured: dict[int, list[str]]) -> dict:
    coexist = item["kind"] == "coexist"
    target = item.get("asks", len(said) - 1) if coexist else len(said) - 1
    want, others = said[target], [i for j, i in enumerate(said) if j != target]
    r = await mem.recall(item["question"], k=10)
    hits = [h["id"] for h in r["hits"]]
    block = await mem.context(item["question"], budget=budget, record=False)
    shown = [m["id"] for m in block["parts"]["memories"]]
    block_facts = block["parts"]["facts"]
    superseded = set((await mem.get(want))["supersession"]["superseded_by"])
    if coexist:
        # Nothing the others say may end what the asked statement says: it is not superseded and
        # the facts it gave are still current.
        kept = {f["key"] for f in by_source.get(want, ())}
        facts_ok, stale_in_block = not superseded and all(k in kept for k in captured.get(want, ())), []
    else:
        # Stale: a current fact an older statement gave, or one the item's own memories gave
        # that holds an older value and not the newest (values of other items do not count).
        mine = {f["key"]: f for i in said for f in by_source.get(i, ())}
        stale = {f["key"] for i in others for f in by_source.get(i, ())}
        stale |= {k for k, f in mine.items() if _stale_value(str(f["value"]), item, target)}
        keys = stale | {k for i in said for k in captured.get(i, ())}
        facts_ok = not stale
        stale_in_block = [f for f in block_facts if f["key"] in stale or (
            f["key"] in keys and _stale_value(str(f["value"]), item, target))]
    block_ok = want in shown and not any(i in shown[:shown.index(want)] for i in others) and not stale_in_block
    # Newest first: found among the first ten, with nothing the item said before it above it. The
    # first hit overall (`top1`) also asks that no distractor or other memory outranks it.
    ahead = hits[:hits.index(want)] if want in hits else hits
    # A memory outside the item superseded the asked statement: a rule read another thing as this one.
    ended_by_another = bool(superseded - set(said))
    # An older statement another item's memory superseded: its facts ended by a wrong reading,
    # which leaves no stale value by luck, so the facts do not pass for it.
    lucky = False
    for i in ([] if coexist else others):
        lucky = lucky or bool(set((await mem.get(i))["supersession"]["superseded_by"]) - set(said))
    facts_ok = facts_ok and not lucky
    stale_keys = [] if coexist else sorted(stale)
    # Where each statement ranked (1-based, None past the tenth), oldest first: what a miss was.
    ranks = [hits.index(i) + 1 if i in hits else None for i in said]
    return {"stale_keys": stale_keys, "ranks": ranks, "recall": want in hits and not any(i in ahead for i in others),
            "top1": bool(hits) and hits[0] == want,
            "block": block_ok, "facts": facts_ok,
            "stale_facts_in_block": len(stale_in_block), "tokens": block["tokens"], "ended": ended_by_another,
            "older_ended": lucky,
            "held": any(_has(str(f["value"]), item["values"][target]) for f in by_source.get(want, ()))}


def _summary(rows: list[dict], items: list[dict]) -> dict:
    def share(key: str, which: list[int]) -> float | None:
        return round(sum(rows[i][key] for i in which) / len(which), 4) if which else None

    out: dict = {}
    for name, which in (("pairs", [i for i, it in enumerate(items) if it["kind"] == "update" and len(it["said"]) == 2]),
                        ("chains", [i for i, it in enumerate(items) if it["kind"] == "update" and len(it["said"]) > 2]),
                        ("coexist", [i for i, it in enumerate(items) if it["kind"] == "coexist"])):
        if not which:
            continue
        out[name] = {"items": len(which), "recall_first": share("recall", which), "top1": share("top1", which),
                     "block": share("block", which),
                     "facts": share("facts", which),
                     "all_three": round(sum(rows[i]["recall"] and rows[i]["block"] and rows[i]["facts"]
                                            for i in which) / len(which), 4),
                     "stale_facts_in_block": sum(rows[i]["stale_facts_in_block"] for i in which),
                     "newest_held_by_a_fact": share("held", which),
                     "ended_by_another": sum(rows[i]["ended"] for i in which),
                     "older_ended_by_another": sum(rows[i]["older_ended"] for i in which),
                     "block_tokens_median": sorted(rows[i]["tokens"] for i in which)[len(which) // 2]}
    return out


async def _home(path: Path) -> Memory:
    init_home(path)
    return await Memory.open(path)


_WORD = re.compile(r"[\w][\w'’.-]*[\w]")
_COMMON = frozenset("""the a an is are was were be been to of in on at for with and or but now new our my we i you it
its his her their they he she this that from by as has have had got get so just still then than also not no""".split())


def _subject_words(item: dict) -> set[str]:
    """The words two or more of an item's statements share: what it is about."""
    seen: dict[str, int] = {}
    for text in item["said"]:
        for w in {w.casefold().rstrip("s") for w in _WORD.findall(text)} - _COMMON:
            seen[w] = seen.get(w, 0) + 1
    return {w for w, n in seen.items() if n > 1}


MAX_HOMES = 4


def homes_for(items: list[dict]) -> list[list[int]]:
    """Items in at most MAX_HOMES homes, two about the same thing (sharing two words of their
    subjects) kept apart where they can be: one item's statements should not update another's, as
    in a user's home a thing has one history."""
    homes: list[tuple[list[set[str]], list[int]]] = [([], []) for _ in range(MAX_HOMES)]

    def clashes(words: set[str], home: list[set[str]]) -> int:
        return sum(len(words & other) >= 2 for other in home)

    for i, item in enumerate(items):
        words = _subject_words(item)
        home = min(homes, key=lambda h: (clashes(words, h[0]), len(h[1])))
        home[0].append(words)
        home[1].append(i)
    return [ids for _, ids in homes if ids]


async def _score_home(items: list[dict], home: Path, *, background: int, seed: int, budget: int,
                      progress: Callable[[int], None] | None) -> list[dict]:
    mem = await _home(home)
    try:
        captured: dict[int, list[str]] = {}
        said = await _fill(mem, items, background, seed, captured)
        await mem.embed_pending(progress=progress)
        by_source = await _facts_by_source(mem)
        return [await _judge(mem, item, ids, budget, by_source, captured) for item, ids in zip(items, said)]
    finally:
        await mem.close()


async def score_items(items: list[dict], home: Path, *, background: int, seed: int, budget: int,
                      progress: Callable[[int], None] | None = None, misses: bool = False) -> dict:
    rows: list[dict] = [{}] * len(items)
    groups = homes_for(items)
    for n, group in enumerate(groups):
        got = await _score_home([items[i] for i in group], home / str(n), background=background, seed=seed,
                                budget=budget, progress=progress)
        for i, row in zip(group, got):
            rows[i] = row
    out = _summary(rows, items)
    out["homes"] = len(groups)
    if misses:
        out["misses"] = [{"said": it["said"], "question": it["question"], **{k: v for k, v in r.items()
                                                                               if k in ("recall", "block", "facts",
                                                                                        "stale_keys", "ranks")}}
                         for it, r in zip(items, rows) if not (r["recall"] and r["block"] and r["facts"])]
    return out


async def score_benchd(home: Path, *, seed: int, background: int) -> dict:
    """Each stale-memory conversation in a home of its own among the corpus: the first hit must
    hold one of the item's expected keywords."""
    passed, cases = 0, []
    for n, item in enumerate(benchd_items()):
        mem = await _home(home / item["case"])
        try:
            if background:
                await mem.observe_many(list(observations(background, seed=seed)))
            at = START + 100 * DAY
            for role, text in item["turns"]:
                at += 3 * DAY
                await mem.observe(text, at=at, source="user" if role == "user" else "assistant")
            await mem.embed_pending()
            r = await mem.recall(item["question"], k=10)
        finally:
            await mem.close()
        first = r["hits"][0]["content"].casefold() if r["hits"] else ""
        ok = any(k in first for k in item["expected"])  # benchd's own rule: an expected keyword
        passed += ok
        cases.append({"case": item["case"], "top1": ok})
    return {"items": len(cases), "top1": passed, "cases": cases}


def steps(background: int, only: str | None) -> int:
    """Progress units: the memories each home embeds (an estimate for the bar)."""
    homes = 1 if only else len(SETS) + 1
    return homes * (background + 1000)


async def bench_truth(*, background: int = 2000, seed: int = 0, budget: int = 256, only: str | None = None,
                      misses: bool = False, progress: Callable[[int], None] | None = None) -> dict:
    names = [only] if only else [*SETS, *PUBLIC]
    out: dict = {"benchmark": "truth", "background": background, "seed": seed, "budget": budget, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        for name in names:
            home = Path(tmp) / name
            if name == "benchd":
                out["sets"][name] = await score_benchd(home, seed=seed, background=background)
                continue
            items = memtrust_items() if name == "memtrust" else load(SETS[name])
            out["sets"][name] = await score_items(items, home, background=background, seed=seed, budget=budget,
                                                  progress=progress, misses=misses and name.startswith("dev"))
    return out


def format_truth(r: dict) -> str:
    lines = [f"truth benchmark ({r['background']} corpus memories around the items, block budget {r['budget']})"]
    for name, s in r["sets"].items():
        if name == "benchd":
            lines.append(f"  benchd stale_memory: current value in the first hit {s['top1']} of {s['items']}")
            continue
        for part, v in s.items():
            if not isinstance(v, dict):
                continue  # `homes`, `misses`
            lines.append(f"  {name} {part} ({v['items']}): recall newest first {v['recall_first']:.3f} (first hit "
                         f"{v['top1']:.3f}), block {v['block']:.3f}"
                         f", facts {v['facts']:.3f}, all three {v['all_three']:.3f}; stale facts in the block "
                         f"{v['stale_facts_in_block']}; ended by another item's statement {v.get('ended_by_another', 0)} "
                         f"(an older one {v.get('older_ended_by_another', 0)}); "
                         f"block tokens (median) {v['block_tokens_median']}")
        for m in s.get("misses", ()):
            failed = ", ".join(k for k in ("recall", "block", "facts") if not m[k])
            stale = f"; stale {', '.join(m['stale_keys'])}" if m["stale_keys"] else ""
            lines.append(f"    missed ({failed}{stale}): {' -> '.join(m['said'])} | {m['question']}")
    return "\n".join(lines)
