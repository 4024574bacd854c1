"""What `strata bench lived` asks besides LoCoMo's own questions: the measured questions worded
apart (tests/data/locomo_dev_reworded.tsv), and knowledge updates lived through (the held-out
updates of `strata bench truth`, pairs and chains, each older statement observed on one day of
the conversation's life and the newer ones weeks apart, asked months after)."""

from __future__ import annotations

import hashlib
import random
import re
import statistics
from pathlib import Path
from typing import Sequence

from strata_bench.locomo_data import Conversation, Question
from strata_bench.newest import DATA, SETS, load
from strata_daemon.app.memory import Memory
from strata_daemon.errors import InvalidInput

REWORDED = DATA / "locomo_dev_reworded.tsv"
_WORD = re.compile(r"[a-z0-9]{3,}")
# Words that say nothing of what a question is about, for the overlap figure only.
_COMMON = frozenset("""the and for was were did does what when where which who whom whose how why with that this
from have has had her his its their they them she him you your are not but about into than then there these those
would could should will can any some many much more most one two ever also been being""".split())


def question_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_reworded(path: Path = REWORDED) -> dict[tuple[str, str], str]:
    """(conversation, question key) -> the reworded question."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InvalidInput(f"cannot read the reworded questions {path}: {e.strerror}",
                           hint="`strata bench lived` reads tests/data/ of a source checkout") from None
    out = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 3 or not all(c.strip() for c in cols):
            raise InvalidInput(f"{path.name} line {n}: expected conversation, question key and reworded question")
        out[(cols[0], cols[1])] = cols[2].strip()
    return out


def reworded(conv: Conversation, held: Sequence[Question], table: dict[tuple[str, str], str]) -> list[Question]:
    """The held-out questions the table rewords, with the reworded text and the same evidence."""
    return [Question(table[(conv.name, question_key(q.text))], q.category, q.evidence, q.irregular, q.unreadable)
            for q in held if (conv.name, question_key(q.text)) in table]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


def shared_words(question: str, evidence: Sequence[str]) -> float:
    """The share of the question's words its evidence holds (a figure of how far the wording is)."""
    asked = _words(question)
    held = set().union(*(_words(t) for t in evidence)) if evidence else set()
    return len(asked & held) / len(asked) if asked else 1.0


def mean_shared(questions: Sequence[Question], text_of: dict[str, str]) -> float | None:
    shares = [shared_words(q.text, [text_of.get(e, "") for e in q.evidence]) for q in questions]
    return round(statistics.fmean(shares), 4) if shares else None


# -- knowledge updates lived through -------------------------------------------------------------

def update_pairs(index: int, of: int) -> list[dict]:
    """The held-out written updates (pairs and chains) dealt to the `index`-th of `of` conversations."""
    return [it for it in load(SETS["held_out"]) if it["kind"] == "update"][index::of]


def schedule(pairs: Sequence[dict], span_days: int, rng: random.Random) -> dict[int, list[tuple[int, int]]]:
    """day -> [(pair, statement)]: a pair's first statement within the first half of the
    conversation's sessions, each later one 7 days or more after the one before, all by its
    last session's day."""
    days: dict[int, list[tuple[int, int]]] = {}
    for p, pair in enumerate(pairs):
        n = len(pair["said"])
        day = rng.randrange(0, max(1, span_days // 2))
        for s in range(n):
            days.setdefault(day, []).append((p, s))
            left = n - s - 1
            if left:
                day = min(span_days - 1, day + 7 + rng.randrange(0, max(1, (span_days - 1 - day - 7 * left) // left)))
    return days


async def ask_updates(mem: Memory, pairs: Sequence[dict], ids: dict[int, list[int]], k: int,
                      mode: str | None) -> dict:
    """Of the pairs whose statements all arrived: the newest the first hit (`newer_first`), the
    newest among the hits with no older statement above it (`newest_ahead`, as `strata bench
    truth` counts newest first), an older one first (and which pairs, by their place)."""
    newer = older = asked = ahead = 0
    older_pairs = []
    for p, pair in enumerate(pairs):
        said = ids.get(p, [])
        if len(said) < len(pair["said"]):
            continue
        hits = [h["id"] for h in (await mem.recall(pair["question"], k=k, mode=mode, explain=False))["hits"]]
        first = hits[0] if hits else None
        asked += 1
        newer += first == said[-1]
        older += first in said[:-1]
        above = hits[:hits.index(said[-1])] if said[-1] in hits else hits
        ahead += said[-1] in hits and not set(said[:-1]) & set(above)
        if first in said[:-1]:
            older_pairs.append(p)
    return {"pairs": asked, "newer_first": newer, "newest_ahead": ahead, "older_first": older,
            "older_first_pairs": older_pairs}
