"""Checks shared by the drills whose answer is attention output (sdpa, mha): the tolerance
policy, weights, determinism, mutation, fully masked rows, and diagnosis by known mistakes."""

from __future__ import annotations

import torch

from .attention import fully_masked_rows
from .grading import (CORE, DEFAULT_TOLERANCE, EXTRA, MISTAKE_MATCH, Case, CheckBook, Drill,
                      Failure, compare_values, format_index, mistake_distance, same_values,
                      shape_text, unpack_output)

CHECK_ORDER = [
    ("return type", CORE), ("shape", CORE), ("dtype", CORE), ("device", CORE),
    ("inputs unchanged", CORE), ("deterministic", CORE), ("values float32", CORE),
    ("values float64", CORE), ("weights", CORE),
    ("float16 accuracy", EXTRA), ("bfloat16 accuracy", EXTRA), ("fully masked rows", EXTRA),
]
FLOOR_FACTOR = 10.0
"""A case's atol is at least this times the error of PyTorch's own same-dtype computation."""
STRUCTURAL = ("return type", "shape", "dtype", "device", "inputs unchanged", "deterministic")
"""Checks diagnosed by what they are, before any comparison with known mistakes' values."""
NAN_IS_THE_SYMPTOM = {"unstable_softmax"}
LOW_PRECISION_FACTOR = 4.0
"""float16/bfloat16 pass when within this many times PyTorch's own kernel's error."""


class AttentionDrill(Drill):
    """Grades a function/module returning attention output, optionally with its weights."""

    check_order = CHECK_ORDER
    input_names: tuple[str, ...] = ("Q", "K", "V", "mask")

    # --- per-drill pieces -------------------------------------------------------------------
    def oracle(self, case: Case) -> tuple[torch.Tensor, torch.Tensor]:
        """float64 (output, weights) on CPU."""
        raise NotImplementedError

    def same_dtype_references(self, case: Case) -> list[torch.Tensor]:
        """Outputs of correct computations in the case's dtype (sets the error floor)."""
        raise NotImplementedError

    def candidates(self, case: Case) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
        raise NotImplementedError

    def weights_shape(self, case: Case) -> tuple[int, ...]:
        raise NotImplementedError

    # --- shared -----------------------------------------------------------------------------
    def _expected(self, case: Case):
        if "oracle" not in case.extra:
            case.extra["oracle"] = self.oracle(case)
            out, weights = case.extra["oracle"]
            case.extra["masked_rows"] = fully_masked_rows(self._mask_for_rows(case), weights.shape)
        return case.extra["oracle"], case.extra["masked_rows"]

    def _mask_for_rows(self, case: Case):
        return case.payload.get("mask")

    def _reference_error(self, case: Case) -> float:
        """Largest error of a correct same-dtype computation vs the oracle on this case."""
        if "reference_error" not in case.extra:
            (out, _), ignore = self._expected(case)
            worst = 0.0
            for ref in self.same_dtype_references(case):
                _, err, *_ = compare_values(ref.cpu(), out, 0.0, 0.0, ignore)
                worst = max(worst, err)
            case.extra["reference_error"] = worst
        return case.extra["reference_error"]

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        core = case.tier == CORE
        name = (lambda check: check) if core else (lambda check: case.value_check)
        where = f"{case.name} ({case.notes})"
        first, second = result["calls"]
        out, weights, problem = unpack_output(first, allow_weights=True)
        if problem:
            book.failed(name("return type"), case, result, f"{where}: {problem}")
            return
        if core:
            book.passed("return type")
        (expected, expected_w), ignore = self._expected(case)
        if tuple(out["shape"]) != tuple(expected.shape):
            book.failed(name("shape"), case, result,
                        f"{where}: output shape {shape_text(out['shape'])}, expected {shape_text(expected.shape)}")
            return
        if core:
            book.passed("shape")
        dtype = str(case.payload["Q"].dtype)
        if out["dtype"] != dtype:
            book.failed(name("dtype"), case, result, f"{where}: output dtype {out['dtype']}, expected {dtype} (the inputs' dtype)")
            return
        if core:
            book.passed("dtype")
        device = str(case.payload["Q"].device)
        if out["device"] != device:
            book.failed(name("device"), case, result, f"{where}: output on {out['device']}, inputs on {device}")
        elif core:
            book.passed("device")
        if core:
            self._check_inputs(case, result, book, where)
            self._check_determinism(first, second, case, result, book, where)
        self._check_values(case, result, book, out["tensor"], expected, ignore, where)
        if weights is not None:
            self._check_weights(case, result, book, weights, expected_w, ignore, where)
        elif core:
            book.note("weights", "skip", "weights not returned (output only)")
        if ignore.any():
            self._report_masked_rows(out["tensor"], ignore, book, where)

    def _check_inputs(self, case, result, book, where):
        for input_name, after in zip(self.input_names, result.get("inputs", [])):
            before = case.payload.get(input_name)
            if isinstance(before, torch.Tensor) and after.get("type") == "Tensor":
                if not same_values(after["tensor"], before.detach().cpu()):
                    book.failed("inputs unchanged", case, result,
                                f"{where}: {input_name} was modified in place (use out-of-place ops)")
                    return
        book.passed("inputs unchanged")

    def _check_determinism(self, first, second, case, result, book, where):
        one, one_w, _ = unpack_output(first, allow_weights=True)
        two, two_w, problem = unpack_output(second, allow_weights=True)
        same = (problem is None and same_values(one["tensor"], two["tensor"])
                and (one_w is None) == (two_w is None)
                and (one_w is None or same_values(one_w["tensor"], two_w["tensor"])))
        if same:
            book.passed("deterministic")
        else:
            book.failed("deterministic", case, result, f"{where}: two calls on the same inputs returned different results")

    def tolerance(self, case: Case) -> tuple[float, float]:
        dtype = case.payload["Q"].dtype
        rtol, atol = DEFAULT_TOLERANCE[dtype]
        if case.tier == CORE:
            return rtol, max(atol, FLOOR_FACTOR * self._reference_error(case))
        return rtol, max(atol, LOW_PRECISION_FACTOR * self._reference_error(case))

    def _check_values(self, case, result, book, actual, expected, ignore, where):
        rtol, atol = self.tolerance(case)
        ok, err, index, got, want = compare_values(actual, expected, rtol, atol, ignore)
        if ok:
            book.passed(case.value_check)
        else:
            book.failed(case.value_check, case, result,
                        f"{where}: largest error {err:.3g} at output{format_index(index)} "
                        f"(got {got:.6g}, expected {want:.6g}; tolerance {atol:.1g} + {rtol:.1g}*|expected|)")

    def _check_weights(self, case, result, book, weights, expected_w, ignore, where):
        check = "weights" if case.tier == CORE else case.value_check
        wanted = self.weights_shape(case)
        if tuple(weights["shape"]) != tuple(wanted):
            book.failed(check, case, result, f"{where}: weights shape {shape_text(weights['shape'])}, expected {shape_text(wanted)}")
            return
        rtol, atol = self.tolerance(case)
        ok, err, index, got, want = compare_values(weights["tensor"], expected_w, rtol, atol, ignore)
        if ok:
            book.passed(check)
        else:
            book.failed(check, case, result, f"{where}: largest weights error {err:.3g} at weights{format_index(index)} "
                        f"(got {got:.6g}, expected {want:.6g})")

    def _report_masked_rows(self, actual, ignore, book, where):
        rows = actual[ignore]
        if bool((rows == 0).all()):
            book.note("fully masked rows", "pass", "zeros on rows with no allowed key, like F.scaled_dot_product_attention")
        elif bool(torch.isnan(rows).any()):
            book.note("fully masked rows", "fail",
                      f"{where}: NaN on a row with no allowed key (what masked_fill(-inf) + softmax gives). "
                      "Not graded; PyTorch's F.scaled_dot_product_attention returns 0 there. If your model can "
                      "fully mask a row, zero it: torch.nan_to_num(weights) or a mask-aware softmax.")
        else:
            book.note("fully masked rows", "fail",
                      f"{where}: finite non-zero values on a row with no allowed key (a finite fill like -1e9 "
                      "spreads the weights uniformly, so that row is the mean of V). Not graded; "
                      "F.scaled_dot_product_attention returns 0 there.")

    def diagnose(self, failures: list[Failure]):
        """Name the structural problem first, else the known mistake matching most failing cases."""
        for check in STRUCTURAL:
            if any(f.check == check for f in failures) and check != "shape":
                return self.diagnose_without_match([f for f in failures if f.check == check])
        valued = [f for f in failures if f.check not in STRUCTURAL]
        shaped = [f for f in failures if f.check == "shape"]
        if shaped:
            return self.match_mistakes(shaped) or self.diagnose_without_match(shaped)
        return self.match_mistakes(valued) or self.diagnose_without_match(valued)

    def match_mistakes(self, failures: list[Failure]):
        scores: dict[str, list[float]] = {}
        for failure in failures[:6]:
            if "calls" not in failure.result:
                continue
            out, weights, problem = unpack_output(failure.result["calls"][0], allow_weights=True)
            if problem:
                continue
            best: dict[str, float] = {}
            for mistake, cand_out, cand_w in self.candidates(failure.case):
                wildcard = mistake not in NAN_IS_THE_SYMPTOM
                distance = mistake_distance(out["tensor"], cand_out, wildcard)
                if weights is not None and distance < MISTAKE_MATCH:
                    distance = max(distance, mistake_distance(weights["tensor"], cand_w))
                best[mistake] = min(best.get(mistake, float("inf")), distance)
            for mistake, distance in best.items():
                if distance < MISTAKE_MATCH:
                    scores.setdefault(mistake, []).append(distance)
        if not scores:
            return None
        first = failures[0]
        mistake = max(scores, key=lambda m: (len(scores[m]), -sum(scores[m])))
        return mistake, f"Looks like {self.mistakes[mistake]}. {first.check}: {first.message}"

    def diagnose_without_match(self, failures: list[Failure]):
        first = failures[0]
        plain = {"return type": "wrong_return_type", "shape": "wrong_shape", "dtype": "wrong_dtype",
                 "device": "wrong_device", "inputs unchanged": "mutates_inputs",
                 "deterministic": "nondeterministic", "weights": "wrong_weights"}
        advice = {
            "wrong_dtype": " Compute in any precision you like, but return the inputs' dtype (.to(Q.dtype)).",
            "mutates_inputs": " Don't use in-place ops (/=, masked_fill_, ...) on the arguments.",
            "nondeterministic": " Remove randomness (dropout, torch.rand) from the computation.",
        }
        mistake = plain.get(first.check, "wrong_values")
        return mistake, f"{first.check}: {first.message}.{advice.get(mistake, ' No known mistake matches; re-read the statement.')}"
