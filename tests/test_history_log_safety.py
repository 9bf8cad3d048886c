"""Safety hunt: `studyapp history-log` must never lose a review, whatever stops it midway.

Each test reviews, moves the log, then deletes the database ("deleting the database is safe:
the next command rebuilds it") and counts the reviews the rebuilt history holds."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from history_helpers import cli, make_vault, remove_database, stats

import studyapp.config_edit as config_edit
from studyapp.cli import main

T = ["2026-11-02T10:00:00+00:00", "2026-11-02T10:05:00+00:00", "2026-11-03T10:00:00+00:00"]
LATER = "2026-11-04T10:00:00+00:00"


def reviewed(capsys, tmp_path) -> tuple[Path, Path]:
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    for note, now in zip(("b.md", "a.md", "c.md"), T):
        cli(capsys, vault, data, "rate", note, "--rating", "good", now=now)
    return vault, data


def log_reviews(*folders: Path) -> set[str]:
    return {json.loads(line)["id"] for folder in folders if folder.is_dir()
            for log in folder.glob("*.jsonl") for line in log.read_text().splitlines()
            if line.endswith("}") and json.loads(line).get("kind") == "review"}


def test_a_short_write_on_a_full_disk_does_not_drop_the_end_of_the_log(capsys, tmp_path, monkeypatch):
    """sync.py `_merge_file` ignores os.write's return value (a full disk writes part of the
    buffer and returns its length), then `move_log` unlinks the source: the tail is gone.
    Reproduced for real on a 3 MiB tmpfs data dir with a 1.9 MB log (2400 of 2500 kept)."""
    vault, data = reviewed(capsys, tmp_path)
    real_write = os.write

    def disk_fills_up(fd, payload):
        return real_write(fd, bytes(payload)[: max(1, len(payload) // 2)]) if len(payload) > 1000 \
            else real_write(fd, payload)

    monkeypatch.setattr(os, "write", disk_fills_up)
    main(["history-log", "data-dir", "--vault", str(vault), "--data-dir", str(data)])
    monkeypatch.undo()
    assert len(log_reviews(vault / ".studyapp" / "log", data / "log")) == 3
    remove_database(data)
    assert stats(capsys, vault, data, LATER)["total_reviews"] == 3


def test_a_move_whose_setting_cannot_be_saved_leaves_the_log_where_it_is_read(capsys, tmp_path, monkeypatch):
    """`history_log` (commands/history.py) moves the file, unlinks the source, and only then
    writes config.toml: when that fails (not writable, full disk, changed meanwhile) the
    command exits 1 but the log already sits in the data dir, which nothing reads."""
    vault, data = reviewed(capsys, tmp_path)

    def unwritable(config_file, *args):
        raise PermissionError(errno.EACCES, "Permission denied", str(config_file))

    monkeypatch.setattr(config_edit, "set_setting", unwritable)
    code = main(["history-log", "data-dir", "--vault", str(vault), "--data-dir", str(data)])
    monkeypatch.undo()
    assert code != 0
    assert len(log_reviews(vault / ".studyapp" / "log")) == 3  # still where the setting says
    remove_database(data)
    assert stats(capsys, vault, data, LATER)["total_reviews"] == 3


def test_a_target_folder_that_is_the_source_through_a_link_is_not_emptied(capsys, tmp_path):
    """`move_log` compares the two folders as paths, not as files: with `<data dir>/log` a
    link to the vault's log folder, the file is merged into itself and then unlinked."""
    vault, data = reviewed(capsys, tmp_path)
    (data / "log").symlink_to(vault / ".studyapp" / "log")
    main(["history-log", "data-dir", "--vault", str(vault), "--data-dir", str(data)])
    assert len(log_reviews(vault / ".studyapp" / "log")) == 3
    remove_database(data)
    assert stats(capsys, vault, data, LATER)["total_reviews"] == 3


def test_a_review_started_before_a_move_is_written_to_the_new_place(capsys, tmp_path, monkeypatch):
    """A `rate` that read config.toml before `history-log data-dir` finished but opened its
    ReviewService after it takes the new config's mtime as its baseline (reviews.py
    `_config_mtime`), so `_follow_the_log` never re-reads it: the review (and the adopted
    database) is appended to the vault's folder, which nothing reads any more."""
    import studyapp.reviews as reviews

    vault, data = reviewed(capsys, tmp_path)
    real_init = reviews.ReviewService.__init__
    moved = []

    def move_first(self, ctx, *args, **kwargs):
        if not moved:
            moved.append(main(["history-log", "data-dir", "--vault", str(vault), "--data-dir", str(data)]))
        real_init(self, ctx, *args, **kwargs)

    monkeypatch.setattr(reviews.ReviewService, "__init__", move_first)
    assert main(["rate", "a.md", "--rating", "good", "--vault", str(vault), "--data-dir", str(data),
                 "--now", LATER]) == 0
    monkeypatch.undo()
    assert moved == [0]
    assert len(log_reviews(data / "log")) == 4
    assert log_reviews(vault / ".studyapp" / "log") == set()  # the log is in one place


def test_moving_the_log_again_brings_other_devices_copies_up_to_date(capsys, tmp_path):
    """`history-log vault` leaves the copies of other devices' logs in the data dir; a later
    `history-log data-dir` kept those stale copies (it copied a file only where none was), so
    this device no longer saw the other device's newer reviews."""
    vault, data = reviewed(capsys, tmp_path)
    other = tmp_path / "other"
    cli(capsys, vault, other, "rate", "c.md", "--rating", "good", now=LATER)
    move = ["--vault", str(vault), "--data-dir", str(data)]
    assert main(["history-log", "data-dir", *move]) == 0
    assert main(["history-log", "vault", *move]) == 0
    cli(capsys, vault, other, "rate", "c.md", "--rating", "good", now="2026-11-05T10:00:00+00:00")
    assert main(["history-log", "data-dir", *move]) == 0
    assert stats(capsys, vault, data, "2026-11-05T11:00:00+00:00")["total_reviews"] == 5
