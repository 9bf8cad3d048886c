"""A new user following the README: CLI behaviour that does not match what the README says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studyapp.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
NOW = "2026-11-25T09:00"

REVIEWED_BEFORE = """---
created: '2026-10-01'
last_reviewed: '2026-11-10'
next_review: '2026-11-20'
review_count: 3
---
# A

## 面试标准答案
a
"""


def common(tmp_path: Path) -> list[str]:
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    return ["--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--now", NOW]


def run(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exc:  # argparse's own errors
        return int(exc.code or 0)


def test_restoring_an_unknown_backup_name_is_a_usage_error(tmp_path, capsys):
    """README, Exit codes: 2 = "an unknown option, drill, note or file" (as `grade` with a
    missing file, `start` with an unknown drill, `rate` with an unknown note). `backup restore
    NOSUCH` says "no backup named NOSUCH" but exits 1."""
    args = common(tmp_path)
    (tmp_path / "vault" / "a.md").write_text(REVIEWED_BEFORE, encoding="utf-8")
    assert run(["due", *args]) == 0
    capsys.readouterr()
    assert run(["backup", "restore", "nosuch", *args]) == 2, capsys.readouterr().err


def test_restoring_a_backup_taken_a_moment_ago_does_not_claim_reviews_after_it(tmp_path, capsys):
    """A fresh data dir on a vault that another tool reviewed: `backup create` then at once
    `backup restore` says "1 note(s) were reviewed after this backup (or never in it): ...
    those reviews are not in the log", though no review was made at all."""
    args = common(tmp_path)
    (tmp_path / "vault" / "a.md").write_text(REVIEWED_BEFORE, encoding="utf-8")
    assert run(["due", *args]) == 0
    assert run(["backup", "create", *args]) == 0
    capsys.readouterr()
    assert run(["backup", "restore", *args]) == 0
    out = capsys.readouterr()
    assert "reviewed after this backup" not in out.out + out.err


def test_every_module_the_readme_names_exists():
    """README ("The counts ...") points at `studyapp/session.py`, `queue_counts`; there is
    no such file (queue_counts lives in studyapp/cards.py)."""
    named = set(re.findall(r"`(studyapp/[\w/]+\.py)`", README))
    missing = sorted(name for name in named if not (ROOT / name).exists())
    assert not missing


def test_the_readme_says_how_to_run_the_studyapp_command():
    """Every CLI example is `studyapp ...`, but `make run` installs it only in .venv/bin and
    the README never says so (nor `source .venv/bin/activate`, nor `make run ARGS=...`): on a
    fresh machine `studyapp doctor` is "command not found"."""
    quick_start = README.split("## Where things live")[0]
    assert any(hint in quick_start for hint in (".venv/bin/studyapp", "activate", "ARGS="))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([__file__]))
