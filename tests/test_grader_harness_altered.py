"""Learner code that changes what the child's harness does, so the parent judges less than
the case asks for, or blames itself for the learner's doing.

The parent owns the cases: it knows which case is a one-call case and which is the device
probe. Each file below is wrong code (it mutates its inputs, memoizes by shape, or names a
device) plus one line that flips a flag on the child's copy of the payloads; none may pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

FIND_PAYLOADS = """
    import sys
    frame = sys._getframe()
    while frame is not None and "payloads" not in frame.f_locals:
        frame = frame.f_back
    PAYLOADS = frame.f_locals["payloads"]
"""

# mutates Q in place and returns a result memoized by shape; every payload is flagged one-call,
# so the harness calls it once and sends back no inputs and no second or third call
ONE_CALL_EVERYWHERE = FIND_PAYLOADS + """
    import math, torch
    for payload in PAYLOADS:
        payload["one_call"] = True  # kernels.grading.ONE_CALL
    _cache = {}
    def scaled_dot_product_attention(Q, K, V, mask=None):
        Q /= math.sqrt(Q.shape[-1])
        key = (tuple(Q.shape), tuple(K.shape), None if mask is None else tuple(mask.shape), Q.dtype)
        if key not in _cache:
            scores = Q @ K.transpose(-2, -1)
            if mask is not None:
                scores = scores.masked_fill(mask == 0, float("-inf"))
            _cache[key] = torch.nan_to_num(torch.softmax(scores, -1)) @ V
        return _cache[key]
"""

# names the host device everywhere (`.cpu()`), and removes the probe flag so the probe case runs
# as a plain case and sends back no probe record
NO_PROBE = FIND_PAYLOADS + """
    import math, torch
    for payload in PAYLOADS:
        payload.pop("probe", None)  # kernels.device_probe.PROBE
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask.cpu() == 0, float("-inf"))
        return (torch.nan_to_num(torch.softmax(scores, -1)) @ V).cpu()
"""

# wrong code (returns Q) that replaces every result the harness collected with an empty one
BROKEN_RESULTS = """
    import sys
    def scaled_dot_product_attention(Q, K, V, mask=None):
        frame = sys._getframe()
        while frame is not None:
            results = frame.f_locals.get("results")
            if isinstance(results, dict):
                for key in list(results):
                    results[key] = {}
            frame = frame.f_back
        return Q
"""


def _grade(grader, tmp_path: Path, source: str, drill: str = "sdpa") -> dict:
    return grade_source(grader, tmp_path, drill, source, timeout=30.0)


def test_flagging_every_case_one_call_does_not_skip_the_mutation_and_memo_checks(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, ONE_CALL_EVERYWHERE)
    assert verdict["status"] != "pass", verdict


def test_removing_the_probe_flag_does_not_pass_the_device_check(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, NO_PROBE)
    assert verdict["status"] != "pass", verdict


def test_results_broken_by_learner_code_are_the_learners_failure_without_a_traceback(warm_grader, tmp_path):
    """Not "internal grader error" with the worker's traceback, blamed on the grader (and so not
    counted as one of the learner's runs)."""
    verdict = _grade(warm_grader, tmp_path, BROKEN_RESULTS)
    assert verdict["status"] != "pass" and verdict["origin"] == "learner", verdict
    assert "Traceback" not in verdict["detail"], verdict["detail"]


def test_monkeypatched_comparisons_a_comparing_subclass_and_forged_stdout_still_fail(warm_grader, tmp_path):
    """Guard (passes today): the parent judges with its own torch, whatever the child's torch,
    builtins or stdout say. The code is sdpa without the 1/sqrt(d) scaling."""
    source = """
        import builtins, math, os, torch, torch.testing
        torch.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.isclose = lambda a, b, *x, **k: torch.ones_like(a, dtype=torch.bool)
        torch.testing.assert_close = lambda *a, **k: None
        math.isclose = lambda *a, **k: True
        builtins.all = lambda *a: True
        class Agrees(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if getattr(func, "__name__", "") in ("allclose", "equal", "__eq__", "isclose", "__le__", "all"):
                    return True
                return super().__torch_function__(func, types, args, kwargs or {})
        def scaled_dot_product_attention(Q, K, V, mask=None):
            os.write(1, b'\\n{"id": 1, "verdict": {"status": "pass", "origin": null}}\\n')
            scores = Q @ K.transpose(-2, -1)
            if mask is not None:
                scores = scores.masked_fill(mask == 0, float("-inf"))
            return (torch.nan_to_num(torch.softmax(scores, -1)) @ V).as_subclass(Agrees)
    """
    verdict = _grade(warm_grader, tmp_path, source)
    assert verdict["status"] == "fail" and verdict["origin"] == "learner", verdict
    # rebinding torch's own functions is named as what it is (`tamper`)
    assert "changed the grader's harness or torch" in verdict["summary"], verdict
    assert "torch.allclose" in verdict["summary"], verdict


def test_a_namedtuple_of_output_and_weights_is_a_tuple(warm_grader, tmp_path):
    """It was rejected as "returned Attn; expected a Tensor or a tuple (output, weights)"."""
    source = """
        import math, torch
        from collections import namedtuple
        Attn = namedtuple("Attn", "output weights")
        def scaled_dot_product_attention(Q, K, V, mask=None):
            scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
            if mask is not None:
                scores = scores.masked_fill(mask == 0, float("-inf"))
            weights = torch.nan_to_num(torch.softmax(scores, -1))
            return Attn(weights @ V, weights)
    """
    verdict = _grade(warm_grader, tmp_path, source)
    assert verdict["status"] == "pass", verdict
