"""What grading the banks shows beyond the dev check: seeds graded together equal seeds graded
one by one, the NaN policy on fully masked rows, what a diagnosis quotes (in-process: trusted files)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
KERNELS = Path(__file__).resolve().parents[1] / "kernels"
"""Each drill's bank lives in its folder (`kernels/<id>/bank/`); `test_drill_folders.py` grades
every file of every bank on twenty seeds. The tests here pin down properties of the grading."""


def bank(drill_id: str, kind: str, name: str) -> Path:
    return KERNELS / drill_id / "bank" / kind / f"{name}.py"


def test_the_four_first_drills_keep_their_banks():
    """Moving the banks into the folders kept every file (issue 16's coverage bank included)."""
    first = ("sdpa", "causal_mask", "padding_mask", "mha")
    wrong = [path for drill in first for path in (KERNELS / drill / "bank" / "wrong").glob("*.py")]
    right = [path for drill in first for path in (KERNELS / drill / "bank" / "right").glob("*.py")]
    assert len(wrong) >= 70 and len(right) >= 24


def test_grading_many_seeds_at_once_matches_grading_each_seed():
    """The shortcut the banks use (public cases run once) gives the verdicts of one-by-one grading."""
    for drill_id, path in [("sdpa", bank("sdpa", "wrong", "scale_by_sqrt_m")),
                           ("mha", bank("mha", "right", "reference")),
                           ("padding_mask", bank("padding_mask", "wrong", "position_overflow__int8"))]:
        together = kernels.grade_in_process_seeds(drill_id, path, seeds=(3, 4))
        alone = [kernels.grade_in_process(drill_id, path, seed=seed) for seed in (3, 4)]
        assert together == alone


def test_nan_on_fully_masked_rows_passes_core_and_is_reported_in_the_extra_tier():
    verdict = kernels.grade_in_process("sdpa", bank("sdpa", "right", "masked_fill_inf"))
    rows = {c["name"]: c for c in verdict["checks"]}
    assert verdict["status"] == "pass"
    assert rows["fully masked rows"]["tier"] == "extra"
    assert "NaN" in rows["fully masked rows"]["message"]
    guarded = kernels.grade_in_process("sdpa", bank("sdpa", "right", "float64_cast_back"))
    assert {c["name"]: c for c in guarded["checks"]}["fully masked rows"]["status"] == "pass"


def test_a_diagnosis_quotes_the_failing_case_and_largest_error():
    verdict = kernels.grade_in_process("sdpa", bank("sdpa", "wrong", "scale_by_d_k"))
    assert "Q (" in verdict["hint"] and "largest error" in verdict["hint"] and "at output[" in verdict["hint"]
    rows = {c["name"]: c for c in verdict["checks"]}
    assert rows["values float32"]["status"] == "fail" and rows["shape"]["status"] == "pass"


def test_tuple_returns_have_their_weights_graded():
    verdict = kernels.grade_in_process("sdpa", bank("sdpa", "right", "einsum_tuple"))
    assert {c["name"]: c for c in verdict["checks"]}["weights"]["status"] == "pass"


@pytest.mark.parametrize("drill_id", ["rope", "kv_cache_mha", "flash_attention", "attention_backward"])
def test_a_memoized_answer_is_right_on_its_own_inputs_and_named_on_second_inputs(drill_id):
    """A result cached by shape passes two calls on the same inputs (values, determinism); the
    call on other inputs of the same shapes names it."""
    verdict = kernels.grade_in_process(drill_id, bank(drill_id, "wrong", "memoized_output"), seed=5)
    rows = {c["name"]: c for c in verdict["checks"]}
    assert verdict["status"] == "fail" and verdict["mistake"] == "memoized_output", verdict["summary"]
    assert rows["second input"]["status"] == "fail" and "third" in rows["second input"]["message"]
    assert all(rows[name]["status"] == "pass" for name in ("values float32", "values float64") if name in rows)


def test_state_the_kv_cache_contract_allows_passes_the_second_inputs():
    """Masks built from the sizes alone and kept on the module are not stale on other inputs."""
    verdict = kernels.grade_in_process("kv_cache_mha", bank("kv_cache_mha", "right", "mask_cached_on_module"), seed=5)
    rows = {c["name"]: c for c in verdict["checks"]}
    assert verdict["status"] == "pass" and rows["second input"]["status"] == "pass", verdict["summary"]
