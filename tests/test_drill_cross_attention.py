"""cross_attention properties the dev check does not prove: the calls test reuse (the same
states twice, a cache that is not the memory's projection), all-padding sources are reported
but not graded, and the results cross the sandbox unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
DRILL = kernels.DRILLS["cross_attention"]
FOLDER = Path(DRILL.info.folder)

FINITE_FILL = (FOLDER / "reference.py").read_text().replace('float("-inf")', "torch.finfo(scores.dtype).min").replace(
    "weights = torch.nan_to_num(weights, nan=0.0)", "pass")


def _checks(verdict) -> dict[str, dict]:
    return {row["name"]: row for row in verdict["checks"]}


def test_calls_check_reuse_of_the_cache():
    for case in DRILL.public_cases("cpu"):
        steps = case.payload["steps"]
        assert torch.equal(steps[1]["x"], steps[0]["x"]), "call 2 repeats call 1 with the cache"
        assert "given_cache" not in steps[1] and "given_cache" not in steps[2]
        given_k = steps[3]["given_cache"][0]
        own_k = DRILL.oracle(case)[0][1]
        assert given_k.shape == own_k.shape
        assert not torch.allclose(given_k.double().cpu(), own_k, atol=1e-3), case.name


def test_all_padding_sources_are_reported_not_graded(tmp_path):
    nan_rows = kernels.grade_in_process("cross_attention", FOLDER / "bank/right/einsum_float64_inside.py", seed=1)
    assert nan_rows["status"] == "pass"
    assert "NaN" in _checks(nan_rows)["fully masked rows"]["message"]
    path = tmp_path / "finite_fill.py"
    path.write_text(FINITE_FILL)
    finite = kernels.grade_in_process("cross_attention", path, seed=1)
    assert finite["status"] == "pass", finite["summary"]
    assert _checks(finite)["fully masked rows"]["status"] == "fail"
    assert "finite fill" in _checks(finite)["fully masked rows"]["message"]
    right = kernels.grade_in_process("cross_attention", FOLDER / "reference.py", seed=1)
    assert _checks(right)["fully masked rows"]["status"] == "pass"


def test_projecting_the_memory_again_fails_even_with_right_values():
    verdict = kernels.grade_in_process("cross_attention", FOLDER / "bank/wrong/memory_reprojected.py", seed=2)
    checks = _checks(verdict)
    assert verdict["status"] == "fail"
    assert all(checks[name]["status"] == "pass" for name in ("values float32", "values float64", "cache values"))
    assert checks["memory projected once"]["status"] == "fail"
    assert "linear(...)" in checks["memory projected once"]["message"]
    assert re.match(r"(\d+) of \1 cases fail", checks["memory projected once"]["message"]), "every case's calls"


@pytest.fixture(scope="module")
def grader(warm_grader):
    """The test session's warm worker on the real drills (tests/conftest.py)."""
    return warm_grader


@pytest.mark.parametrize("name", ["reference.py", "bank/wrong/cache_ignored.py", "bank/wrong/mask_on_queries.py",
                                  "bank/wrong/memory_reprojected.py", "bank/right/loop_over_batch.py"])
def test_sandboxed_verdict_is_the_in_process_one(grader, name):
    path = FOLDER / name
    sandboxed = grader.grade("cross_attention", path, device="cpu", seed=7)
    trusted = kernels.grade_in_process("cross_attention", path, seed=7)
    assert sandboxed["status"] == trusted["status"]  # the mistake's words are in the summary
    assert sandboxed["summary"] == trusted["summary"]
    assert [row["status"] for row in sandboxed["checks"]] == [row["status"] for row in trusted["checks"]]
