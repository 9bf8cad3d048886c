"""Known gap, kept as strict expected failures. The user corrects `review_count` by hand between
two reviews (raised: reviews done on paper; lowered: starting over). The next review here
honours it. A replay counts from the first review's values only (`owned_values`: the first
`values_before` plus the reviews), so the other device writes another count into its copy, and
`sync --full` here rewrites this device's: the two devices' notes disagree after syncing, and
the user's edit is lost on the first full replay, though each review event records the count
it found (`values_before`). A fix that counted on from each review's found count counted
reviews undone offline again (tests/test_count_of_a_review_undone_offline.py), so it was
reverted; honouring a lowered count would also undercount two devices' concurrent reviews."""

from __future__ import annotations

import shutil

import pytest
from history_helpers import cli, copy_logs, make_vault, settled


@pytest.mark.xfail(strict=True, reason="known gap: a review_count corrected by hand between reviews "
                                        "is rewritten by the replay")
@pytest.mark.parametrize("ratings, written, corrected, then", [
    (["good"], "review_count: 1\n", "review_count: 10\n", "review_count: 11\n"),  # raised
    (["again", "good"], "review_count: 2\n", "review_count: 0\n", "review_count: 1\n"),  # lowered
], ids=["raised", "lowered"])
def test_a_count_corrected_by_hand_between_reviews_survives_the_replay(tmp_path, capsys, ratings,
                                                                      written, corrected, then):
    vault_a = make_vault(tmp_path / "a" / "vault")
    settled(*vault_a.glob("*.md"))
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    note = vault_a / "b.md"
    for minute, rating in enumerate(ratings):
        cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", rating, now=f"2026-11-20T08:0{minute * 5}")
    assert written in note.read_text()
    note.write_text(note.read_text().replace(written, corrected))
    settled(note)
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "good", now="2026-11-20T08:15")
    assert note.read_text().startswith("---\n" + then)
    here = note.read_bytes()
    settled(note)
    copy_logs(vault_a, vault_b)

    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T09:00")
    cli(capsys, vault_a, data_a, "sync", "--full", now="2026-11-20T09:00")

    assert note.read_bytes() == here, note.read_text()
    assert (vault_b / "b.md").read_bytes() == here, (vault_b / "b.md").read_text()
