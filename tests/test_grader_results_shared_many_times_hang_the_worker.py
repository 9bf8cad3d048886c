"""Wrong code that fills the results collected so far with one list shared many times over (16
references to the same list, ten levels down: a few hundred bytes once pickled) keeps the
worker busy for good: the parent's check that results are plain data (`results._plain_problem`)
walks every path through them, 16**10 of them, with no clock of its own. `studyapp grade`
waits out its allowance (the timeout plus 120 s: 125 s with `--timeout 5`) and then says "the
grader stopped unexpectedly", the grader's failure, after killing the worker.

The learner's own time limit is long over by then: a grade must not outlast it by minutes, and
what the learner sent must be judged (or refused) as the learner's."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path

import pytest
from grader_helpers import grade_limits

from studyapp.grader.client import GraderClient

pytest.importorskip("torch")

# returns Q (wrong), and from inside its call makes every result collected so far a tree of
# 16**10 leaves that is one small list per level
SHARED_LISTS = """
    import sys
    def scaled_dot_product_attention(Q, K, V, mask=None):
        level = [0]
        for _ in range(10):
            level = [level] * 16
        frame = sys._getframe()
        while frame is not None:
            results = frame.f_locals.get("results")
            if isinstance(results, dict):
                for key in list(results):
                    results[key] = {"calls": level}
            frame = frame.f_back
        return Q
"""
TIMEOUT = 5.0
WAIT = 60.0
"""Far more than a grade of 5 s needs, far less than the client's allowance (125 s)."""


def test_results_that_share_their_lists_get_a_verdict_in_time(tmp_path: Path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(SHARED_LISTS))
    answer: dict = {}
    with GraderClient(grade_limits(timeout=TIMEOUT)) as grader:
        grader.start()
        started = time.monotonic()
        thread = threading.Thread(target=lambda: answer.update(
            verdict=grader.grade("sdpa", path, device="cpu", seed=7, limits=grade_limits(timeout=TIMEOUT))),
            daemon=True)
        thread.start()
        thread.join(WAIT)
        took = time.monotonic() - started
        finished = not thread.is_alive()
        if not finished:
            grader.cancel()
            grader._kill()  # the worker is stuck judging: stop it so the test ends
    assert finished, f"no verdict after {took:.0f} s for a grade with a {TIMEOUT:g} s limit"
    verdict = answer["verdict"]
    assert verdict["status"] != "pass", verdict
    assert verdict["origin"] == "learner", (verdict["summary"], verdict["origin"])
