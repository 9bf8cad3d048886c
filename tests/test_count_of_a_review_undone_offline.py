"""Device A reviews a note twice and sends its log and notes on (B's copy says
`review_count: 2`). Offline, A undoes its second review; B, not knowing, reviews the note
(finding the count 2 that the undone review gave it). Two reviews stand. The replay's count
"counts on from the count each review found when higher": B's review found 2, a count made by
the review A undid, so both devices write `review_count: 3` -- the undone review counted again
(before e998d58 the count was the first review's base plus the standing reviews: 2)."""

from __future__ import annotations

import shutil

from history_helpers import cli, copy_logs, make_vault, review_log, settled


def _count(note) -> str:
    return next(line for line in note.read_text().splitlines() if line.startswith("review_count"))


def test_a_review_undone_offline_is_not_counted_through_the_count_the_other_device_found(tmp_path, capsys):
    vault_a = make_vault(tmp_path / "a" / "vault")
    settled(*vault_a.glob("*.md"))
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "again", now="2026-11-20T08:00")
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "good", now="2026-11-20T08:10")
    assert _count(vault_a / "b.md") == "review_count: 2"
    settled(*vault_a.glob("*.md"))
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)  # the sync tool brings notes and log
    cli(capsys, vault_b, data_b, "due", now="2026-11-20T08:20")

    cli(capsys, vault_a, data_a, "undo", now="2026-11-20T08:30")  # A, offline
    assert _count(vault_a / "b.md") == "review_count: 1"
    cli(capsys, vault_b, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T09:00")
    assert _count(vault_b / "b.md") == "review_count: 3"

    copy_logs(vault_a, vault_b)
    copy_logs(vault_b, vault_a)
    settled(*vault_a.glob("*.md"), *vault_b.glob("*.md"))
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T10:00")
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T10:00")

    assert len(review_log(data_a)) == len(review_log(data_b)) == 2
    assert _count(vault_a / "b.md") == "review_count: 2", "the undone review counted"
    assert _count(vault_b / "b.md") == "review_count: 2", "the undone review counted"
