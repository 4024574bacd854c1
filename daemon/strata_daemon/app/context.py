"""A context block for one turn (`strata context`, the hooks, MCP's prompt and resource): the
namespace's capsule condensed, the current facts the text names and the best memories for it,
packed within a token budget (context/pack.py). The memories come from one recall, logged as
any other: its id takes the feedback of the turn that used the block."""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from strata_daemon.base import timeutil
from strata_daemon.base.numbers import whole
from strata_daemon.config.load import overlay
from strata_daemon.errors import EmbeddingUnavailable, InvalidInput

MAX_HITS = 200


def hits_for(budget: int) -> int:
    """How many hits to ask recall for, never more than MAX_HITS: one per 12 tokens, about twice
    what fits of memories as short as a chat turn (25 tokens and its id), since some are left
    out as repeats and a long one is skipped for the next."""
    return max(10, min(MAX_HITS, budget // 12))


@functools.cache
def _shipped_capsule() -> str:
    """The capsule strata ships, read once: a prompt hook asks for a block on every turn."""
    from strata_daemon.capsule.api import EXAMPLE

    return EXAMPLE.read_text(encoding="utf-8")


def _capsule_parts(mem: Context) -> list[tuple[str, list[str]]]:
    from strata_daemon.capsule.condensed import condensed

    text = mem.layers.capsule.read_text()
    return condensed(text, _shipped_capsule()) if text else []


def _counter():
    from strata_daemon.embedding import tokens

    try:
        return tokens.NAME, tokens.counter()
    except EmbeddingUnavailable:  # no packaged tokenizer: a word is a token or more; say so
        return "words", lambda texts: [len(t.split()) * 2 for t in texts]


async def _packed(mem: Context, text: str, k: int, mode: str | None, record: bool,
                  changes: Mapping[str, Any] | None, packing: Callable[[dict], Any]) -> tuple[dict, Any]:
    """The recall behind the block and the block packed from it. Logged, only the memories the
    block holds count as shown (their access events, the working set, what feedback without
    `used` reaches); with `record` off, only read (a benchmark asking the same home many times,
    maybe with `changes` laid over the settings as an arena preset is)."""
    packed = []

    def keep(r: dict) -> list[dict]:
        packed.append(packing(r))
        held = {m["id"] for m in packed[0].memories}
        return [h for h in r["hits"] if h["id"] in held]

    if record:
        if changes:
            raise InvalidInput("settings can be laid over only a block that is not logged (record off)")
        r = await mem.recall(text, k=k, mode=mode, explain=False, given=keep)
        return r, packed[0]
    arm = mem.arm_of(mode, changes) if mode or changes else (await mem.layers.arena.strategy())[0]
    r = await mem.layers.recall.ranked(text, k=k, mode=arm.mode, context=None, kinds=(), include_archived=False,
                                       now=timeutil.now(), arm=arm)
    return {**r, "recall_id": None}, packing(r)


class Context:
    """The facade's context block (memory.py assembles the facade)."""

    async def context(self, text: str, *, budget: int | None = None, mode: str | None = None,
                      k: int | None = None, record: bool = True, changes: Mapping[str, Any] | None = None) -> dict:
        """One block for an agent's turn within `budget` tokens (context.budget): the capsule
        condensed, the facts the text names, then the best memories; logged as a recall, whose
        id takes the turn's feedback, unless `record` is off; then `changes` may lay settings
        over the configuration, as for `rank`."""
        from strata_daemon.context.pack import pack

        budget = whole(self.config["context.budget"] if budget is None else budget, "budget")
        if not 32 <= budget <= 100000:
            raise InvalidInput(f"budget must be between 32 and 100000, not {budget}",
                               hint="a budget is in tokens; context.budget is the default")
        name, count = _counter()
        parts = _capsule_parts(self)
        floor = (overlay(self.config, dict(changes)) if changes else self.config).tuning.recall.context_floor
        r, p = await _packed(self, text, k or hits_for(budget), mode, record, changes,
                             lambda r: pack(budget, count, capsule=parts, facts=r["facts"], hits=r["hits"],
                                            floor=floor))
        lines = p.lines()
        used = sum(count(lines)) if lines else 0
        return {
            "block": "\n".join(lines) + ("\n" if lines else ""), "tokens": used, "budget": budget,
            "tokenizer": name, "recall_id": r["recall_id"], "agent": self.agent, "mode_used": r["mode_used"],
            "at": timeutil.now(),
            "parts": {"capsule": [{"heading": h, "lines": ls} for h, ls in p.capsule],
                      "facts": [{"key": f["key"], "value": f["value"]} for f in p.facts],
                      "memories": [{"id": m["id"], "rank": m["rank"], "event_at": m["at"], "cut": m["cut"]}
                                   for m in p.memories]},
            "left_out": p.left_out, "warnings": r["warnings"],
        }
