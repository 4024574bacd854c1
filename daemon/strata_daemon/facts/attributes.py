"""The attributes statements speak of, and their one name each: `email address`, `e-mail` ->
`email`; `phone number`, `mobile` -> `phone`. Pure: no I/O."""

from __future__ import annotations

import re

# Attributes a pronoun or an "of" sentence may name; possessive and first-person forms take
# any attribute of up to four words.
KNOWN = ("email address|e-mail address|email|e-mail|mail address|phone number|mobile number|cell number|"
         "telephone number|phone|mobile|cell|number|home address|postal address|street address|address|city|"
         "location|owner|maintainer|manager|boss|lead|employer|company|job|title|role|team|version|price|cost|"
         "fee|rate|salary|budget|status|name|surname|birthday|diet|website|url|domain|handle|username|timezone|"
         "time zone|deadline|due date|plan|tier|ip address|ip|port|host|contact|doctor|dentist|partner")
CANONICAL = {
    "email address": "email", "e-mail": "email", "e-mail address": "email", "mail address": "email",
    "phone number": "phone", "mobile number": "phone", "cell number": "phone", "telephone number": "phone",
    "mobile": "phone", "cell": "phone", "number": "phone", "telephone": "phone", "cell phone": "phone",
    "home address": "address", "postal address": "address", "street address": "address",
    "ip address": "ip", "time zone": "timezone", "due date": "deadline",
}
# Words in a question that ask for an attribute without naming it: "How can I call Dana?"
# asks for `phone`, "Who owns the bridge?" for `owner`.
CUES = {
    "phone": ("call", "phone", "number", "ring"),
    "email": ("email", "e-mail", "mail", "write"),
    "owner": ("own", "owns", "owner", "owned", "responsible"),
    "location": ("live", "lives", "where", "city", "located", "address", "reside", "based"),
    "home": ("live", "lives", "where", "city"),
    "address": ("address", "live", "lives"),
    "price": ("cost", "costs", "price", "much", "pay"),
    "employer": ("work", "works", "employer", "job", "employed", "company"),
    "diet": ("eat", "eats", "eating", "diet", "food"),
    "status": ("status", "healthy", "up", "down", "state", "running"),
    "version": ("version", "release"),
}
_CUED: dict[str, set[str]] = {}
for _attr, _words in CUES.items():
    for _w in _words:
        _CUED.setdefault(_w, set()).add(_attr)


def asked_attributes(words) -> set[str]:
    """The attributes a question's (case-folded) words ask for, by CUES."""
    return {a for w in words for a in _CUED.get(w, ())}


def canonical(attribute: str) -> str:
    a = " ".join(attribute.casefold().split())
    for lead in ("new ", "current "):
        if a.startswith(lead):
            a = a[len(lead):]
    return CANONICAL.get(a, a)


_ASKED_KEY = (re.compile(r"(?P<subj>.+?)['’]s\s+(?P<attr>[^'’]+)"),
              re.compile(r"(?i)the\s+(?P<attr>.+?)\s+of\s+(?:the\s+)?(?P<subj>.+)"))


def key_of(phrase: str) -> str | None:
    """The key a statement about PHRASE is captured under, when PHRASE is worded as one
    (`Dana Whitfield's email address` -> `Dana Whitfield.email`, `my phone number` -> `my phone`,
    `the price of the pro plan` -> `pro plan.price`); else None."""
    text = " ".join(phrase.split())
    for pattern in _ASKED_KEY:
        m = pattern.fullmatch(text)
        if m:
            subject = m.group("subj")
            for lead in ("the ", "The "):
                subject = subject.removeprefix(lead)
            return f"{subject}.{canonical(m.group('attr'))}"
    first = re.fullmatch(r"(?i)(my|our)\s+(.+)", text)
    if first:
        return f"{first.group(1).casefold()} {canonical(first.group(2))}"
    return None
