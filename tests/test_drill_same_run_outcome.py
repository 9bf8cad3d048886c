"""Hunt: the 'same run graded twice is recorded once' rule (ff07f1b) drops a run whose outcome
differs. It keys on the source bytes and device only, but a grade of the same bytes is not the
same run when the verdict differs: fresh random cases each grade (another seed), a timeout on a
busy machine, flaky learner code. A PASS shown to the learner is then never recorded: the drill
stays 'failing' with 0 passes, and the try cannot be rated ("nothing to rate yet (pass the
drill ...)") although the screen said PASS."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from test_drill_double_record import SAME_RUN, T0, graded, service  # noqa: F401
from test_drill_workspace_attacks import drill_progress, studyapp

from studyapp.drill_reviews import DrillReviews
from studyapp.drills import catalog, record_attempt

SLOW = '''import math, time
import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    time.sleep(0.05)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        allowed = mask if mask.dtype == torch.bool else mask != 0
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights
'''


def test_a_pass_of_the_same_bytes_after_a_failed_grade_is_recorded(service):  # noqa: F811
    """Same bytes, fail then pass (another seed's cases, a timeout, flaky code): two runs."""
    reviews = DrillReviews(service, catalog())
    reviews.begin("sdpa")
    service.ctx.frozen_now = T0 + timedelta(minutes=1)
    record_attempt(service, graded(b"code", status="fail"), notes=[])
    service.ctx.frozen_now = T0 + timedelta(minutes=2)
    assert record_attempt(service, graded(b"code", status="pass"), notes=[]) is not None
    assert service.store.drill_status()["sdpa"] == "passed"
    assert reviews.proposal("sdpa") is not None  # Hard: passed after 1 failed run


def test_a_timed_out_grade_then_a_pass_of_the_unchanged_file_can_be_rated(tmp_path):
    """As a learner meets it: the grade timed out (a busy machine; here --timeout 1), the
    learner grades the unchanged file again and sees PASS. Actual: 'not counted again',
    drills says failing 0/1, rate-drill: 'nothing to rate yet (pass the drill ...)'."""
    data = tmp_path / "data"
    started = studyapp(data, "start", "sdpa")
    assert started.returncode == 0, started.stderr
    workspace = Path(started.stdout.strip())
    workspace.write_text(SLOW, encoding="utf-8")
    slow = studyapp(data, "grade", "sdpa", str(workspace), "--device", "cpu", "--timeout", "1")
    assert slow.returncode == 1 and "timed out" in slow.stdout, slow.stdout
    again = studyapp(data, "grade", "sdpa", str(workspace), "--device", "cpu", timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr  # PASS, shown to the learner
    assert SAME_RUN not in again.stdout, again.stdout
    progress = drill_progress(data)
    assert (progress["status"], progress["passes"], progress["attempts"]) == ("passed", 1, 2), progress
    rated = studyapp(data, "rate-drill", "sdpa")
    assert rated.returncode == 0, rated.stderr
    assert "passed after 1 failed run" in rated.stdout, rated.stdout


