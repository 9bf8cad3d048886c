"""Local days in zones with daylight saving: a day begins at its own local midnight (the first
instant of that day when midnight is skipped, the first of two when it repeats), the daily
limits count what happened between that midnight and the next one, and a drill's try lasts
while the learner works on it, past midnight too.

conftest pins TZ=UTC for the run; each test here sets its own zone (`zone`) and the real
command line runs in this process (`studyapp.cli.main`), so it sees that zone."""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from studyapp.cli import main
from studyapp.schedule import start_of_day

ROOT = Path(__file__).resolve().parents[1]
UTC = timezone.utc

NEW_NOTE = "---\nreview_count: 0\nlast_reviewed: null\nnext_review: null\n{drills}---\n# {title}\n\nbody\n"


@pytest.fixture
def home(tmp_path):
    (tmp_path / "vault").mkdir()
    (tmp_path / "data").mkdir()
    return tmp_path


def add_notes(home: Path, count: int, drills: tuple[str, ...] = ()) -> None:
    for n in range(count):
        paired = f"drills: [{drills[n]}]\n" if n < len(drills) else ""
        (home / "vault" / f"n{n}.md").write_text(
            NEW_NOTE.format(title=f"Note {n}", drills=paired), encoding="utf-8")


def configure(home: Path, text: str) -> None:
    (home / "data" / "config.toml").write_text(text, encoding="utf-8")


def cli(capsys, home: Path, now: str, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--vault", str(home / "vault"), "--data-dir", str(home / "data"), "--now", now, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def ok(capsys, home: Path, now: str, *args: str) -> str:
    code, out, err = cli(capsys, home, now, *args)
    assert code == 0, err
    return out


def due_json(capsys, home: Path, now: str) -> list[dict]:
    return json.loads(ok(capsys, home, now, "due", "--json"))


def new_notes(capsys, home: Path, now: str) -> list[str]:
    return [e["path"] for e in due_json(capsys, home, now) if e["kind"] == "note" and e["queue"] == "new"]


def new_drills(capsys, home: Path, now: str) -> list[str]:
    return [e["id"] for e in due_json(capsys, home, now) if e["kind"] == "drill" and e["is_new"]]


def reviewed_today(capsys, home: Path, now: str) -> str:
    first = ok(capsys, home, now, "stats").splitlines()[0]  # "Reviews: N in total, M today; ..."
    return first.split(", ")[1].split(";")[0]


# -- the helper: the first instant of a local day ---------------------------------------------


@pytest.mark.parametrize(("name", "day", "first"), [
    ("America/New_York", date(2026, 3, 8), datetime(2026, 3, 8, 5, tzinfo=UTC)),    # spring forward at 02:00
    ("America/New_York", date(2026, 11, 1), datetime(2026, 11, 1, 4, tzinfo=UTC)),  # fall back at 02:00
    ("America/New_York", date(2026, 11, 2), datetime(2026, 11, 2, 5, tzinfo=UTC)),
    ("America/Santiago", date(2026, 9, 6), datetime(2026, 9, 6, 4, tzinfo=UTC)),    # 00:00 skipped: 01:00
    ("America/Santiago", date(2026, 4, 5), datetime(2026, 4, 5, 4, tzinfo=UTC)),    # 24:00 back to 23:00
    ("America/Havana", date(2026, 3, 8), datetime(2026, 3, 8, 5, tzinfo=UTC)),      # 00:00 skipped: 01:00
    ("America/Havana", date(2026, 11, 1), datetime(2026, 11, 1, 4, tzinfo=UTC)),    # 00:00 twice: the first
    ("Asia/Kolkata", date(2026, 3, 8), datetime(2026, 3, 7, 18, 30, tzinfo=UTC)),
])
def test_a_day_starts_at_its_first_instant(zone, name, day, first):
    zone(name)
    assert start_of_day(day) == first
    assert (first - timedelta(seconds=1)).astimezone().date() == day - timedelta(days=1)
    assert first.astimezone().date() == day
    from studyapp.schedule import day_start, next_day_start

    noon = datetime.combine(day, datetime.min.time()).replace(hour=12).astimezone()
    assert day_start(noon) == first
    assert next_day_start(noon) == start_of_day(day + timedelta(days=1))


def test_the_first_instant_follows_the_zone_set_later(zone):
    """start_of_day is cached; a zone set afterwards (tzset) gets its own answer."""
    zone("UTC")
    assert start_of_day(date(2026, 3, 8)) == datetime(2026, 3, 8, tzinfo=UTC)
    zone("America/New_York")
    assert start_of_day(date(2026, 3, 8)) == datetime(2026, 3, 8, 5, tzinfo=UTC)


# -- A: the daily limits on the days the clocks change ----------------------------------------


def test_the_spring_forward_day_has_its_own_new_notes(zone, home, capsys):
    zone("America/New_York")
    add_notes(home, 5)
    configure(home, "new_per_day = 2\n")
    for path in new_notes(capsys, home, "2026-03-07T23:30"):
        ok(capsys, home, "2026-03-07T23:30", "rate", path, "--rating", "good")
    assert reviewed_today(capsys, home, "2026-03-08T10:00") == "0 today"
    assert len(new_notes(capsys, home, "2026-03-08T10:00")) == 2


def test_the_fall_back_day_gives_no_more_than_the_daily_new_notes(zone, home, capsys):
    zone("America/New_York")
    add_notes(home, 5)
    configure(home, "new_per_day = 2\n")
    for path in new_notes(capsys, home, "2026-11-01T00:30"):
        ok(capsys, home, "2026-11-01T00:30", "rate", path, "--rating", "good")
    assert reviewed_today(capsys, home, "2026-11-01T10:00") == "2 today"
    assert new_notes(capsys, home, "2026-11-01T10:00") == []


def test_the_spring_forward_day_has_its_own_new_drills(zone, home, capsys):
    zone("America/New_York")
    add_notes(home, 2, drills=("sdpa", "causal_mask"))
    configure(home, "new_drills_per_day = 1\n")
    for path in ("n0.md", "n1.md"):
        ok(capsys, home, "2026-03-07T23:30", "rate", path, "--rating", "easy")
    assert new_drills(capsys, home, "2026-03-07T23:30") == ["sdpa"]
    ok(capsys, home, "2026-03-07T23:40", "rate-drill", "sdpa", "--rating", "3")
    assert new_drills(capsys, home, "2026-03-07T23:50") == []  # one a day
    assert new_drills(capsys, home, "2026-03-08T10:00") == ["causal_mask"]


def test_the_fall_back_day_gives_no_more_than_the_daily_new_drills(zone, home, capsys):
    zone("America/New_York")
    add_notes(home, 2, drills=("sdpa", "causal_mask"))
    configure(home, "new_drills_per_day = 1\n")
    for path in ("n0.md", "n1.md"):
        ok(capsys, home, "2026-11-01T00:20", "rate", path, "--rating", "easy")
    ok(capsys, home, "2026-11-01T00:30", "rate-drill", "sdpa", "--rating", "3")
    assert new_drills(capsys, home, "2026-11-01T10:00") == []


def test_a_try_begun_early_on_the_fall_back_day_is_still_going_that_morning(zone, home, capsys):
    zone("America/New_York")
    add_notes(home, 1, drills=("sdpa",))
    ok(capsys, home, "2026-11-01T00:30", "start", "sdpa")
    assert ok(capsys, home, "2026-11-01T00:40", "hint", "sdpa").startswith("hint 1/")
    assert ok(capsys, home, "2026-11-01T10:00", "hint", "sdpa").startswith("hint 2/")


def test_a_try_left_the_evening_before_spring_forward_is_over_the_next_morning(zone, home, capsys):
    zone("America/New_York")
    add_notes(home, 1, drills=("sdpa",))
    ok(capsys, home, "2026-03-07T23:30", "start", "sdpa")
    assert ok(capsys, home, "2026-03-07T23:35", "hint", "sdpa").startswith("hint 1/")
    assert ok(capsys, home, "2026-03-08T10:00", "hint", "sdpa").startswith("hint 1/")  # a new try


# -- B: a zone that skips midnight -------------------------------------------------------------


LEGACY = ("---\nreview_count: 2\nlast_reviewed: 2026-09-01\nnext_review: {due}\n---\n"
          "# Due on {due}\n\nbody\n")


@pytest.mark.parametrize(("name", "day"), [("America/Santiago", "2026-09-06"),
                                           ("America/Havana", "2026-03-08")])
def test_a_date_in_a_zone_that_skips_midnight_is_that_day(zone, home, capsys, name, day):
    zone(name)
    due = date.fromisoformat(day)
    (home / "vault" / "legacy.md").write_text(LEGACY.format(due=day), encoding="utf-8")
    evening = f"{due - timedelta(days=1)}T23:30"
    assert [e["path"] for e in due_json(capsys, home, evening) if e["kind"] == "note"] == []
    forecast = [line for line in ok(capsys, home, evening, "stats").splitlines()
                if line.startswith("Due next 7 days")][0]
    assert f"{due:%m-%d}:1" in forecast and f"{due - timedelta(days=1):%m-%d}:0" in forecast
    later = f"{day}T01:30"
    assert [e["path"] for e in due_json(capsys, home, later) if e["kind"] == "note"] == ["legacy.md"]


# -- C: reviews stamped after the time given ---------------------------------------------------


def test_reviews_stamped_on_a_later_day_leave_todays_limits_alone(zone, home, capsys):
    zone("Europe/Berlin")
    add_notes(home, 5, drills=("sdpa", "causal_mask"))
    configure(home, "new_per_day = 2\nnew_drills_per_day = 1\n")
    for path in ("n0.md", "n1.md"):
        ok(capsys, home, "2026-03-02T09:00", "rate", path, "--rating", "easy")
    ok(capsys, home, "2026-03-02T09:10", "rate-drill", "sdpa", "--rating", "3")
    assert reviewed_today(capsys, home, "2026-03-01T09:00") == "0 today"
    assert len(new_notes(capsys, home, "2026-03-01T09:00")) == 2
    assert new_drills(capsys, home, "2026-03-01T09:00") == ["causal_mask"]  # 03-01's new drill
    assert new_drills(capsys, home, "2026-03-02T09:20") == []  # that day's new drill is used


# -- D: a try that goes on past midnight -------------------------------------------------------


def due_again(capsys, home: Path) -> None:
    """sdpa, rated Again on 03-01, comes back due: opening it puts a fresh starter in place."""
    add_notes(home, 1, drills=("sdpa",))
    ok(capsys, home, "2026-03-01T09:00", "rate-drill", "sdpa", "--rating", "1")


def test_a_try_passed_just_after_midnight_can_be_rated(zone, home, capsys):
    zone("UTC")
    due_again(capsys, home)
    workspace = Path(ok(capsys, home, "2026-03-03T23:50", "start", "sdpa").strip())
    shutil.copyfile(ROOT / "kernels" / "sdpa" / "reference.py", workspace)
    solution = workspace.read_bytes()
    assert cli(capsys, home, "2026-03-04T00:05", "grade", "sdpa", str(workspace))[0] == 0
    ok(capsys, home, "2026-03-04T00:10", "start", "sdpa")
    assert workspace.read_bytes() == solution  # the try goes on: the passed file is kept
    rated = ok(capsys, home, "2026-03-04T00:12", "rate-drill", "sdpa")
    assert rated.startswith("sdpa: Good (as proposed"), rated


def test_a_try_left_untouched_past_midnight_is_over(zone, home, capsys):
    """A try whose last run, hint or give-up came the day before (and not within the last few
    hours) has ended unrated: a run today is practice, not that try's pass."""
    zone("UTC")
    due_again(capsys, home)
    workspace = Path(ok(capsys, home, "2026-03-03T10:00", "start", "sdpa").strip())
    assert ok(capsys, home, "2026-03-03T10:05", "hint", "sdpa").startswith("hint 1/")
    shutil.copyfile(ROOT / "kernels" / "sdpa" / "reference.py", workspace)
    assert cli(capsys, home, "2026-03-04T09:00", "grade", "sdpa", str(workspace))[0] == 0
    code, _, err = cli(capsys, home, "2026-03-04T09:01", "rate-drill", "sdpa")
    assert code == 2 and "nothing to rate yet" in err
    assert ok(capsys, home, "2026-03-04T09:02", "hint", "sdpa").startswith("hint 1/")  # a new try


def test_a_try_begun_late_in_the_evening_lasts_a_few_hours(zone, home, capsys):
    zone("UTC")
    due_again(capsys, home)
    workspace = Path(ok(capsys, home, "2026-03-03T23:50", "start", "sdpa").strip())
    assert ok(capsys, home, "2026-03-03T23:55", "hint", "sdpa").startswith("hint 1/")
    workspace.write_text("# written from memory\n", encoding="utf-8")
    ok(capsys, home, "2026-03-04T00:30", "start", "sdpa")
    assert workspace.read_text(encoding="utf-8") == "# written from memory\n"  # the same try
    assert ok(capsys, home, "2026-03-04T01:30", "hint", "sdpa").startswith("hint 2/")
    # the hint keeps it going through 03-04; untouched until the next morning, it is over
    assert ok(capsys, home, "2026-03-04T22:00", "hint", "sdpa").startswith("hint 3/")
    assert ok(capsys, home, "2026-03-05T08:00", "hint", "sdpa").startswith("hint 1/")


@pytest.mark.parametrize(("name", "now", "midnight"), [
    ("America/Santiago", datetime(2026, 9, 6, 3, 30, tzinfo=UTC), datetime(2026, 9, 6, 4, tzinfo=UTC)),
    ("America/New_York", datetime(2026, 3, 8, 12, tzinfo=UTC), datetime(2026, 3, 9, 4, tzinfo=UTC)),  # EDT from 03:00
    ("UTC", datetime(2026, 3, 8, 12, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC)),
])
def test_todays_figures_turn_over_when_the_next_day_starts(zone, name, now, midnight):
    """The app left open redraws Today at the next day's first instant, also where the clocks
    skip midnight itself (Santiago: 09-06 starts at 01:00), not an hour before it."""
    from studyapp.today_snapshot import next_midnight

    zone(name)
    assert next_midnight(now) == midnight
