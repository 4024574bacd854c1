"""The hooked copy of `strata bench locomo --lived`: a home an agent used through the prompt
hook, not through recall. The first half of the questions (as for the lived copy) is asked
through `strata context` as the hook asks (a 512-token block, logged); the agent's reply cites
the evidence turns it was given (`#ID`, as an agent that uses the block would), and the reply
hook records them (app/hooks.py: the feedback is implicit, nothing is given for a block that
held none). Then a night of phases, and the other half is measured through `context` at every
budget, against the fresh home's blocks for the same questions."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from strata_bench.locomo import context_summary, through_context
from strata_bench.locomo_data import BUDGETS, Conversation
from strata_bench.locomo_home import Stored
from strata_daemon.app import hooks
from strata_daemon.app.memory import Memory
from strata_daemon.config.home import Home

HOOK_BUDGET = 512
SESSION = "bench"


async def _asked_through_the_hook(mem: Memory, text: str, evidence: Sequence[str], stored: Stored) -> bool:
    """One prompt through the hook and its reply: whether the reply gave feedback."""
    block = await mem.context(text, budget=HOOK_BUDGET)
    hooks.given(mem.home.state_dir, mem.agent, SESSION, block)
    wanted = {e for e, ds in stored.dia_ids.items() if set(ds) & set(evidence)}
    reply = " ".join(f"#{m['id']}" for m in block["parts"]["memories"] if m["id"] in wanted)
    return await hooks.feedback_from(mem, SESSION, reply) is not None


async def hooked(home: Home, conv: Conversation, stored: Stored, mode: str, halves, night,
                 progress: Callable[[int], None] | None = None) -> dict:
    """The first half through the hook, a night, the second half's blocks: {rows, given}."""
    first, measured = halves(conv.questions)
    given = 0
    async with await Memory.open(home, actor="bench") as mem:
        for q in first:
            given += await _asked_through_the_hook(mem, q.text, q.evidence, stored)
            if progress:
                progress(1)
        await night(mem)
        rows = [(q.category, await through_context(mem, q, stored, mode)) for q in measured]
    return {"rows": rows, "feedback_given": given, "asked": len(first)}


def compare(fresh: Sequence[tuple[int, Mapping[str, float]]], hooked_runs: Sequence[Mapping[str, Any]]) -> dict:
    """Evidence inside the block on the measured half: the hooked copies against the fresh homes."""
    rows = [row for r in hooked_runs for row in r["rows"]]
    f, h = context_summary(list(fresh)), context_summary(rows)
    names = [f"context_within_{b}" for b in BUDGETS]
    return {"questions": len(rows), "fresh": {m: f[m] for m in names}, "hooked": {m: h[m] for m in names},
            "delta": {m: round(h[m] - f[m], 4) for m in names},
            "feedback_given": sum(r["feedback_given"] for r in hooked_runs),
            "asked_through_the_hook": sum(r["asked"] for r in hooked_runs)}
