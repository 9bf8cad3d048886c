"""Defects found by simulating a year of daily use (reviews, renames, a move across time zones).

Each test fails on the code it was written against; the docstring says what the user sees."""

from __future__ import annotations

import json
import sqlite3

from history_helpers import NEW, card_states, cli, make_vault

FRESH_AT_OLD_PATH = """---
created: '2026-11-20'
last_reviewed: null
next_review: '2026-11-20'
review_count: 0
difficulty: hard
mastery_level: 0.0
---
# A brand-new question, unrelated to the archived one

Written today.
"""


def test_a_note_deleted_weeks_ago_is_not_revived_onto_a_new_note_by_another_devices_review(
        tmp_path, capsys):
    """A reviewed note is deleted; weeks later the user writes a new, never-reviewed note with
    the same title at another path (a rewrite from scratch). Nothing happens until a second
    device reviews anything: its grown log makes this device replay the whole log, which
    brings the deleted note back to life in the database; the next vault load then takes the
    "vanished" note for the new one (same title), appends a permanent `move` event to the log,
    and the new note loses its new status (shown 1 day overdue) and, at the following replay,
    has its own keys overwritten with the deleted note's (review_count 3, mastery 0.66)."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    for now in ("2026-11-01T09:00", "2026-11-01T09:20", "2026-11-05T09:00"):
        cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now=now)
    (vault / "b.md").unlink()
    cli(capsys, vault, data, "due", now="2026-11-06T09:00")
    rewrite = FRESH_AT_OLD_PATH.replace("# A brand-new question, unrelated to the archived one",
                                        "# Causal mask")
    (vault / "rewrite.md").write_text(rewrite)
    cli(capsys, vault, data, "due", now="2026-11-20T08:00")

    cli(capsys, vault, other, "rate", "c.md", "--rating", "good", now="2026-11-20T09:00")
    due = json.loads(cli(capsys, vault, data, "due", "--json", now="2026-11-20T09:30"))
    cli(capsys, vault, other, "rate", "c.md", "--rating", "good", now="2026-11-20T09:40")
    cli(capsys, vault, data, "due", now="2026-11-20T09:50")

    log = "".join(f.read_text() for f in (vault / ".studyapp" / "log").glob("*.jsonl"))
    assert '"kind":"move"' not in log, "a move from the deleted note was logged"
    assert {item["path"]: item["new"] for item in due if item["kind"] == "note"}.get("rewrite.md") is True
    assert (vault / "rewrite.md").read_text() == rewrite, "the new note's keys were overwritten"
    cli(capsys, vault, data, "sync", "--full", now="2026-11-20T10:00")
    cli(capsys, vault, data, "sync", "--full", now="2026-11-20T10:10")
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:  # one identity, however many replays
        assert conn.execute("SELECT deleted FROM notes WHERE path = 'b.md'").fetchall() == [(1,)]


def test_a_new_note_written_where_a_renamed_note_was_keeps_its_own_keys(tmp_path, capsys):
    """The user keeps a reviewed note as an archive (`mv b.md b-archive.md`) and writes a new,
    unrelated note under the old name. The new note is a different file (other title, other
    text, its own `review_count: 0`), yet it inherits the archived note's whole FSRS history:
    `due` does not offer it as new, and the next replay (`sync`, or any command after another
    device's log grew) overwrites the keys the user wrote with the old note's
    (review_count 3, a next_review two weeks out). The archive itself loses its history."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    for now in ("2026-11-01T09:00", "2026-11-01T09:20", "2026-11-05T09:00"):
        cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now=now)
    (vault / "b.md").rename(vault / "b-archive.md")
    (vault / "b.md").write_text(FRESH_AT_OLD_PATH)

    cli(capsys, vault, data, "sync", "--full", now="2026-11-20T09:00")
    assert (vault / "b.md").read_text() == FRESH_AT_OLD_PATH, "the user's new note was rewritten"
    due = json.loads(cli(capsys, vault, data, "due", "--json", now="2026-11-20T09:00"))
    by_path = {item["path"]: item for item in due if item["kind"] == "note"}
    assert by_path.get("b.md", {}).get("new") is True, "a never-reviewed note must be new"
    log = [json.loads(line) for f in (vault / ".studyapp" / "log").glob("*.jsonl")
           for line in f.read_text().splitlines()]
    assert [(e["note"], e["to"]) for e in log if e["kind"] == "move"] == [("b.md", "b-archive.md")]
    cli(capsys, vault, data, "sync", "--full", now="2026-11-20T09:10")  # every device replays it so
    assert (vault / "b.md").read_text() == FRESH_AT_OLD_PATH
    assert "review_count: 3" in (vault / "b-archive.md").read_text()


def test_the_streak_a_traveller_built_does_not_break_when_they_fly_east(tmp_path, capsys, zone):
    """Three consecutive days of reviews in New York (07:00, 22:00, 07:00), the notes saying
    last_reviewed 03-01, 03-02, 03-03. After flying to Tokyo the same log shows
    {03-01: 1, 03-03: 2} and a streak of 1: past reviews are re-dated in the zone the
    machine is in now, though every event keeps its reviewer's utc_offset and the notes keep
    the reviewer's days. A second device in another zone shows other numbers for the same log."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    (vault / "c.md").write_text(NEW.replace("# Causal mask", "# Third"))
    zone("America/New_York")
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2027-03-01T07:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2027-03-02T22:00")
    cli(capsys, vault, data, "rate", "c.md", "--rating", "good", now="2027-03-03T07:00")
    before = json.loads(cli(capsys, vault, data, "stats", "--json", now="2027-03-03T08:00"))
    assert before["streak"] == 3
    zone("Asia/Tokyo")
    after = json.loads(cli(capsys, vault, data, "stats", "--json", now="2027-03-03T22:30"))
    assert after["reviews_per_day"] == before["reviews_per_day"]
    assert after["streak"] == 3
    cli(capsys, vault, data, "sync", "--full", now="2027-03-03T22:40")  # the days come from the log too
    replayed = json.loads(cli(capsys, vault, data, "stats", "--json", now="2027-03-03T22:45"))
    assert (replayed["reviews_per_day"], replayed["streak"]) == (before["reviews_per_day"], 3)


def test_a_deleted_note_put_back_gets_its_history_back(tmp_path, capsys):
    """A reviewed note deleted by mistake and put back from the trash came back a stranger: its
    reviews stayed with the deleted identity, so it was scheduled from its keys alone (an
    approximate card), and its history was lost to it for good."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    for now in ("2026-11-01T09:00", "2026-11-01T09:20", "2026-11-05T09:00"):
        cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now=now)
    before = card_states(data)["b.md"]
    saved = (vault / "b.md").read_bytes()
    (vault / "b.md").unlink()
    cli(capsys, vault, data, "due", now="2026-11-06T09:00")
    assert "b.md" not in card_states(data)
    (vault / "b.md").write_bytes(saved)
    cli(capsys, vault, data, "due", now="2026-11-07T09:00")
    assert card_states(data)["b.md"] == before
    cli(capsys, vault, data, "sync", "--full", now="2026-11-07T09:10")
    assert card_states(data)["b.md"] == before and (vault / "b.md").read_bytes() == saved
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        assert conn.execute("SELECT deleted FROM notes WHERE path = 'b.md'").fetchall() == [(0,)]
