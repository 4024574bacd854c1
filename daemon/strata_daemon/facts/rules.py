"""Capture rules: deterministic patterns that turn an observation into fact updates. Pure.

A rule is a regular expression tried on each line of an observation of one of its kinds. It
names the key with a `key` group (or a fixed `key` in the rule) and the value with a `value`
group. Built in is `status-line`, for lines such as `Bridge: DOWN` or `Backup job: failed`;
the config can change it, switch it off (`enabled = false`) or add rules beside it. A rule with
`judge = true` (the built-in one) keeps only lines that state a state (facts/judge.py), so
`relay-2: restarted nginx` stays an ordinary memory. Attribute statements in sentences
(facts/statements.py) are captured beside the rules, under the rule name `statement`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strata_daemon.errors import ConfigError, InvalidInput
from strata_daemon.facts.canonical import canonical, label as key_label
from strata_daemon.facts.judge import QUALIFIERS, STATUS_WORDS, judge
from strata_daemon.facts.keys import label_of, normalise_key
from strata_daemon.facts.statements import claims
from strata_daemon.facts.vocabulary import DEFAULT, Vocabulary

BUILTIN: dict[str, dict[str, Any]] = {
    "status-line": {
        # One to five words, a colon and a space, then a short value on the same line.
        # "10:30" and "https://..." do not match: the colon must be followed by a space.
        # A leading timestamp (`2024-03-02 09:14`, `[10:22]`) says when, not what.
        "pattern": r"^\s*(?:\[?\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?)?\]?\s+|\[\d\d?:\d\d(?::\d\d)?\]\s*|"
                   r"\d\d?:\d\d(?::\d\d)?\s+)?(?P<key>[^\W\d_][\w./'’]*(?:,?[ _-][\w./#'’()]+){0,4})\s*:[ \t]+(?P<value>\S.{0,119}?)\s*$",
        "kinds": ["observation", "event", "fact"],
        "confidence": 0.9,
        "judge": True,
        # Line labels in notes and mail that introduce text rather than state a value.
        "skip_keys": ["note", "notes", "todo", "fixme", "re", "fwd", "fw", "ps", "nb", "q", "a", "question",
                      "answer", "reminder", "tip", "idea", "lesson", "example", "e.g", "i.e", "see", "also",
                      "update", "summary", "quote", "step"],
    },
}
_FIELDS = {"pattern", "key", "kinds", "confidence", "skip_keys", "enabled", "max_lines", "judge"}
MAX_LINES = 20
STATEMENT = "statement"
STATEMENT_CONFIDENCE = 0.8


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern
    key: str | None
    kinds: frozenset[str]
    confidence: float
    skip_keys: frozenset[str]
    max_lines: int
    judge: bool = False


@dataclass(frozen=True)
class Capture:
    rule: str
    label: str
    key: str
    value: str
    confidence: float
    subject: str = ""
    attribute: str = ""


def _bad(name: str, what: str) -> ConfigError:
    return ConfigError(f"capture rule {name!r} in facts.rules: {what}",
                       hint="fix or remove the rule in strata.toml; `strata config show` lists the settings")


def compile_rules(user: Mapping[str, Any] | None, kinds: tuple[str, ...]) -> tuple[Rule, ...]:
    """The built-in rules overlaid by the configured ones (field by field, by name)."""
    # A built-in rule keeps to the kinds this store has (store.kinds may drop some).
    merged: dict[str, dict] = {name: {**spec, "kinds": [k for k in spec["kinds"] if k in kinds]}
                               for name, spec in BUILTIN.items()}
    for name, spec in (user or {}).items():
        if not isinstance(spec, Mapping):
            raise _bad(name, "must be a table with at least `pattern`")
        unknown = set(spec) - _FIELDS
        if unknown:
            raise _bad(name, f"unknown field {sorted(unknown)[0]!r} (known: {', '.join(sorted(_FIELDS))})")
        merged.setdefault(name, {"kinds": list(kinds), "confidence": 0.9, "skip_keys": [], "judge": False}).update(spec)
    return tuple(_compile(name, spec, kinds) for name, spec in merged.items() if spec.get("enabled", True))


def _compile(name: str, spec: dict, kinds: tuple[str, ...]) -> Rule:
    for flag in ("enabled", "judge"):
        if not isinstance(spec.get(flag, True), bool):
            raise _bad(name, f"{flag} must be true or false")
    if not isinstance(spec.get("pattern"), str) or not spec["pattern"]:
        raise _bad(name, "needs a `pattern` (a regular expression)")
    try:
        pattern = re.compile(spec["pattern"])
    except re.error as e:
        raise _bad(name, f"the pattern is not a valid regular expression: {e}") from None
    groups = set(pattern.groupindex)
    fixed = spec.get("key")
    if "value" not in groups:
        raise _bad(name, "the pattern needs a named group `value`, e.g. (?P<value>.+)")
    if ("key" in groups) == (fixed is not None):
        raise _bad(name, "name the key either with a group `key` in the pattern or with a fixed `key`, not both")
    if fixed is not None:
        try:
            label_of(fixed)
        except InvalidInput as e:
            raise _bad(name, f"key: {e.message}") from None
    rule_kinds = spec.get("kinds", list(kinds))
    if not isinstance(rule_kinds, list) or not all(isinstance(k, str) for k in rule_kinds):
        raise _bad(name, "kinds must be a list of episode kinds")
    unknown = [k for k in rule_kinds if k not in kinds]
    if unknown:
        raise _bad(name, f"unknown kind {unknown[0]!r} (store.kinds: {', '.join(kinds)})")
    confidence = spec.get("confidence", 0.9)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        raise _bad(name, "confidence must be a number between 0 and 1")
    skip = spec.get("skip_keys", [])
    if not isinstance(skip, list) or not all(isinstance(k, str) for k in skip):
        raise _bad(name, "skip_keys must be a list of keys")
    max_lines = spec.get("max_lines", MAX_LINES)
    if isinstance(max_lines, bool) or not isinstance(max_lines, int) or max_lines < 1:
        raise _bad(name, "max_lines must be a whole number of at least 1")
    return Rule(name, pattern, fixed, frozenset(rule_kinds), float(confidence),
                frozenset(normalise_key(k) for k in skip), max_lines, bool(spec.get("judge", False)))


# `Host B: bridge back UP` is the state of host B's bridge: a thing of the key, then its state.
_THING = re.compile(r"[a-z][a-z-]+")
_BETWEEN = frozenset("is are back now still again".split())
_AFTER = frozenset("again now still".split())
# Words that open a value without naming a thing of the key (`Kids: both asleep`, `Garage: it is open`).
_NOT_THINGS = frozenset("""both all each every everyone everything mostly now still just finally already fully partly
partially almost nearly not very totally it he she they we i you this that there""".split())


def _thing_state(raw_key: str, value: str) -> tuple[str, str] | None:
    """(KEY's thing, its state) when VALUE names a thing of the key and a status word for it."""
    words = value.split()
    while len(words) > 1 and words[-1].casefold() in _AFTER:
        words.pop()
    *words, state = words or [""]
    while words and words[-1].casefold() in _BETWEEN:
        words.pop()
    if not 1 <= len(words) <= 2 or state.casefold() not in STATUS_WORDS or state.casefold() in _BETWEEN or not all(
            _THING.fullmatch(w) and w not in STATUS_WORDS and w not in QUALIFIERS and w not in _NOT_THINGS
            and not w.endswith(("ed", "ing")) for w in words):
        return None
    return f"{raw_key} {' '.join(words)}", state


def _rule_capture(rule: Rule, raw_key: str, value: str, vocab: Vocabulary) -> Capture | None:
    """A rule's key and value as a fact keeps them (facts/canonical.py): `gateway port: 8443` is
    `gateway.port`; a fixed key a person wrote in a rule stays as written."""
    if rule.key is not None:
        return Capture(rule.name, label_of(raw_key), normalise_key(raw_key), value, rule.confidence, raw_key, "")
    raw_key, value = _thing_state(raw_key, value) or (raw_key, value)
    subject, attribute, value = canonical("", raw_key, value, vocab=vocab)
    label = key_label(subject, attribute)
    if label is None or not value:
        return None
    return Capture(rule.name, label, normalise_key(label), value, rule.confidence, subject, attribute)


def capture(rules: tuple[Rule, ...], content: str, kind: str, *, source: str | None = None,
            sentences: bool = False, vocab: Vocabulary = DEFAULT) -> list[Capture]:
    """Fact updates in an observation: at most one per key (its last line wins), in line order,
    then (with `sentences`) the attribute statements its sentences make. Texts longer than a
    rule's `max_lines` are prose, not status reports, and are left alone by that rule."""
    lines = content.splitlines()
    found: dict[str, Capture] = {}

    def add(c: Capture) -> None:
        found.pop(c.key, None)
        found[c.key] = c

    for rule in rules:
        if kind not in rule.kinds or len(lines) > rule.max_lines:
            continue
        for line in lines:
            m = rule.pattern.search(line)
            if m is None:
                continue
            value = (m.group("value") or "").strip()
            if rule.name == "status-line":
                value = _unstopped(value)
            raw_key = rule.key if rule.key is not None else m.group("key")
            try:
                label = label_of(raw_key)
                key = normalise_key(label)
            except InvalidInput:
                continue
            stamped = "key" in m.re.groupindex and m.start("key") > len(line) - len(line.lstrip())
            if not value or key in rule.skip_keys or (rule.judge and judge(key, value, label, stamped=stamped)
                                                      is not None):
                continue
            try:
                c = _rule_capture(rule, label, value, vocab)
            except InvalidInput:
                continue
            if c is not None:
                add(c)
    if sentences and len(lines) <= MAX_LINES:
        for claim in claims(content, source, vocab=vocab):
            try:
                add(Capture(STATEMENT, claim.label, normalise_key(claim.label), claim.value, STATEMENT_CONFIDENCE,
                            claim.subject, claim.attribute))
            except InvalidInput:
                continue
    return list(found.values())


def _unstopped(value: str) -> str:
    """A status line's value without the full stop that ends its sentence (`Gold SLA: 4 hours.`
    holds `4 hours`); an abbreviation's or an initial's stop stays (`U.S.`, `J.`), as does `...`."""
    last = value.split()[-1] if value.split() else ""
    if value.endswith(".") and not value.endswith("..") and last.count(".") == 1 and len(last) > 2:
        return value[:-1].rstrip()
    return value
