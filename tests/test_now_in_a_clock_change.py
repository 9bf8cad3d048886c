"""`--now` at a local time the clocks skip (the spring-forward hour) was taken as the hour
before: `--now 2026-03-08T02:30` in New York reviewed at 01:30 and said nothing. It is now a
clear error that says why; a time the clocks pass twice (fall back) is the first of the two,
as the docs of `datetime` have it, and a time with an offset is always taken as written."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from studyapp.cli import main
from studyapp.context import parse_now


def test_a_skipped_local_time_is_a_clear_error(zone, capsys):
    zone("America/New_York")
    with pytest.raises(ValueError, match="does not exist"):
        parse_now("2026-03-08T02:30")
    assert main(["due", "--now", "2026-03-08T02:30"]) == 2
    err = capsys.readouterr().err
    assert "2026-03-08T02:30" in err and "clocks" in err and "Traceback" not in err, err


def test_times_around_the_skipped_hour_and_with_offsets_are_as_written(zone):
    zone("America/New_York")
    assert parse_now("2026-03-08T01:59").utcoffset() == timedelta(hours=-5)
    assert parse_now("2026-03-08T03:00").utcoffset() == timedelta(hours=-4)
    assert parse_now("2026-03-08").hour == 0
    assert parse_now("2026-03-08T02:30-05:00") == datetime(2026, 3, 8, 7, 30, tzinfo=timezone.utc)
    repeated = parse_now("2026-11-01T01:30")  # passed twice: the first, still on summer time
    assert repeated.utcoffset() == timedelta(hours=-4)


def test_a_date_whose_midnight_is_skipped_starts_at_its_first_hour(zone):
    zone("America/Havana")  # clocks go from 00:00 to 01:00 on 2026-03-08
    start = parse_now("2026-03-08")
    assert start.date() == datetime(2026, 3, 8).date() and start.hour == 1, start
