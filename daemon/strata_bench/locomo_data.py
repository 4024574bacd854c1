"""The LoCoMo data (Maharana et al., ACL 2024) and scoring against its evidence.

Reading checks the file as it goes, so bad data fails before any work with a message that says
where. A question scores the share of its evidence turns (dia ids such as "D3:5") among the top
k hits, as the official evaluation does, the share of the evidence's sessions among the top k
hits' sessions, and the share of its evidence within a context budget of the hits' texts.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from strata_daemon.errors import InvalidInput, NotFound

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10)
# What an agent's model receives: the hits' texts in rank order, cut at a context budget (tokens).
BUDGETS = (256, 512, 1024)
BUDGET_K = 60  # hits asked for to fill the largest budget (LoCoMo turns are ~25 tokens)
METRICS = tuple(f"recall_at_{k}" for k in KS) + tuple(f"session_recall_at_{k}" for k in KS)
BUDGET_METRICS = tuple(f"evidence_within_{b}" for b in BUDGETS)
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
HINT = "pass --data PATH to a LoCoMo file (locomo10.json or a file of the same shape)"

_DIA_ID = re.compile(r"D:?(\d+):(\d+)")  # "D:11:26" is a typo in the data for D11:26
_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    session: str  # "session_3"
    at: float  # the session's date, unix seconds
    raw: Mapping[str, Any]  # kept whole so turn_text can use any field


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # canonical dia ids
    irregular: int  # raw evidence entries that were not one well-formed dia id
    unreadable: int  # pieces of them that name no dia id at all


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


# -- reading the data (pure but for load_locomo) ---------------------------------------------

def turn_text(turn: Mapping[str, Any]) -> str:
    """What one turn stores as an episode, and what the baselines index: its text, and the caption
    of the image it shares, if any, as the conversation shows it. The speaker is not part of the
    text: it is the episode's source."""
    caption = turn.get("blip_caption")
    return f"{turn['text']} [shares {caption}]" if isinstance(caption, str) and caption.strip() else turn["text"]


def canonical_dia_id(text: str) -> str | None:
    m = _DIA_ID.fullmatch(text.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def parse_evidence(raw: Iterable[Any]) -> tuple[list[str], int, int]:
    """(canonical ids without repeats, irregular entries, unreadable pieces). Entries such as
    "D8:6; D9:17" or "D9:1 D4:4" hold several ids; a piece naming none (a bare "D") is dropped."""
    ids: list[str] = []
    irregular = unreadable = 0
    for entry in raw:
        entry = str(entry)
        irregular += canonical_dia_id(entry) != entry
        for piece in filter(None, _EVIDENCE_SEPARATORS.split(entry)):
            dia = canonical_dia_id(piece)
            if dia is None:
                unreadable += 1
            elif dia not in ids:
                ids.append(dia)
    return ids, irregular, unreadable


def parse_session_date(text: Any) -> float:
    """LoCoMo's session date ("1:56 pm on 8 May, 2023") as UTC unix seconds; the data has no zone."""
    try:
        return datetime.strptime(str(text).strip(), DATE_FORMAT).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        raise InvalidInput(f"cannot read the session date {text!r}",
                           hint='LoCoMo dates look like "1:56 pm on 8 May, 2023"') from None


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise InvalidInput(f"{where}: {what}", hint=HINT)


def _turn(raw: Any, session: str, at: float, where: str) -> Turn:
    _need(isinstance(raw, dict), where, "a turn must be an object")
    dia_id = canonical_dia_id(raw["dia_id"]) if isinstance(raw.get("dia_id"), str) else None
    _need(dia_id is not None, where, f"turn has no readable dia_id ({raw.get('dia_id')!r})")
    _need(isinstance(raw.get("text"), str) and bool(raw["text"].strip()), where, f"turn {dia_id} has no text")
    _need(isinstance(raw.get("speaker"), str), where, f"turn {dia_id} has no speaker")
    return Turn(dia_id, raw["speaker"], session, at, raw)


def _turns(conv: Any, where: str) -> list[Turn]:
    _need(isinstance(conv, dict), where, '"conversation" must be an object')
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.fullmatch(key)))
    _need(bool(sessions), where, "the conversation has no session_N lists")
    turns = []
    for _, key in sessions:
        _need(isinstance(conv[key], list), where, f"{key} must be a list of turns")
        try:
            at = parse_session_date(conv.get(f"{key}_date_time"))
        except InvalidInput as e:
            raise InvalidInput(f"{where}: {key}_date_time: {e.message}", hint=e.hint) from None
        turns += [_turn(t, key, at, f"{where}, {key}") for t in conv[key]]
    ids = [t.dia_id for t in turns]
    _need(len(set(ids)) == len(ids), where, "two turns share a dia_id")
    return turns


def _question(raw: Any, where: str) -> Question:
    _need(isinstance(raw, dict), where, "a qa entry must be an object")
    text = raw.get("question")
    _need(isinstance(text, str) and bool(text.strip()), where, "a qa entry has no question")
    category = raw.get("category")
    _need(category in CATEGORIES and not isinstance(category, bool), where,
          f"category {category!r} is not one of {', '.join(map(str, CATEGORIES))}")
    evidence = raw.get("evidence", [])
    _need(isinstance(evidence, list), where, "evidence must be a list of dia ids")
    ids, irregular, unreadable = parse_evidence(evidence)
    return Question(text, category, tuple(ids), irregular, unreadable)


def conversation_range(text: str | int | None) -> tuple[int, int | None]:
    """`--conversations`: "N" (the first N) or "A-B" (the A-th to the B-th, counted from 1), as
    (start, stop) list indexes; None is every conversation. A range lets a setting be chosen on
    some conversations and scored on the others."""
    if text is None:
        return 0, None
    first, sep, last = str(text).strip().partition("-")
    try:
        lo, hi = (int(first), int(last)) if sep else (1, int(first))
    except ValueError:
        raise InvalidInput(f"--conversations takes N or A-B (counted from 1), not {text!r}") from None
    if lo < 1 or hi < lo:
        raise InvalidInput(f"--conversations must name at least one conversation from 1 on, not {text!r}")
    return lo - 1, hi


def parse_locomo(data: Any, source: str, pick: str | int | None = None) -> list[Conversation]:
    _need(isinstance(data, list) and bool(data), source, "expected a non-empty list of conversations")
    start, stop = conversation_range(pick)
    if start >= len(data):
        raise InvalidInput(f"--conversations {pick}: {source} holds only {len(data)} conversations")
    out = []
    for i, item in enumerate(data[start:stop], start):
        _need(isinstance(item, dict), f"{source}: item {i}", "a conversation must be an object")
        name = str(item.get("sample_id") or f"#{i}")
        where = f"{source}: conversation {name}"
        _need(isinstance(item.get("qa"), list), where, 'missing "qa" list')
        turns = _turns(item.get("conversation"), where)
        questions = [_question(q, f"{where}, qa[{j}]") for j, q in enumerate(item["qa"])]
        out.append(Conversation(name, tuple(turns), tuple(questions)))
    _need(any(c.questions for c in out), source, "no questions to ask")
    return out


def load_locomo(path: str | Path, pick: str | int | None = None) -> list[Conversation]:
    """Read and check a LoCoMo file; every problem is an InvalidInput (NotFound for a missing file)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"no LoCoMo data at {path}", hint=HINT) from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text", hint=HINT) from None
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror}", hint=HINT) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"{path} is not JSON: {e.msg} (line {e.lineno}, column {e.colno})", hint=HINT) from None
    return parse_locomo(data, str(path), pick)


def data_issues(conversations: Sequence[Conversation]) -> dict:
    """How far the evidence annotations are from clean, so a figure can be read against them."""
    questions = [(c, q) for c in conversations for q in c.questions]
    known = {c.name: {t.dia_id for t in c.turns} for c in conversations}
    return {
        "questions_without_evidence": sum(not q.evidence for _, q in questions),
        "evidence_irregular": sum(q.irregular for _, q in questions),
        "evidence_unreadable": sum(q.unreadable for _, q in questions),
        "evidence_not_in_conversation": sum(e not in known[c.name] for c, q in questions for e in q.evidence),
    }


# -- scoring (pure) --------------------------------------------------------------------------

def session_of(dia_id: str) -> str:
    """The session number of a canonical dia id: "D3:5" -> "3"."""
    return dia_id[1:].split(":", 1)[0]


def evidence_recall(evidence: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """Official LoCoMo recall: the share of evidence ids among the top k (0 without evidence)."""
    if not evidence:
        return 0.0
    top = set(ranked[:k])
    return sum(e in top for e in evidence) / len(evidence)


def session_recall(evidence: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """The share of the evidence's distinct sessions that some top-k hit comes from."""
    wanted = {session_of(e) for e in evidence}
    if not wanted:
        return 0.0
    return len(wanted & {session_of(d) for d in ranked[:k]}) / len(wanted)


def budget_recall(evidence: Sequence[str], ranked: Sequence[tuple[Sequence[str], int]], budget: int) -> float:
    """The share of evidence ids inside the first `budget` tokens of the hits' texts laid end to
    end in rank order; `ranked` holds each hit's dia ids and its token count. A hit the cut goes
    through is not counted: the model would get only part of it."""
    if not evidence:
        return 0.0
    seen, used = set(), 0
    for ids, tokens in ranked:
        used += tokens
        if used > budget:
            break
        seen.update(ids)
    return sum(e in seen for e in evidence) / len(evidence)


def question_scores(evidence: Sequence[str], ranked: Sequence[str],
                    budgeted: Sequence[tuple[Sequence[str], int]] | None = None) -> dict[str, float]:
    """Recall and session recall at each k; with `budgeted` (hits as dia ids and token counts),
    the evidence within each context budget too."""
    scores = {**{f"recall_at_{k}": evidence_recall(evidence, ranked, k) for k in KS},
              **{f"session_recall_at_{k}": session_recall(evidence, ranked, k) for k in KS}}
    if budgeted is not None:
        scores.update({f"evidence_within_{b}": budget_recall(evidence, budgeted, b) for b in BUDGETS})
    return scores


def mean_scores(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    return {m: round(statistics.fmean(r[m] for r in rows), 4) for m in (*METRICS, *BUDGET_METRICS) if m in rows[0]}


def summarise(scored: Sequence[tuple[int, Mapping[str, float]]]) -> dict:
    """Overall means over every question, and per category (only categories that occur)."""
    categories = {}
    for cat in sorted({c for c, _ in scored}):
        rows = [s for c, s in scored if c == cat]
        categories[str(cat)] = {"name": CATEGORIES[cat], "questions": len(rows), **mean_scores(rows)}
    return {**mean_scores([s for _, s in scored]), "categories": categories}


def dia_ranking(episodes: Iterable[int], dia_ids: Mapping[int, Sequence[str]], k: int = max(KS)) -> list[str]:
    """Ranked episodes as ranked dia ids, cut at k; an episode that absorbed identical turns stands for all."""
    out = [d for e in episodes for d in dia_ids.get(e, ())]
    return out[:k]


def budget_ranking(episodes: Iterable[int], dia_ids: Mapping[int, Sequence[str]],
                   tokens: Mapping[int, int]) -> list[tuple[Sequence[str], int]]:
    return [(dia_ids.get(e, ()), tokens[e]) for e in episodes]


@functools.cache
def token_counter() -> Callable[[Sequence[str]], list[int]]:
    """Tokens per text, by the packaged MiniLM's WordPiece tokenizer without truncation: one
    ruler for every system (an LLM's own tokenizer counts within about a tenth of it on English)."""
    from tokenizers import Tokenizer

    from strata_daemon.app.public import TOKENIZER_SHA256, packaged_source

    tokenizer = Tokenizer.from_file(str(packaged_source({"tokenizer.json": TOKENIZER_SHA256}) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda texts: [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]
