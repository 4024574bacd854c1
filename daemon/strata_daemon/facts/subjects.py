"""Which key a statement's subject already has. Pure: no I/O.

People name one thing in several ways: `Dana Whitfield` and then `Dana`, `the billing-api
service` and `billing-api`, `the Atlas Migration project` and `Atlas Migration`, `our standup`
and `standup`. A statement about an attribute of a subject lands on the key that subject
already has for that attribute, when one of those names is the other's:

- one is the other with a surname added (the extra words are capitalised names);
- one is the other with a word for its kind added (`service`, `project`, `ticket`, ...);
- one is the other's head noun, the rest plain lowercase words (`warehouse`, `the analytics
  warehouse`): resolve takes it only when one key has such a head;
- both hold the same identifier (`billing-api`, `INC-4471`, `ci-runner-07`), and neither holds
  an identifier the other lacks.

Two names that share only a word (`analytics warehouse`, `billing warehouse`) stay apart, and
a head noun said where two keys have it (`warehouse` beside both) names neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Words for the kind of thing a name names: `the billing-api service` is `billing-api`.
KINDS = frozenset("""
service services server servers project projects team teams app apps application cluster ticket tickets issue repo
repository site website account company ltd inc co llc gmbh plc corp host box machine instance instances job
pipeline bot worker daemon api db database system tool platform product program programme initiative workstream
feature flag environment env store shop office studio clinic practice
""".split())
_ARTICLES = frozenset("the our my a an".split())
_IDENTIFIER = re.compile(r"[\w]*\d[\w]*|[\w]+(?:[-_.#/][\w]+)+|#\w+")
_WORD = re.compile(r"[^\s]+")


def _words(label: str) -> list[str]:
    return [w.strip(".,;:'\"()") for w in _WORD.findall(label.replace("’", "'")) if w.strip(".,;:'\"()")]


def _identifiers(words: list[str]) -> set[str]:
    """The identifiers among WORDS, case-folded, a leading `#` dropped (`#55213` is `55213`)."""
    return {w.casefold().lstrip("#") for w in words if _IDENTIFIER.fullmatch(w)}


def _core(words: list[str]) -> list[str]:
    """The words that name, case-folded, a plural's `s` dropped (`groceries`, `grocery`). An
    article that ends a name, or a capital one inside it, is a name's letter (`Host A`, `Host A
    bridge`)."""
    out = []
    for w in (w.casefold() for i, w in enumerate(words)
              if w.casefold() not in _ARTICLES or i == len(words) - 1 or (i and w[:1].isupper())):
        w = w[:-3] + "y" if w.endswith("ies") and len(w) > 4 else w[:-1] if w.endswith("s") and len(w) > 3 and \
            not w.endswith("ss") else w
        out.append(w)
    return out


def same_subject(a: str, b: str, *, loose: bool = False) -> bool:
    """Whether two subjects, as written, name one thing (see the module's rules). LOOSE: one may
    be a normalised key's, its capitals lost, so a surname is any word."""
    wa, wb = _words(a), _words(b)
    ca, cb = _core(wa), _core(wb)
    if not ca or not cb:
        return False
    if ca == cb or "".join(ca).replace("-", "") == "".join(cb).replace("-", ""):
        return True  # `Wi-Fi` is `wifi`
    ia, ib = _identifiers(wa), _identifiers(wb)
    if ia or ib:
        return bool(ia) and ia == ib
    short, long_, long_words = (ca, cb, [w for w in wb if w.casefold() not in _ARTICLES]) if len(ca) <= len(cb) \
        else (cb, ca, [w for w in wa if w.casefold() not in _ARTICLES])
    if [w for w in long_ if w not in KINDS] == [w for w in short if w not in KINDS] and any(
            w not in KINDS for w in short):
        return True  # `Atlas Migration project` is `Atlas Migration`
    # `warehouse` is `the analytics warehouse` when it has no key of its own: a thing named by its
    # head noun, its modifiers plain lowercase words (`Host A bridge`, `Kite room` name others).
    if not loose and len(short) == 1 and short[0] not in KINDS and long_[-1] == short[0] and all(
            w.islower() and len(w) > 1 and not _IDENTIFIER.fullmatch(w) for w in long_words[:-1]):
        return True
    # `Dana` is `Dana Whitfield`; a letter or a number added names another of its kind (`Host B`).
    extra = long_[len(short):]
    return long_[:len(short)] == short and not any(len(w) == 1 or w.isdigit() for w in extra) and (
        loose or all(w[:1].isupper() for w in long_words))


def resolve(subject: str, candidates: Iterable[tuple[str, str]], *, loose: bool = False) -> str | None:
    """Of (key, subject as first written) candidates under the same attribute, the key whose
    subject is SUBJECT's: the one written the same way, else the only one that names the same
    thing (`Dana` among `Dana Whitfield` and `Dana Okafor` names neither)."""
    found = set()
    for key, other in candidates:
        if other.casefold() == subject.casefold():
            return key
        if same_subject(subject, other, loose=loose):
            found.add(key)
    return found.pop() if len(found) == 1 else None
