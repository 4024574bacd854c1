"""The times a memory states, resolved against when it was said. Pure: no I/O.

"I went to the support group yesterday", said on 8 May 2023, speaks of 7 May 2023. A question
about 7 May, or one asking when, needs that date, and the words "yesterday" do not carry it.
When a memory is stored, each time phrase in it is resolved to a span of UTC days from the
memory's event time and kept in `stated_times` beside the text (which is never rewritten):
where the phrase sits in the text (offsets, not words, so a purge of the memory leaves nothing)
and the span it means. Recall lifts a memory whose stated span falls in the time a question
names, and a hit shows each phrase with its date.

Only phrases that pin a span are resolved: "yesterday", "last Friday", "3 weeks ago", "last
May", "on 13 October 2023", "in 2022". "Recently" or "when I was a kid" are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Iterable, Iterator

from strata_daemon.episodes.when import COUNTS as _COUNTS, MONTH_WORDS as _M, MONTHS, WEEKDAYS as _WEEKDAYS

_VAGUE = {"a couple of", "a few", "few", "several"}
_COUNT = "|".join(sorted(_COUNTS, key=len, reverse=True))

# One alternation, longest forms first, so "13 October 2023" is one phrase and not "October 2023".
_PHRASE = re.compile(
    rf"\b(?:(?P<dmy>(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m1>{_M}),? (?P<y1>(?:19|20)\d\d))"
    rf"|(?P<mdy>(?P<m2>{_M}) (?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<y2>(?:19|20)\d\d))"
    r"|(?P<iso>(?P<y3>(?:19|20)\d\d)-(?P<m3>\d\d)-(?P<d3>\d\d))"
    rf"|(?P<my>(?P<m4>{_M}),? (?P<y4>(?:19|20)\d\d))"
    r"|(?:in|during|since|of) (?P<year>(?:19|20)\d\d)(?!-\d)"
    rf"|(?P<md>(?P<m5>{_M}) (?P<d5>\d{{1,2}})(?:st|nd|rd|th)?|(?P<d6>\d{{1,2}})(?:st|nd|rd|th)? of (?P<m6>{_M}))"
    r"|(?P<yesterday>yesterday|last night)|(?P<today>today|tonight|this (?:morning|afternoon|evening))"
    r"|(?P<tomorrow>tomorrow)"
    rf"|(?P<which>last|this|next) (?P<what>week(?:end)?|month|year|{'|'.join(_WEEKDAYS)}|{_M})"
    rf"|(?P<count>\d+|{_COUNT}) (?P<unit>days?|weeks?|months?|years?) (?:ago|back|earlier)"
    r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class Stated:
    """A time phrase of a memory: where it sits in the text and the UTC span it means."""
    at: int
    length: int
    start: float
    end: float


def _ts(d: date) -> float:
    return datetime(d.year, d.month, d.day, tzinfo=timezone.utc).timestamp()


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year + month // 12, month % 12 + 1, 1)


def _shift_months(day: date, back: int) -> tuple[date, date]:
    index = day.year * 12 + day.month - 1 - back
    return _month(index // 12, index % 12 + 1)


def _latest(day: date, month: int, dom: int) -> date | None:
    """The last `month`/`dom` on or before `day` (a date said without its year)."""
    for year in (day.year, day.year - 1):
        try:
            d = date(year, month, dom)
        except ValueError:
            continue
        if d <= day:
            return d
    return None


def _span(m: re.Match, day: date) -> tuple[date, date] | None:
    g = m.groupdict()
    try:
        if g["dmy"] or g["mdy"] or g["iso"]:
            y, mo, d = ((g["y1"], MONTHS[g["m1"].lower()], g["d1"]) if g["dmy"] else
                        (g["y2"], MONTHS[g["m2"].lower()], g["d2"]) if g["mdy"] else (g["y3"], g["m3"], g["d3"]))
            start = date(int(y), int(mo), int(d))
            return start, start + timedelta(days=1)
        if g["my"]:
            return _month(int(g["y4"]), MONTHS[g["m4"].lower()])
    except ValueError:  # 31 February, month 13: not a date
        return None
    if g["year"]:
        return date(int(g["year"]), 1, 1), date(int(g["year"]) + 1, 1, 1)
    if g["md"]:
        month, dom = (g["m5"], g["d5"]) if g["m5"] else (g["m6"], g["d6"])
        if g["m5"] and not month[0].isupper():  # "we may 2 ..." , "march 5 miles": not dates
            return None
        start = _latest(day, MONTHS[month.lower()], int(dom))
        return (start, start + timedelta(days=1)) if start else None
    if g["yesterday"]:
        return day - timedelta(days=1), day
    if g["today"]:
        return day, day + timedelta(days=1)
    if g["tomorrow"]:
        return day + timedelta(days=1), day + timedelta(days=2)
    if g["which"]:
        step = {"last": -1, "this": 0, "next": 1}[g["which"].lower()]
        what = g["what"].lower()
        monday = day - timedelta(days=day.weekday())
        if what == "week":
            start = monday + timedelta(weeks=step)
            return start, start + timedelta(days=7)
        if what == "weekend":
            start = monday + timedelta(days=5, weeks=step)
            return start, start + timedelta(days=2)
        if what == "month":
            return _shift_months(day, -step)
        if what == "year":
            return date(day.year + step, 1, 1), date(day.year + step + 1, 1, 1)
        if what in _WEEKDAYS:
            if step != -1:  # "this Friday", "next Friday": ahead, and which one is a guess
                return None
            back = (day.weekday() - _WEEKDAYS.index(what)) % 7 or 7
            start = day - timedelta(days=back)
            return start, start + timedelta(days=1)
        month = MONTHS[what]
        if step != -1:
            return None
        return _month(day.year - (month >= day.month), month)
    if g["count"]:
        word = g["count"].lower()
        n = _COUNTS.get(word) or int(word)
        slack = 1 if word in _VAGUE else 0
        unit = g["unit"].lower().rstrip("s")
        if unit == "day":
            return day - timedelta(days=n + slack), day - timedelta(days=n - 1 - slack)
        if unit == "week":
            return day - timedelta(days=7 * n + 3 + 7 * slack), day - timedelta(days=7 * n - 4 - 7 * slack)
        if unit == "month":
            return _shift_months(day, n + slack)[0], _shift_months(day, n - slack)[1]
        return date(day.year - n - slack, 1, 1), date(day.year - n + slack + 1, 1, 1)
    return None


def stated_times(text: str, said_at: float) -> list[Stated]:
    """Each time phrase of `text` that pins a span, resolved from `said_at` (UTC)."""
    if not text:
        return []
    day = datetime.fromtimestamp(said_at, timezone.utc).date()
    found = []
    for m in _PHRASE.finditer(text):
        span = _span(m, day)
        if span is not None:
            found.append(Stated(m.start(), m.end() - m.start(), _ts(span[0]), _ts(span[1])))
    return found


def stated_rows(episodes: Iterable[tuple[int, str, float]]) -> Iterator[tuple]:
    """Rows of `stated_times` for (id, content, event_at) of memories being stored."""
    for eid, content, said_at in episodes:
        for s in stated_times(content, said_at):
            yield eid, s.at, s.length, s.start, s.end


def label(start: float, end: float) -> str:
    """A span as people write it: `2023-05-07`, `2023-05`, `2023`, or `2023-05-01..2023-05-07`."""
    a = datetime.fromtimestamp(start, timezone.utc).date()
    b = datetime.fromtimestamp(end, timezone.utc).date() - timedelta(days=1)
    if a == b:
        return a.isoformat()
    if a.day == 1 and (b + timedelta(days=1)).day == 1:
        if a.month == 1 and b.month == 12 and a.year == b.year:
            return str(a.year)
        if (a.year, a.month) == (b.year, b.month):
            return f"{a.year:04d}-{a.month:02d}"
    return f"{a.isoformat()}..{b.isoformat()}"


def with_times(items: list[dict], stated: dict[int, list[tuple[int, int, float, float]]]) -> list[dict]:
    """Give each memory (a hit, a shown memory) that states a time its times resolved, from the
    stated spans the store read for them: "yesterday" said on 8 May 2023 is `{"phrase":
    "yesterday", "date": "2023-05-07"}`, so an agent need not work it out."""
    for m in items:
        if m["id"] in stated:
            m["times"] = [{"phrase": m["content"][at:at + n], "date": label(a, b)} for at, n, a, b in stated[m["id"]]]
    return items
