"""One exit code per kind of outcome (README, "Exit codes"): 2 for a command line that names
something wrong, 1 for a command that ran and said no, 0 for success."""

from __future__ import annotations

import pytest

from studyapp.cli import main
from studyapp.errors import ExitCode

NOTE = "---\nlast_reviewed: null\nnext_review: null\nreview_count: 0\n---\n# 问题\n\n## 答案\n好。\n"


@pytest.fixture
def common(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text(NOTE, encoding="utf-8")
    return ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", "2026-04-06"]


@pytest.mark.parametrize("args", [
    ["rate", "missing.md", "--rating", "good"],
    ["suspend", "missing.md"],
    ["unsuspend", "missing.md"],
    ["rate", "/etc/hostname", "--rating", "good"],
    ["rate", "note.md", "--rating", "bad"],
    ["rate", "note.md", "--rating", "good", "--duration", "-1"],
    ["import", "/no/such/folder"],
    ["grade", "sdpa", "/no/such/file.py"],
    ["grade", "no_such_drill", "/no/such/file.py"],
    ["start", "no_such_drill"],
    ["watch", "no_such_drill"],
    ["due", "--bogus"],
])
def test_usage_errors_exit_2_with_one_line(common, args, capsys):
    try:
        code = main([*args, *common])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == ExitCode.USAGE == 2
    err = capsys.readouterr().err
    assert err.strip() and "Traceback" not in err


def test_a_malformed_now_is_a_usage_error(common, capsys):
    assert main(["due", *common[:-1], "not-a-date"]) == ExitCode.USAGE


def test_a_command_that_ran_and_said_no_exits_1(common, capsys):
    assert main(["undo", *common]) == ExitCode.FAILED == 1
    assert main(["rate", "note.md", "--rating", "good", *common]) == ExitCode.OK
    earlier = [*common[:-1], "2020-01-01"]
    assert main(["rate", "note.md", "--rating", "good", *earlier]) == ExitCode.FAILED


def test_a_bug_of_ours_is_one_line_naming_where_its_details_went(common, capsys, monkeypatch, tmp_path):
    """No traceback reaches a user: an exception no check foresaw is a line that says it is a
    bug, and the traceback goes to a crash log in the data dir (exit 70, EX_SOFTWARE).
    STUDYAPP_DEBUG=1 lets it through, for whoever debugs it."""
    import pytest

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("something nobody foresaw")

    monkeypatch.setattr("studyapp.commands.notes.print_due", broken)
    assert main(["due", *common]) == ExitCode.BUG == 70
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("studyapp: note:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "bug" in lines[0] and "ZeroDivisionError: something nobody foresaw" in lines[0]
    log = tmp_path / "data" / "crash.log"
    assert str(log) in lines[0]
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "in broken" in text
    assert "ZeroDivisionError: something nobody foresaw" in text and "due" in text

    monkeypatch.setenv("STUDYAPP_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["due", *common])


def test_an_os_error_naming_a_file_descriptor_is_one_line():
    """`os.fdopen` on a folder names the descriptor's number as the file: the message broke on
    it (a TypeError inside the error's own reporting, a traceback)."""
    from studyapp.errors import user_message

    error = OSError(21, "Is a directory")
    error.filename = 5
    assert user_message(error, None) == "Is a directory"
