"""A note is rated, then its metadata block is taken out (the user deleted the front matter, a
tool stripped it, `git checkout` of the note before it had one), and `undo` is run. Undo must
either put back the review keys or refuse in one line; today it ends with exit 70, "internal
error (a bug in studyapp ...): AttributeError: 'Written' object has no attribute 'isoformat'"
(or '_Absent' for a note whose block lacked `created`)."""

from __future__ import annotations

import pytest
from vault_fixtures import write

from studyapp.cli import main
from studyapp.errors import ExitCode

NOW = "2026-06-15T10:00:00+00:00"
BODY = "# Layer norm\n\nNormalises over the features.\n"
BLOCKS = {
    "review keys": "---\nreview_count: 1\nlast_reviewed: 2026-06-01\nnext_review: 2026-06-10\n---\n",
    "other keys only": "---\ntitle: Layer norm\n---\n",
}


def _run(capsys, vault, data, *args):
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", NOW])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("block", list(BLOCKS))
def test_undo_of_a_note_whose_block_was_removed_since_is_no_crash(block, tmp_path, capsys):
    vault, data = tmp_path / "vault", tmp_path / "data"
    note = write(vault / "n.md", BLOCKS[block] + BODY)
    code, _out, err = _run(capsys, vault, data, "rate", "n.md", "--rating", "good")
    assert code == 0, err

    note.write_text(BODY)  # the block taken out by hand
    code, out, err = _run(capsys, vault, data, "undo")

    assert code != ExitCode.BUG, err
    assert code in (ExitCode.OK, ExitCode.FAILED), (code, err)
    assert "internal error" not in err, err
    assert "Normalises over the features." in note.read_text()
