"""safe_softmax: what the dev check does not cover. The gradient is graded on its own (a
forward that is right cannot hide a NaN or missing gradient), the cases reach what the
contract promises, and the sandboxed child finds `masked_logsumexp` next to the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
FOLDER = Path(kernels.__file__).parent / "safe_softmax"
DRILL = kernels.DRILLS["safe_softmax"]


def _rows(verdict: dict) -> dict[str, str]:
    return {row["name"]: row["status"] for row in verdict["checks"]}


def _grade(tmp_path, source: str, seed: int = 4) -> dict:
    path = tmp_path / "solution.py"
    path.write_text(source)
    return kernels.grade_in_process("safe_softmax", path, seed=seed)


def test_a_detached_output_fails_only_the_gradient_checks(tmp_path):
    source = (FOLDER / "reference.py").read_text().replace(
        "    exps, _, total = _shifted_exp(x, mask, dim)\n",
        "    exps, _, total = _shifted_exp(x.detach(), mask, dim)\n")
    verdict = _grade(tmp_path, source)
    rows = _rows(verdict)
    assert verdict["status"] == "fail"
    assert rows["softmax gradient"] == "fail" and rows["logsumexp gradient"] == "pass"
    assert rows["softmax values"] == rows["fully masked rows"] == "pass"
    assert "no gradient reached x" in verdict["hint"]


def test_a_nan_gradient_on_an_empty_row_is_reported_there(tmp_path):
    source = (FOLDER / "bank/wrong/nan_gradient_on_masked_rows__where_after_exp.py").read_text()
    verdict = _grade(tmp_path, source)
    rows = _rows(verdict)
    assert rows["softmax values"] == rows["fully masked rows"] == "pass"  # the forward is right
    assert rows["softmax gradient"] == "fail"
    assert "got nan" in verdict["hint"] and "fully masked row" in verdict["hint"]


def test_a_missing_logsumexp_is_named_and_the_softmax_still_graded(tmp_path):
    source = (FOLDER / "reference.py").read_text()
    source = source[:source.index("def masked_logsumexp(")]
    verdict = _grade(tmp_path, source)
    rows = _rows(verdict)
    assert verdict["status"] == "fail" and "no function `masked_logsumexp`" in verdict["hint"]
    assert rows["softmax values"] == rows["softmax gradient"] == "pass"


def test_public_cases_reach_what_the_statement_promises():
    cases = [case for case in DRILL.public_cases("cpu") if "probe" not in case.payload]
    x = [case.payload["x"] for case in cases]
    assert max(float(t.abs().max()) for t in x) >= 9_000  # |x| up to 1e4
    assert any(t.dtype == torch.float16 and float(t.abs().max()) >= 9_000 for t in x)
    assert max(max(t.shape) for t in x) > 256
    assert any(not t.is_contiguous() for t in x)
    assert any(case.payload["mask"].stride(0) == 0 or case.payload["mask"].shape != case.payload["x"].shape
               for case in cases)  # a broadcast mask
    assert any(case.payload["dim"] % case.payload["x"].dim() != case.payload["x"].dim() - 1 for case in cases)
    low = {case.payload["x"].dtype for case in cases if case.tier == "extra"}
    assert low == {torch.float16, torch.bfloat16}
    empty_rows = [case for case in cases if not case.payload["mask"].expand(case.payload["x"].shape)
                  .any(case.payload["dim"]).all()]
    assert len(empty_rows) >= len(cases) // 2
    assert all("g_softmax" in case.payload for case in cases if case.tier == "core")


@pytest.mark.parametrize("name", ["reference.py", "bank/wrong/nan_gradient_on_masked_rows__lse_single_where.py",
                                  "bank/wrong/fill_overflows_float16__minus_1e9.py",
                                  "bank/wrong/hard_coded_device__named_cpu.py"])
def test_the_sandbox_finds_logsumexp_and_agrees_with_in_process(name, warm_grader):
    path = FOLDER / name
    sandboxed = warm_grader.grade("safe_softmax", path, device="cpu", seed=11)
    trusted = kernels.grade_in_process("safe_softmax", path, seed=11)
    assert sandboxed["status"] == trusted["status"]
    assert sandboxed["summary"] == trusted["summary"]
    assert [c["status"] for c in sandboxed["checks"]] == [c["status"] for c in trusted["checks"]]
