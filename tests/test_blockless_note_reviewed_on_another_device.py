"""A note without a metadata block, reviewed on one device, then reviewed on another that got
only the first device's log (the sync tool had not brought the note yet): the replay gives the
second device the first review (the card has two), but the note it writes says
`review_count: 1`, and a later `sync` on it says "up to date" and leaves it so, while the first
device writes 2 into its copy. The two devices' notes disagree after syncing, and `sync --full`
disagrees with `sync`."""

from __future__ import annotations

import shutil

from history_helpers import card_states, cli, copy_logs, review_log, settled


def _count(note) -> str:
    return next(line for line in note.read_text().splitlines() if line.startswith("review_count"))


def test_a_review_of_a_blockless_note_after_the_others_log_arrived_counts_both(tmp_path, capsys):
    vault_a, vault_b = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    (vault_a / "ml").mkdir(parents=True)
    (vault_a / "ml" / "plain.md").write_text("# Plain\n\nno block here\n")
    settled(vault_a / "ml" / "plain.md")
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"

    cli(capsys, vault_a, data_a, "rate", "ml/plain.md", "--rating", "again", now="2026-11-20T08:00")
    copy_logs(vault_a, vault_b)  # the log arrives at B; the note not yet
    cli(capsys, vault_b, data_b, "rate", "ml/plain.md", "--rating", "good", now="2026-11-20T09:00")
    copy_logs(vault_b, vault_a)
    settled(vault_a / "ml" / "plain.md", vault_b / "ml" / "plain.md")
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T10:00")
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T10:00")

    assert card_states(data_a) == card_states(data_b)
    assert len(review_log(data_b)) == 2
    assert _count(vault_a / "ml" / "plain.md") == "review_count: 2"
    assert _count(vault_b / "ml" / "plain.md") == "review_count: 2"  # was 1


def test_import_gives_a_note_reviewed_elsewhere_the_replayed_keys(tmp_path, capsys):
    """The other device reviewed the blockless note; its log came here (the note not yet, or
    the sync tool kept this copy) and a command replayed it. `import` then gives the note a block
    saying it was never reviewed (`review_count: 0`, `last_reviewed: null`), `due --json` lists
    it with review_count 0 yet not new, and `sync` says "up to date" and leaves it: only
    `sync --full` writes the review in."""
    vault_a, vault_b = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    (vault_a / "ml").mkdir(parents=True)
    (vault_a / "ml" / "plain.md").write_text("# Plain\n\nno block here\n")
    settled(vault_a / "ml" / "plain.md")
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"

    cli(capsys, vault_b, data_b, "rate", "ml/plain.md", "--rating", "good", now="2026-11-20T08:00")
    copy_logs(vault_b, vault_a)
    cli(capsys, vault_a, data_a, "due", now="2026-11-20T08:50")  # replays B's review
    cli(capsys, vault_a, data_a, "import", now="2026-11-20T09:00")
    settled(vault_a / "ml" / "plain.md")
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T09:10")

    text = (vault_a / "ml" / "plain.md").read_text()
    assert "review_count: 1" in text and "last_reviewed: '2026-11-20'" in text, text
