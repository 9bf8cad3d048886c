"""The tokens a review logs for an undo replayed on another device (6cd477c: the blanks after an
empty review key's colon are logged as its token, and `_after_colon` writes a token that holds no
value as spaces and tabs only).

Two devices share a vault's review log: A rates a note and undoes the rating (its own copy gets
its exact old bytes back); B replays the review, then the undo, and writes the note's review
keys back from the logged tokens."""

from __future__ import annotations

import json
import shutil

from history_helpers import cli, copy_logs, settled

MANY_BLANKS = " " * 70
"""More blanks after a colon than a logged token may hold (`writeback.MAX_TOKEN`, 64)."""


def _two_devices(tmp_path, original: str):
    vault_a, vault_b = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    vault_a.mkdir(parents=True)
    (vault_a / "n.md").write_bytes(original.encode())
    settled(vault_a / "n.md")
    shutil.copytree(vault_a, vault_b)
    return vault_a, vault_b, tmp_path / "a" / "data", tmp_path / "b" / "data"


def _review_count_line(path) -> str:
    return next(line for line in path.read_text().splitlines(keepends=True) if line.startswith("review_count"))


def test_an_empty_count_with_many_blanks_after_its_colon_gets_no_null_on_the_other_device(tmp_path, capsys):
    """Before 6cd477c the token of `review_count:` followed by blanks was "" (logged), and B wrote
    `review_count:` back. Now the blanks are the token: past 64 of them it is too long to be
    logged at all, so B's replay of the undo renders the value and writes `null`, a token the
    user never wrote, and the two copies of the note differ after syncing."""
    original = f"---\nlast_reviewed: 2026-11-01\nnext_review: 2026-11-10\nreview_count:{MANY_BLANKS}\n---\n# T\n\nbody\n"
    vault_a, vault_b, data_a, data_b = _two_devices(tmp_path, original)

    cli(capsys, vault_a, data_a, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    copy_logs(vault_a, vault_b)
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T08:30")
    settled(vault_b / "n.md")
    cli(capsys, vault_a, data_a, "undo", now="2026-11-20T09:00")
    assert (vault_a / "n.md").read_text() == original  # A: the exact old bytes
    copy_logs(vault_a, vault_b)
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T09:30")

    line = _review_count_line(vault_b / "n.md")
    assert "null" not in line, (
        f"B wrote a token the user never wrote: {line!r} (the note had {_review_count_line(vault_a / 'n.md')!r})")


def test_a_logged_value_token_holding_a_carriage_return_writes_no_control_character(tmp_path, capsys):
    """Another device's log is text this device does not trust (`sync.owned_values`: "a hostile
    log"); `tokens_before` may hold any line of up to 64 characters without a newline. "~\\r"
    means null (YAML reads the CR as a line break), so it passes `token_means`, and
    `_after_colon` writes it as it is: a bare CR lands in B's note, which uses LF line endings.
    6cd477c keeps every character but spaces and tabs out of a token without a value; one with a
    value keeps the CR."""
    original = "---\nlast_reviewed: 2026-11-01\nnext_review: 2026-11-10\nreview_count:\n---\n# T\n\nbody\n"
    vault_a, vault_b, data_a, data_b = _two_devices(tmp_path, original)

    cli(capsys, vault_a, data_a, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    cli(capsys, vault_a, data_a, "undo", now="2026-11-20T09:00")
    assert (vault_a / "n.md").read_text() == original
    copy_logs(vault_a, vault_b)
    (log,) = (vault_b / ".studyapp" / "log").glob("*.jsonl")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    review = next(event for event in events if event["kind"] == "review")
    assert review["tokens_before"] == {"review_count": ""}  # as A logged it
    review["tokens_before"] = {"review_count": "~\r"}  # the same meaning (null), and a CR
    undo = [event for event in events if event is not review]
    log_review_only = json.dumps(review) + "\n"

    # B replays the review first (its copy gets the review's keys), then the undo
    log.write_text(log_review_only)
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T08:30")
    settled(vault_b / "n.md")
    log.write_text(log_review_only + "".join(json.dumps(event) + "\n" for event in undo))
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T09:30")

    raw = (vault_b / "n.md").read_bytes()
    assert b"\r" not in raw, f"a control character from another device's log was written into the note: {raw!r}"
