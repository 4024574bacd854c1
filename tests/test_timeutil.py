"""Reading times: every accepted form, and the ones refused with a clear message; saying a
length of time the way a person reads it."""

import pytest

from strata_daemon.base.timeutil import duration, parse_time
from strata_daemon.errors import InvalidInput


@pytest.mark.parametrize("given, expected", [
    (0, 0.0), ("1767225600", 1767225600.0), ("2026-01-01", 1767225600.0), ("2026-01-01T01:00:00+01:00", 1767225600.0),
    ("2026-01-01T00:00:00Z", 1767225600.0), ("now", 1000.0), ("2h ago", 1000.0 - 7200), ("3d", 1000.0 - 3 * 86400),
    ("3 hours ago", 1000.0 - 3 * 3600), ("1 week ago", 1000.0 - 604800), ("90 Minutes", 1000.0 - 5400),
    ("2 days ago", 1000.0 - 2 * 86400), ("Yesterday", 1000.0 - 86400), ("today", 1000.0),
])
def test_accepted_forms(given, expected):
    assert parse_time(given, reference=1000.0) == expected


@pytest.mark.parametrize("given", [-1.7976931348623157e308, float("nan"), "inf", "1e400", "99999999999999d ago",
                                   253402300800, "", "2 months ago", "2ms"])
def test_times_outside_years_1_to_9999_or_empty_are_refused(given):
    with pytest.raises(InvalidInput):
        parse_time(given, reference=1000.0)


@pytest.mark.parametrize("seconds, said", [
    (86400, "1 day"), (21600, "6 h"), (900, "15 min"), (90, "90 s"), (172800, "2 days"), (5400, "90 min"),
    (129600, "36 h"), (60, "1 min"), (0, "0 s"), (0.25, "0.25 s"), (12.3, "12 s"), (145.6, "2.4 min"),
    (100000, "1.2 days"), (360000, "4.2 days"), (8640000, "100 days"), (-300, "-5 min"),
])
def test_a_length_of_time_is_said_in_the_unit_a_person_reads(seconds, said):
    assert duration(seconds) == said


def test_a_time_ahead_is_said_as_in_not_as_a_negative_ago():
    from strata_daemon.faces.cli.output import ago

    assert ago(172800) == "2 days ago" and ago(-172800) == "in 2 days" and ago(None) == "—"
