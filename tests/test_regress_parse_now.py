"""--now in a spring-forward gap with a separator other than 'T' or a space."""

from __future__ import annotations

import pytest

from studyapp.context import parse_now


def test_a_skipped_time_with_a_lowercase_t_is_refused_like_with_t(zone):
    """Python 3.11's fromisoformat takes any one character between date and time: parse_now
    takes '2026-03-08t02:30' for a date (no 'T', no space) and silently gives 03:30 EDT."""
    zone("America/New_York")
    with pytest.raises(ValueError):
        parse_now("2026-03-08T02:30")
    with pytest.raises(ValueError, match="does not exist"):
        parse_now("2026-03-08t02:30")
