"""The facts a recall's query names: its runs of words as keys, and the attributes its words
ask for. Runs on the database thread, inside the recall's read."""

from __future__ import annotations

import re

from strata_daemon.facts.attributes import asked_attributes
from strata_daemon.facts.keys import normalise_key
from strata_daemon.store import facts as store

_WORDS = re.compile(r"[^\W_](?:[\w./]|-(?=\w))*")  # `gw-02` one word, as its key has it
MAX_KEY_WORDS = 6
# A question about the person the home belongs to: in the first person, or about `the user`.
_SELF = re.compile(r"(?i)\b(?:i|my|me|mine|the\s+user(?:['’]s)?)\b")
_NAMED = re.compile(r"(?<!^)(?<![.?!]\s)\b(?!I\b)[A-Z][\w'’-]+")


def query_keys(query: str) -> list[str]:
    """Every run of up to MAX_KEY_WORDS words in a query, as keys: the facts a recall names."""
    words = [normalise_key(w) for w in _WORDS.findall(query[:2000]) if len(w) <= 200][:200]
    return sorted({" ".join(words[i:j]) for i in range(len(words))
                   for j in range(i + 1, min(i + MAX_KEY_WORDS, len(words)) + 1)})


def named_in(conn, agent: str, query: str, now: float) -> list[dict]:
    """Current facts whose key the query contains as whole words, longest key first. A
    `subject.attribute` key is named when both parts are (`What is Dana Whitfield's email?`)."""
    keys = query_keys(query)
    if not keys:
        return []
    subjects = [k for k in keys if k.count(" ") < 3][:400]
    asked = asked_attributes(k for k in keys if " " not in k)
    # "Is gw-02 healthy?" names the status line `gw-02 status` without saying "status".
    cued = [f"{k} {a}" for k in subjects for a in asked if not k.endswith(f" {a}")][:400]
    if _SELF.search(query) and not _NAMED.search(query):  # `Where do I work?`, `Where does the user live?`
        cued += [f"my {a}" for a in asked]  # (not `How can I call Dana?`: Dana's)
    found = store.current_of_keys(conn, agent, keys + cued, now)
    runs = set(keys) | asked
    # Each run as a subject: `dana whitfield.email` when the query also says "email" (or cues it).
    found += [f for f in store.current_of_subjects(conn, agent, subjects, now) if f["key"].split(".", 1)[1] in runs]
    unique = {f["key"]: f for f in found}
    return sorted(unique.values(), key=lambda f: (-len(f["key"]), f["key"]))
