"""Grading for drills whose entry returns a tuple of tensors: (output, lse), (dQ, dK, dV).

The sdpa family's `AttentionDrill` grades one output and optional weights; these drills return
several tensors, each with its own shape and dtype, must give exact values (0 or -inf) on fully
masked rows, and have mistakes whose symptom is a NaN or an overflow. What is shared with
`AttentionDrill`: the tolerance policy (assert_close's defaults, raised to ten times the error of
a correct same-dtype computation), the determinism and mutation checks, the call on second
inputs (`AGAIN`), the device probe, and diagnosis by re-enacting known mistakes on the failing
public cases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .device_probe import PROBE, check_probe, follow_inputs
from .grading import (
    AGAIN,
    AGAIN_CHECK,
    CORE,
    DEFAULT_TOLERANCE,
    EXTRA,
    MISTAKE_MATCH,
    Case,
    CheckBook,
    Drill,
    Failure,
    again_reason,
    check_inputs_unchanged,
    compare_values,
    describe_returned,
    failure_check,
    format_index,
    narrow_mistakes,
    same_values,
    second_case,
    shape_text,
)

FLOOR_FACTOR = 10.0
"""A case's atol is at least this times the error of a correct same-dtype computation."""
LOW_PRECISION_FACTOR = 4.0
"""float16/bfloat16 pass their (reported) accuracy check within this many times that error."""
HEAD_CHECKS = [("return type", CORE), ("shape", CORE), ("dtype", CORE), ("device", CORE),
               ("inputs unchanged", CORE), ("deterministic", CORE)]
VALUE_CHECKS = [("values float32", CORE), ("values float64", CORE), ("fully masked rows", CORE),
                (AGAIN_CHECK, CORE), ("float16 accuracy", EXTRA), ("bfloat16 accuracy", EXTRA)]
PLAIN = {"return type": "wrong_return_type", "shape": "wrong_shape", "dtype": "wrong_dtype",
         "device": "wrong_device", "inputs unchanged": "mutates_inputs", "deterministic": "nondeterministic"}
ADVICE = {
    "wrong_dtype": " Compute in any precision you like, but return the dtypes the statement gives.",
    "mutates_inputs": " Don't use in-place ops (/=, masked_fill_, ...) on the arguments.",
    "nondeterministic": " Remove randomness (dropout, torch.rand) from the computation.",
}


@dataclass(frozen=True)
class Candidate:
    """A known mistake re-enacted on one case: `run()` gives its outputs, or None where it cannot happen."""

    mistake: str
    run: Callable[[], tuple[torch.Tensor, ...] | None]
    symptom: bool = False
    """True: its NaN/inf/-inf ARE the mistake and must sit exactly where the learner's do, and it
    is compared on fully masked rows too. False: a NaN it leaves is undefined (matches anything)
    and fully masked rows are left to the masked-rows check."""


def tensors_of(exported: dict, count: int) -> tuple[list[dict], str | None]:
    """The exported tensors of a returned tuple of `count`, or ([], why the return value is not that)."""
    items = exported.get("items") or []
    if exported.get("type") in ("tuple", "list") and exported.get("length") == count and all(
            item.get("type") == "Tensor" for item in items):
        return items, None
    got = describe_returned(exported)
    if exported.get("type") == "ndarray":
        got += " (a numpy array: keep it a torch.Tensor)"
    return [], f"returned {got}; expected a tuple of {count} tensors"


def symptom_distance(actual: torch.Tensor, candidate: torch.Tensor, compared: torch.Tensor) -> float:
    """Scaled distance on `compared` positions; a non-finite value must be non-finite in both."""
    if tuple(actual.shape) != tuple(candidate.shape):
        return float("inf")
    a = actual.to(torch.float64)[compared]
    c = candidate.to(torch.float64)[compared]
    a_bad, c_bad = ~torch.isfinite(a), ~torch.isfinite(c)
    if bool((a_bad != c_bad).any()):
        return float("inf")
    a, c = a[~c_bad], c[~c_bad]
    if not a.numel():
        return 0.0
    return float((a - c).abs().max() / (1.0 + c.abs().max()))


class TupleDrill(Drill):
    """Grades an entry returning `len(output_names)` tensors against a float64 oracle."""

    output_names: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()
    record_checks: list[tuple[str, str]] = []
    """Checks on what the child recorded while the learner's code ran (memory, fused calls...)."""
    masked_values: tuple[float, ...] = ()
    """The exact value each output must hold at fully masked positions (0.0, -inf)."""
    second_input_mistake = "memoized_output"
    """What a case failing only on its second inputs (`AGAIN`) is named: a result kept from an
    earlier call. `run_case` makes that third call where the payload has `AGAIN`."""
    second_inputs_said = "other values"
    """How the second inputs differ from the case's, in the message."""

    @property
    def check_order(self):  # type: ignore[override]
        return HEAD_CHECKS + self.record_checks + VALUE_CHECKS

    # --- per-drill pieces -------------------------------------------------------------------
    def oracle(self, case: Case) -> tuple[torch.Tensor, ...]:
        """float64 outputs on CPU."""
        raise NotImplementedError

    def masked_positions(self, case: Case) -> tuple[torch.Tensor | None, ...]:
        """Per output, a bool tensor of its shape: positions under the fully-masked-rows policy."""
        raise NotImplementedError

    def output_dtypes(self, case: Case) -> tuple[torch.dtype, ...]:
        raise NotImplementedError

    def same_dtype_references(self, case: Case) -> list[tuple[torch.Tensor, ...]]:
        """Outputs of correct computations in the case's dtype (they set the error floor)."""
        raise NotImplementedError

    def candidates(self, case: Case) -> list[Candidate]:
        raise NotImplementedError

    def check_record(self, case: Case, record: dict, book: CheckBook, where: str) -> None:
        """Grade what the child recorded during the first call (drills with `record_checks`)."""

    def diagnose_record(self, failures: list[Failure]) -> tuple[str, str] | None:
        """(mistake, hint) when a record check names the mistake."""
        return None

    # --- expectations -----------------------------------------------------------------------
    def _expected(self, case: Case):
        if "oracle" not in case.extra:
            case.extra["oracle"] = self.oracle(case)
            case.extra["masked"] = self.masked_positions(case)
        return case.extra["oracle"], case.extra["masked"]

    def _reference_errors(self, case: Case) -> list[float]:
        """Per output, the largest error of a correct same-dtype computation vs the oracle."""
        if "reference_errors" not in case.extra:
            expected, masked = self._expected(case)
            worst = [0.0] * len(expected)
            for outputs in self.same_dtype_references(case):
                for k, (ref, want, hidden) in enumerate(zip(outputs, expected, masked)):
                    _, err, *_ = compare_values(_graded(ref.cpu(), hidden), _graded(want, hidden), 0.0, 0.0)
                    worst[k] = max(worst[k], err)
            case.extra["reference_errors"] = worst
        return case.extra["reference_errors"]

    def tolerance(self, case: Case, k: int) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCE[case.payload[self.input_names[0]].dtype]
        factor = FLOOR_FACTOR if case.tier == CORE else LOW_PRECISION_FACTOR
        return rtol, max(atol, factor * self._reference_errors(case)[k])

    # --- checking ---------------------------------------------------------------------------
    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        if PROBE in case.payload:
            check_probe(book, case, result, follow_inputs("Q"))
            return
        core = case.tier == CORE
        name = failure_check(case)
        where = f"{case.name} ({case.notes})"
        calls = result["calls"]
        outputs, problem = tensors_of(calls[0], len(self.output_names))
        if problem:
            book.failed(name("return type"), case, result, f"{where}: {problem} ({', '.join(self.output_names)})")
            return
        if core:
            book.passed("return type")
        expected, masked = self._expected(case)
        for label, got, want in zip(self.output_names, outputs, expected):
            if tuple(got["shape"]) != tuple(want.shape):
                book.failed(name("shape"), case, result,
                            f"{where}: {label} shape {shape_text(got['shape'])}, expected {shape_text(want.shape)}")
                return
        if core:
            book.passed("shape")
        for label, got, dtype in zip(self.output_names, outputs, self.output_dtypes(case)):
            if got["dtype"] != str(dtype):
                book.failed(name("dtype"), case, result, f"{where}: {label} dtype {got['dtype']}, expected {dtype}")
                return
        if core:
            book.passed("dtype")
        device = str(case.payload[self.input_names[0]].device)
        wrong = [(label, got["device"]) for label, got in zip(self.output_names, outputs) if got["device"] != device]
        if wrong:
            book.failed(name("device"), case, result, f"{where}: {wrong[0][0]} on {wrong[0][1]}, inputs on {device}")
        elif core:
            book.passed("device")
        if core:
            self._check_inputs(case, result, book, where)
        if core and len(calls) > 1:
            second, _ = tensors_of(calls[1], len(self.output_names))
            if second and all(same_values(a["tensor"], b["tensor"]) for a, b in zip(outputs, second)):
                book.passed("deterministic")
            else:
                book.failed("deterministic", case, result, f"{where}: two calls on the same inputs returned different results")
        if "record" in result:  # what the drill forbids (a fused call, autograd) holds in every dtype
            self.check_record(case, result["record"], book, where)
        right = self._check_values(case, result, book, [o["tensor"] for o in outputs], expected, masked, where)
        if core and right and AGAIN in case.payload and len(calls) > 2:
            # only where the case's own inputs come out right: else the values checks say it
            self._check_second_input(case, result, book, where)

    def _check_inputs(self, case, result, book, where):
        check_inputs_unchanged(self.input_names, case, result, book, where)

    def _check_second_input(self, case, result, book, where):
        """The third call, on other inputs of the same shapes, graded like the first: code that
        returns an answer kept from an earlier call passes two calls on the same inputs, not this."""
        again = second_case(case)
        expected, masked = self._expected(again)
        outputs, problem = tensors_of(result["calls"][2], len(self.output_names))
        said = f"{where}: called a third time, on other inputs of the same shapes ({self.second_inputs_said})"
        if problem or any(tuple(o["shape"]) != tuple(e.shape) for o, e in zip(outputs, expected)):
            book.failed(AGAIN_CHECK, case, result, f"{said}, it {problem or 'returned other shapes'}")
            return
        for k, (label, got, want, hidden) in enumerate(zip(self.output_names, outputs, expected, masked)):
            rtol, atol = self.tolerance(again, k)
            ok, err, index, value, target = compare_values(_graded(got["tensor"], hidden), _graded(want, hidden),
                                                           rtol, atol)
            if not ok:
                book.failed(AGAIN_CHECK, case, result,
                            f"{said}, its {label} is off by {err:.3g} at {label}{format_index(index)} (got "
                            f"{value:.6g}, expected {target:.6g}), while the calls on the case's own inputs are "
                            "right: " + again_reason(result["calls"][0], result["calls"][2], "state kept between calls"))
                return
        book.passed(AGAIN_CHECK)

    def _check_values(self, case, result, book, actual, expected, masked, where) -> bool:
        """The values checks; whether every output is right (fully masked positions aside)."""
        bad = None
        for k, (label, got, want, hidden) in enumerate(zip(self.output_names, actual, expected, masked)):
            rtol, atol = self.tolerance(case, k)
            ok, err, index, value, target = compare_values(_graded(got, hidden), _graded(want, hidden), rtol, atol)
            if not ok:
                bad = (f"{where}: largest error {err:.3g} at {label}{format_index(index)} (got {value:.6g}, "
                       f"expected {target:.6g}; tolerance {atol:.1g} + {rtol:.1g}*|expected|)")
                break
        if bad:
            book.failed(case.value_check, case, result, bad)
        else:
            book.passed(case.value_check)
        hidden_any = [h for h in masked if h is not None and bool(h.any())]
        if not hidden_any:
            return bad is None
        check = "fully masked rows" if case.tier == CORE else case.value_check
        for label, got, hidden, value in zip(self.output_names, actual, masked, self.masked_values):
            if hidden is None or not hidden.any():
                continue
            there = got[hidden].to(torch.float64)
            if not bool((there == value).all()):
                index = _first(hidden & ~(got.to(torch.float64) == value))
                book.failed(check, case, result,
                            f"{where}: {label}{format_index(index)} is {float(got[index]):.6g} on a fully masked "
                            f"row; the statement asks for {value:g} there (no key may be attended to)")
                return bad is None
        if case.tier == CORE:
            book.passed(check)
        return bad is None

    # --- diagnosis --------------------------------------------------------------------------
    def diagnose(self, failures: list[Failure]):
        """Structural problems first, then what the record shows (memory, fused calls...), then the
        known mistake whose re-enactment matches every examined failing case."""
        public = [f for f in failures if f.case.public]
        failures = public or failures
        probed = [f for f in failures if PROBE in f.case.payload]
        failures = [f for f in failures if PROBE not in f.case.payload] or probed
        for check in ("return type", "dtype", "inputs unchanged", "deterministic"):
            picked = [f for f in failures if f.check == check]
            if picked:
                return self.diagnose_without_match(picked)
        named = self.diagnose_record(failures)
        if named:
            return named
        shaped = [f for f in failures if f.check == "shape"]
        if shaped:
            return self.match_mistakes(shaped) or self.diagnose_without_match(shaped)
        valued = [f for f in failures
                  if f.check not in PLAIN and f.check not in dict(self.record_checks) and f.check != AGAIN_CHECK]
        named = self.match_mistakes(valued) if valued else None
        if named:
            return named
        again = [f for f in failures if f.check == AGAIN_CHECK]
        if again and not valued:  # right on every case's own inputs, wrong only when called again
            mistake = self.second_input_mistake
            return mistake, f"Looks like {self.mistakes.get(mistake, mistake)}. {AGAIN_CHECK}: {again[0].message}"
        return self.diagnose_without_match([f for f in failures if f.check == "device"] or valued or failures)

    def match_mistakes(self, failures: list[Failure]):
        """The known mistake whose outputs match the learner's on every examined failing case
        (smallest first, at most six) and that shows (differs from the oracle) on at least one."""
        def judge(failure: Failure, alive: set[str] | None):
            outputs, problem = tensors_of(failure.result["calls"][0], len(self.output_names))
            if problem:
                return None
            actual = [o["tensor"] for o in outputs]
            expected, masked = self._expected(failure.case)
            matched: dict[str, float] = {}
            neutral: set[str] = set()  # matches, but does not show on this case: no evidence either way
            for mistake, produced, symptom in self._candidate_outputs(failure.case, alive):
                if mistake in matched:
                    continue
                distance = shows = 0.0
                for got, cand, want, hidden in zip(actual, produced, expected, masked):
                    compared = torch.ones(want.shape, dtype=torch.bool)
                    if not symptom:
                        compared = ~torch.isnan(cand.to(torch.float64))
                        if hidden is not None:
                            compared &= ~hidden
                    distance = max(distance, symptom_distance(got, cand, compared))
                    shows = max(shows, symptom_distance(want, cand, compared))
                if distance < MISTAKE_MATCH <= shows:
                    matched[mistake] = distance
                elif distance < MISTAKE_MATCH:
                    neutral.add(mistake)
            return matched, neutral

        mistake = narrow_mistakes(failures, "calls", judge)  # it must show somewhere
        if mistake is None:
            return None
        first = failures[0]
        return mistake, f"Looks like {self.mistakes[mistake]}. {first.check}: {first.message}"

    def _candidate_outputs(self, case: Case, wanted: set[str] | None):
        """(mistake, outputs, symptom) for each variant still wanted, computed once per case."""
        cache = case.extra.setdefault("candidates", {})
        for index, candidate in enumerate(self.candidates(case)):
            if wanted is not None and candidate.mistake not in wanted:
                continue
            if index not in cache:
                cache[index] = candidate.run()
            if cache[index] is not None:
                yield candidate.mistake, cache[index], candidate.symptom

    def diagnose_without_match(self, failures: list[Failure]):
        first = failures[0]
        mistake = PLAIN.get(first.check, "wrong_values")
        if mistake == "wrong_device" and "hard_coded_device" in self.mistakes and PROBE in first.case.payload:
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. {first.check}: {first.message}"
        return mistake, f"{first.check}: {first.message}.{ADVICE.get(mistake, ' No known mistake matches; re-read the statement.')}"


def _graded(tensor: torch.Tensor, hidden: torch.Tensor | None) -> torch.Tensor:
    """The tensor with positions under the masked-rows policy set to 0 (checked separately)."""
    if hidden is None or not bool(hidden.any()):
        return tensor
    return torch.where(hidden, torch.zeros((), dtype=tensor.dtype), tensor)


def _first(flags: torch.Tensor) -> tuple[int, ...]:
    found = flags.nonzero()
    return tuple(int(i) for i in found[0]) if len(found) else tuple(0 for _ in flags.shape)
