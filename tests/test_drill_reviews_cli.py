"""Drill reviews from the command line, as real processes: `due --json` lists a due drill,
hint / giveup / grade / rate-drill / reset / drills behave as the README says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vault_fixtures import SDPA_NOTE

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
T0 = "2026-05-04T09:00:00+00:00"
NEXT_WEEK = "2026-05-11T09:00:00+00:00"

NOTE = SDPA_NOTE


@pytest.fixture
def home(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "scale.md").write_text(NOTE, encoding="utf-8")
    return tmp_path


def studyapp(home: Path, *args: str, now: str = T0, stdin: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "studyapp", "--vault", str(home / "vault"), "--data-dir",
         str(home / "data"), "--now", now, *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=180, input=stdin)


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_due_json_lists_a_drill_once_its_paired_note_is_reviewed(home):
    before = json.loads(ok(studyapp(home, "due", "--json")))
    assert [(e["kind"], e["path"]) for e in before] == [("note", "scale.md")]
    assert {"title", "drills", "queue", "due_at"} <= before[0].keys()  # the notes' fields stay
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    after = json.loads(ok(studyapp(home, "due", "--json")))
    drills = [e for e in after if e["kind"] == "drill"]
    assert drills == [{"kind": "drill", "id": "sdpa", "title": drills[0]["title"], "queue": "new",
                       "is_new": True, "due_at": drills[0]["due_at"]}]
    assert after[-1]["kind"] == "drill"  # after the note reviews
    assert "Drills due after the notes: sdpa (new)" in ok(studyapp(home, "due"))


def test_hint_giveup_and_rate_drill_schedule_the_drill(home):
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    started = ok(studyapp(home, "start", "sdpa")).strip()
    assert started.endswith("sdpa.py") and "NotImplementedError" in Path(started).read_text()
    first = ok(studyapp(home, "hint", "sdpa"))
    second = ok(studyapp(home, "hint", "sdpa"))
    assert first.startswith("hint 1/") and second.startswith("hint 2/") and first != second
    gave_up = studyapp(home, "giveup", "sdpa", "--yes")
    assert gave_up.returncode == 0, gave_up.stderr
    assert "proposed rating: Again" in gave_up.stdout
    rated = ok(studyapp(home, "rate-drill", "sdpa"))
    assert rated.startswith("sdpa: Again (as proposed")
    due = json.loads(ok(studyapp(home, "due", "--json")))
    assert not [e for e in due if e["kind"] == "drill"]  # rated today: no longer due
    later = json.loads(ok(studyapp(home, "due", "--json", now=NEXT_WEEK)))
    assert [(e["id"], e["queue"]) for e in later if e["kind"] == "drill"] == [("sdpa", "review")]
    listed = {d["id"]: d for d in json.loads(ok(studyapp(home, "drills", "--json")))}
    assert listed["sdpa"]["next_due"] == "2026-05-05" and not listed["sdpa"]["due_now"]
    # given up and rated Again without a run: tried and not passed, not "not started" beside a due date
    assert listed["sdpa"]["status"] == "failing"
    drills = len(list(KERNELS.glob("*/drill.toml")))
    assert f"0 of {drills} drills passed" in ok(studyapp(home, "drills"))


def test_rate_drill_refuses_without_a_finished_try_and_accepts_an_override(home):
    ok(studyapp(home, "start", "sdpa"))
    refused = studyapp(home, "rate-drill", "sdpa")
    assert refused.returncode == 2 and "nothing to rate yet" in refused.stderr
    assert ok(studyapp(home, "rate-drill", "sdpa", "--rating", "easy")).startswith("sdpa: Easy;")
    assert studyapp(home, "rate-drill", "sdpa", "--rating", "7").returncode == 2


def test_reset_asks_first_and_keeps_a_backup(home):
    path = Path(ok(studyapp(home, "start", "sdpa")).strip())
    path.write_text("# my attempt\n")
    declined = studyapp(home, "reset", "sdpa", stdin="n\n")
    assert declined.returncode == 1 and path.read_text() == "# my attempt\n"
    out = ok(studyapp(home, "reset", "sdpa", "--yes"))
    assert "NotImplementedError" in path.read_text()
    backups = list((path.parent / "backups").glob("sdpa-*.py"))
    assert [b.read_text() for b in backups] == ["# my attempt\n"] and str(backups[0]) in out


def test_a_graded_try_proposes_hard_after_a_wrong_run(home):
    ok(studyapp(home, "start", "sdpa"))
    wrong = studyapp(home, "grade", "sdpa", str(KERNELS / "sdpa" / "bank" / "wrong" / "no_scaling.py"))
    assert wrong.returncode == 1 and "proposed rating" not in wrong.stdout
    right = ok(studyapp(home, "grade", "sdpa", str(KERNELS / "sdpa" / "bank" / "right" / "masked_fill_inf.py")))
    assert "proposed rating: Hard (passed after 1 failed run)" in right
    assert ok(studyapp(home, "rate-drill", "sdpa")).startswith("sdpa: Hard (as proposed")


def test_undo_takes_back_a_drill_rating_then_the_note_review_before_it(home):
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    ok(studyapp(home, "start", "sdpa"))
    ok(studyapp(home, "rate-drill", "sdpa", "--rating", "1", now="2026-05-04T09:30:00+00:00"))
    later = "2026-05-04T09:31:00+00:00"
    assert ok(studyapp(home, "undo", now=later)).strip() == "undid the again review of drill sdpa"
    due = json.loads(ok(studyapp(home, "due", "--json", now=later)))
    assert [(e["id"], e["queue"]) for e in due if e["kind"] == "drill"] == [("sdpa", "new")]  # as before
    undone = ok(studyapp(home, "undo", now=later))
    assert undone.startswith("undid the good review of scale.md")
    nothing = studyapp(home, "undo", now=later)
    assert nothing.returncode != 0 and "nothing to undo" in nothing.stderr
    assert "Traceback" not in nothing.stderr
