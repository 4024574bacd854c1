"""Moving facts captured before canonical keys onto them: what `strata fact rekey` shows and
does, and what a home owed it (migration 30) does once when next opened.

A current value a memory gave through a capture rule is read again from that memory as capture
reads it now; when it now lands on another key (`gateway.runs = on 8080` is `gateway.port =
8080`; `Dana` is `Dana Whitfield`), the value moves there, from the moment it held, and the old
key is retracted under the rule `rekey` (its history stays). Values a person set, a capsule
edit or an import gave are never moved: they are what a person wrote.
"""

from __future__ import annotations

from strata_daemon.facts.keys import Source
from strata_daemon.facts.rules import STATEMENT, Rule, capture
from strata_daemon.facts.superseding import resolved
from strata_daemon.facts.vocabulary import Vocabulary
from strata_daemon.store import fact_lookups as lookups
from strata_daemon.store import facts as store

REKEY = "rekey"  # the rule a moved key's retraction is recorded under
_CAPTURED = (STATEMENT, "status-line")


def moves(conn, agent: str, rules: tuple[Rule, ...], vocab: Vocabulary, now: float) -> list[dict]:
    """The current captured values that now land on another key: {key, new_key, label, value, ...}."""
    out = []
    for f in lookups.captured_current(conn, agent, _CAPTURED, now):
        e = f["episode"]
        found = capture(rules, e["content"], e["kind"], source=e["source"], sentences=True, vocab=vocab)
        held = str(f["value"]).casefold()
        same = [c for c in found if c.value.casefold() == held] or [
            c for c in found if c.value.casefold() in held or held in c.value.casefold()]
        if not same:
            continue
        c = resolved(conn, agent, same[0])
        if c.key != f["key"]:
            out.append({"key": f["key"], "new_key": c.key, "label": c.label, "value": c.value,
                        "valid_from": f["valid_from"], "episode_id": e["id"], "rule": f["rule"],
                        "confidence": f["confidence"]})
    return out


def rekey_in(conn, agent: str, rules: tuple[Rule, ...], vocab: Vocabulary, now: float, *, actor: str,
             window: float, apply: bool) -> list[dict]:
    """The moves (moves()); with `apply`, made: each value written under its new key from when it
    held, the old key retracted now."""
    found = moves(conn, agent, rules, vocab, now)
    if not apply:
        return found
    for m in found:
        source = Source("episode", str(m["episode_id"]))
        store.write(conn, agent, m["new_key"], store.Assertion(
            label=m["label"], value=m["value"], valid_from=m["valid_from"], source=source,
            confidence=m["confidence"], rule=m["rule"]), actor=actor, now=now, window=window)
        store.write(conn, agent, m["key"], store.Assertion(
            label=m["key"], value=None, valid_from=now, source=Source("rule", REKEY), rule=REKEY),
            actor=actor, now=now, window=window)
    return found


def owed(conn) -> bool:
    return lookups.keys_owed(conn)


def pay_owed_in(conn, rules: tuple[Rule, ...], vocab: Vocabulary, now: float, *, actor: str, window: float) -> int:
    """Every namespace's captured facts moved to their keys, once (migration 30): how many moved."""
    moved = sum(len(rekey_in(conn, agent, rules, vocab, now, actor=actor, window=window, apply=True))
                for agent in lookups.agents_with_facts(conn))
    lookups.keys_paid(conn)
    return moved
