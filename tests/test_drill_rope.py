"""The rope drill's own promises, beyond the dev check: its oracle is RoPE (checked against the
identities RoPE is defined by, not against itself), the relative-position check judges the
learner's outputs (a wrong rotation that is still a rotation passes it, a broken one fails it),
and the float16 case past position 2048 decides the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
from studyapp_kernels.rope.grade import relative_violation, rotate  # noqa: E402

BANK = Path(kernels.__file__).parent / "rope" / "bank"


def _check(verdict: dict, name: str) -> str:
    return next(row["status"] for row in verdict["checks"] if row["name"] == name)


def test_the_layouts_differ_by_a_permutation_of_dims():
    """Interleaved RoPE on x equals rotate-half RoPE on x with even dims first (then undone)."""
    x = torch.randn(2, 3, 7, 10, dtype=torch.float64)
    evens_first = torch.cat((torch.arange(0, 10, 2), torch.arange(1, 10, 2)))
    pairs = rotate(x, offset=5, base=300.0, interleaved=True)
    halves = rotate(x[..., evens_first], offset=5, base=300.0, interleaved=False)
    assert torch.allclose(pairs[..., evens_first], halves, atol=1e-12)


def test_the_oracle_turns_pair_zero_by_the_position_in_radians():
    x = torch.zeros(1, 1, 4, 6, dtype=torch.float64)
    x[..., 0] = 1.0  # pair 0 of the rotate-half layout is dims (0, 3): its angle is the position
    out = rotate(x, offset=7)
    positions = torch.arange(7, 11, dtype=torch.float64)
    assert torch.allclose(out[0, 0, :, 0], positions.cos()) and torch.allclose(out[0, 0, :, 3], positions.sin())
    assert torch.allclose(out.norm(dim=-1), x.norm(dim=-1))  # a rotation keeps lengths


def test_relative_violation_is_zero_for_rope_and_large_for_restarted_positions():
    qk = torch.randn(2, 2, 1, 8, dtype=torch.float64).expand(2, 2, 40, 8)
    at_zero = rotate(qk)
    worst, _, _ = relative_violation(rotate(qk, offset=9), at_zero, 9)
    assert worst < 1e-12
    worst, _, what = relative_violation(at_zero, at_zero, 9)  # offset=9 asked, positions restarted
    assert worst > 0.05 and "offset=9" in what


@pytest.mark.parametrize("stem, property_holds", [
    ("other_layout__always_rotate_half", True),  # still a rotation by i * theta: relative
    ("sign_flipped", True),
    ("offset_ignored", False),
    ("halves_unpaired__pairs_cache_with_rotate_half", False),  # no longer a rotation
    ("positions_along_heads", False),
])
def test_the_relative_position_check_judges_the_outputs(stem, property_holds):
    verdict = kernels.grade_in_process("rope", BANK / "wrong" / f"{stem}.py")
    assert verdict["status"] == "fail"
    assert _check(verdict, "relative position") == ("pass" if property_holds else "fail")


def test_float16_angles_fail_the_verdict_past_position_2048():
    verdict = kernels.grade_in_process("rope", BANK / "wrong" / "angle_precision__input_dtype.py")
    assert verdict["status"] == "fail" and verdict["mistake"] == "angle_precision"
    assert _check(verdict, "long positions float16") == "fail"
    assert _check(verdict, "values float32") == "pass" and _check(verdict, "values float64") == "pass"
    case = next(c for c in kernels.DRILLS["rope"].make_cases(0, "cpu") if c.value_check == "long positions float16")
    assert case.tier == "core" and case.payload["kwargs"]["offset"] > 2048
