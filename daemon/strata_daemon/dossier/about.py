"""What is about a topic in the database: the rules of strata_daemon/dossier/relevance.py applied
to the entities and the spiderweb's links the store reads. Every function takes a connection
and runs on the database thread (inside `db.run`), so that a refresh reads in one hop."""

from __future__ import annotations

from strata_daemon.dossier import relevance
from strata_daemon.dossier.topics import Choice
from strata_daemon.store import dossiers as store

# The kinds of entity a topic's phrase may name (a person, a host, an address...).
ENTITY_TYPES = ("person", "host", "handle", "email", "url", "path")


def choices(conn, agent: str) -> dict[str, Choice]:
    """A person's choices for the namespace's topics, by topic."""
    return {r["topic"]: Choice(r["query"], None if r["fact_prefixes"] is None else tuple(r["fact_prefixes"]),
                               r["enabled"], r["added"])
            for r in store.choice_rows(conn, agent)}


def topic_entities(conn, agent: str, terms: relevance.Terms) -> list[tuple[str, str]]:
    """The entities (type, value) that are one of the topic's phrases, looked up by the values
    they may be stored under (by index rather than a scan of them all)."""
    found = store.entities_among(conn, agent, ENTITY_TYPES, relevance.entity_candidates(terms))
    return [(kind, value) for kind, value in found if relevance.entity_matches(value, terms)]


def _entity_nodes(entities: list[tuple[str, str]]) -> list[str]:
    return [f"entity:{k}:{v}" for k, v in entities]


def linked_to_topic(conn, agent: str, terms: relevance.Terms, known: set[int], limit: int) -> list[dict]:
    """Active memories a person or a phase linked to one of the topic's entities (not a mere
    mention), newest first, that recall did not hand over: they belong to the topic whatever
    their words, so they are read from the spiderweb rather than hoped for from recall."""
    nodes = _entity_nodes(topic_entities(conn, agent, terms))
    return store.active_memories(conn, agent, store.linked_to_nodes(conn, agent, nodes) - known, limit)


def about_topic(conn, agent: str, memories: list[dict], terms: relevance.Terms, fact_keys: list[str]) -> set[int]:
    """The ids of the memories (dicts with id, content) that are about the topic: they name it,
    are linked to one of its entities or facts, or are explicitly linked to a memory that is."""
    entities = topic_entities(conn, agent, terms)
    for kind, value in entities:
        if kind == "person":
            terms = terms.with_person(value)
    found = relevance.mentioning(memories, terms)
    nodes = [*_entity_nodes(entities), *(f"fact:{key}" for key in fact_keys)]
    rest = {m["id"] for m in memories} - found
    found |= store.linked_among(conn, agent, rest, nodes)
    rest -= found
    partners = store.explicit_partners(conn, agent, rest)
    others = {p for ps in partners.values() for p in ps} - found
    if others:
        rows = store.contents(conn, agent, others)
        others = relevance.mentioning(rows, terms) | store.linked_among(conn, agent, others, nodes)
    return found | {i for i, ps in partners.items() if ps & (found | others)}
