"""Values past what a date, SQLite or FSRS can hold: a review of a year, a clock in the year
9999, a retention of 0. Typed on the command line or in config.toml they are a usage error
(exit 2, one line, nothing written); found in a log line or a half-finished review written by an
older version they are recorded as unknown, and the history still opens."""

from __future__ import annotations

import json
import sqlite3

import pytest
from history_helpers import make_vault

from studyapp.cli import main
from studyapp.errors import ExitCode


def run(capsys, *args: str) -> tuple[int, str]:
    """The exit code and the error lines (`studyapp: error: ...`; notices left out)."""
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, "".join(line + "\n" for line in err.splitlines() if not line.startswith("studyapp: note:"))


@pytest.fixture
def common(tmp_path):
    vault = make_vault(tmp_path / "vault")
    return vault, ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]


def log_lines(vault) -> list[dict]:
    return [json.loads(line) for path in sorted((vault / ".studyapp" / "log").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


@pytest.mark.parametrize("duration", ["1e17", "inf", "-inf", "nan", "1e308", "86401", "-1"])
def test_a_duration_no_review_takes_is_refused_before_anything_is_written(common, capsys, duration):
    vault, args = common
    assert run(capsys, "rate", "b.md", "--rating", "good", *args, "--now", "2026-11-20T10:00")[0] == 0
    before = (vault / "b.md").read_bytes()
    logged = log_lines(vault)

    code, err = run(capsys, "rate", "b.md", "--rating", "good", f"--duration={duration}", *args,
                    "--now", "2026-11-21T10:00")
    assert code == ExitCode.USAGE
    assert "--duration" in err and "86400" in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert (vault / "b.md").read_bytes() == before and log_lines(vault) == logged
    assert run(capsys, "due", *args, "--now", "2026-11-22")[0] == 0


def test_a_day_long_review_is_still_a_review(common, capsys):
    vault, args = common
    assert run(capsys, "rate", "b.md", "--rating", "good", "--duration", "86400", *args,
               "--now", "2026-11-20T10:00")[0] == 0
    assert [line["duration_ms"] for line in log_lines(vault)] == [86_400_000]


@pytest.mark.parametrize("value", [10**20, 1e300, "soon", -5, True, [1]])
def test_a_log_line_with_a_duration_no_review_takes_is_replayed_as_unknown(common, capsys, value):
    """Another device (or a hand edit) wrote it: the review counts, its duration is unknown,
    and every command still runs."""
    vault, args = common
    assert run(capsys, "rate", "b.md", "--rating", "good", *args, "--now", "2026-11-20T10:00")[0] == 0
    (line,) = log_lines(vault)
    line.update(id="f" * 32, device="other", duration_ms=value)
    (vault / ".studyapp" / "log" / "other.jsonl").write_text(json.dumps(line) + "\n")
    data = args[-1]
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (vault.parent / "data" / name).unlink(missing_ok=True)

    code, err = run(capsys, "stats", "--json", *args, "--now", "2026-11-22")
    assert code == 0, err
    with sqlite3.connect(f"{data}/studyapp.sqlite3") as conn:
        assert conn.execute("SELECT count(*), max(duration_ms) FROM reviews").fetchone() == (2, None)


def test_a_review_half_written_by_an_older_version_with_a_huge_duration_is_finished(
        common, capsys, monkeypatch):
    """An older studyapp wrote the note, then failed to store a duration of 10**20 ms (SQLite's
    integers stop at 2**63): the journal row it left is finished, the duration unknown, instead
    of failing every later command and logging the review again each time."""
    vault, args = common

    def crash(*_args, **_kwargs):
        raise OverflowError("Python int too large to convert to SQLite INTEGER")

    monkeypatch.setattr("studyapp.reviews.finish_review", crash)
    code, err = run(capsys, "rate", "b.md", "--rating", "good", "--duration", "3", *args, "--now", "2026-11-20T10:00")
    assert code == ExitCode.BUG and "OverflowError" in err  # a bug: one line, the traceback in crash.log
    monkeypatch.undo()
    assert "review_count: 1" in (vault / "b.md").read_text()  # the file half was written
    database = vault.parent / "data" / "studyapp.sqlite3"
    with sqlite3.connect(database) as conn:  # the journal row as the older version left it
        (entry, text), = conn.execute("SELECT id, payload FROM journal").fetchall()
        payload = json.loads(text)
        payload["review"]["duration_ms"] = payload["event"]["duration_ms"] = 10**20
        payload.pop("owner")  # as an older version's rows: its writer is gone
        conn.execute("UPDATE journal SET payload = ? WHERE id = ?", (json.dumps(payload), entry))

    for _ in range(2):
        code, err = run(capsys, "due", *args, "--now", "2026-11-22")
        assert code == 0 and "Traceback" not in err, err
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM journal").fetchone() == (0,)
        assert conn.execute("SELECT count(*), max(duration_ms) FROM reviews").fetchone() == (1, None)
    assert [line["duration_ms"] for line in log_lines(vault)] == [None]  # logged once, as unknown
    assert run(capsys, "stats", "--json", *args, "--now", "2026-11-22")[0] == 0


@pytest.mark.parametrize("now", ["9999-12-31", "8901-01-01", "1969-12-31", "0001-01-01"])
def test_a_clock_outside_the_years_a_note_can_hold_is_a_usage_error(common, capsys, now):
    vault, args = common
    before = {path.name: path.read_bytes() for path in vault.glob("*.md")}
    for command in (["due"], ["stats"], ["rate", "b.md", "--rating", "easy"]):
        code, err = run(capsys, *command, *args, "--now", now)
        assert code == ExitCode.USAGE, (command, err)
        assert "--now" in err and "1970" in err and "Traceback" not in err
    assert {path.name: path.read_bytes() for path in vault.glob("*.md")} == before


def test_the_latest_clock_accepted_still_writes_a_date_a_note_can_hold(common, capsys):
    vault, args = common
    for day in ("8900-12-01", "8900-12-31"):
        code, err = run(capsys, "rate", "b.md", "--rating", "easy", *args, "--now", day)
        assert code == 0, err
    (line,) = [line for line in (vault / "b.md").read_text().splitlines() if line.startswith("next_review:")]
    assert "8900-12-31" < line.split(":", 1)[1].strip(" '") <= "9000-12-31"
    assert run(capsys, "due", *args, "--now", "8900-12-31")[0] == 0


@pytest.mark.parametrize("setting", [
    "desired_retention = 0.0", "desired_retention = 1.0", "desired_retention = 1.5",
    "desired_retention = nan", "maximum_interval = 0", "maximum_interval = 36501",
    "new_per_day = -1", "reviews_per_day = -3", "new_drills_per_day = -1",
    "learning_steps_minutes = [0.0]", "learning_steps_minutes = [-1.0, 10.0]",
    "relearning_steps_minutes = ['ten']", "grader_timeout = 0.0", "grader_timeout = inf",
    "grader_memory_mb = 0",
])
def test_a_setting_out_of_its_range_is_a_usage_error_naming_it(common, capsys, setting):
    vault, args = common
    data = vault.parent / "data"
    data.mkdir()
    (data / "config.toml").write_text(setting + "\n")
    before = (vault / "b.md").read_bytes()
    code, err = run(capsys, "rate", "b.md", "--rating", "good", *args, "--now", "2026-11-20")
    assert code == ExitCode.USAGE, err
    assert setting.split()[0] in err and "config.toml" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert (vault / "b.md").read_bytes() == before


def test_settings_at_the_ends_of_their_ranges_work(common, capsys):
    vault, args = common
    data = vault.parent / "data"
    data.mkdir()
    (data / "config.toml").write_text("desired_retention = 0.7\nmaximum_interval = 1\nnew_per_day = 0\n"
                                      "learning_steps_minutes = []\n")
    code, err = run(capsys, "rate", "b.md", "--rating", "easy", *args, "--now", "2026-11-20")
    assert code == 0, err
    assert "next_review: 2026-11-21" in (vault / "b.md").read_text()


def test_a_vault_that_is_a_file_or_missing_is_a_usage_error_that_says_which(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    data = ["--data-dir", str(tmp_path / "data")]
    code, err = run(capsys, "due", "--vault", str(afile), *data)
    assert code == ExitCode.USAGE and "not a folder" in err and str(afile) in err
    code, err = run(capsys, "due", "--vault", str(tmp_path / "missing"), *data)
    assert code == ExitCode.USAGE and "does not exist" in err


@pytest.mark.parametrize("note", ["../outside.md", "a/../../outside.md", "", "."])
def test_a_note_path_that_names_no_note_inside_the_vault_is_a_usage_error(common, capsys, note):
    vault, args = common
    (vault.parent / "outside.md").write_text((vault / "b.md").read_text())
    code, err = run(capsys, "rate", note, "--rating", "good", *args, "--now", "2026-11-20")
    assert code == ExitCode.USAGE, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    if not note.strip("."):
        assert "no such note in the vault: ." not in err and "NOTE" in err
    assert (vault.parent / "outside.md").read_text() == (vault / "b.md").read_text()


def test_a_clock_whose_offset_puts_the_users_day_before_1970_is_a_usage_error(common, capsys, monkeypatch):
    """1970-01-01T00:30+14:00 is 1969-12-31 in UTC: the day a review would write."""
    import time

    vault, args = common
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        code, err = run(capsys, "rate", "b.md", "--rating", "good", *args, "--now", "1970-01-01T00:30+14:00")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert code == ExitCode.USAGE and "--now" in err, err
    assert "review_count: 0" in (vault / "b.md").read_text()


def test_a_long_duration_already_in_the_history_is_kept_on_replay(common, capsys):
    """Only new reviews are held to a day: two days recorded by an older version stay two days
    when the database is rebuilt from the log."""
    vault, args = common
    assert run(capsys, "rate", "b.md", "--rating", "good", *args, "--now", "2026-11-20T10:00")[0] == 0
    (line,) = log_lines(vault)
    line.update(id="e" * 32, device="older", duration_ms=2 * 86_400_000)
    (vault / ".studyapp" / "log" / "older.jsonl").write_text(json.dumps(line) + "\n")
    for name in ("studyapp.sqlite3", "studyapp.sqlite3-wal", "studyapp.sqlite3-shm"):
        (vault.parent / "data" / name).unlink(missing_ok=True)
    assert run(capsys, "stats", "--json", *args, "--now", "2026-11-22")[0] == 0
    with sqlite3.connect(vault.parent / "data" / "studyapp.sqlite3") as conn:
        assert conn.execute("SELECT max(duration_ms) FROM reviews").fetchone() == (2 * 86_400_000,)
