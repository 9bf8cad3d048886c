"""The per-device review log: whole lines only, a torn line never breaks a file, events
deduplicated by id and replayed in time order, and the database a cache rebuilt from it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

from history_helpers import (
    card_states,
    cli,
    make_vault,
    owned_keys,
    remove_database,
    review_log,
)

from studyapp.config import Settings
from studyapp.history.eventlog import EventLog
from studyapp.history.events import EventKind, new_event
from studyapp.history.replay import replay, review_field
from studyapp.store_rows import REVIEW_COLUMNS

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)


def review(device: str, note: str, at: datetime, rating: int = 3):
    return new_event(EventKind.REVIEW, at, device, note, rating=rating, fuzz=False,
                     values_before={"review_count": 0})


def test_a_torn_last_line_is_ignored_and_the_next_append_starts_a_fresh_line(tmp_path):
    log = EventLog(tmp_path / "log", "dev1")
    first = review("dev1", "a.md", T0)
    log.append(first)
    with open(log.own_file, "ab") as handle:  # a crash in the middle of a write
        handle.write(b'{"id":"torn","kind":"rev')
    assert [e.id for e in log.read().events] == [first.id]

    second = review("dev1", "a.md", T0 + timedelta(days=1))
    log.append(second)
    contents = log.read()
    assert [e.id for e in contents.events] == [first.id, second.id]
    assert contents.skipped == 1  # the torn fragment, now a line of its own
    assert log.own_file.read_bytes().endswith(b"\n")


def test_a_damaged_line_in_the_middle_is_skipped_not_fatal(tmp_path):
    log = EventLog(tmp_path, "dev1")
    log.append(review("dev1", "a.md", T0))
    with open(log.own_file, "ab") as handle:
        handle.write(b"not json at all\n")
    log.append(review("dev1", "b.md", T0 + timedelta(minutes=1)))
    contents = log.read()
    assert [e.note for e in contents.events] == ["a.md", "b.md"] and contents.skipped == 1


def test_a_line_only_the_standard_json_module_reads_is_still_an_event(tmp_path):
    """The fast parser refuses NaN, which `json.dumps` writes; such a line is not lost."""
    log = EventLog(tmp_path, "dev1")
    odd = review("dev1", "a.md", T0)
    odd.data["duration_ms"] = float("nan")
    log.append(odd, review("dev1", "b.md", T0 + timedelta(minutes=1)))
    contents = log.read()
    assert [e.note for e in contents.events] == ["a.md", "b.md"] and contents.skipped == 0


def test_an_event_in_two_files_counts_once_and_events_replay_in_time_order(tmp_path):
    one, two = EventLog(tmp_path, "one"), EventLog(tmp_path, "two")
    late = review("two", "a.md", T0 + timedelta(days=3), rating=1)
    early = review("one", "a.md", T0)
    one.append(early)
    two.append(late, early)  # a copy of "one"'s event in another file: same id
    replayed = replay(two.read().events + one.read().events, Settings())
    assert replayed.events == 2
    assert [review_field(r, "event_id") for r in replayed.reviews] == [early.id, late.id]
    (note,) = replayed.notes
    assert note.reviews == 2 and note.card.reps == 2
    assert review_field(replayed.reviews[-1], "state_before") is not None  # the "again" started from "good"


def test_an_undo_event_removes_the_review_it_names(tmp_path):
    log = EventLog(tmp_path, "dev")
    kept = review("dev", "a.md", T0)
    undone = review("dev", "a.md", T0 + timedelta(days=2), rating=4)
    log.append(kept, undone, new_event(EventKind.UNDO, T0 + timedelta(days=2, minutes=1),
                                       "dev", "a.md", review=undone.id))
    replayed = replay(log.read().events, Settings())
    assert [review_field(r, "event_id") for r in replayed.reviews] == [kept.id]
    assert replayed.notes[0].reviews == 1


def test_every_action_appends_to_this_devices_file_in_the_vault(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", "--duration", "7",
        now="2026-11-20T10:00")
    cli(capsys, vault, data, "undo", now="2026-11-20T10:01")
    cli(capsys, vault, data, "suspend", "b.md", now="2026-11-20T10:02")
    (log_file,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    device = json.loads((data / "data-dir.json").read_text())["id"]
    assert log_file.name == f"{device}.jsonl"
    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [e["kind"] for e in events] == ["review", "undo", "suspend"]
    rated, undo, _ = events
    assert rated["note"] == "a.md" and rated["rating"] == 3 and rated["duration_ms"] == 7000
    assert rated["device"] == device and datetime.fromisoformat(rated["at"]) == datetime(2026, 11, 20, 10, 0).astimezone()  # --now is local time
    assert undo["review"] == rated["id"]
    assert len({e["id"] for e in events}) == 3


def test_deleting_the_database_restores_every_card_exactly(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    steps = [("rate", "a.md", "--rating", "good"), ("rate", "b.md", "--rating", "again"),
             ("rate", "b.md", "--rating", "good"), ("rate", "c.md", "--rating", "easy"),
             ("undo",), ("suspend", "c.md"), ("rate", "a.md", "--rating", "hard"),
             ("rate", "b.md", "--rating", "good")]
    for day, step in enumerate(steps):
        cli(capsys, vault, data, *step, now=f"2026-11-{20 + day}T09:00")
    cards, reviews, notes = card_states(data), review_log(data), owned_keys(vault)
    assert len(cards) == 3 and len(reviews) == 5

    remove_database(data)
    out = cli(capsys, vault, data, "due", now="2026-11-28T09:00")
    assert card_states(data) == cards
    assert review_log(data) == reviews
    assert owned_keys(vault) == notes
    assert "studyapp: warning" not in capsys.readouterr().err + out


def test_a_database_from_before_the_log_is_written_into_it_once(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "a.md", "--rating", "good", now="2026-11-20T09:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "easy", now="2026-11-21T09:00")
    cards = card_states(data)
    # as an older studyapp left it: reviews without event ids, and no log
    import shutil

    shutil.rmtree(vault / ".studyapp" / "log")
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        conn.execute("UPDATE reviews SET event_id = NULL")
        conn.execute("DELETE FROM log_files")
    cli(capsys, vault, data, "due", now="2026-11-22T09:00")
    cli(capsys, vault, data, "due", now="2026-11-22T09:00")
    (log_file,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    assert len(log_file.read_text().splitlines()) == 2  # written once
    remove_database(data)
    cli(capsys, vault, data, "due", now="2026-11-22T09:00")
    assert card_states(data) == cards


def test_a_recorded_result_is_taken_only_where_fsrs_would_give_it_again():
    """Replaying with every review's recorded result gives what running FSRS on every review
    gives, fuzz included; and a recorded result made from another card is not taken."""
    import random

    from fsrs import Rating

    from studyapp.history.replay import (
        card_fields,
        review_for_event,
        scheduler_fingerprint,
    )
    from studyapp.schedule import build_scheduler, new_card

    rng = random.Random(3)
    scheduler = build_scheduler(Settings())  # fuzz on
    cards, events = {}, []
    at = T0
    for _ in range(400):
        at += timedelta(hours=rng.randrange(1, 200))
        note = f"n{rng.randrange(12)}.md"
        event = new_event(EventKind.REVIEW, at, rng.choice(["one", "two"]), note,
                          rating=rng.choice([1, 2, 3, 3, 3, 4]), fuzz=True,
                          values_before={"review_count": 0})
        before = cards.get(note) or new_card(0, at)
        after = review_for_event(scheduler, before, Rating(event.data["rating"]), at, None,
                                 event.id)
        event.data.update(before=card_fields(before), after=card_fields(after),
                          sched=scheduler_fingerprint(scheduler))
        cards[note] = after
        events.append(event)
    stale = events[200]  # as if made on a device that had not seen the previous review
    stale.data["before"] = [*stale.data["before"][:2], 99.0, *stale.data["before"][3:]]
    stale.data["after"] = [*stale.data["after"][:2], 123.0, *stale.data["after"][3:]]

    taken = replay(events, Settings())
    for event in events:
        for key in ("before", "after", "sched"):
            event.data.pop(key)
    computed = replay(events, Settings())
    # The stale review's keys before it (what undoing it puts back) are the ones the previous
    # review left, not those its device logged: told by its recorded "before", popped here.
    values = REVIEW_COLUMNS.index("file_values_before")

    def without_values(rows):
        return [row[:values] + row[values + 1:] for row in rows]

    assert without_values(taken.reviews) == without_values(computed.reviews)
    assert [review_field(r, "event_id") for r, c in zip(taken.reviews, computed.reviews)
            if r[values] != c[values]] == [stale.id]
    assert [n.card for n in taken.notes] == [n.card for n in computed.notes]
    assert all(review_field(r, "stability_after") != 123.0 for r in taken.reviews)


def test_the_history_package_imports_neither_textual_nor_torch():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; import studyapp.history.sync, studyapp.history.replay, "
            "studyapp.history.osr, studyapp.commands.history; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'torch')))")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    assert out.strip() == "[]"


def test_an_append_never_makes_the_vault_folder_again(tmp_path):
    """The vault renamed while the app ran: an append (an adoption after the log seemed to
    shrink) made `<old vault>/.studyapp/log` again, a phantom vault that `--vault` then opened
    with 0 notes, and that nested the vault when it was moved back."""
    import pytest

    vault = tmp_path / "vault"
    log = EventLog(vault / ".studyapp" / "log", "dev1")
    with pytest.raises(FileNotFoundError):
        log.append(review("dev1", "a.md", T0))
    assert not vault.exists()
    vault.mkdir()
    log.append(review("dev1", "a.md", T0))  # a vault without a log folder yet: made as before
    assert log.own_file.is_file()


def test_a_review_whose_log_cannot_be_written_changes_nothing(tmp_path, capsys):
    """This device's log file replaced by a folder (a sync tool's conflict) while the app was
    open: the note was written, the app said "Rating not saved", and the next command finished
    the review anyway. Now the review is refused before the note is touched."""
    import pytest
    from vault_fixtures import USERS_NOTE, write

    from studyapp.cli import main
    from studyapp.context import build_context
    from studyapp.errors import UserError
    from studyapp.reviews import ReviewService

    vault, data = tmp_path / "vault", tmp_path / "data"
    note = write(vault / "a.md", USERS_NOTE)
    common = ["--vault", str(vault), "--data-dir", str(data)]
    assert main(["rate", "a.md", "--rating", "good", *common, "--now", "2026-11-20T09:00"]) == 0
    ctx = build_context(vault=str(vault), data_dir=str(data), now="2026-11-22T09:00")
    with ReviewService(ctx) as service:  # the app, open
        own = service.history_log.own_file
        own.unlink()
        own.mkdir()
        before = note.read_bytes()
        with pytest.raises(UserError, match="review log.*nothing was changed"):
            service.record_review("a.md", "good")
        assert note.read_bytes() == before
    own.rmdir()
    capsys.readouterr()
    assert main(["due", *common, "--now", "2026-11-22T09:00"]) == 0
    assert "interrupted" not in capsys.readouterr().err
    assert note.read_bytes() == before


def test_an_undo_whose_log_cannot_be_written_changes_nothing(tmp_path):
    """The same for `undo`: it writes the note back, then logs the undo."""
    import pytest
    from vault_fixtures import USERS_NOTE, write

    from studyapp.context import build_context
    from studyapp.errors import UserError
    from studyapp.reviews import ReviewService

    vault, data = tmp_path / "vault", tmp_path / "data"
    note = write(vault / "a.md", USERS_NOTE)
    ctx = build_context(vault=str(vault), data_dir=str(data), now="2026-11-22T09:00")
    with ReviewService(ctx) as service:
        service.record_review("a.md", "good")
        reviewed = note.read_bytes()
        own = service.history_log.own_file
        own.unlink()
        own.mkdir()
        with pytest.raises(UserError, match="review log.*nothing was changed"):
            service.undo_last()
        assert note.read_bytes() == reviewed
        own.rmdir()
        assert service.store.last_review() is not None  # the review is still there to undo
