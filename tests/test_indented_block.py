"""A metadata block whose keys are all indented (`  created: ...`) is valid YAML, and a note
without review keys in it was listed as new and due; but a review appends its keys at the start
of a line, which no longer parses, so every rating was refused ("the edited metadata block would
not parse"). The load now says what is wrong and how to fix it, as it does for other blocks a
review could not write."""

from __future__ import annotations

from studyapp.cli import main

INDENTED = "---\n  created: '2026-03-02'\n  tags: [attention]\n---\n# Indented\n\nbody\n"
PLAIN = "---\ncreated: '2026-03-02'\ntags: [attention]\n---\n# Plain\n\nbody\n"


def test_an_indented_block_is_named_with_its_fix_and_the_rest_is_listed(tmp_path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "indented.md").write_text(INDENTED)
    (vault / "plain.md").write_text(PLAIN)
    args = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2026-06-15T09:00"]

    assert main(["due", *args]) == 0
    out, err = capsys.readouterr()

    assert "plain.md" in out and "indented.md" not in out
    assert "indented.md" in err and "indented" in err.split("indented.md", 1)[1], err
    assert "take the indentation out" in err
    assert (vault / "indented.md").read_text() == INDENTED
