"""Known gap, kept as strict expected failures. The sibling of test_count_corrected_by_hand_survives_the_replay: the user lowers
`review_count` by hand between two reviews (resets it to 0 to start counting afresh). The next
review here honours it and writes 1; the replay counts on from the higher of its own count and
the count the review found (e998d58: `max`), so the other device writes 3 into its copy and
`sync --full` here rewrites this device's 1 to 3: the devices disagree after syncing and the
user's correction is lost."""

from __future__ import annotations

import os
import shutil

import pytest
from history_helpers import cli, make_vault


def _settled(*paths) -> None:
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def _copy_logs(source, target) -> None:
    folder = target / ".studyapp" / "log"
    folder.mkdir(parents=True, exist_ok=True)
    for f in (source / ".studyapp" / "log").glob("*.jsonl"):
        shutil.copy2(f, folder / f.name)


@pytest.mark.xfail(strict=True, reason="known gap: a review_count lowered by hand between reviews is rewritten by the replay")
def test_a_count_lowered_by_hand_between_reviews_survives_the_replay(tmp_path, capsys):
    vault_a = make_vault(tmp_path / "a" / "vault")
    _settled(*vault_a.glob("*.md"))
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    note = vault_a / "b.md"
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "again", now="2026-11-20T08:00")
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "good", now="2026-11-20T08:05")
    note.write_text(note.read_text().replace("review_count: 2\n", "review_count: 0\n"))
    _settled(note)
    cli(capsys, vault_a, data_a, "rate", "b.md", "--rating", "good", now="2026-11-20T08:15")
    assert note.read_text().startswith("---\nreview_count: 1\n")
    here = note.read_bytes()
    _settled(note)
    _copy_logs(vault_a, vault_b)

    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T09:00")
    cli(capsys, vault_a, data_a, "sync", "--full", now="2026-11-20T09:00")

    assert note.read_bytes() == here, note.read_text()
    assert (vault_b / "b.md").read_bytes() == here, (vault_b / "b.md").read_text()
