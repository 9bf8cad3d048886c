"""Every call a case makes to the learner's function runs under the grader's watches. In
attention_backward (no autograd) and flash_attention (no fused call, no whole score matrix), only
the first one or two calls of a case were watched; the third, on the case's second inputs, ran
unwatched, and code that noticed (a torch-function mode is on the stack only while watched) used
autograd there, and passed (a hunt's find)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

DRILLS = load_kernels().DRILLS


@pytest.mark.parametrize("drill", ["attention_backward", "flash_attention"])
def test_every_call_of_a_case_is_watched(drill):
    grader = DRILLS[drill]
    reference = grader.oracle
    depths: list[int] = []

    def learner(*args, **kwargs):
        depths.append(torch._C._len_torch_function_stack())
        return spy_answer[0]

    checked = 0
    for case in grader.public_cases("cpu"):
        spy_answer = [reference(case)[0] if drill == "attention_backward" else reference(case)]
        depths.clear()
        grader.run_case(learner, case.payload)
        assert depths, case.notes
        assert all(depth > 0 for depth in depths), f"{case.notes}: calls unwatched: {depths}"
        checked += len(depths) > 2  # a case with its second inputs
    assert checked, "no case called the function on its second inputs"


def test_every_run_of_a_cross_attention_case_is_watched():
    """cross_attention: a call handed a cache must not project the memory again; only the first
    run of a case's steps was watched, so code that noticed could project it on the others."""
    grader = DRILLS["cross_attention"]
    depths: list[int] = []
    watch_step = grader.call_step

    def spying_call(module, step, previous_cache):
        if step.get("given_cache", previous_cache) is not None:
            depths.append(torch._C._len_torch_function_stack())
        return watch_step(module, step, previous_cache)

    grader.call_step = spying_call
    from studyapp_kernels.cross_attention.reference import CrossAttention

    try:
        checked = 0
        for case in grader.public_cases("cpu"):
            depths.clear()
            grader.run_case(CrossAttention, case.payload)
            checked += len(depths) > 1
            assert all(depth > 0 for depth in depths), f"{case.notes}: runs with a cache unwatched: {depths}"
        assert checked, "no case handed a cache twice"
    finally:
        del grader.call_step
