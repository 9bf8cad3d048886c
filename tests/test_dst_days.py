"""Whole-day intervals across a change of the clocks: an interval of N days (FSRS's review
intervals, a learning or relearning step of 24 h) means N days on the reviewer's calendar, at
the same time of day, whether the clocks went forward or back in between. A learner who reviews
on Saturday evening with a one-day interval expects the note back on Sunday, and the note's
`next_review` to say Sunday, not Monday (24 h after 23:30 EST is 00:30 EDT) nor Saturday
again (24 h after 00:30 EDT on the day the clocks go back is 23:30 EST that same day).

conftest pins TZ=UTC for the run; each test here sets its own zone (`zone`), and the command
line runs in this process (`studyapp.cli.main`), so it sees that zone. The replays on another
device run in their own processes, with their own TZ."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Rating, State
from test_time_zones_travel import FRESH

from studyapp import schedule
from studyapp.cli import main
from studyapp.config import Settings
from studyapp.store import CardRow

ROOT = Path(__file__).resolve().parents[1]
UTC = timezone.utc
NEW_YORK, BERLIN, TOKYO = "America/New_York", "Europe/Berlin", "Asia/Tokyo"



@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "vault").mkdir()
    (tmp_path / "data").mkdir()
    for n in (1, 2):
        (tmp_path / "vault" / f"n{n}.md").write_text(FRESH.format(n=n), encoding="utf-8")
    return tmp_path


def configure(home: Path, text: str) -> None:
    (home / "data" / "config.toml").write_text(text, encoding="utf-8")


def ok(capsys, home: Path, now: str, *args: str) -> str:
    capsys.readouterr()
    code = main(["--vault", str(home / "vault"), "--data-dir", str(home / "data"), "--now", now, *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def keys(note: Path) -> dict[str, str]:
    """The owned days as the file holds them (text, as written)."""
    found = {}
    for line in note.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition(":")
        if sep and name in ("last_reviewed", "next_review"):
            found[name] = value.strip()
    return found


def due_paths(capsys, home: Path, now: str) -> list[str]:
    return [e["path"] for e in json.loads(ok(capsys, home, now, "due", "--json"))
            if e["kind"] == "note"]


def other_device(zone_name: str, home: Path, data: Path, *args: str) -> str:
    """One CLI command in its own process, on a machine whose zone is `zone_name`."""
    env = dict(os.environ, TZ=zone_name, PYTHONPATH=str(ROOT))
    env.pop("STUDYAPP_DEBUG", None)
    result = subprocess.run([sys.executable, "-m", "studyapp", "--vault", str(home / "vault"),
                             "--data-dir", str(data), *args],
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, (result.args, result.stdout, result.stderr)
    return result.stdout


def settle(*notes: Path) -> None:
    """Age the notes past `sync.SETTLE_SECONDS`, as if the other device synced them later."""
    old = time.time() - 60
    for note in notes:
        os.utime(note, (old, old))


# (zone, the review, its day, the next day, an hour before that day's same time of day (a
# learning step is listed 20 minutes ahead), and ten minutes after it)
ONE_DAY_ACROSS_A_CHANGE = [
    pytest.param(NEW_YORK, "2026-03-07T23:30-05:00", "2026-03-07", "2026-03-08",
                 "2026-03-08T22:30-04:00", "2026-03-08T23:40-04:00", id="new-york-spring-forward"),
    pytest.param(NEW_YORK, "2026-11-01T00:30-04:00", "2026-11-01", "2026-11-02",
                 "2026-11-01T23:30-05:00", "2026-11-02T00:40-05:00", id="new-york-fall-back"),
    pytest.param(BERLIN, "2026-03-28T23:30+01:00", "2026-03-28", "2026-03-29",
                 "2026-03-29T22:30+02:00", "2026-03-29T23:40+02:00", id="berlin-spring-forward"),
    pytest.param(BERLIN, "2026-10-25T00:30+02:00", "2026-10-25", "2026-10-26",
                 "2026-10-25T23:30+01:00", "2026-10-26T00:40+01:00", id="berlin-fall-back"),
]


@pytest.mark.parametrize(("name", "now", "day", "next_day", "before", "after"), ONE_DAY_ACROSS_A_CHANGE)
def test_a_one_day_learning_step_across_a_clock_change_is_the_next_calendar_day(
        zone, home, capsys, name, now, day, next_day, before, after):
    zone(name)
    configure(home, "learning_steps_minutes = [1440.0]\n")  # "again" on a new note: 24 h
    ok(capsys, home, now, "rate", "n1.md", "--rating", "again")
    assert keys(home / "vault" / "n1.md") == {"last_reviewed": day, "next_review": next_day}
    # the app agrees with the note: due that day, at the time of day it was reviewed
    assert "n1.md" not in due_paths(capsys, home, before)
    assert "n1.md" in due_paths(capsys, home, after)


@pytest.mark.parametrize(("name", "now", "day", "next_day", "before", "after"), ONE_DAY_ACROSS_A_CHANGE)
def test_a_one_day_relearning_step_across_a_clock_change_is_the_next_calendar_day(
        zone, home, capsys, name, now, day, next_day, before, after):
    zone(name)
    configure(home, "relearning_steps_minutes = [1440.0]\n")
    reviewed = datetime.fromisoformat(now)
    ok(capsys, home, (reviewed - timedelta(days=30)).isoformat(), "rate", "n1.md", "--rating", "easy")
    ok(capsys, home, now, "rate", "n1.md", "--rating", "again")  # a lapse: relearning, 24 h
    assert keys(home / "vault" / "n1.md") == {"last_reviewed": day, "next_review": next_day}
    assert "n1.md" not in due_paths(capsys, home, before)
    assert "n1.md" in due_paths(capsys, home, after)


def test_a_review_interval_in_days_counts_calendar_days_across_spring_forward(zone, home, capsys):
    """Easy on a new note on Friday 03-06 at 23:30 EST: eight days, Saturday 03-14 at 23:30
    EDT (eight times 24 h is 00:30 EDT on Sunday 03-15)."""
    zone(NEW_YORK)
    said = ok(capsys, home, "2026-03-06T23:30-05:00", "rate", "n1.md", "--rating", "easy")
    assert "next review 2026-03-14 23:30" in said, said
    assert keys(home / "vault" / "n1.md") == {"last_reviewed": "2026-03-06", "next_review": "2026-03-14"}


def test_the_days_of_a_review_across_a_change_are_the_days_every_replay_writes(zone, home, capsys):
    zone(NEW_YORK)
    configure(home, "learning_steps_minutes = [1440.0]\n")
    ok(capsys, home, "2026-03-07T23:30-05:00", "rate", "n1.md", "--rating", "again")
    ok(capsys, home, "2026-03-07T23:31-05:00", "rate", "n2.md", "--rating", "easy")
    vault = home / "vault"
    settle(*vault.glob("*.md"))
    before = {p.name: p.read_bytes() for p in sorted(vault.glob("*.md"))}
    assert keys(vault / "n1.md")["next_review"] == "2026-03-08"
    ok(capsys, home, "2026-03-08T09:00-04:00", "sync", "--full")
    assert {p.name: p.read_bytes() for p in sorted(vault.glob("*.md"))} == before
    # another device, in a zone without summer time, writes the same days
    other = home / "tokyo"
    (other).mkdir()
    (other / "config.toml").write_text("learning_steps_minutes = [1440.0]\n", encoding="utf-8")
    other_device(TOKYO, home, other, "sync", "--now", "2026-03-08T22:00+09:00")
    assert {p.name: p.read_bytes() for p in sorted(vault.glob("*.md"))} == before
    # one whose own settings make it run FSRS again on each review (another scheduler): it
    # places the due by the offsets the review recorded, not by its own zone
    refit = home / "tokyo-refit"
    refit.mkdir()
    (refit / "config.toml").write_text("learning_steps_minutes = [1440.0]\ndesired_retention = 0.85\n",
                                       encoding="utf-8")
    other_device(TOKYO, home, refit, "sync", "--now", "2026-03-08T22:00+09:00")
    assert keys(vault / "n1.md") == {"last_reviewed": "2026-03-07", "next_review": "2026-03-08"}


# -- the helpers ---------------------------------------------------------------------------------

def _steps_scheduler() -> object:
    settings = Settings()
    settings.learning_steps_minutes = [1440.0]
    return schedule.build_scheduler(settings, fuzz=False)


def test_review_moves_a_whole_day_due_to_the_same_local_time(zone):
    zone(NEW_YORK)
    card = schedule.new_card(1, datetime(2026, 3, 8, 4, 30, tzinfo=UTC))
    after = schedule.review(_steps_scheduler(), card, Rating.Again,
                            datetime(2026, 3, 8, 4, 30, tzinfo=UTC))  # Saturday 23:30 EST
    assert after.due == datetime(2026, 3, 9, 3, 30, tzinfo=UTC)  # Sunday 23:30 EDT: 23 h later
    assert after.state == State.Learning


def test_review_with_the_reviewers_offsets_gives_the_same_due_in_any_zone(zone):
    """A replay that runs FSRS again on another device moves the due by the reviewer's offsets
    (recorded in the event), not by its own zone's: every device gets the same instant."""
    at = datetime(2026, 3, 8, 4, 30, tzinfo=UTC)  # Saturday 23:30 EST
    card = schedule.new_card(1, at)
    dues = set()
    for name in (NEW_YORK, TOKYO, "UTC"):
        zone(name)
        dues.add(schedule.review(_steps_scheduler(), card, Rating.Again, at,
                                 offsets=(-5 * 3600, -4 * 3600)).due)
    assert dues == {datetime(2026, 3, 9, 3, 30, tzinfo=UTC)}


def test_review_leaves_steps_shorter_than_a_day_and_days_without_a_change_alone(zone):
    zone(NEW_YORK)
    at = datetime(2026, 3, 8, 4, 30, tzinfo=UTC)
    card = schedule.new_card(1, at)
    steps = schedule.build_scheduler(Settings(), fuzz=False)  # 1 and 10 minutes
    assert schedule.review(steps, card, Rating.Again, at).due == at + timedelta(minutes=1)
    plain = datetime(2026, 2, 7, 4, 30, tzinfo=UTC)  # no change within a day of it
    card = CardRow(note_key=1, state=int(State.Learning), step=0, stability=None,
                   difficulty=None, due=plain, last_review=None)
    assert schedule.review(_steps_scheduler(), card, Rating.Again, plain).due == plain + timedelta(days=1)


def test_review_days_are_the_reviewers_calendar_days():
    """`review_days` of a due moved to the reviewer's time of day: the next calendar day."""
    from studyapp.history.events import review_days

    at = datetime(2026, 3, 8, 4, 30, tzinfo=UTC)  # Saturday 23:30 EST
    due = datetime(2026, 3, 9, 3, 30, tzinfo=UTC)  # Sunday 23:30 EDT
    assert review_days(at, due, -5 * 3600, -4 * 3600) == (date(2026, 3, 7), date(2026, 3, 8))


# -- the review session's own clock ----------------------------------------------------------------

def test_a_review_session_counts_on_the_contexts_day_and_times_itself_in_real_time(zone, home):
    """A session under a frozen clock (`--now`) on the morning the clocks go back: its review
    is the context's instant and day, and its length is measured on an aware clock (a naive
    local clock reads an hour short or long across the change, and cannot be compared with
    the context's instants at all)."""
    from studyapp.context import build_context
    from studyapp.live_vault import LiveVault
    from studyapp.review_session import ReviewSession
    from studyapp.reviews import ReviewService

    zone(NEW_YORK)
    frozen = datetime.fromisoformat("2026-11-01T01:30-04:00")  # the first 01:30 of two
    ctx = build_context(vault=str(home / "vault"), data_dir=str(home / "data"), now=frozen, seed=False)
    with ReviewService(ctx) as service:
        vault = LiveVault(service)
        vault.load()
        session = ReviewSession(service, vault)
        session.begin(vault.items())
        assert session.started.tzinfo is not None, "the session's clock must be aware"
        first = session.next_path
        assert first is not None
        session.rate(first, Rating.Good, 4.0)
        tally = session.tally()
        assert (tally.reviewed, tally.by_rating) == (1, {int(Rating.Good): 1})
        assert 0 <= tally.seconds < 60
        (row,) = service.store.reviews()
        assert row.reviewed_at == frozen
    assert keys(home / "vault" / first)["last_reviewed"] == "2026-11-01"


@pytest.mark.parametrize(("name", "now", "day", "next_day", "before", "after"), [
    pytest.param("America/Havana", "2026-03-07T00:30-05:00", "2026-03-07", "2026-03-08",
                 "2026-03-08T01:00-04:00", "2026-03-08T01:40-04:00", id="havana"),
    pytest.param("America/Santiago", "2026-09-05T00:30-04:00", "2026-09-05", "2026-09-06",
                 "2026-09-06T01:00-03:00", "2026-09-06T01:40-03:00", id="santiago"),
])
def test_a_one_day_step_to_a_time_the_clocks_skip_is_on_the_next_day_after_they_jump(
        zone, home, capsys, name, now, day, next_day, before, after):
    """00:30 the next day never comes where the clocks skip midnight: the step ends as they
    jump (01:30 by the new clock, 24 h after the review), not at 23:30 the day before."""
    zone(name)
    configure(home, "learning_steps_minutes = [1440.0]\n")
    ok(capsys, home, now, "rate", "n1.md", "--rating", "again")
    assert keys(home / "vault" / "n1.md") == {"last_reviewed": day, "next_review": next_day}
    assert "n1.md" not in due_paths(capsys, home, before)
    assert "n1.md" in due_paths(capsys, home, after)
