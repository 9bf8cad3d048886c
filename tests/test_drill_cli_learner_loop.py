"""A new drill from the command line, as a learner meets it, in real processes: `start gqa`,
the starter graded, a wrong solution named, the hint ladder walked to its end, a give-up that
asks first, a reset that keeps the learner's file; and bad input (an unknown drill, a file
with a syntax error, an empty file, the wrong name) answered in one clear line, never a
traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
GQA = ROOT / "kernels" / "gqa"
META = tomllib.loads((GQA / "drill.toml").read_text(encoding="utf-8"))
NOW = "2026-05-04T09:00:00+00:00"
TRACEBACK = "Traceback (most recent call last)"

NOTE = """---
created: '2026-05-01'
last_reviewed: null
next_review: '2026-05-01'
review_count: 0
difficulty: medium
mastery_level: 0.0
drills: [gqa]
tags: [attention]
---
# Why share K/V heads across query heads?

## 面试标准答案
A smaller KV cache: G query heads read one KV head.
"""


@pytest.fixture
def home(tmp_path):
    vault = tmp_path / "vault"
    (vault / ".studyapp" / "log").mkdir(parents=True)
    (vault / "gqa.md").write_text(NOTE, encoding="utf-8")
    return tmp_path


def studyapp(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "studyapp", "--vault", str(home / "vault"), "--data-dir",
         str(home / "data"), "--now", NOW, *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=180, input=stdin)
    assert TRACEBACK not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def reference_body() -> str:
    """A line of the reference that only the reference has (its `def` is the starter's too)."""
    lines = (GQA / "reference.py").read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if "repeat_interleave" in line)


def test_the_gqa_loop_start_grade_hints_giveup_reset(home, tmp_path):
    assert studyapp(home, "rate", "gqa.md", "--rating", "good").returncode == 0  # gqa is due now
    started = studyapp(home, "start", "gqa")
    assert started.returncode == 0, started.stderr
    workspace = Path(started.stdout.strip())
    assert workspace.read_text(encoding="utf-8") == (GQA / "starter.py").read_text(encoding="utf-8")

    wrong = GQA / "bank" / "wrong" / "repeat_not_interleave__repeat.py"
    graded = studyapp(home, "grade", "gqa", str(workspace), str(wrong))
    assert graded.returncode == 1
    starter_verdict, wrong_verdict = graded.stdout.split("\n" + "FAIL  ")
    assert starter_verdict.startswith(f"ERROR  {workspace}")
    assert "raised NotImplementedError" in starter_verdict
    assert "write grouped-query attention here" in starter_verdict  # the starter's own words
    # One block per file: every line under the status line is indented, the hint's too (a
    # multi-line hint, here where the code raised, must not fall back to the left margin).
    assert all(line.startswith("  ") for line in starter_verdict.splitlines()[1:]), starter_verdict
    assert f"(looks like: {META['mistakes']['repeat_not_interleave']})" in wrong_verdict

    hints = META["hints"]
    for number, text in enumerate(hints, 1):
        shown = studyapp(home, "hint", "gqa")
        assert shown.returncode == 0 and shown.stdout == f"hint {number}/{len(hints)}: {text}\n"
    none_left = studyapp(home, "hint", "gqa")
    assert none_left.returncode == 1
    assert none_left.stdout.startswith(f"all {len(hints)} hints of gqa are shown")
    assert "studyapp giveup gqa" in none_left.stdout

    for answer in ("n\n", "", "maybe\n"):  # no, end of input, anything but yes: nothing given away
        declined = studyapp(home, "giveup", "gqa", stdin=answer)
        assert declined.returncode == 1, declined.stdout
        assert reference_body() not in declined.stdout and "proposed rating" not in declined.stdout
        assert declined.stdout.rstrip().endswith("not given up")
    unrated = studyapp(home, "rate-drill", "gqa")  # a declined give-up finished no try
    assert unrated.returncode == 2 and "nothing to rate yet" in unrated.stderr
    gave_up = studyapp(home, "giveup", "gqa", stdin="y\n")
    assert gave_up.returncode == 0, gave_up.stderr
    assert reference_body() in gave_up.stdout
    assert "proposed rating: Again (gave up" in gave_up.stdout

    mine = "# my attempt at GQA\n"
    workspace.write_text(mine, encoding="utf-8")
    reset = studyapp(home, "reset", "gqa", "--yes")
    assert reset.returncode == 0, reset.stderr
    assert workspace.read_text(encoding="utf-8") == (GQA / "starter.py").read_text(encoding="utf-8")
    (backup,) = (workspace.parent / "backups").glob("gqa-*.py")
    assert backup.read_text(encoding="utf-8") == mine and str(backup) in reset.stdout


def test_giveup_yes_skips_the_question(home):
    assert studyapp(home, "start", "gqa").returncode == 0
    gave_up = studyapp(home, "giveup", "gqa", "--yes")
    assert gave_up.returncode == 0 and reference_body() in gave_up.stdout
    assert "[y/N]" not in gave_up.stdout


@pytest.mark.parametrize("command", [
    ("start", "nope"), ("hint", "nope"), ("giveup", "nope"), ("giveup", "nope", "--yes"),
    ("rate-drill", "nope"), ("reset", "nope", "--yes"), ("grade", "nope", "x.py"),
    ("hint", "GQA"),
])
def test_an_unknown_drill_is_one_line_naming_the_choices(home, command):
    result = studyapp(home, *command, stdin="y\n")
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"studyapp: error: unknown drill {command[1]!r}") and "gqa" in line


def test_broken_files_each_get_a_clear_verdict(home, tmp_path):
    broken = {
        "syntax.py": ("def gqa_attention(Q, K, V, mask=None)\n    return Q\n",
                      "syntax error on line 1"),
        "empty.py": ("", "no function or class named `gqa_attention`"),
        "misnamed.py": ("def attention(Q, K, V, mask=None):\n    return Q\n",
                        "Your file defines: attention."),
    }
    files = []
    for name, (text, _) in broken.items():
        files.append(tmp_path / name)
        files[-1].write_text(text, encoding="utf-8")
    graded = studyapp(home, "grade", "gqa", *map(str, files))
    assert graded.returncode == 1
    verdicts = graded.stdout.split("ERROR  ")[1:]
    assert len(verdicts) == len(broken), graded.stdout
    for verdict, path, (_, expected) in zip(verdicts, files, broken.values()):
        assert verdict.startswith(str(path)) and expected in verdict, verdict
    missing = studyapp(home, "grade", "gqa", str(tmp_path / "nowhere.py"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"studyapp: error: no such file: {tmp_path / 'nowhere.py'}"


def test_a_new_drill_due_today_is_due_now_in_the_drill_lists(home):
    """`due` puts gqa in today's session once its note is reviewed; `drills`, `drills --json`
    and the app's Drills screen must say so too, not "-" as for a drill not introduced."""
    from studyapp.context import build_context
    from studyapp.facade import StudyFacade

    assert studyapp(home, "rate", "gqa.md", "--rating", "good").returncode == 0
    assert "Drills due after the notes: gqa (new)" in studyapp(home, "due").stdout
    listed = {d["id"]: d for d in json.loads(studyapp(home, "drills", "--json").stdout)}
    assert (listed["gqa"]["due_now"], listed["gqa"]["next_due"]) == (True, NOW[:10])
    assert listed["rope"]["next_due"] is None and not listed["rope"]["due_now"]  # not paired
    (row,) = [line for line in studyapp(home, "drills").stdout.splitlines() if line.startswith("gqa ")]
    assert "due now" in row
    ctx = build_context(vault=str(home / "vault"), data_dir=str(home / "data"), now=NOW, seed=False)
    study = StudyFacade(ctx)
    study.load()
    screen = {p.id: p for p in study.drill_progress()}
    assert screen["gqa"].due_now and screen["gqa"].next_due.isoformat() == NOW[:10]
    assert not screen["rope"].due_now


def test_after_a_pass_giveup_shows_the_reference_without_a_false_warning(home):
    """A passed try has earned its rating; giving up then cannot make it Again, so the
    question that says it would is not asked, and the rating stays the pass's."""
    assert studyapp(home, "rate", "gqa.md", "--rating", "good").returncode == 0
    workspace = Path(studyapp(home, "start", "gqa").stdout.strip())
    workspace.write_text((GQA / "reference.py").read_text(encoding="utf-8"), encoding="utf-8")
    graded = studyapp(home, "grade", "gqa", str(workspace))
    assert graded.returncode == 0 and "proposed rating: Good" in graded.stdout
    shown = studyapp(home, "giveup", "gqa")  # no answer given: none is needed
    assert shown.returncode == 0, shown.stdout
    assert "rated Again" not in shown.stdout and reference_body() in shown.stdout
    assert "proposed rating: Good" in shown.stdout


def test_a_rating_out_of_range_says_what_is_accepted(home):
    """`--rating` takes a name or 1-4 (the help says so): the refusal of 7 says both."""
    refused = studyapp(home, "rate-drill", "gqa", "--rating", "7")
    assert refused.returncode == 2 and refused.stdout == ""
    last = refused.stderr.strip().splitlines()[-1]
    assert "again, hard, good or easy" in last and "1-4" in last and "'7'" in last, last


def test_grading_a_folder_says_it_is_not_a_file(home, tmp_path):
    """A folder given by mistake (tab completion stops at one) exists: "no such file" misleads."""
    folder = tmp_path / "solutions"
    folder.mkdir()
    refused = studyapp(home, "grade", "gqa", str(folder))
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"studyapp: error: not a file: {folder}"
