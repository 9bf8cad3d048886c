"""A new user's first hour on the command line: their own plain notes imported, one reviewed,
`stats` read. Found by driving the real app and CLI (see tests/tui/test_first_hour.py)."""

from __future__ import annotations

from studyapp.cli import main

NOW = "2026-11-24T09:00:00+00:00"


def test_stats_leaves_the_imported_notes_own_paths_out_of_mastery_by_tag(tmp_path, capsys):
    """`import` gives each plain note its folder and its own path as tags (the users' format);
    the app leaves the paths out of "Mastery by tag" (a path is not a topic), but `stats`
    listed every imported note's path as a tag of one note: a vault of 300 notes, 300 rows."""
    vault = tmp_path / "notes"
    (vault / "sub").mkdir(parents=True)
    (vault / "sub" / "plain.md").write_text("What is RoPE?\n\nRotary position embedding.\n", encoding="utf-8")
    (vault / "sub" / "other.md").write_text("# LayerNorm\n\nPer token.\n", encoding="utf-8")
    options = ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]
    assert main(["import", *options]) == 0, capsys.readouterr().err
    assert "- sub/plain.md" in (vault / "sub" / "plain.md").read_text(encoding="utf-8")
    assert main(["rate", "sub/plain.md", "--rating", "good", *options]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["stats", *options]) == 0
    out = capsys.readouterr().out
    tags = out.split("Mastery by tag:", 1)[1].splitlines()
    listed = [line.split()[0] for line in tags if line.strip()]
    assert listed == ["sub"], out
