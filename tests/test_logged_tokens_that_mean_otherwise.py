"""A review event whose `tokens_before` (5b75d6d) does not write what its `values_before` say
(a line edited by hand, another program's, a damaged copy: `review_count: '7'` where the
note said 0, or an unbalanced quote) passes the log's field check (`_is_tokens`: any short
one-line text), and the replay of the review's undo hands that token to the writeback, which
refuses the edit ("would change 'review_count' unexpectedly" / "would not parse"). The undo
never reaches this device's note: it keeps the undone review's keys at every sync while the
database and the reviewing device say never reviewed. A token that does not mean its value
should be left out (the value written as the app writes it), as before the field existed."""

from __future__ import annotations

import json
import shutil

import pytest
from history_helpers import cli, copy_logs, make_vault, review_log, settled


@pytest.mark.parametrize("token", ["7", "'"])
def test_an_undo_reaches_the_note_though_its_review_carries_a_token_that_means_otherwise(
        tmp_path, capsys, token):
    vault_a = make_vault(tmp_path / "a" / "vault")
    settled(*vault_a.glob("*.md"))
    vault_b = tmp_path / "b" / "vault"
    shutil.copytree(vault_a, vault_b)
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    before = (vault_b / "b.md").read_bytes()

    cli(capsys, vault_b, data_b, "rate", "b.md", "--rating", "good", now="2026-11-20T08:00")
    copy_logs(vault_b, vault_a)
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T08:30")
    assert "review_count: 1" in (vault_a / "b.md").read_text()
    cli(capsys, vault_b, data_b, "undo", now="2026-11-20T09:00")
    assert (vault_b / "b.md").read_bytes() == before

    (log,) = (vault_b / ".studyapp" / "log").glob("*.jsonl")
    lines = log.read_text().splitlines()
    review = json.loads(lines[0])
    assert review["kind"] == "review" and review["values_before"]["review_count"] == 0
    review["tokens_before"] = {"review_count": token}  # what the note never wrote
    lines[0] = json.dumps(review)
    log.write_text("\n".join(lines) + "\n")
    settled(*vault_a.glob("*.md"))
    copy_logs(vault_b, vault_a)
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T09:30")
    cli(capsys, vault_a, data_a, "sync", now="2026-11-20T09:40")

    assert review_log(data_a) == []
    assert (vault_a / "b.md").read_bytes() == before, (vault_a / "b.md").read_text()
