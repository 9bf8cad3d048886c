"""The grader's contract (`studyapp.grader.contract`): what a verdict, a judgement and the limits
may be, and whose failure an error is. Pure, torch-free and quick."""

from __future__ import annotations

import pytest

from studyapp.config import Settings
from studyapp.grader import verdicts
from studyapp.grader.contract import (
    ChildExit,
    ContractError,
    FailureOrigin,
    GradeLimits,
    Status,
    judgement_from,
    verdict_from,
)


def a_verdict(**changes) -> dict:
    verdict = dict(verdicts.verdict("add", "/w/add.py", "cpu", Status.FAIL, "failed: values",
                                    origin=FailureOrigin.LEARNER,
                                    checks=[{"name": "values", "tier": "core", "status": "fail", "message": "x"}]))
    verdict.update(changes)
    return verdict


def test_a_verdict_the_worker_builds_is_accepted_as_it_is():
    assert verdict_from(a_verdict(seed=7)) == a_verdict(seed=7)
    graded = a_verdict(seed=7, source_sha256="ab" * 32)  # the hash of the bytes it graded
    assert verdict_from(graded) == graded
    passed = dict(verdicts.verdict("add", "f", "cpu", Status.PASS, "all checks pass", origin=None))
    assert verdict_from(passed)["origin"] is None


@pytest.mark.parametrize("changes, words", [
    ({"status": "maybe"}, "maybe"),
    ({"origin": "somebody"}, "somebody"),
    ({"status": "pass"}, "origin"),  # a pass has no failure origin...
    ({"origin": None}, "origin"),  # ...and a failure always has one
    ({"summary": None}, "summary"),
    ({"seconds": "1.0"}, "seconds"),
    ({"output_truncated": 0}, "output_truncated"),
    ({"checks": [{"name": "values"}]}, "tier"),
    ({"seed": True}, "seed"),
    ({"source_sha256": 7}, "source_sha256"),
    ({"source_sha256": "AB" * 32}, "source_sha256"),  # not as hashlib writes it
    ({"source_sha256": "ab"}, "source_sha256"),
])
def test_a_malformed_verdict_is_refused_with_the_field_named(changes, words):
    with pytest.raises(ContractError, match=words):
        verdict_from(a_verdict(**changes))


def test_a_verdict_missing_a_field_is_refused():
    verdict = a_verdict()
    del verdict["detail"]
    with pytest.raises(ContractError, match="detail"):
        verdict_from(verdict)


def test_a_judgement_is_checked_field_by_field():
    judged = {"status": "fail", "summary": "failed: values", "mistake": "no_scaling", "hint": "scale it",
              "checks": [{"name": "values", "tier": "core", "status": "fail", "message": "off by 8"}]}
    assert judgement_from(judged) == judged
    with pytest.raises(ContractError, match="status"):
        judgement_from(dict(judged, status="passed"))
    with pytest.raises(ContractError, match="hint"):
        judgement_from(dict(judged, hint=["scale it"]))
    with pytest.raises(ContractError, match="message"):
        judgement_from(dict(judged, checks=[{"name": "values", "tier": "core", "status": "fail"}]))


def test_limits_come_from_the_settings_and_travel_as_json():
    settings = Settings(grader_timeout=7.5, grader_memory_mb=1234)
    limits = GradeLimits.from_settings(settings)
    assert limits == GradeLimits(timeout=7.5, memory_mb=1234)
    assert GradeLimits.from_json(limits.to_json()) == limits
    for bad in (None, {}, {"timeout": 1}, {"timeout": 0, "memory_mb": 10}, {"timeout": "x", "memory_mb": 1}):
        with pytest.raises(ValueError):
            GradeLimits.from_json(bad)


def test_a_child_exit_code_is_the_graders_only_before_learner_code_started():
    *_, origin = verdicts.describe_exit(ChildExit.SETUP_FAILED, learner_started=False)
    assert origin == FailureOrigin.GRADER
    summary, _, origin = verdicts.describe_exit(ChildExit.SETUP_FAILED, learner_started=True)
    assert origin == FailureOrigin.LEARNER and "status 71" in summary
    *_, origin = verdicts.describe_exit(-11, learner_started=True)
    assert origin == FailureOrigin.LEARNER
