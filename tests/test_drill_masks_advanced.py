"""masks_advanced: what the dev check does not cover. The four builders are graded one by one
(a missing or wrong builder is named, the others still graded), the cases reach the sizes the
contract promises, and the sandboxed child finds the builders next to the entry as in-process
grading does."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
FOLDER = Path(kernels.__file__).parent / "masks_advanced"
DRILL = kernels.DRILLS["masks_advanced"]
BUILDERS = ("causal_mask", "sliding_window_mask", "causal_padding_mask", "left_padding_mask")


def _without(builder: str) -> str:
    """The reference with one builder's definition removed."""
    source = (FOLDER / "reference.py").read_text()
    start = source.index(f"def {builder}(")
    end = source.find("\ndef ", start + 1)
    return source[:start] + (source[end + 1:] if end != -1 else "")


def _rows(verdict: dict) -> dict[str, str]:
    return {row["name"]: row["status"] for row in verdict["checks"]}


@pytest.mark.parametrize("builder", BUILDERS[1:])
def test_a_missing_builder_is_named_and_the_others_still_pass(tmp_path, builder):
    path = tmp_path / "solution.py"
    path.write_text(_without(builder))
    verdict = kernels.grade_in_process("masks_advanced", path, seed=3)
    assert verdict["status"] == "fail"
    assert builder in verdict["summary"] and f"no function `{builder}`" in verdict["hint"]
    rows = _rows(verdict)
    assert rows[builder] == "fail"
    assert all(rows[other] == "pass" for other in BUILDERS if other != builder)


def test_two_wrong_builders_name_the_first_mistake_and_list_the_other(tmp_path):
    source = (FOLDER / "reference.py").read_text()
    source = source.replace("tril(diagonal=n_k - n_q)", "tril()")  # causal_top_left
    source = source.replace("keys[None, :] >= n - lengths[:, None]", "keys[None, :] < lengths[:, None]")
    path = tmp_path / "solution.py"
    path.write_text(source)
    verdict = kernels.grade_in_process("masks_advanced", path, seed=3)
    assert verdict["mistake"] == "causal_top_left"
    assert verdict["hint"].startswith("causal_mask:")
    assert "Also wrong: left_padding_mask" in verdict["hint"]
    rows = _rows(verdict)
    assert (rows["causal_mask"], rows["left_padding_mask"]) == ("fail", "fail")
    assert (rows["sliding_window_mask"], rows["causal_padding_mask"]) == ("pass", "pass")


def test_public_cases_cover_decode_chunks_and_sizes_past_int8_and_uint8():
    cases = [case for case in DRILL.public_cases("cpu") if "probe" not in case.payload]
    for builder in BUILDERS:
        mine = [case for case in cases if case.payload["builder"] == builder]
        assert max(case.size for case in mine) > 256, builder
    causal = [case.payload for case in cases if case.payload["builder"] == "causal_mask"]
    assert any(p["n_q"] == 1 and p["n_k"] > 256 for p in causal)  # one-token decode past uint8
    assert any(1 < p["n_q"] < p["n_k"] for p in causal)  # a chunk of prefill
    windows = [case.payload for case in cases if case.payload["builder"] == "sliding_window_mask"]
    assert any(p["window"] == 1 for p in windows) and any(p["window"] > p["n"] for p in windows)


def test_fresh_cases_change_with_the_seed():
    def calls(seed):
        return [case.notes for case in DRILL.fresh_cases(seed, "cpu")]
    assert calls(1) == calls(1) and calls(1) != calls(2)


@pytest.mark.parametrize("name", ["reference.py", "bank/wrong/window_both_sides__band.py",
                                  "bank/wrong/missing_head_dim__batch_n_n.py",
                                  "bank/wrong/hard_coded_device__named_cpu.py"])
def test_the_sandbox_finds_the_builders_and_agrees_with_in_process(name, warm_grader):
    path = FOLDER / name
    sandboxed = warm_grader.grade("masks_advanced", path, device="cpu", seed=11)
    trusted = kernels.grade_in_process("masks_advanced", path, seed=11)
    assert sandboxed["status"] == trusted["status"]
    assert sandboxed["summary"] == trusted["summary"]
    assert [c["status"] for c in sandboxed["checks"]] == [c["status"] for c in trusted["checks"]]
