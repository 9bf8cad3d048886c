"""Known gap, kept as strict expected failures. An older copy of this device's own log file put back (a sync tool copying the other machine's
stale copy over it, `rsync -t` run the wrong way, a vault restored from yesterday's backup):
the cache sees the file shrink and writes the reviews it holds that the file lost back into the
log (README: "reviews of a log file that went missing or shrank"). An undo and a suspension
that the file lost are not written back: the next command replays the older file, the undone
review counts again and is written into the note, and the suspended note is due again."""

from __future__ import annotations

import json

import pytest
from history_helpers import card_states, cli, make_vault, review_log, settled


def _own_log(vault):
    (log,) = (vault / ".studyapp" / "log").glob("*.jsonl")
    return log


@pytest.mark.xfail(strict=True, reason="known gap: an older copy of this device's own log put back loses the undos and suspensions it lacked (a fix that logged them again logged undos and suspensions nobody made when a data dir was restored or another device moved its log, so it was reverted)")
def test_an_undone_review_stays_undone_when_an_older_log_is_put_back(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    settled(*vault.glob("*.md"))
    before = (vault / "b.md").read_bytes()
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    older = _own_log(vault).read_bytes()
    cli(capsys, vault, data, "undo", now="2026-11-20T08:05")
    assert (vault / "b.md").read_bytes() == before and review_log(data) == []

    _own_log(vault).write_bytes(older)  # the sync tool puts the older copy back
    cli(capsys, vault, data, "due", now="2026-11-20T08:30")

    assert review_log(data) == [], "the undone review counts again"
    assert (vault / "b.md").read_bytes() == before, (vault / "b.md").read_text()


@pytest.mark.xfail(strict=True, reason="known gap: an older copy of this device's own log put back loses the undos and suspensions it lacked (a fix that logged them again logged undos and suspensions nobody made when a data dir was restored or another device moved its log, so it was reverted)")
def test_a_suspension_stays_when_an_older_log_is_put_back(tmp_path, capsys):
    vault, data = make_vault(tmp_path / "vault"), tmp_path / "data"
    cli(capsys, vault, data, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    older = _own_log(vault).read_bytes()
    cli(capsys, vault, data, "suspend", "a.md", now="2026-11-20T08:05")
    assert card_states(data)["a.md"][6] == 1  # suspended

    _own_log(vault).write_bytes(older)
    cli(capsys, vault, data, "due", now="2026-11-20T08:30")

    assert card_states(data).get("a.md", (None,) * 7)[6] == 1, "the suspension was lost"
    listed = [e["path"] for e in json.loads(cli(capsys, vault, data, "due", "--json",
                                                now="2026-11-20T08:35")) if e["kind"] == "note"]
    assert "a.md" not in listed
