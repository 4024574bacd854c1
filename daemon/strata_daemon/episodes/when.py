"""Questions about time, and memories that say when. Pure: no I/O.

A question that asks when something happened ("When did Ines move?", "How long ago…", "What
year…") is best answered by a memory that carries a time: "I moved to Lisbon last May",
"the deploy ran yesterday". On LoCoMo, 71% of the evidence turns of such questions say a
time, against 12% of all turns; recall lifts those memories for those questions
(`recall.when_weight`).
"""

from __future__ import annotations

import re

_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
          r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)")
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_UNIT = r"(?:minutes?|hours?|days?|weeks?|weekends?|months?|years?|decades?)"
_COUNT = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|few|several)"

# A time a memory states: relative to when it was said, or absolute.
_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening)|the other day|recently|"
    rf"(?:last|this|next|past) (?:night|{_UNIT}|{_DAY}|{_MONTH}|summer|winter|spring|fall|autumn)|"
    rf"{_COUNT} {_UNIT} (?:ago|back|before|later|earlier)|"
    rf"(?:on|last|this|next) {_DAY}|since (?:{_MONTH}|\d{{4}}|last|i was)|"
    rf"(?:in|on|since|until|by|during|from) (?:early |late |mid-?)?{_MONTH}|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b|"
    rf"\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}|(?:19|20)\d\d\b|\d{{4}}-\d\d-\d\d|"
    r"(?:when i was|as a) (?:a )?(?:kid|child|teen|teenager|young)|years old|"
    r"\d{1,2}(?::\d\d)? ?(?:am|pm)\b|(?:at|around|by) (?:noon|midnight|\d{1,2}(?::\d\d)?))",
    re.IGNORECASE)

# A question asking for a time or a duration.
_ASKS = re.compile(
    r"^\s*(?:when\b|since when\b|how long\b|how many (?:days|weeks|months|years|times)\b|"
    r"what (?:year|month|day|date|time|week|weekend|season)\b|(?:in )?which (?:year|month|day|week)\b|"
    r"how (?:old|recently|often)\b)|\b(?:when did|when was|when is|when will|what date|how long ago)\b",
    re.IGNORECASE)


def asks_when(query: str) -> bool:
    return bool(_ASKS.search(query))


def says_when(text: str) -> bool:
    return bool(_TIME.search(text))
