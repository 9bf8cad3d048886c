"""What every mask-building drill shares (`causal_mask`, `padding_mask`, ...): graded on which
positions the returned mask allows.

Any dtype is accepted as long as the values are 0/1 (or bool): nonzero = may attend. A drill
folder's `grade.py` subclasses `MaskDrill` with its cases, the expected pattern and the known
mistakes' patterns; its `drill.toml` names the mistakes (`additive_mask`, `inverted_mask`,
`fixed_size_buffer`, `position_overflow`, `hard_coded_device` and `mutates_inputs` are
diagnosed here).
"""

from __future__ import annotations

import torch

from .device_probe import LEAVE_TO_CALLER, PROBE, check_probe, probe_result
from .grading import (
    CORE,
    Case,
    CheckBook,
    Drill,
    Failure,
    check_inputs_unchanged,
    clone_tree,
    export,
    export_argument,
    same_values,
)

CHECK_ORDER = [("return type", CORE), ("shape", CORE), ("mask values", CORE),
               ("allowed positions", CORE), ("inputs unchanged", CORE), ("deterministic", CORE),
               ("device", CORE)]


def wrap_int8(values: torch.Tensor) -> torch.Tensor:
    """What int64 values become when cast to int8 (wrapping at 128), kept as int64."""
    return (values + 128) % 256 - 128


def _pattern_text(allowed: torch.Tensor, at: tuple[int, ...] = ()) -> str:
    """A few rows as 0/1 strings around position `at` (at most 6 rows, 40 columns: enough to see
    a pattern, and the wrong spot is in view even on a 300 x 300 mask)."""
    rows = allowed.reshape(-1, allowed.shape[-2] if allowed.dim() > 1 else 1, allowed.shape[-1])
    row, col = (at[-2], at[-1]) if len(at) >= 2 else (0, 0)
    first_row = max(0, min(row - 2, rows.shape[1] - 6))
    first_col = max(0, min(col - 20, rows.shape[2] - 40))
    block = rows[(at[0] if len(at) == 3 else 0), first_row:first_row + 6, first_col:first_col + 40]
    where = f"rows {first_row}.., columns {first_col}..: " if first_row or first_col else ""
    return where + " / ".join("".join("1" if v else "0" for v in line.tolist()) for line in block)


class MaskDrill(Drill):
    """Calls the learner's builder twice and grades the allowed pattern; the arguments of the
    first call are sent back, since a builder handed the caller's lengths tensor may change it."""

    check_order = CHECK_ORDER
    arg_names: tuple[str, ...] = ()

    def run_case(self, entry_obj, payload: dict) -> dict:
        if PROBE in payload:  # the default device is the contract: only named devices are wrong
            args = clone_tree([payload[name] for name in self.arg_names])
            return probe_result(lambda: entry_obj(*args), default_is_wrong=False, host_reads_are_fine=True,
                                follow_default=True)
        calls, inputs_after = [], []
        for attempt in range(2):
            args = clone_tree([payload[name] for name in self.arg_names])
            calls.append(export(entry_obj(*args)))
            if attempt == 0:
                inputs_after = [export_argument(arg) for arg in args]
        return {"calls": calls, "inputs": inputs_after}

    def expected_allowed(self, case: Case) -> torch.Tensor:
        raise NotImplementedError

    def normalize_shape(self, case: Case, tensor: torch.Tensor) -> tuple[torch.Tensor | None, str]:
        """The learner's mask in the graded layout, or (None, why its shape is wrong)."""
        raise NotImplementedError

    def graded(self, case: Case) -> torch.Tensor:
        """Bool tensor of the positions that are graded (all, unless rows are exempt)."""
        return torch.ones_like(self.expected_allowed(case))

    def candidates(self, case: Case) -> list[tuple[str, torch.Tensor]]:
        return []

    def _truth(self, case: Case) -> tuple[torch.Tensor, torch.Tensor]:
        """(expected allowed, graded positions), computed once per case (public cases are reused)."""
        if "truth" not in case.extra:
            case.extra["truth"] = (self.expected_allowed(case), self.graded(case))
        return case.extra["truth"]

    def _candidates(self, case: Case) -> list[tuple[str, torch.Tensor]]:
        if "candidates" not in case.extra:
            case.extra["candidates"] = self.candidates(case)
        return case.extra["candidates"]

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        if PROBE in case.payload:
            check_probe(book, case, result, LEAVE_TO_CALLER)
            return
        first, second = result["calls"]
        where = f"{case.name} ({case.notes})"
        if first.get("type") != "Tensor":
            kind = first.get("type")
            book.failed("return type", case, result, f"{where}: returned {kind}; expected a torch.Tensor")
            return
        book.passed("return type")
        tensor = first["tensor"]
        allowed, problem = self.normalize_shape(case, tensor)
        if problem:
            book.failed("shape", case, result, f"{where}: {problem}")
            return
        book.passed("shape")
        values_ok = tensor.dtype == torch.bool or bool(((tensor == 0) | (tensor == 1)).all())
        if values_ok:
            book.passed("mask values")
        else:
            odd = tensor[(tensor != 0) & (tensor != 1)].reshape(-1)[0].item()
            book.failed("mask values", case, result, f"{where}: values must be 0/1 or bool, found {odd}")
        expected, graded = self._truth(case)
        wrong = (allowed != expected) & graded
        if wrong.any():
            index = tuple(int(i) for i in wrong.nonzero()[0])
            got = "allowed" if bool(allowed[index]) else "blocked"
            want = "allowed" if bool(expected[index]) else "blocked"
            book.failed("allowed positions", case, result,
                        f"{where}: {int(wrong.sum())} wrong position(s); first at {list(index)}: {got}, should be "
                        f"{want}. Got {_pattern_text(allowed & graded, index)}; expected {_pattern_text(expected & graded, index)}")
        else:
            book.passed("allowed positions")
        check_inputs_unchanged(self.arg_names, case, result, book, where)
        if second.get("type") == "Tensor" and same_values(second["tensor"], tensor):
            book.passed("deterministic")
        else:
            book.failed("deterministic", case, result, f"{where}: two calls returned different masks")

    def diagnose(self, failures: list[Failure]):
        """Public failures decide (they are the same on every seed); a name must fit them all."""
        failures = [f for f in failures if f.case.public] or failures
        probed = [f for f in failures if PROBE in f.case.payload]
        failures = [f for f in failures if PROBE not in f.case.payload] or probed
        first = failures[0]
        mutated = [f for f in failures if f.check == "inputs unchanged"]
        if mutated:  # structural, like every drill: whatever else is wrong, this is named first
            return "mutates_inputs", (f"Looks like {self.mistakes.get('mutates_inputs', 'inputs changed in place')}. "
                                      f"{mutated[0].message}")
        for failure in failures:
            if failure.check == "mask values":
                tensor = failure.result["calls"][0]["tensor"]
                if tensor.is_floating_point() and bool((tensor < 0).any()):
                    return "additive_mask", f"Looks like {self.mistakes['additive_mask']}. {failure.message}"
        judged = [f for f in failures if f.check in ("allowed positions", "shape")]
        if judged:
            limit = self.buffer_limit(judged)
            if limit is not None:
                return "fixed_size_buffer", (f"Looks like {self.mistakes['fixed_size_buffer']}. Every size past "
                                             f"{limit} gets {limit}. {first.check}: {first.message}")
            fits = set.intersection(*(self.matches(failure) for failure in judged))
            order = [mistake for mistake, _ in self._candidates(judged[0].case)] + ["missing_query_dim"]
            named = next((mistake for mistake in order if mistake in fits), None)
            if named:
                return named, f"Looks like {self.mistakes[named]}. {first.check}: {first.message}"
        if probed and all(f.check == "device" for f in failures):
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. {probed[0].message}"
        plain = {"return type": "wrong_return_type", "shape": "wrong_shape", "deterministic": "nondeterministic",
                 "device": "wrong_device"}
        return plain.get(first.check, "wrong_positions"), f"{first.check}: {first.message}"

    def buffer_limit(self, failures: list[Failure]) -> int | None:
        """L when every failure is a mask cut to size L on a case longer than L, and no case of
        size <= L failed: a fixed-size buffer sliced to the size asked for."""
        limits = set()
        for failure in failures:
            shape = failure.result["calls"][0].get("shape") or []
            if failure.check != "shape" or not shape or not shape[-1] < failure.case.size:
                return None
            limits.add(int(shape[-1]))
        if len(limits) != 1:
            return None
        limit = limits.pop()
        return limit if all(f.case.size > limit for f in failures) else None

    def matches(self, failure: Failure) -> set[str]:
        """Every known mistake whose mask is exactly the learner's on this failing case."""
        tensor = failure.result["calls"][0]["tensor"]
        allowed, problem = self.normalize_shape(failure.case, tensor)
        if problem:
            shaped = self.match_shape(failure.case, tensor)
            return {shaped} if shaped else set()
        graded = self._truth(failure.case)[1]
        return {mistake for mistake, candidate in self._candidates(failure.case)
                if bool(((allowed == candidate) | ~graded).all())}

    def match_shape(self, case: Case, tensor: torch.Tensor) -> str | None:
        return None
