"""Defects found by attacking the reworked note identity (swaps, chains, folder renames, a first
review starting a new identity) with one or two devices. Each test fails on the code it was
written against."""

from __future__ import annotations

import os
import shutil
import sqlite3

from history_helpers import cli, make_vault


def _settled(*paths) -> None:
    """Mtimes a minute old, so a replay does not wait for the notes to settle."""
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))


def _swap(vault, one: str, two: str) -> None:
    (vault / one).rename(vault / "tmp")
    (vault / two).rename(vault / one)
    (vault / "tmp").rename(vault / two)
    _settled(vault / one, vault / two)


def _review_b_twice_and_c(capsys, vault, data) -> None:
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:20")
    cli(capsys, vault, data, "rate", "c.md", "--rating", "again", now="2026-11-02T09:00")


def _copy_logs(source, target) -> None:
    """A sync tool bringing the other device's log files (only those the target lacks)."""
    for f in (source / ".studyapp" / "log").glob("*.jsonl"):
        if not (target / ".studyapp" / "log" / f.name).exists():
            shutil.copy2(f, target / ".studyapp" / "log" / f.name)


def test_a_swap_on_a_device_that_replayed_the_log_swaps_the_review_keys(tmp_path, capsys):
    """A second device knows the notes from the replay only: its rows have no content hash, so
    `_crossed` never sees the swap, no move is logged, and the next replay writes each note's
    review keys into the other (the same for `mv b.md b-old.md; mv c.md b.md`)."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    _review_b_twice_and_c(capsys, vault, data)
    cli(capsys, vault, other, "due", now="2026-11-02T10:00")
    causal, kv = (vault / "b.md").read_text(), (vault / "c.md").read_text()
    _swap(vault, "b.md", "c.md")
    cli(capsys, vault, other, "due", now="2026-11-03T09:00")
    cli(capsys, vault, other, "sync", "--full", now="2026-11-03T09:05")
    assert (vault / "c.md").read_text() == causal, "Causal mask got the KV cache's review keys"
    assert (vault / "b.md").read_text() == kv


def test_a_folder_rename_with_a_note_deleted_gives_its_history_to_its_namesake(tmp_path, capsys):
    """Two edited "Summary" notes; one is deleted and the folder renamed. The vanished rows are
    matched one by one: the first (the deleted attention note) takes the one candidate left,
    `dl/rnn/summary.md`, although the rnn row ends closer; the rnn history is marked deleted and
    the next replay writes the attention note's 'again' schedule into the rnn note."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    for topic in ("attention", "rnn"):
        (vault / "ml" / topic).mkdir(parents=True)
        (vault / "ml" / topic / "summary.md").write_text(
            f"---\nreview_count: 0\nlast_reviewed: null\nnext_review: 2026-11-01\n---\n"
            f"# Summary\n\nKey points of {topic}.\n")
    cli(capsys, vault, data, "rate", "ml/attention/summary.md", "--rating", "again", now="2026-11-01T09:00")
    cli(capsys, vault, data, "rate", "ml/rnn/summary.md", "--rating", "easy", now="2026-11-01T09:10")
    for topic in ("attention", "rnn"):
        with open(vault / "ml" / topic / "summary.md", "a") as f:
            f.write("An edit after the review.\n")
    (vault / "ml" / "attention" / "summary.md").unlink()
    (vault / "ml").rename(vault / "dl")
    rnn = (vault / "dl" / "rnn" / "summary.md").read_text()
    _settled(vault / "dl" / "rnn" / "summary.md")
    cli(capsys, vault, data, "due", now="2026-11-02T09:00")
    cli(capsys, vault, data, "sync", "--full", now="2026-11-02T09:05")
    assert (vault / "dl" / "rnn" / "summary.md").read_text() == rnn, "the deleted note's keys were written"


def test_a_review_made_offline_before_a_swap_synced_stays_with_its_note(tmp_path, capsys):
    """Device A swaps b.md and c.md (logged through '#moving'); device B, offline, reviews
    "Causal mask" at b.md. Its event names its title and starts from Causal mask's card, yet the
    replay chains it onto the KV cache card now at b.md and writes it into the KV cache note."""
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    _review_b_twice_and_c(capsys, vault, data)
    offline, other = tmp_path / "offline", tmp_path / "other"
    shutil.copytree(vault, offline)
    cli(capsys, offline, other, "due", now="2026-11-02T10:00")
    kv = (vault / "c.md").read_text()
    _swap(vault, "b.md", "c.md")
    cli(capsys, vault, data, "due", now="2026-11-03T09:00")
    cli(capsys, offline, other, "rate", "b.md", "--rating", "good", now="2026-11-03T10:00")
    _copy_logs(offline, vault)
    cli(capsys, vault, data, "sync", now="2026-11-03T11:00")
    assert (vault / "b.md").read_text() == kv, "the KV cache note got Causal mask's review"


def test_a_heading_edited_offline_before_a_first_review_keeps_both_reviews(tmp_path, capsys):
    """Two devices first review the new b.md; B's copy had its heading edited first. The replay
    takes B's review for another note's (`_another_note_began`): A's own review goes to a
    deleted row, the live card has one review, and A's `undo` says b.md is not in the vault."""
    vault, data, other = make_vault(tmp_path / "vault"), tmp_path / "data", tmp_path / "other"
    cli(capsys, vault, data, "due", now="2026-11-01T08:00")
    offline = tmp_path / "offline"
    shutil.copytree(vault, offline)
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-01T09:00")
    text = (offline / "b.md").read_text()
    (offline / "b.md").write_text(text.replace("# Causal mask", "# Causal masking"))
    _settled(offline / "b.md")
    cli(capsys, offline, other, "rate", "b.md", "--rating", "good", now="2026-11-01T10:00")
    _copy_logs(offline, vault)
    cli(capsys, vault, data, "sync", now="2026-11-01T11:00")
    with sqlite3.connect(data / "studyapp.sqlite3") as conn:
        reps = conn.execute("SELECT c.reps FROM cards c JOIN notes n ON n.key = c.note_key"
                            " WHERE n.deleted = 0 AND n.path = 'b.md'").fetchone()
    assert reps == (2,), "the first review of b.md left its card"
