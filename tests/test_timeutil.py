"""Reading times: every accepted form, and the ones refused with a clear message."""

import pytest

from strata_daemon.errors import InvalidInput
from strata_daemon.timeutil import parse_time


@pytest.mark.parametrize("given, expected", [
    (0, 0.0), ("1767225600", 1767225600.0), ("2026-01-01", 1767225600.0), ("2026-01-01T01:00:00+01:00", 1767225600.0),
    ("2026-01-01T00:00:00Z", 1767225600.0), ("now", 1000.0), ("2h ago", 1000.0 - 7200), ("3d", 1000.0 - 3 * 86400),
])
def test_accepted_forms(given, expected):
    assert parse_time(given, reference=1000.0) == expected


@pytest.mark.parametrize("given", [-1.7976931348623157e308, float("nan"), "inf", "1e400", "99999999999999d ago",
                                   253402300800, ""])
def test_times_outside_years_1_to_9999_or_empty_are_refused(given):
    with pytest.raises(InvalidInput):
        parse_time(given, reference=1000.0)
