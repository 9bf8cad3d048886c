"""Two data dirs sharing one vault, synced by copying files: whose review `undo` takes back,
the days and keys each device writes, and a sync tool's leftovers."""

from __future__ import annotations

import os
import shutil

import pytest
from history_helpers import (
    cli,
    copy_logs,
    make_vault,
    own_log,
    own_log_put_back_older,
    review_log,
    reviewed_on_both_offline,
    run,
    settled,
)


def test_undo_never_takes_back_another_devices_review_after_its_log_arrived_cut_short(tmp_path, capsys):
    """B's review of c.md reaches A; then a half-finished sync leaves B's log at A cut short
    (mid-line, shorter than A's cache last read it). A's cache sees the file shrink and writes
    B's review into A's own log file (`adopt_database`), so A's `undo` takes it for A's own:
    it undoes B's review of c.md instead of A's own review of a.md, and the undo event, synced,
    takes B's review away on every device (README: undo takes back only this device's own
    reviews)."""
    vault_a = make_vault(tmp_path / "a" / "vault")
    settled(*vault_a.glob("*.md"))
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)
    cli(capsys, vault_a, data_a, "rate", "a.md", "--rating", "good", now="2026-11-20T07:00")
    cli(capsys, vault_b, data_b, "rate", "c.md", "--rating", "good", now="2026-11-20T08:00")
    copy_logs(vault_b, vault_a)
    shutil.copy2(vault_b / "c.md", vault_a / "c.md")
    settled(*vault_a.glob("*.md"))
    cli(capsys, vault_a, data_a, "due", now="2026-11-20T08:30")

    b_log = own_log(vault_a, data_b)
    whole = b_log.read_bytes()
    b_log.write_bytes(whole[: len(whole) // 2])  # a sync half done: B's file cut mid-line
    cli(capsys, vault_a, data_a, "due", now="2026-11-20T08:40")
    code, out, err = run(capsys, vault_a, data_a, "undo", now="2026-11-20T09:00")
    assert code == 0, err
    assert "a.md" in out and "c.md" not in out, f"A's undo took back B's review: {out!r}"

    b_log.write_bytes(whole)  # the sync finishes
    copy_logs(vault_a, vault_b)
    settled(*vault_a.glob("*.md"), *vault_b.glob("*.md"))
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T09:30")
    assert [r[0] for r in review_log(data_b)] == ["c.md"], "B's own review was lost"


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link"])
def test_history_log_moves_past_a_folder_named_like_another_devices_log(tmp_path, capsys, kind):
    """A sync tool left a folder named `<x>.jsonl` in the vault's log folder (the replay leaves
    it out with a note: README, "Only regular files are logs"). `history-log data-dir` then
    stops with "studyapp: error: .../zz.jsonl: Is a directory" (exit 1) and the log cannot be
    moved at all: `move_log` copies every `*.jsonl` entry with `shutil.copy2`, folders, FIFOs
    and dangling links included."""
    vault = make_vault(tmp_path / "vault")
    data_a, data_b = tmp_path / "a", tmp_path / "b"
    cli(capsys, vault, data_a, "rate", "a.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T08:10")
    artefact = vault / ".studyapp" / "log" / "zz.jsonl"  # a sync tool's
    if kind == "folder":
        artefact.mkdir()
    elif kind == "fifo":
        os.mkfifo(artefact)
    else:
        artefact.symlink_to(tmp_path / "gone.jsonl")

    code, out, err = run(capsys, vault, data_a, "history-log", "data-dir", now="2026-11-20T09:00")
    assert code == 0, err
    assert (data_a / "log" / own_log(vault, data_a).name).is_file()
    assert not own_log(vault, data_a).exists()


def test_undo_takes_back_the_newest_review_when_it_sits_in_a_sync_conflict_copy_of_the_own_log(tmp_path, capsys):
    """Syncthing puts an older copy of this device's own log in place and keeps the newer one
    as `<id>.sync-conflict-<date>-<time>-<dev>.jsonl`. The replay reads both (every review
    stands), but `undo` asks only the file named `<id>.jsonl` which reviews are this device's
    (`EventLog.own_ids`): the newest review (b.md) is in the conflict copy only, so `undo`
    passes over it and silently takes back the older review of a.md instead."""
    vault = make_vault(tmp_path / "vault")
    settled(*vault.glob("*.md"))
    data = tmp_path / "data"
    own, newer = own_log_put_back_older(capsys, vault, data)  # the older copy put in its place
    own.with_name(f"{own.stem}.sync-conflict-20261120-083000-ABCDEFG.jsonl").write_bytes(newer)
    settled(*vault.glob("*.md"))

    code, out, err = run(capsys, vault, data, "undo", now="2026-11-20T09:00")
    assert code == 0, err
    assert "b.md" in out, f"undo took back another review than this device's newest: {out!r}"
    assert "last_reviewed: 2026-11-20" in (vault / "a.md").read_text()


def test_undo_never_takes_back_the_review_of_a_device_that_moved_its_log_to_its_data_dir(tmp_path, capsys):
    """The same through the app's own command: B reviews b.md, A replays it, B runs
    `history-log data-dir` (its file leaves the vault's log folder). A's cache sees B's file
    gone and writes B's review into A's own log file, and A's next `undo` takes back B's review
    of b.md rather than A's own review of a.md."""
    vault = make_vault(tmp_path / "vault")
    settled(*vault.glob("*.md"))
    data_a, data_b = tmp_path / "a", tmp_path / "b"
    cli(capsys, vault, data_a, "rate", "a.md", "--rating", "good", now="2026-11-20T07:00")
    cli(capsys, vault, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, data_a, "due", now="2026-11-20T08:10")
    cli(capsys, vault, data_b, "history-log", "data-dir", now="2026-11-20T08:20")

    code, out, err = run(capsys, vault, data_a, "undo", now="2026-11-20T08:30")
    assert code == 0, err
    assert "a.md" in out and "b.md" not in out, f"A's undo took back B's review: {out!r}"


def _zone(name):
    import os
    import time

    os.environ["TZ"] = name
    time.tzset()


def test_a_review_written_back_into_the_log_keeps_its_reviewers_day(tmp_path, capsys):
    """B (Los Angeles) reviews b.md on its 20 November; A (Tokyo) replays it, the note keeps
    B's day (README: "The days written are the reviewer's own (its UTC offsets, kept in the
    event)"). Then B's file leaves the vault's log folder (`history-log data-dir` on B; a
    retired device's file removed, or not synced yet). A's cache writes B's review back into
    A's own log (`adopt_database`) without the event's `utc_offset`, so A's replay takes the
    day in A's own zone and rewrites B's note to `last_reviewed: 2026-11-21`, a day on which
    no review was made (and `stats` on A counts it there)."""
    vault = make_vault(tmp_path / "vault")
    settled(*vault.glob("*.md"))
    data_a, data_b = tmp_path / "a", tmp_path / "b"
    try:
        _zone("America/Los_Angeles")
        cli(capsys, vault, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T12:00-08:00")
        assert "last_reviewed: 2026-11-20" in (vault / "b.md").read_text()
        _zone("Asia/Tokyo")
        cli(capsys, vault, data_a, "due", now="2026-11-21T06:00+09:00")
        assert "last_reviewed: 2026-11-20" in (vault / "b.md").read_text()
        _zone("America/Los_Angeles")
        cli(capsys, vault, data_b, "history-log", "data-dir", now="2026-11-20T13:10-08:00")
        settled(*vault.glob("*.md"))
        _zone("Asia/Tokyo")
        cli(capsys, vault, data_a, "due", now="2026-11-21T06:20+09:00")
    finally:
        _zone("UTC")
    text = (vault / "b.md").read_text()
    assert "last_reviewed: 2026-11-20" in text, text


def test_undo_after_an_earlier_offline_review_from_another_device_keeps_that_review_in_the_note(tmp_path, capsys):
    """Both devices review b.md offline on one day: B at 09:00, A at 10:00. After the sync both
    notes say `review_count: 2` (B's review, then A's chained on it). A undoes its own review
    (allowed: it is the note's newest). The union now holds B's review alone, and B, replaying
    A's undo, writes `review_count: 1`, `last_reviewed: 2026-11-20`. A's undo instead writes the
    keys A's note had before A's review was made offline (`review_count: 0`, `last_reviewed:
    null`, `next_review: 2026-11-01`): B's review vanishes from A's note, which says "never
    reviewed" while A's own cache holds B's review (due today, learning), and no later command
    on A corrects it (the cache is up to date with the log). It also says "the note was edited
    since", though nobody edited it (the sync rewrote it)."""
    vault_a, data_a, vault_b, data_b = reviewed_on_both_offline(capsys, tmp_path, "b.md")
    assert "review_count: 2" in (vault_a / "b.md").read_text()

    out = cli(capsys, vault_a, data_a, "undo", now="2026-11-20T10:40")
    assert "b.md" in out
    cli(capsys, vault_a, data_a, "due", now="2026-11-20T10:41")
    copy_logs(vault_a, vault_b)
    settled(*vault_b.glob("*.md"))
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T10:50")
    assert [r[0] for r in review_log(data_a)] == ["b.md"]  # B's review stands
    keys = ("review_count", "last_reviewed", "next_review")
    on_b = [line for line in (vault_b / "b.md").read_text().splitlines() if line.startswith(keys)]
    on_a = [line for line in (vault_a / "b.md").read_text().splitlines() if line.startswith(keys)]
    assert "review_count: 1" in on_b and "last_reviewed: 2026-11-20" in on_b
    assert on_a == on_b, f"A's note lost B's review: {on_a} (B: {on_b})"
