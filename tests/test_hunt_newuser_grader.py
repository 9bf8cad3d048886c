"""A new user's first wrong sdpa: the verdict blames state the code does not have."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_SCALING = ROOT / "kernels" / "sdpa" / "bank" / "wrong" / "no_scaling.py"


def test_stateless_code_that_forgets_the_scale_is_not_told_it_reuses_an_earlier_call(warm_grader):
    """`no_scaling.py` (the bank's own "forgets to divide by sqrt(d_k)", a pure function) fails
    "second input" with "... while the calls on the case's own inputs are right: something
    kept from an earlier call was reused (K/V or a mask stored on the module, a result cached by
    shape)". Nothing is kept: the case's own inputs only pass because its large scores saturate
    the softmax either way. The hint (no scaling) is right; this check line misleads."""
    verdict = warm_grader.grade("sdpa", str(NO_SCALING), device="cpu")
    assert verdict["status"] == "fail"
    messages = [c["message"] for c in verdict["checks"] if c["status"] == "fail"]
    assert not [m for m in messages if "kept from an earlier call" in m], messages
