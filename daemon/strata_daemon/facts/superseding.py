"""Keeping the facts true as memories arrive, in whatever order and however they are worded;
inside an observation's write transaction, on the database thread.

- A statement's key is its subject's key for that attribute when the subject already has one
  under another name (facts/subjects.py): `Dana` lands on `Dana Whitfield.email`.
- A memory that updates a current fact it does not restate in capture's words (facts/updates.py)
  gives the fact its new value, or ends it when no value can be read; the change is recorded
  under the memory as source, with the rule `update`, so history names it.
- A statement older than a memory already stored that updates it (it arrived late) is history
  from the start: the newer memory's value, or its ending, follows it at once.

Each change is returned as capture returns one, so the spiderweb links the newer memory to the
one whose value it replaced (`supersedes`).

Words alone do not settle every update. A change in the first person (`Switched to the unlimited
plan`) and one that names no attribute (facts/updates.py's `weak`) could be of any of a person's
facts: in a home of many subjects they ended the rent, the phone or the home address. Such an
update is held (`Held`) and taken after the write, in a transaction of its own, only when the
two memories speak alike (Facts.weigh): on the development sets' shared home, 151 of 155 wrong
first-person updates were unlike their fact's memory and none of the right ones. So is a change
no rule ties to any fact, weighed against the facts it shares a word with (facts/near.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from strata_daemon.errors import InvalidInput
from strata_daemon.facts import near
from strata_daemon.facts.canonical import canonical, label as key_label
from strata_daemon.facts.keys import Source, clean_value, normalise_key
from strata_daemon.facts.rules import Capture
from strata_daemon.facts.speaking import Known, Update, first_person, parse_key, stems
from strata_daemon.facts.subjects import KINDS, resolve
from strata_daemon.facts.updates import says_change, update_of
from strata_daemon.facts.vocabulary import (
    KIND_ATTRIBUTES,
    NOUNS,
    TYPED,
    Vocabulary,
    kind_of,
    shape_of,
    shaped_values,
    value_kind,
)
from strata_daemon.store import fact_lookups as lookups
from strata_daemon.store import facts as store

UPDATE = store.UPDATE
UPDATE_CONFIDENCE = 0.7
# Words a memory in the first person says a change with, for the late statement's search.
_CHANGE_WORDS = ["new", "now", "instead", "changed", "moved", "switched", "anymore", "longer"]


def _subjects_under(conn, agent: str, attribute: str) -> list[tuple[str, str]]:
    """(key, subject as first written) of the keys under ATTRIBUTE (`` a thing's own)."""
    out = []
    for key, label in lookups.keys_under(conn, agent, attribute):
        out.append((key, label[:-len(attribute) - 1] if attribute and label.casefold().endswith("." + attribute)
                    else label))
    return out


def resolved(conn, agent: str, c: Capture) -> Capture:
    """C under the key its subject already has for its attribute, if another name of it has one;
    a thing's own key holding a value of the attribute's form counts (`latte = 2.80` is the
    latte's price), as does the attribute's key for a value of its form said as the thing's own."""
    if c.subject in ("my", "our") or not c.subject or c.rule not in ("statement", "status-line") or \
            lookups.label_of(conn, agent, c.key) is not None:
        return c  # the key itself is known: it is the subject's
    key = resolve(c.subject, _subjects_under(conn, agent, c.attribute))
    kind = kind_of(c.attribute) if c.attribute else value_kind(c.value)
    if key is None and kind:
        # The same thing's own key holding a value of the attribute's kind (`physio = May 2` for
        # `physio.date`), or the attribute's key for such a value said as the thing's own.
        others = [""] if c.attribute else list(KIND_ATTRIBUTES.get(kind, ()))
        for other in others:
            found = resolve(c.subject, _subjects_under(conn, agent, other))
            held = lookups.value_of(conn, agent, found) if found is not None and not other else None
            if found is not None and (other or (held is not None and value_kind(held) == kind)):
                key = found
                break
    if key is None or key == c.key:
        return c
    return Capture(c.rule, lookups.label_of(conn, agent, key) or c.label, key, c.value, c.confidence, c.subject,
                   c.attribute)


def canonical_key(key: str, vocab: Vocabulary) -> str | None:
    """KEY with its attribute named as the vocabulary names it (`oskar.office` -> `oskar.location`);
    a key without one read as capture reads a status line's name (`gateway port` ->
    `gateway.port`, `bank passphrase` -> `bank.password`, `the standup` -> `standup`)."""
    k = parse_key(key, key)
    if not k.attribute:
        found = key_label(*canonical("", key, "", vocab=vocab)[:2])
        return None if found is None or normalise_key(found) == key else normalise_key(found)
    subject, attribute, _ = canonical(k.subject, k.attribute, "", vocab=vocab)
    found = key_label(subject, attribute)
    return None if found is None or normalise_key(found) == key else normalise_key(found)


def resolved_key(conn, agent: str, key: str) -> str | None:
    """The key another name of KEY's subject has for its attribute (`dana.email` for `dana
    whitfield.email`), or None."""
    k = parse_key(key, key)
    if k.subject in ("my", "") or not k.attribute:
        return None
    found = resolve(k.subject, _subjects_under(conn, agent, k.attribute), loose=True)
    return None if found == key else found


@dataclass(frozen=True)
class Held:
    """An update the words do not settle: taken only when the memory that gave the fact's value
    (`texts[0]`) and the newer one (`texts[1]`) speak alike."""
    key: str
    label: str
    episode: int  # the newer memory
    at: float
    value: str | None
    texts: tuple[str, str]
    loose: bool = False
    near: bool = False  # no rule ties them, only a change said and a word shared (facts/near.py)


def _held(k: Known, u: Update) -> bool:
    return u.weak or k.subject == "my"


def _source_text(conn, agent: str, f: dict, texts: dict[int, str]) -> str:
    """The words the fact's value came from: its memory, else the fact as said (a person's own)."""
    kind, _, ref = str(f.get("source") or "").partition(":")
    if kind == "episode" and ref.isdigit():
        if int(ref) not in texts:
            texts.update((i, t) for i, (t, _) in lookups.episode_texts(conn, agent, [int(ref)]).items())
        if int(ref) in texts:
            return texts[int(ref)]
    return f"{f['label']}: {f['value']}"


def _known(f: dict) -> Known:
    k = parse_key(f["key"], f["label"])
    return Known(f["key"], k.subject, k.attribute, str(f["value"]))


def _write(conn, agent: str, f: dict, value: str | None, episode: int, at: float, *, actor: str, now: float,
           window: float, max_bytes: int) -> dict:
    if value is not None:
        try:
            value = clean_value(value, max_bytes)
        except InvalidInput:  # a value read from prose that no fact may hold: the fact ends
            value = None
    a = store.Assertion(label=f["label"], value=value, valid_from=at, source=Source("episode", str(episode)),
                        confidence=UPDATE_CONFIDENCE, rule=UPDATE)
    result = store.write(conn, agent, f["key"], a, actor=actor, now=now, window=window)
    return {**result, "value": value, "rule": UPDATE, "episode_id": episode}


class _Current:
    """The namespace's current facts, read once for a batch of memories, by the words a memory
    that speaks of their subject holds (mentions() then decides), and the first person's own."""

    def __init__(self, conn, agent: str, now: float):
        self.conn, self.agent, self.now = conn, agent, now
        self.by_word: dict[str, dict[str, dict]] = {}
        self.mine: dict[str, dict] = {}
        self._typed: dict[str, bool] = {}
        self.facts: dict[str, dict] = {}
        self._near: near.Index | None = None
        for f in store.listing(conn, agent, now=now):
            self._add(f)

    @property
    def near(self) -> near.Index:
        """The facts by the words a near update may share with them, built when a memory first
        says a change no rule ties: most batches never need it."""
        if self._near is None:
            self._near = near.Index()
            for f in self.facts.values():
                self._near.add(_known(f))
        return self._near

    def typed(self, key: str) -> bool:
        """Whether the fact's attribute or value has a form of its own (a phone number, a version)."""
        return self._typed.get(key, False)

    def _add(self, f: dict) -> None:
        k = parse_key(f["key"], f["label"])
        self.facts[f["key"]] = f
        if self._near is not None:
            self._near.add(_known(f))
        self._typed[f["key"]] = k.attribute.split(" ")[-1] in TYPED or shape_of(str(f["value"])) is not None
        if k.subject == "my":
            self.mine[f["key"]] = f
            return
        for w in stems(k.subject):
            self.by_word.setdefault(w, {})[f["key"]] = f

    def refresh(self, key: str) -> None:
        """KEY as it now stands, after a write."""
        for facts in (self.mine, self.facts, *self.by_word.values()):
            facts.pop(key, None)
        if self._near is not None:
            self._near.drop(key)
        fact, value = store.current_value(self.conn, self.agent, key, self.now)
        if fact is not None and value is not None and value["value"] is not None:
            self._add(store.shaped(fact, value, self.now))

    def spoken_of(self, text: str) -> list[dict]:
        found: dict[str, dict] = {}
        for w in stems(text):
            found.update(self.by_word.get(w, {}))
        if self.mine and first_person(text):
            found.update(self.mine)
        return list(found.values())


def updates_in(conn, agent: str, rows: Iterable[dict], results: Iterable[dict], captured: list[dict], now: float, *,
               vocab: Vocabulary, actor: str, window: float, max_bytes: int) -> tuple[list[dict], list[Held]]:
    """For each stored memory: the current facts it updates without stating them in capture's
    words, then the newer memories stored before it that update what it stated (it arrived late).
    Returns the changes made and the updates held for weighing."""
    stored = [(row, result) for row, result in zip(rows, results) if result["status"] == "created"]
    if not stored:
        return [], []
    current, out, held, texts = _Current(conn, agent, now), [], [], {r["id"]: row["content"] for row, r in stored}
    before = lookups.newest_event_at(conn, agent, below=min(result["id"] for _, result in stored))
    by_memory: dict[int, list[dict]] = {}
    for f in captured:
        by_memory.setdefault(f.get("episode_id"), []).append(f)
    for row, result in stored:
        me, at, text = result["id"], row["event_at"], row["content"]
        own = {f["key"] for f in by_memory.get(me, ())}
        spoken = current.spoken_of(text)
        # Without a change said, only another value of a typed form updates (`leader: node-4`).
        if spoken and (says_change(text) or (any(current.typed(f["key"]) for f in spoken) and shaped_values(text))):
            for f in spoken:
                if f["key"] in own or f.get("valid_from", now) >= at or f.get("source") == f"episode:{me}":
                    continue
                known = _known(f)
                u = update_of(known, text, vocab=vocab)
                if u is not None and _held(known, u):
                    held.append(Held(f["key"], f["label"], me, at, u.value,
                                     (_source_text(conn, agent, f, texts), text), u.loose))
                elif u is not None:
                    out.append(_write(conn, agent, f, u.value, me, at, actor=actor, now=now, window=window,
                                      max_bytes=max_bytes))
                    current.refresh(f["key"])
        if not any(w.get("episode_id") == me for w in out) and not any(h.episode == me for h in held):
            held += _near(conn, agent, current, me, at, text, own, texts, vocab)
        if before is None or before <= at:
            continue
        for f in by_memory.get(me, ()):
            if f.get("current") and f.get("value") is not None:
                late = _late(conn, agent, f, at, now, text, vocab=vocab, actor=actor, window=window,
                             max_bytes=max_bytes)
                if late and isinstance(late[0], Held):
                    held += late
                    continue
                out += late
                for w in late:
                    current.refresh(w["key"])
    return out, held


def _near(conn, agent: str, current: _Current, me: int, at: float, text: str, skip: set[str],
          texts: dict[int, str], vocab: Vocabulary) -> list[Held]:
    """The current facts memory ME (at AT) may update though no rule ties it to them, held
    (facts/near.py)."""
    if (sentence := near.changes(text)) is None:
        return []
    out = []
    for key in current.near.sharing(sentence, skip):
        f = current.facts[key]
        # A person's own `fact set` is changed by a person, or by a memory a rule ties to it.
        if f.get("valid_from", at) >= at or not str(f.get("source")).startswith("episode:") or \
                f.get("source") == f"episode:{me}" or near.repeats(str(f["value"]), sentence):
            continue
        known, leaving = _known(f), near.leaves(str(f["value"]), sentence)
        if near.another_thing(known, f["label"], sentence, vocab, leaving=leaving):
            continue
        out.append(Held(key, f["label"], me, at, near.value_of(known, sentence, vocab, leaving=leaving),
                        (_source_text(conn, agent, f, texts), text), near=True))
    return out


def settle(conn, agent: str, held: Iterable[Held], now: float, *, actor: str, window: float,
           max_bytes: int) -> list[dict]:
    """The held updates found alike, oldest first, on the facts still current (a chain's later
    statement follows its earlier one)."""
    out = []
    for h in sorted(held, key=lambda h: h.at):
        fact, value = store.current_value(conn, agent, h.key, now)
        if fact is None or value is None or value["value"] is None or value["source_ref"] == str(h.episode):
            continue
        out.append(_write(conn, agent, {"key": h.key, "label": fact["label"]}, h.value, h.episode, h.at,
                          actor=actor, now=now, window=window, max_bytes=max_bytes))
    return out


def _search_words(subject: str) -> list[str]:
    """The words a memory speaking of SUBJECT holds, as mentions() reads them: its identifiers, a
    person's first name, or the words that name it (not its kind: `service`, `project`)."""
    words = [w.strip(".,;:'\"()") for w in subject.split()]
    ids = [w for w in words if re.search(r"\d|[-_.#]", w)]
    if ids:
        return ids
    core = [w for w in words if w.casefold() not in KINDS and w.casefold() not in ("the", "our", "my", "of", "on",
                                                                                    "for", "at", "in")]
    if len(core) > 1 and words[0][:1].isupper() and len(words[0]) > 2:
        return words[:1]  # `Dana` of `Dana Whitfield`, as mentions() reads a name
    return (core or words)[:4]


def _late(conn, agent: str, f: dict, at: float, now: float, text: str, **kw) -> list[dict] | list[Held]:
    """A value stated at AT (in TEXT) that a newer memory already updates: that memory's change,
    at once, or the updates held for weighing."""
    fact, value = store.current_value(conn, agent, f["key"], now)
    if fact is None or value is None or value["value"] is None:
        return []
    known = _known(store.shaped(fact, value, now))
    if known.subject == "my":  # the first person's: the attribute's words, its value's, or a change said
        words = [*NOUNS.get(known.attribute.split()[-1], ()), *known.attribute.split(), *_CHANGE_WORDS,
                 *(w for w in known.value.split() if len(w) > 3)]
        every = False
    else:
        words, every = _search_words(known.subject), True
    latest = None  # the newest memory that updates it: a chain said before its start arrived
    for newer in lookups.newer_speaking_of(conn, agent, words, at, every=every):
        u = update_of(known, newer["content"], vocab=kw["vocab"])
        if u is not None:
            latest = (newer, u)
    if latest is None:
        return _near_late(conn, agent, f, fact, known, at, text, kw["vocab"])
    newer, u = latest
    if _held(known, u):
        return [Held(f["key"], fact["label"], newer["id"], newer["event_at"], u.value, (text, newer["content"]),
                     u.loose)]
    return [_write(conn, agent, {"key": f["key"], "label": fact["label"]}, u.value, newer["id"], newer["event_at"],
                   actor=kw["actor"], now=now, window=kw["window"], max_bytes=kw["max_bytes"])]


def _near_late(conn, agent: str, f: dict, fact: dict, known: Known, at: float, text: str,
               vocab: Vocabulary) -> list[Held]:
    """The newer memories that may update a value stated late though no rule ties them to it
    (facts/near.py), held: the few sharing most words with it."""
    mine = near.fact_words(known)
    found = []
    for newer in lookups.newer_speaking_of(conn, agent, sorted(mine), at, every=False):
        if (sentence := near.changes(newer["content"])) is None or near.repeats(known.value, sentence):
            continue
        leaving = near.leaves(known.value, sentence)
        if not near.another_thing(known, fact["label"], sentence, vocab, leaving=leaving):
            found.append((len(mine & near.words(sentence)), newer, sentence, leaving))
    found.sort(key=lambda n: -n[0])
    return [Held(f["key"], fact["label"], newer["id"], newer["event_at"],
                 near.value_of(known, sentence, vocab, leaving=leaving), (text, newer["content"]), near=True)
            for _, newer, sentence, leaving in found[:near.CANDIDATES]]


def linked_in(conn, agent: str, newer: int, older: int, now: float, *, remove: bool, vocab: Vocabulary,
              actor: str, window: float, max_bytes: int) -> list[dict]:
    """A person's or an agent's own `supersedes` link from memory NEWER to OLDER: the facts OLDER
    gave take the value NEWER states, or end; removing the link gives them back OLDER's value."""
    texts = lookups.episode_texts(conn, agent, [newer, older])
    if newer not in texts or older not in texts:
        return []
    text, at = texts[newer]
    kw = {"actor": actor, "now": now, "window": window, "max_bytes": max_bytes}
    if remove:
        out = []
        for f in lookups.changed_by(conn, agent, newer, now):
            if f["before_source"] != f"episode:{older}":
                continue
            a = store.Assertion(label=f["label"], value=f["before_value"], valid_from=now,
                                source=Source("episode", str(older)), confidence=UPDATE_CONFIDENCE, rule=UPDATE)
            out.append({**store.write(conn, agent, f["key"], a, actor=actor, now=now, window=window),
                        "value": f["before_value"], "rule": UPDATE, "episode_id": older})
        return out
    out = []
    for f in lookups.current_from(conn, agent, older, now):
        u = update_of(_known(f), text, vocab=vocab)
        out.append(_write(conn, agent, f, None if u is None else u.value, newer, max(at, f["valid_from"]), **kw))
    return out
