"""The banks: every realistic wrong solution is rejected with the right diagnosis on every run,
and every correct-but-different solution passes (graded in-process: trusted files only)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
BANK = Path(__file__).parent / "drill_bank"
COVERAGE_BANK = Path(__file__).parent / "drill_bank_coverage"
"""Wrong solutions that passed on tiny contiguous cases (fixed buffers, blocks, int8 positions,
devices...) and right ones in unusual styles: issue 16's bank."""
WRONG = sorted(BANK.glob("*/wrong/*.py")) + sorted(COVERAGE_BANK.glob("*/wrong/*.py"))
RIGHT = sorted(BANK.glob("*/right/*.py")) + sorted(COVERAGE_BANK.glob("*/right/*.py"))
SEEDS = tuple(range(20))
"""Twenty fresh seeds per file: the public cases run once, the fresh ones per seed."""


def _id(path: Path) -> str:
    return f"{path.parent.parent.parent.name}/{path.parent.parent.name}/{path.stem}"


def test_banks_are_big_enough():
    assert len(WRONG) >= 20 and len(RIGHT) >= 8
    assert {p.parent.parent.name for p in WRONG} == set(kernels.DRILLS)
    assert len(list(COVERAGE_BANK.glob("*/wrong/*.py"))) >= 30
    assert len(list(COVERAGE_BANK.glob("*/right/*.py"))) >= 10


@pytest.mark.parametrize("path", WRONG, ids=_id)
def test_wrong_solution_is_rejected_with_the_right_diagnosis(path):
    """The file name says the mistake (`<mistake>__<variant>.py`): every seed must name it."""
    expected = path.stem.split("__")[0]
    drill_id = path.parent.parent.name
    verdicts = kernels.grade_in_process_seeds(drill_id, path, seeds=SEEDS)
    for seed, verdict in zip(SEEDS, verdicts):
        assert verdict["status"] in ("fail", "error"), (seed, verdict["summary"])
        assert verdict["mistake"] == expected, (seed, verdict["summary"], verdict["hint"])
        assert verdict["hint"]
        assert verdict["seed"] == seed


@pytest.mark.parametrize("path", RIGHT, ids=_id)
def test_correct_solution_passes(path):
    drill_id = path.parent.parent.name
    verdicts = kernels.grade_in_process_seeds(drill_id, path, seeds=SEEDS)
    for seed, verdict in zip(SEEDS, verdicts):
        assert verdict["status"] == "pass", (seed, verdict["summary"], verdict["hint"])


def test_grading_many_seeds_at_once_matches_grading_each_seed():
    """The shortcut the banks use (public cases run once) gives the verdicts of one-by-one grading."""
    for drill_id, path in [("sdpa", COVERAGE_BANK / "sdpa" / "wrong" / "scale_by_sqrt_m.py"),
                           ("mha", BANK / "mha" / "right" / "reference.py"),
                           ("padding_mask", COVERAGE_BANK / "padding_mask" / "wrong" / "position_overflow__int8.py")]:
        together = kernels.grade_in_process_seeds(drill_id, path, seeds=(3, 4))
        alone = [kernels.grade_in_process(drill_id, path, seed=seed) for seed in (3, 4)]
        assert together == alone


def test_nan_on_fully_masked_rows_passes_core_and_is_reported_in_the_extra_tier():
    verdict = kernels.grade_in_process("sdpa", BANK / "sdpa" / "right" / "masked_fill_inf.py")
    rows = {c["name"]: c for c in verdict["checks"]}
    assert verdict["status"] == "pass"
    assert rows["fully masked rows"]["tier"] == "extra"
    assert "NaN" in rows["fully masked rows"]["message"]
    guarded = kernels.grade_in_process("sdpa", BANK / "sdpa" / "right" / "float64_cast_back.py")
    assert {c["name"]: c for c in guarded["checks"]}["fully masked rows"]["status"] == "pass"


def test_a_diagnosis_quotes_the_failing_case_and_largest_error():
    verdict = kernels.grade_in_process("sdpa", BANK / "sdpa" / "wrong" / "scale_by_d_k.py")
    assert "Q (" in verdict["hint"] and "largest error" in verdict["hint"] and "at output[" in verdict["hint"]
    rows = {c["name"]: c for c in verdict["checks"]}
    assert rows["values float32"]["status"] == "fail" and rows["shape"]["status"] == "pass"


def test_tuple_returns_have_their_weights_graded():
    verdict = kernels.grade_in_process("sdpa", BANK / "sdpa" / "right" / "einsum_tuple.py")
    assert {c["name"]: c for c in verdict["checks"]}["weights"]["status"] == "pass"
