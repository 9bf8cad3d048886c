"""Small things a new user met in the CLI: `rate --rating` took only names while `rate-drill`
and the app also take 1-4 (Anki's keys), and `undo` after the only review was undone said "no
review has been recorded", though one had been."""

from __future__ import annotations

import pytest

from studyapp.cli import main

NOTE = "---\ncreated: 2026-11-01\n---\n# T\n\nbody\n"


def _args(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    (vault / "n.md").write_text(NOTE)
    return ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2026-11-20T08:00"]


def test_rate_takes_1_to_4_as_the_app_and_rate_drill_do(tmp_path, capsys):
    args = _args(tmp_path)
    assert main(["rate", "n.md", "--rating", "3", *args]) == 0
    assert "n.md: good" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["rate", "n.md", "--rating", "5", *args])
    assert exited.value.code == 2
    assert "1-4" in capsys.readouterr().err


def test_undo_with_nothing_left_does_not_say_no_review_was_recorded(tmp_path, capsys):
    args = _args(tmp_path)
    assert main(["rate", "n.md", "--rating", "good", *args]) == 0
    assert main(["undo", *args]) == 0
    capsys.readouterr()
    assert main(["undo", *args]) == 1
    err = capsys.readouterr().err
    assert "nothing to undo" in err and "no review has been recorded" not in err, err
