"""Reviews across time zones: a learner who flies with their laptop, two devices in two zones
sharing one vault, and a clock whose local day is in range while its UTC day is not.

The CLI runs in real processes, each with its own TZ (the suite pins TZ=UTC for itself)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from studyapp.errors import ExitCode, UserError
from studyapp.vault import Vault

ROOT = Path(__file__).resolve().parent.parent
TOKYO, LOS_ANGELES, NEW_YORK = "Asia/Tokyo", "America/Los_Angeles", "America/New_York"

FRESH = """---
created: 2026-01-01
last_reviewed:
next_review:
review_count: 0
mastery_level: 0.0
---
# Note {n}

## Q
answer {n}
"""


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for n in (1, 2, 3):
        (root / f"n{n}.md").write_text(FRESH.format(n=n))
    return root


def studyapp(zone: str, vault: Path, data: Path, *args: str) -> subprocess.CompletedProcess:
    """One CLI command in its own process, on a machine whose zone is `zone`."""
    env = dict(os.environ, TZ=zone, PYTHONPATH=str(ROOT))
    env.pop("STUDYAPP_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "studyapp", "--vault", str(vault),
                           "--data-dir", str(data), *args],
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, (result.args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    return result.stdout


def keys(note: Path) -> dict[str, str]:
    """The owned keys as the file holds them (text, as written)."""
    found = {}
    for line in note.read_text().splitlines():
        name, sep, value = line.partition(":")
        if sep and name in ("last_reviewed", "next_review", "review_count"):
            found[name] = value.strip()
    return found


def settle(*notes: Path) -> None:
    """Age the notes past `sync.SETTLE_SECONDS`, as if the other device synced them later."""
    old = time.time() - 60
    for note in notes:
        os.utime(note, (old, old))


def log_lines(vault: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((vault / ".studyapp" / "log").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def snapshot(vault: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(vault.glob("*.md"))}


# -- 1. flying west: a note `due` lists can be rated ------------------------------------------

def test_a_note_reviewed_before_flying_west_can_be_rated_where_due_lists_it(vault, tmp_path):
    data = tmp_path / "data"
    ok(studyapp(TOKYO, vault, data, "rate", "n1.md", "--rating", "again",
                "--now", "2026-03-02T08:00+09:00"))  # 2026-03-01T23:00Z
    assert keys(vault / "n1.md")["last_reviewed"] == "2026-03-02"
    landed = "2026-03-01T20:00-08:00"  # 2026-03-02T04:00Z: five hours after the review
    assert "n1" in ok(studyapp(LOS_ANGELES, vault, data, "due", "--now", landed))
    # a review truly before the stored one (22:00Z) is still refused
    early = studyapp(LOS_ANGELES, vault, data, "rate", "n1.md", "--rating", "good",
                     "--now", "2026-03-01T14:00-08:00")
    assert early.returncode == ExitCode.FAILED and "last reviewed" in early.stderr, early.stderr
    rated = studyapp(LOS_ANGELES, vault, data, "rate", "n1.md", "--rating", "good", "--now", landed)
    ok(rated)
    assert keys(vault / "n1.md")["review_count"] == "2"


def test_a_note_never_reviewed_here_is_still_refused_by_its_day(vault, tmp_path):
    """No stored review: the note's `last_reviewed` day is all there is to go by."""
    note = vault / "n2.md"
    note.write_text(note.read_text().replace("review_count: 0", "review_count: 2")
                    .replace("last_reviewed:", "last_reviewed: 2026-03-05"))
    refused = studyapp(LOS_ANGELES, vault, tmp_path / "data", "rate", "n2.md", "--rating",
                       "good", "--now", "2026-03-04T20:00-08:00")
    assert refused.returncode == ExitCode.FAILED and "2026-03-05" in refused.stderr, refused.stderr


# -- 2. two devices in two zones agree on the notes ---------------------------------------------

def test_two_devices_in_two_zones_do_not_rewrite_each_others_notes(vault, tmp_path):
    tokyo, los_angeles = tmp_path / "tokyo", tmp_path / "la"
    ok(studyapp(TOKYO, vault, tokyo, "rate", "n1.md", "--rating", "again",
                "--now", "2026-03-02T08:00+09:00"))
    ok(studyapp(TOKYO, vault, tokyo, "rate", "n1.md", "--rating", "good",
                "--now", "2026-03-02T08:10+09:00"))
    ok(studyapp(TOKYO, vault, tokyo, "rate", "n2.md", "--rating", "easy",
                "--now", "2026-03-02T08:20+09:00"))
    written_in_tokyo = keys(vault / "n1.md")
    assert written_in_tokyo["last_reviewed"] == "2026-03-02"  # Tokyo's day, though UTC's is 03-01
    settle(*vault.glob("*.md"))
    before = snapshot(vault)

    out = ok(studyapp(LOS_ANGELES, vault, los_angeles, "sync", "--now", "2026-03-01T16:00-08:00"))
    assert snapshot(vault) == before, out  # the reviewer's days, whoever replays them
    assert "updated the review keys of 0 notes" in out, out
    doctor = studyapp(LOS_ANGELES, vault, los_angeles, "doctor", "--now", "2026-03-01T16:00-08:00")
    assert "the database lacks" not in doctor.stdout + doctor.stderr  # Tokyo's day is not "ahead"

    # a review made in Los Angeles carries Los Angeles's days to Tokyo just as well
    ok(studyapp(LOS_ANGELES, vault, los_angeles, "rate", "n3.md", "--rating", "easy",
                "--now", "2026-03-01T17:00-08:00"))  # 2026-03-02T01:00Z
    assert keys(vault / "n3.md")["last_reviewed"] == "2026-03-01"
    settle(*vault.glob("*.md"))
    before = snapshot(vault)
    for zone, data in ((TOKYO, tokyo), (LOS_ANGELES, los_angeles), (TOKYO, tokyo)):
        out = ok(studyapp(zone, vault, data, "sync", "--full", "--now", "2026-03-02T12:00+09:00"))
        assert snapshot(vault) == before, (zone, out)


def test_the_days_a_review_writes_are_the_days_its_replay_writes(vault, tmp_path):
    """Across a change to summer time the due instant's local day and the day in the offset
    of the review differ; the note written at review time and the replay must not."""
    data = tmp_path / "data"
    # 23:30 EST: the due date of an easy first review lands after the clocks change on 03-08
    said = ok(studyapp(NEW_YORK, vault, data, "rate", "n1.md", "--rating", "easy",
                       "--now", "2026-03-06T23:30-05:00"))
    # the days New York's clock shows, in standard time and in summer time: eight calendar
    # days later at the same time of day (eight times 24 h would be 03-15 00:30 EDT)
    assert "next review 2026-03-14 23:30" in said, said
    assert keys(vault / "n1.md") == {"last_reviewed": "2026-03-06", "next_review": "2026-03-14",
                                     "review_count": "1"}
    settle(vault / "n1.md")
    before = snapshot(vault)
    out = ok(studyapp(NEW_YORK, vault, data, "sync", "--full", "--now", "2026-03-07T09:00-05:00"))
    assert snapshot(vault) == before, out
    other = tmp_path / "other"
    out = ok(studyapp(TOKYO, vault, other, "sync", "--now", "2026-03-07T09:00-05:00"))
    assert snapshot(vault) == before, out


def test_reviews_logged_by_an_older_version_keep_the_replaying_machines_days(vault, tmp_path):
    """An event without the reviewer's offset: its days are the replaying machine's, as before."""
    data = tmp_path / "data"
    ok(studyapp(TOKYO, vault, data, "rate", "n1.md", "--rating", "easy",
                "--now", "2026-03-02T08:00+09:00"))
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:
        line.pop("utc_offset", None)
        line.pop("due_utc_offset", None)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    settle(vault / "n1.md")
    ok(studyapp(LOS_ANGELES, vault, tmp_path / "other", "sync", "--now", "2026-03-02T09:00+09:00"))
    assert keys(vault / "n1.md")["last_reviewed"] == "2026-03-01"


# -- 3. a clock whose UTC day is out of range -----------------------------------------------------

@pytest.mark.parametrize(("zone", "now"), [(NEW_YORK, "8900-12-31T23:00"),
                                           (TOKYO, "1970-01-01T05:00")])
def test_a_clock_whose_utc_day_is_out_of_range_is_a_usage_error(vault, tmp_path, zone, now):
    data = tmp_path / "data"
    before = snapshot(vault)
    for command in (["rate", "n1.md", "--rating", "good"], ["due"]):
        refused = studyapp(zone, vault, data, *command, "--now", now)
        assert refused.returncode == ExitCode.USAGE, refused.stderr
        assert "--now" in refused.stderr and "UTC" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    assert snapshot(vault) == before
    assert log_lines(vault) == []
    ok(studyapp(zone, vault, data, "due", "--now", "2026-03-01T10:00"))


def test_a_review_whose_event_the_log_cannot_hold_changes_nothing(vault, tmp_path):
    """A clock given as a datetime (the app's own callers skip `parse_now`): the event is
    checked before the note is written."""
    from studyapp.context import build_context
    from studyapp.reviews import ReviewService

    before = snapshot(vault)
    ctx = build_context(vault=str(vault), data_dir=str(tmp_path / "data"), seed=False,
                        now=datetime(8901, 1, 1, 3, 0, tzinfo=timezone.utc))
    with ReviewService(ctx) as service, pytest.raises(UserError, match="cannot be recorded"):
        service.record_review("n1.md", "good")
    assert snapshot(vault) == before
    assert log_lines(vault) == []
    with sqlite3.connect(tmp_path / "data" / "studyapp.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM journal").fetchone() == (0,)


def test_a_half_written_review_whose_event_can_never_be_logged_is_dropped_once(
        vault, tmp_path, monkeypatch, capsys):
    """What an older version left: the note written, then the log refused the event. The row
    is dropped with one line saying what (the note's review keys back as they were), instead
    of stopping every command while the repair tries it again."""
    from studyapp.cli import main

    data = tmp_path / "data"
    args = ["--vault", str(vault), "--data-dir", str(data)]

    def crash(*_args, **_kwargs):
        raise OverflowError("stands in for the log refusing the event")

    untouched = (vault / "n1.md").read_bytes()
    monkeypatch.setattr("studyapp.reviews.finish_review", crash)
    assert main(["rate", "n1.md", "--rating", "good", *args, "--now", "2026-03-01T10:00"]) != 0
    monkeypatch.undo()
    assert keys(vault / "n1.md")["review_count"] == "1"  # the file half was written
    (vault / "n1.md").write_text((vault / "n1.md").read_text() + "\nmy own edit\n")
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:  # as the older version left it
        (entry, text), = conn.execute("SELECT id, payload FROM journal").fetchall()
        payload = json.loads(text)
        payload["event"]["at"] = "8901-01-01T03:00:00.000000+00:00"
        payload.pop("owner")
        conn.execute("UPDATE journal SET payload = ? WHERE id = ?", (json.dumps(payload), entry))
    capsys.readouterr()

    for number, command in enumerate((["due"], ["stats"], ["suspend", "n2.md"], ["undo"])):
        code = main([*command, *args, "--now", "2026-03-02T10:00"])
        err = capsys.readouterr().err
        assert "Traceback" not in err and "'at' is not a time" not in err.split("dropped")[0], err
        dropped = [line for line in err.splitlines() if "dropped" in line]
        if number == 0:
            assert code == 0, err
            assert len(dropped) == 1 and "n1.md" in dropped[0] and "good" in dropped[0], err
            assert "back as they were" in dropped[0], err
        else:
            assert dropped == [], err
            assert code == (ExitCode.FAILED if command == ["undo"] else 0), err  # nothing to undo
    note = Vault(vault).read_note("n1.md")  # as before the review (`null` for empty), edit kept
    assert (note.last_reviewed, note.next_review, note.review_count) == (None, None, 0)
    assert keys_of(untouched)["last_reviewed"] == ""
    assert (vault / "n1.md").read_text().endswith("my own edit\n")
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM journal").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM reviews").fetchone() == (0,)
    assert [line["kind"] for line in log_lines(vault)] == ["suspend"]


def keys_of(content: bytes) -> dict[str, str]:
    found = {}
    for line in content.decode().splitlines():
        name, sep, value = line.partition(":")
        if sep and name in ("last_reviewed", "next_review", "review_count"):
            found[name] = value.strip()
    return found


def test_a_half_written_undo_whose_event_can_never_be_logged_leaves_the_review_standing(
        vault, tmp_path, monkeypatch, capsys):
    from studyapp.cli import main

    data = tmp_path / "data"
    args = ["--vault", str(vault), "--data-dir", str(data)]
    assert main(["rate", "n1.md", "--rating", "good", *args, "--now", "2026-03-01T10:00"]) == 0
    reviewed = keys(vault / "n1.md")

    def crash(*_args, **_kwargs):
        raise OverflowError("stands in for the log refusing the event")

    monkeypatch.setattr("studyapp.reviews.finish_undo", crash)
    assert main(["undo", *args, "--now", "2026-03-01T10:05"]) != 0
    monkeypatch.undo()
    assert keys(vault / "n1.md")["review_count"] == "0"  # the file half was written
    settle(vault / "n1.md")
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        (entry, text), = conn.execute("SELECT id, payload FROM journal").fetchall()
        payload = json.loads(text)
        payload["event"]["at"] = "1969-12-31T20:00:00.000000+00:00"
        payload.pop("owner")
        conn.execute("UPDATE journal SET payload = ? WHERE id = ?", (json.dumps(payload), entry))
    capsys.readouterr()

    assert main(["due", *args, "--now", "2026-03-02T10:00"]) == 0
    err = capsys.readouterr().err
    (dropped,) = [line for line in err.splitlines() if "dropped" in line]
    assert "n1.md" in dropped and "undo" in dropped and "stands" in dropped, err
    assert keys(vault / "n1.md") == reviewed  # the replay put the review's keys back
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM journal").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM reviews").fetchone() == (1,)
    assert [line["kind"] for line in log_lines(vault)] == ["review"]
    assert main(["due", *args, "--now", "2026-03-02T10:00"]) == 0
    assert "dropped" not in capsys.readouterr().err


def test_due_shows_the_next_review_day_on_this_machines_calendar(vault, tmp_path):
    """Reviewed in Tokyo, listed in Los Angeles: the note's `next_review` is Tokyo's day, which
    is tomorrow in Los Angeles when the note falls due there; the NEXT REVIEW column said that
    day beside OVERDUE "today"."""
    data = tmp_path / "data"
    ok(studyapp(TOKYO, vault, data, "rate", "n1.md", "--rating", "easy",
                "--now", "2026-06-10T08:00+09:00"))
    due_at = datetime.fromisoformat(
        next(e for e in json.loads(ok(studyapp(TOKYO, vault, data, "due", "--json",
                                               "--now", "2026-07-30T08:00+09:00")))
             if e.get("path") == "n1.md")["due_at"])
    la_day = due_at.astimezone(timezone.utc).timestamp() - 7 * 3600  # PDT
    la_date = datetime.fromtimestamp(la_day, timezone.utc).date()
    tokyo_date = keys(vault / "n1.md")["next_review"].strip("'")
    assert tokyo_date != la_date.isoformat()  # the premise: the two calendars disagree here

    listing = ok(studyapp(LOS_ANGELES, vault, data, "due", "--now",
                          (due_at.astimezone(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S+00:00")))
    (row,) = [line for line in listing.splitlines() if line.endswith("n1.md")]
    assert row.startswith(la_date.isoformat()), listing
