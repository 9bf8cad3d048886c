"""A replay leaves alone a note written a moment ago that holds more than the log
(`sync.SETTLE_SECONDS`: another device may have written the note and not yet its log line).
That guard (`sync._ahead`) only compares a wanted count or day; when the log's last word on a
note is an undone review of a note that lacked the review keys, the wanted values are `ABSENT`,
the note never counts as ahead, and the replay strips the keys of the new review the other
device has just written. With the keys present before (`review_count: 0`), the same sequence
leaves the note alone.

Sequence: laptop rates n.md (it had no review keys) and undoes it; laptop rates it again; the
file sync brings the note over before the laptop's new log line; the phone's first command
replays the log it has (review, undo).
"""

from __future__ import annotations

from history_helpers import cli

HAND_WRITTEN = "---\ncreated: 2026-11-01\ntags: [a]\n---\n# T\n\nbody\n"


def test_a_replay_does_not_strip_a_review_whose_log_line_is_still_coming(tmp_path, capsys):
    vault, laptop, phone = tmp_path / "vault", tmp_path / "laptop", tmp_path / "phone"
    vault.mkdir()
    note = vault / "n.md"
    note.write_text(HAND_WRITTEN)
    cli(capsys, vault, laptop, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault, laptop, "undo", now="2026-11-20T08:05")
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    synced = log.read_bytes()
    cli(capsys, vault, laptop, "rate", "n.md", "--rating", "good", now="2026-11-20T09:00")
    rated = note.read_bytes()
    assert b"review_count: 1" in rated
    log.write_bytes(synced)  # the note has arrived, the log line of its review not yet

    cli(capsys, vault, phone, "due", now="2026-11-20T09:01")

    assert note.read_bytes() == rated
