"""A block whose keys are quoted (`"last_reviewed": null`, as some tools and hand edits write
JSON-ish YAML) is read and listed, so it must be rateable too: the write changes the values
and keeps each key's quotes, byte for byte around them."""

from __future__ import annotations

import pytest
from test_vault_writeback import review
from vault_fixtures import USERS_NOTE

from studyapp.cli import main


def quoted(text: str, quote: str) -> str:
    for key in ("last_reviewed", "next_review", "review_count", "mastery_level"):
        text = text.replace(f"\n{key}:", f"\n{quote}{key}{quote}:", 1)
    return text


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_review_writes_the_values_of_quoted_keys_and_keeps_the_quotes(tmp_path, quote):
    note = quoted(USERS_NOTE, quote)
    after = review(tmp_path, note.encode()).decode()
    assert after == (note.replace(f"{quote}last_reviewed{quote}: null", f"{quote}last_reviewed{quote}: '2026-11-22'")
                     .replace(f"{quote}next_review{quote}: '2026-03-02'", f"{quote}next_review{quote}: '2026-11-25'")
                     .replace(f"{quote}review_count{quote}: 0", f"{quote}review_count{quote}: 1")
                     .replace(f"{quote}mastery_level{quote}: 0.0", f"{quote}mastery_level{quote}: 0.42"))


def test_rate_from_the_command_line_on_a_note_with_quoted_keys(tmp_path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text(quoted(USERS_NOTE, '"'), encoding="utf-8")
    common = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2026-06-15T10:00"]
    assert main(["rate", "n.md", "--rating", "good", *common]) == 0, capsys.readouterr().err
    text = (vault / "n.md").read_text(encoding="utf-8")
    assert '"last_reviewed": \'2026-06-15\'' in text and '"review_count": 1' in text
    assert "\nlast_reviewed:" not in text  # not appended a second time, unquoted
    assert main(["undo", *common]) == 0
    assert (vault / "n.md").read_text(encoding="utf-8") == quoted(USERS_NOTE, '"')
