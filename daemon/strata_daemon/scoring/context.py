"""Context match (contextual features): how well a memory's situation
(environment, task type, goal, custom keys) fits the situation of the query."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["context_match"]


def _norm(value: object) -> str:
    return str(value).strip().casefold()


def context_match(query_context: Mapping[str, str], memory_context: Mapping[str, object]) -> float:
    """Share of the query's keys whose value the memory shares, 0..1.

    Values compare as trimmed, case-insensitive strings, so "Coding" stored by
    one client matches "coding" asked by another. A key the memory lacks (or
    holds as None) does not match. An empty query context gives 0: no boost,
    rather than rewarding every memory equally for nothing.
    """
    if not query_context:
        return 0.0
    hits = 0
    for key, wanted in query_context.items():
        have = memory_context.get(key)
        if have is not None and _norm(have) == _norm(wanted):
            hits += 1
    return hits / len(query_context)
