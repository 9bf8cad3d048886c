"""A quoted value wrapped onto a line that starts like a review key (`last_reviewed: ...`, text
inside the quotes, YAML's own reading) while the block has no such key of its own. The vault
reads the note as valid and lists it due; `rate` then edits that line inside the quoted text,
its check catches it, and every review is refused with "the edited metadata block would not
parse", a reason naming nothing the user can fix. A note no review can write must be reported
and skipped at load (README: "not listed as due"), or be rated with the key appended."""

from __future__ import annotations

import json

from vault_fixtures import USERS_NOTE, write

from studyapp.cli import main

NOW = "2026-06-15T10:00:00+00:00"
NOTE = (b"---\nreview_count: 2\nnext_review: 2026-06-10\n"
        b"source: \"copied from my old tracker, where the card said\n"
        b"last_reviewed: 2025-12-01\"\n"
        b"---\n# Layer norm\n\nNormalises over the features.\n")


def _run(capsys, vault, data, *args):
    capsys.readouterr()
    code = main([*args, "--vault", str(vault), "--data-dir", str(data), "--now", NOW])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_wrapped_quoted_value_does_not_make_a_due_note_unrateable(tmp_path, capsys):
    import yaml

    block = NOTE.decode().split("---\n")[1]
    assert "last_reviewed" not in yaml.safe_load(block)  # text of `source`, not a key
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault / "good.md", USERS_NOTE)
    write(vault / "wrapped.md", NOTE)

    code, out, _err = _run(capsys, vault, data, "due", "--json")
    assert code == 0
    listed = [row["path"] for row in json.loads(out)]
    assert "good.md" in listed

    code, _out, err = _run(capsys, vault, data, "rate", "wrapped.md", "--rating", "good")
    assert code == 0 or "wrapped.md" not in listed, (
        f"`due` lists wrapped.md as due, but `rate wrapped.md` fails: {err.strip()!r}")
    if code == 0:  # rated: the quoted text is the user's, byte for byte
        assert b'where the card said\nlast_reviewed: 2025-12-01"\n' in (vault / "wrapped.md").read_bytes()
