"""Questions about time, and memories that say when. Pure: no I/O.

A question that asks when something happened ("When did Ines move?", "How long ago…", "What
year…") is best answered by a memory that carries a time: "I moved to Lisbon last May",
"the deploy ran yesterday". On LoCoMo, 71% of the evidence turns of such questions say a
time, against 12% of all turns; recall lifts those memories for those questions
(`recall.when_weight`). A question that names a time ("in July 2023", "on 13 October 2023",
"last week") lifts the memories from then (`recall.date_weight`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache

MONTH_WORDS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
               "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec")  # "sept" before "sep": the longer first
_MONTH = f"(?:{MONTH_WORDS})"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")  # in date.weekday() order
_DAY = f"(?:{'|'.join(WEEKDAYS)})"
_UNIT = r"(?:minutes?|hours?|days?|weeks?|weekends?|months?|years?|decades?)"
COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "few": 3, "several": 4}
_COUNT = f"(?:\\d+|{'|'.join(sorted(COUNTS, key=len, reverse=True))})"  # longest first: "a few" before "a"

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


# Every phrase _TIME matches holds a digit or one of these (as a part of a word: "day" is in
# "yesterday" and "Monday"): a cheap test first, since the full pattern costs ~50 us a text and
# recall asks it of every candidate of a "when" question.
_CUES = ("day", "tonight", "tomorrow", "morning", "afternoon", "evening", "recent", "night", "minute", "hour",
         "week", "month", "year", "decade", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
         "nov", "dec", "summer", "winter", "spring", "fall", "autumn", "since", "kid", "child", "teen", "young",
         "noon", "midnight")
_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=32768)
def says_when(text: str) -> bool:
    low = text.lower()
    if not _DIGIT.search(low) and not any(cue in low for cue in _CUES):
        return False
    return bool(_TIME.search(text))


# -- a time the question names ---------------------------------------------------------------

MONTHS = {m: i for i, ms in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), 1) for m in ms}
_M = f"({MONTH_WORDS})"
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {_M},?\s*((?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_FIRST = re.compile(rf"\b{_M} (\d{{1,2}})(?:st|nd|rd|th)?,?\s*((?:19|20)\d\d)\b", re.IGNORECASE)
_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
# "between August 11 and August 15 2023", "from 3 to 9 May 2023": the year said once, at the end.
_DAY_MONTH = rf"(?:(\d{{1,2}})(?:st|nd|rd|th)?(?: of)? {_M}|{_M} (\d{{1,2}})(?:st|nd|rd|th)?)"
_RANGE = re.compile(rf"\b(?:between|from) {_DAY_MONTH}(?:,?\s*((?:19|20)\d\d))? (?:and|to|until) {_DAY_MONTH},?\s*"
                    rf"((?:19|20)\d\d)\b", re.IGNORECASE)
# What comes just before a date and moves the window from it: "the week before", "two weeks
# after", "the Sunday before", "last weekend before".
_OFFSET = re.compile(rf"\b(?:(?:the|last|({_COUNT})) )?(days?|weeks?|weekends?|months?|{_DAY}) (before|after),?"
                     r"(?: (?:on|of|the))?\s*$", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_M},? ((?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_ALONE = re.compile(rf"\b(?:(?:in|during|of|since|early|late|mid-?) {_M}\b"
                          rf"|(?:on|by) {_M} \d{{1,2}}(?:st|nd|rd|th)?\b)", re.IGNORECASE)
_SEASON = re.compile(r"\b(?:(last|this) )?(summer|winter|spring|fall|autumn)(?:,? (?:of )?((?:19|20)\d\d))?\b",
                     re.IGNORECASE)
_SEASON_MONTHS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # its first month; three long
_YEAR = re.compile(r"\b(?:in|during|of|since) ((?:19|20)\d\d)\b", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(?:(yesterday)|last (week|month|year)|(\d+|a|one|two|three) (day|week|month|year)s? ago)\b",
                       re.IGNORECASE)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_DAY_S = 86400.0


def _utc(year: int, month: int, day: int = 1) -> float:
    return datetime(year, month, day, tzinfo=timezone.utc).timestamp()


def _month_span(year: int, month: int) -> tuple[float, float]:
    return _utc(year, month), _utc(year + month // 12, month % 12 + 1)


@dataclass(frozen=True)
class Window:
    """The time a question names: from `start` to `end` (UTC), or any year's `month`."""
    start: float | None = None
    end: float | None = None
    month: int | None = None

    def holds(self, t: float) -> bool:
        if self.month is not None:
            return datetime.fromtimestamp(t, timezone.utc).month == self.month
        return self.start <= t < self.end

    def overlaps(self, start: float, end: float) -> bool:
        """Whether a span a memory states meets this window."""
        if self.month is not None:
            return any(datetime.fromtimestamp(t, timezone.utc).month == self.month
                       for t in (start, max(start, end - 1)))
        return start < self.end and end > self.start

    def spans(self, first: float, last: float) -> list[tuple[float, float]]:
        """The window as UTC spans between two times: itself, or its month in every year."""
        if self.month is None:
            return [(self.start, self.end)]
        year = lambda t: datetime.fromtimestamp(t, timezone.utc).year  # noqa: E731
        return [_month_span(y, self.month) for y in range(year(first), year(last) + 1)]

    def __str__(self) -> str:
        if self.month is not None:
            return f"any {datetime(2000, self.month, 1).strftime('%B')}"
        return " .. ".join(datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M").removesuffix(" 00:00")
                           for t in (self.start, self.end))


def _month_day(day_first: str | None, month_first: str | None, month_then: str | None,
               day_then: str | None) -> tuple[int, int]:
    """(month, day) of a _DAY_MONTH match's four groups."""
    if day_first:
        return MONTHS[month_first.lower()], int(day_first)
    return MONTHS[month_then.lower()], int(day_then)


_OFFSET_DAYS = {"day": 1, "week": 7, "weekend": 7, "month": 30}


def _from_day(day: float, offset: re.Match | None) -> Window:
    """The day named, a day either side; or, after "the week before" and the like, the span
    from the day counted back (or on) to the day itself, a unit wide beyond the count, since
    a memory of that span may have been said on the day ("last week I ...")."""
    if offset is None:
        return Window(day - _DAY_S, day + 2 * _DAY_S)
    count, unit, way = offset[1], offset[2].lower().rstrip("s"), offset[3].lower()
    reach = (COUNTS.get(count.lower()) or int(count) if count else 1) * _OFFSET_DAYS.get(unit, 7)  # a weekday: 7
    if way == "before":
        return Window(day - (reach + 1) * _DAY_S, day + 2 * _DAY_S)
    return Window(day - _DAY_S, day + (reach + 2) * _DAY_S)


def _season(season: str, year: int | None, which: str | None, now: float) -> Window:
    """Three months from the season's first (northern seasons; winter runs into the next year).
    "last summer" is the latest whole one before now; "this summer", this year's."""
    first = _SEASON_MONTHS[season]
    if year is None:
        today = datetime.fromtimestamp(now, timezone.utc)
        year = today.year
        if which and which.lower() == "last":
            ended = _utc(year + (first + 2) // 12, (first + 2) % 12 + 1)
            if ended > now:
                year -= 1
    start = _utc(year, first)
    return Window(start, _utc(year + (first + 2) // 12, (first + 2) % 12 + 1))


# Characters read at each end of a long text for the time it names: a question's worth and more;
# nine searches of a 64 KiB prompt took 0.3 s of every hook call.
_ENDS = 2000


def named_time(query: str, now: float) -> Window | None:
    """The time the question names, or None when it names none: a range ("between August 11
    and August 15 2023"), a day ("on 13 October 2023", a day either side) or a span counted
    from one ("the week before 3 August 2023", "two weeks after ..."), a month ("in July
    2023"; "in June" of any year), a season ("summer 2021", "last winter"), a year ("in 2022"),
    or a time back from now ("yesterday", "last week", "3 months ago", a day or a week either
    side). The first form found in that order counts. A long text (a log pasted with a
    question) is read at its two ends, where the question sits."""
    if len(query) > 2 * _ENDS:
        query = query[:_ENDS] + "\n" + query[-_ENDS:]
    m = _RANGE.search(query)
    if m:
        try:
            last = _utc(int(m[10]), *_month_day(*m.groups()[5:9]))
            first = _utc(int(m[5] or m[10]), *_month_day(*m.groups()[:4]))
        except ValueError:
            first = last = None
        if first is not None and first <= last:
            return Window(first - _DAY_S, last + 2 * _DAY_S)
    for pattern, day_of in ((_DAY_FIRST, lambda m: (int(m[3]), MONTHS[m[2].lower()], int(m[1]))),
                            (_MONTH_FIRST, lambda m: (int(m[3]), MONTHS[m[1].lower()], int(m[2]))),
                            (_ISO, lambda m: (int(m[1]), int(m[2]), int(m[3])))):
        m = pattern.search(query)
        if m:
            try:
                day = _utc(*day_of(m))
            except ValueError:  # 31 February: no such day
                return None
            return _from_day(day, _OFFSET.search(query[:m.start()]))
    m = _MONTH_YEAR.search(query)
    if m:
        return Window(*_month_span(int(m[2]), MONTHS[m[1].lower()]))
    m = _MONTH_ALONE.search(query)
    if m:
        return Window(month=MONTHS[(m[1] or m[2]).lower()])
    m = _SEASON.search(query)
    if m and (m[1] or m[3]):
        return _season(m[2].lower(), int(m[3]) if m[3] else None, m[1], now)
    m = _YEAR.search(query)
    if m:
        return Window(_utc(int(m[1]), 1), _utc(int(m[1]) + 1, 1))
    m = _RELATIVE.search(query)
    if m:
        if m[1]:
            back, width = 1, 1
        elif m[2]:
            back = width = _UNIT_DAYS[m[2].lower()]
        else:
            width = _UNIT_DAYS[m[4].lower()]
            back = (COUNTS.get(m[3].lower()) or int(m[3])) * width
        centre = now - back * _DAY_S
        # inclusive of its far end before: a half-open window one second wider says the same
        return Window(centre - width * _DAY_S, centre + width * _DAY_S + 1)
    return None
