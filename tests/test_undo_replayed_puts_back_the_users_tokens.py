"""A review undone on one device puts the note's exact old bytes back there; the other device,
which had the review written into its copy by a replay, replays the undo and writes the
values back as JSON kept them: `~`, an empty value and `Null` become `null`, and
`mastery_level: 1e-3` becomes `0.001`. Tokens the user never wrote, and the two devices' copies
of the note differ byte for byte after syncing (tests/test_undo_null_tokens.py: the same for an
undo after an edit, on one device)."""

from __future__ import annotations

import shutil

import pytest
from history_helpers import card_states, cli, copy_logs, settled

SHAPES = {
    "tilde": "---\nlast_reviewed: ~\nnext_review: 2026-11-01\nreview_count: 0\n---\n# T\n\nbody\n",
    "empty": "---\nlast_reviewed:\nnext_review:\nreview_count:\nmastery_level:\n---\n# T\n\nbody\n",
    "Null": "---\nlast_reviewed: Null\nnext_review: 2026-11-01\nreview_count: NULL\n---\n# T\n\nbody\n",
    "1e-3": ("---\nlast_reviewed: 2026-11-01\nnext_review: 2026-11-04\nreview_count: 3\n"
             "mastery_level: 1e-3\n---\n# T\n\nbody\n"),
}
TRAILING_SPACE = pytest.param(
    "---\nlast_reviewed: 2026-11-01\nnext_review: 2026-11-10\nreview_count: \n---\n# T\n\nbody\n",
    id="empty-then-a-space")  # the blanks after an empty value's colon are logged with it


@pytest.mark.parametrize("original", [*SHAPES.values(), TRAILING_SPACE], ids=[*SHAPES.keys(), "empty-then-a-space"])
def test_an_undo_replayed_on_the_other_device_puts_back_the_users_tokens(tmp_path, capsys, original):
    vault_a, vault_b = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    vault_a.mkdir(parents=True)
    (vault_a / "n.md").write_text(original)
    settled(vault_a / "n.md")
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"

    cli(capsys, vault_a, data_a, "rate", "n.md", "--rating", "good", now="2026-11-20T08:00")
    copy_logs(vault_a, vault_b)
    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T08:30")
    assert (vault_b / "n.md").read_bytes() == (vault_a / "n.md").read_bytes()
    settled(vault_b / "n.md")
    cli(capsys, vault_a, data_a, "undo", now="2026-11-20T09:00")
    assert (vault_a / "n.md").read_text() == original
    copy_logs(vault_a, vault_b)

    cli(capsys, vault_b, data_b, "sync", now="2026-11-20T09:30")

    assert card_states(data_b) == card_states(data_a)
    assert (vault_b / "n.md").read_text() == original


def test_a_logged_review_whose_tokens_are_not_text_is_left_out():
    """`tokens_before` comes from another device's log: a malformed one is no event to replay."""
    import pytest

    from studyapp.history.events import BadEvent, Event

    good = {"id": "0" * 32, "kind": "review", "at": "2026-11-20T08:00:00+00:00", "device": "d" * 32,
            "note": "b.md", "rating": 3, "tokens_before": {"review_count": "~"}}
    Event.from_json(good)
    for bad in ({"review_count": 3}, {"title": "~"}, ["review_count"], {"review_count": "x\ny"}):
        with pytest.raises(BadEvent):
            Event.from_json({**good, "tokens_before": bad})


@pytest.mark.parametrize("token, line", [
    (" ", "review_count: \n"), ("\t", "review_count:\t\n"), ("", "review_count:\n"),
    (" \x0b", "review_count:\n"), ("\x0c", "review_count:\n"), (" \r", "review_count:\n"),
], ids=["space", "tab", "nothing", "vertical-tab", "form-feed", "carriage-return"])
def test_a_blank_token_writes_only_spaces_and_tabs_after_the_colon(token, line):
    """A logged token is another device's text: where it holds no value, only the blanks a
    user can leave after a colon are written, never another control character."""
    from studyapp.vault.writeback import Written, edit_block, meaning

    block = "last_reviewed: 2026-11-01\nreview_count: 3\n"
    edited = edit_block(block, {"review_count": Written.token(token, meaning("review_count", None))}, "\n")
    assert edited == "last_reviewed: 2026-11-01\n" + line
