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
    the softmax either way. The hint (no scaling) is right; the check line said state was
    reused as a fact. It now offers both readings."""
    verdict = warm_grader.grade("sdpa", str(NO_SCALING), device="cpu")
    assert verdict["status"] == "fail"
    messages = [c["message"] for c in verdict["checks"] if c["status"] == "fail"]
    blamed = [m for m in messages if "kept from an earlier call" in m]
    assert blamed and all("or a mistake these inputs show" in m for m in blamed), messages


def test_a_result_cached_by_shape_is_named_as_such(warm_grader, tmp_path):
    """The other side: code that returns its first result again is told so plainly."""
    path = tmp_path / "cached.py"
    path.write_text(
        "import math, torch\n"
        "_kept = {}\n"
        "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
        "    key = (tuple(Q.shape), tuple(K.shape), None if mask is None else tuple(mask.shape), Q.dtype)\n"
        "    if key not in _kept:\n"
        "        s = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])\n"
        "        if mask is not None:\n"
        "            s = s.masked_fill(mask == 0, float('-inf'))\n"
        "        _kept[key] = torch.nan_to_num(torch.softmax(s, -1)) @ V\n"
        "    return _kept[key].clone()\n")
    verdict = warm_grader.grade("sdpa", str(path), device="cpu")
    messages = [c["message"] for c in verdict["checks"] if c["status"] == "fail"]
    assert verdict["status"] == "fail"
    assert any("returned the first call's result again" in m for m in messages), messages
