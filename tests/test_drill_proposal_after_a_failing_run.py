"""A try that passed, then a run that fails: the proposal still rates the try (it passed), but
it said "passed on the first run with no hint" right under a FAIL verdict, as if the failing
file were what it proposed to rate. It now says the latest run fails."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_drill_reviews_cli import KERNELS, home, ok, studyapp  # noqa: F401  (home: a fixture)


def test_the_proposal_after_a_failing_run_says_the_file_fails_now(home):  # noqa: F811
    ok(studyapp(home, "rate", "scale.md", "--rating", "good"))
    workspace = Path(ok(studyapp(home, "start", "sdpa")).strip())
    shutil.copyfile(KERNELS / "sdpa" / "reference.py", workspace)
    passed = ok(studyapp(home, "grade", "sdpa", str(workspace)))
    assert "proposed rating: Good (passed on the first run with no hint)" in passed, passed
    text = workspace.read_text()
    workspace.write_text(text.replace("return ", "return 1.01 * ", 1))

    failed = studyapp(home, "grade", "sdpa", str(workspace), now="2026-05-04T09:05:00+00:00")

    assert failed.returncode != 0 and "fail" in failed.stdout, failed.stdout
    line = next(x for x in failed.stdout.splitlines() if x.startswith("proposed rating:"))
    assert line.startswith("proposed rating: Good (passed on the first run with no hint; "
                           "the latest run fails"), line


def test_runs_at_one_instant_count_in_the_order_they_were_recorded():
    """With a frozen clock (`--now`, scripts), a pass then a fail at the same instant read as
    a fail then a pass: the passed try became "passed after 1 failed run" (Hard)."""
    from datetime import datetime, timezone

    from studyapp.drill_rating import build_try, propose_rating

    at = datetime(2026, 5, 4, 9, tzinfo=timezone.utc)
    attempt = build_try("sdpa", at, [(at, True), (at, False)], [], None)

    assert attempt.runs == (True,)
    proposal = propose_rating(attempt)
    assert proposal is not None and proposal.label == "Good", proposal
