"""`undo` on one device of a shared vault took back the newest review of any device: a review
just made on the phone, synced in, was undone by `undo` typed on the laptop for the laptop's own
review, and the phone's work was gone from every device's history."""

from __future__ import annotations

from history_helpers import cli, make_vault, review_log

from studyapp.cli import main
from studyapp.errors import ExitCode


def _devices(tmp_path):
    return make_vault(tmp_path / "vault"), tmp_path / "laptop", tmp_path / "phone"


def test_undo_takes_back_this_devices_own_last_review(tmp_path, capsys):
    vault, laptop, phone = _devices(tmp_path)
    cli(capsys, vault, laptop, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, phone, "rate", "b.md", "--rating", "easy", now="2026-11-20T09:00")
    b_before = (vault / "b.md").read_bytes()

    out = cli(capsys, vault, laptop, "undo", now="2026-11-20T09:05")

    assert "a.md" in out, out
    assert (vault / "b.md").read_bytes() == b_before
    cli(capsys, vault, phone, "due", now="2026-11-20T09:06")
    assert [row[0] for row in review_log(phone)] == ["b.md"]


def test_undo_refuses_when_another_device_reviewed_the_note_since(tmp_path, capsys):
    vault, laptop, phone = _devices(tmp_path)
    cli(capsys, vault, laptop, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, phone, "rate", "a.md", "--rating", "again", now="2026-11-21T08:00")
    before = (vault / "a.md").read_bytes()
    capsys.readouterr()

    code = main(["undo", "--vault", str(vault), "--data-dir", str(laptop),
                 "--now", "2026-11-21T08:05"])
    err = capsys.readouterr().err

    assert code == ExitCode.FAILED, err
    assert "another device" in err and "a.md" in err, err
    assert (vault / "a.md").read_bytes() == before
    assert len(review_log(laptop)) == 2


def test_undo_with_only_other_devices_reviews_says_so(tmp_path, capsys):
    vault, laptop, phone = _devices(tmp_path)
    cli(capsys, vault, phone, "rate", "b.md", "--rating", "easy", now="2026-11-20T09:00")
    before = (vault / "b.md").read_bytes()
    capsys.readouterr()

    code = main(["undo", "--vault", str(vault), "--data-dir", str(laptop),
                 "--now", "2026-11-20T09:05"])
    err = capsys.readouterr().err

    assert code == ExitCode.FAILED, err
    assert "another device" in err, err
    assert (vault / "b.md").read_bytes() == before


def test_one_device_undoes_its_reviews_newest_first(tmp_path, capsys):
    vault, laptop, _ = _devices(tmp_path)
    cli(capsys, vault, laptop, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, laptop, "rate", "b.md", "--rating", "good", now="2026-11-20T08:01")
    assert "b.md" in cli(capsys, vault, laptop, "undo", now="2026-11-20T08:02")
    assert "a.md" in cli(capsys, vault, laptop, "undo", now="2026-11-20T08:03")
    assert review_log(laptop) == []


def test_undo_after_a_rebuild_does_not_blame_an_edit(tmp_path, capsys):
    """The database rebuilt from the log keeps no note bytes from before a review: undo puts
    back the review keys, and said the note was edited since, which nobody did."""
    from history_helpers import remove_database

    vault, laptop, _ = _devices(tmp_path)
    cli(capsys, vault, laptop, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    remove_database(laptop)
    out = cli(capsys, vault, laptop, "undo", now="2026-11-20T08:05")
    assert "edited" not in out and "rebuilt" in out, out
