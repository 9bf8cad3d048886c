"""Checks shared by the drills whose answer is attention output (sdpa, mha): the tolerance
policy, weights, determinism, mutation, fully masked rows, and diagnosis by known mistakes.

~450 lines on purpose: how a case is called (the probe, the calls again on refilled tensors)
and how its result is judged and diagnosed read each other's keys, and stay together."""

from __future__ import annotations

import torch

from .attention import fully_masked_rows
from .device_probe import PROBE, check_probe, follow_inputs, probe_result
from .grading import (
    AGAIN,
    AGAIN_CHECK,
    CORE,
    DEFAULT_TOLERANCE,
    EXTRA,
    FIRST_AFTER,
    MISTAKE_MATCH,
    ONE_CALL,
    Case,
    CheckBook,
    Drill,
    Failure,
    again_reason,
    check_inputs_unchanged,
    clone_tree,
    compare_values,
    export,
    failure_check,
    format_index,
    inputs_as_left,
    mistake_distance,
    narrow_mistakes,
    other_layout_values,
    refilled,
    same_values,
    second_case,
    shape_text,
    unpack_output,
)

RESULT_OVERWRITTEN = ("a later call changed the tensor an earlier call returned (one output buffer "
                      "reused from call to call?): each call must return a tensor of its own")


CHECK_ORDER = [
    ("return type", CORE), ("shape", CORE), ("dtype", CORE), ("device", CORE),
    ("inputs unchanged", CORE), ("deterministic", CORE), ("values float32", CORE),
    ("values float64", CORE), ("weights", CORE), (AGAIN_CHECK, CORE),
    ("float16 accuracy", EXTRA), ("bfloat16 accuracy", EXTRA), ("fully masked rows", EXTRA),
]
FLOOR_FACTOR = 10.0
"""A case's atol is at least this times the error of PyTorch's own same-dtype computation."""
STRUCTURAL = ("return type", "shape", "dtype", "device", "inputs unchanged", "deterministic")
"""Checks diagnosed by what they are, before any comparison with known mistakes' values."""
NAN_IS_THE_SYMPTOM = {"unstable_softmax"}
LOW_PRECISION_FACTOR = 4.0
"""float16/bfloat16 pass when within this many times PyTorch's own kernel's error."""
FLOAT32_INSIDE = "float32_internally"
"""The mistake of computing in float32 on float64 inputs: re-enacted for any drill whose
drill.toml names it, with the drill's own same-dtype reference run in float32."""


def second_inputs(payload: dict) -> dict:
    """The case's Q, K, V and mask as other inputs of the same kind (`AGAIN`): batch items
    trade places (the first dim of Q/K/V and of a mask with more than two dims), the queries
    are reversed, with the mask's rows (each query keeps its row: the same outputs, reversed),
    and K and V negated. Every known-per-item setup (padding lengths, V blown up where no query
    may look) stays with its item. A mask of one batch of rows (2-D) is not the first call's
    either: a bias memoized by the mask's shape shows."""
    def batch(tensor: torch.Tensor, limit: int = 3) -> tuple[int, ...]:
        return (0,) if tensor.dim() >= limit else ()

    Q, K, V, mask = (payload[key] for key in ("Q", "K", "V", "mask"))
    return {"Q": other_layout_values(Q, flip=(*batch(Q), Q.dim() - 2)),
            "K": other_layout_values(K, flip=batch(K), negate=True),
            "V": other_layout_values(V, flip=batch(V), negate=True),
            "mask": None if mask is None else other_layout_values(
                mask, flip=(*batch(mask), *((mask.dim() - 2,) if mask.dim() >= 2 else ())))}


def _float64_to_float32(value):
    """The payload with every float64 tensor cast to float32 (nested dicts, lists, tuples)."""
    if isinstance(value, torch.Tensor):
        return value.to(torch.float32) if value.dtype == torch.float64 else value
    if isinstance(value, dict):
        return {k: _float64_to_float32(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_float64_to_float32(v) for v in value)
    return value


class AttentionDrill(Drill):
    """Grades a function/module returning attention output, optionally with its weights."""

    check_order = CHECK_ORDER
    input_names: tuple[str, ...] = ("Q", "K", "V", "mask")
    second_input_mistake = "memoized_output"
    """What a case failing only on its second inputs (`AGAIN`) is named: a result kept from an
    earlier call (a module drill names it state_on_module)."""
    second_inputs_said = "batch items swapped, queries reversed, K and V negated"
    """How the second inputs differ from the case's, in the message (`second_inputs`)."""

    # --- per-drill pieces -------------------------------------------------------------------
    def oracle(self, case: Case) -> tuple[torch.Tensor, torch.Tensor]:
        """float64 (output, weights) on CPU."""
        raise NotImplementedError

    def same_dtype_references(self, case: Case) -> list[torch.Tensor]:
        """Outputs of correct computations in the case's dtype (sets the error floor)."""
        raise NotImplementedError

    def candidates(self, case: Case) -> list[tuple[str, object]]:
        """[(mistake id, thunk)]: each thunk re-enacts the mistake on the case's inputs and returns
        (output, weights), or None where the mistake cannot happen on this case."""
        raise NotImplementedError

    def candidate_outputs(self, case: Case, wanted: set[str] | None):
        """The known mistakes' (id, output, weights) on `case`, computed lazily and kept on the case
        (weights None where the mistake says nothing about them)."""
        cache = case.extra.setdefault("candidates", {})
        found = self.candidates(case)
        if FLOAT32_INSIDE in self.mistakes and case.payload["Q"].dtype == torch.float64:
            found = [*found, (FLOAT32_INSIDE, lambda: self._in_float32(case))]
        for index, (mistake, thunk) in enumerate(found):
            if wanted is not None and mistake not in wanted:
                continue
            if index not in cache:
                cache[index] = thunk()
            if cache[index] is not None:
                yield mistake, *cache[index]

    def _in_float32(self, case: Case) -> tuple[torch.Tensor, None]:
        """A correct computation done in float32 on a float64 case and cast back: what code that
        calls `.float()` on its inputs returns."""
        narrowed = Case(case.name, _float64_to_float32(case.payload))
        return self.same_dtype_references(narrowed)[0].to(torch.float64), None

    def weights_shape(self, case: Case) -> tuple[int, ...]:
        raise NotImplementedError

    # --- shared -----------------------------------------------------------------------------
    def run_case(self, entry_obj, payload: dict) -> dict:
        """In the child, for a function of (Q, K, V, mask=None) (sdpa, gqa; drills with other
        inputs override it): call the learner twice on fresh copies, then once on the second
        inputs if the case has them; export results and inputs."""
        if PROBE in payload:
            args = clone_tree([payload[k] for k in ("Q", "K", "V", "mask")])
            found = probe_result(lambda: entry_obj(*args), default_is_wrong=True, inputs=args)
            if args[3] is None or found[PROBE]["problems"]:
                return found
            # and without a mask: code often makes one there (`torch.ones(n, m)`), without device=;
            # and with the mask as numbers, which code often turns into a bias of its own making
            for kind in (None, torch.float32, torch.int64):
                other = clone_tree([payload[k] for k in ("Q", "K", "V", "mask")])
                other = other[:3] if kind is None else [*other[:3], other[3].to(kind)]
                again = probe_result(lambda other=other: entry_obj(*other), default_is_wrong=True, inputs=other)
                if again[PROBE]["problems"]:
                    return again
            return found
        calls, inputs_after = [], []
        returned = None
        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            args = clone_tree([payload["Q"], payload["K"], payload["V"], payload["mask"]])
            # the second call names the mask, as callers do (`mask=...`): the statement's signature
            value = (entry_obj(*args[:3]) if args[3] is None else entry_obj(*args) if attempt == 0
                     else entry_obj(*args[:3], mask=args[3]))
            calls.append(export(value))
            if attempt == 0:
                returned = value
                inputs_after = inputs_as_left(args, [payload[k] for k in ("Q", "K", "V", "mask")], payload)
        if AGAIN in payload and not payload.get(ONE_CALL):
            # the second call's very tensors, refilled in place with the other inputs: a result
            # kept for the same objects (`mask is self._last`) or storage (`data_ptr()`) shows
            args = refilled(args, [payload[AGAIN][k] for k in ("Q", "K", "V", "mask")])
            calls.append(export(entry_obj(*args) if args[3] is not None else entry_obj(*args[:3])))
        result = {"calls": calls, "inputs": inputs_after}
        if len(calls) > 1:  # what the first call returned, as the later calls left it
            result[FIRST_AFTER] = export(returned)
        return result

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
        if PROBE in case.payload:
            self._check_probe(case, result, book)
            return
        core = case.tier == CORE
        name = failure_check(case)
        where = f"{case.name} ({case.notes})"
        first, second = (result["calls"] * 2)[:2]  # a one-call case compares its call with itself
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
        # every case, float16 ones too: code that works in place only "to save memory" on half
        # precision changes the caller's tensors all the same
        self._check_inputs(case, result, book, where)
        if core and len(result["calls"]) > 1:
            self._check_determinism(first, second, case, result, book, where)
        right = self._check_values(case, result, book, out["tensor"], expected, ignore, where)
        if core and right and AGAIN in case.payload and len(result["calls"]) > 2:
            # only where the case's own inputs come out right: else the values checks say it
            self._check_second_input(case, result, book, where)
        if weights is not None:
            self._check_weights(case, result, book, weights, expected_w, ignore, where)
        elif core:
            book.note("weights", "skip", "weights not returned (output only)")
        if ignore.any():
            self._report_masked_rows(out["tensor"], ignore, book, where)

    def _check_probe(self, case, result, book):
        check_probe(book, case, result, follow_inputs("Q"))

    def _check_inputs(self, case, result, book, where):
        check_inputs_unchanged(self.input_names, case, result, book, where)

    def _check_determinism(self, first, second, case, result, book, where):
        one, one_w, _ = unpack_output(first, allow_weights=True)
        two, two_w, problem = unpack_output(second, allow_weights=True)
        same = (problem is None and same_values(one["tensor"], two["tensor"])
                and (one_w is None) == (two_w is None)
                and (one_w is None or same_values(one_w["tensor"], two_w["tensor"])))
        later = result.get(FIRST_AFTER)
        kept, _, kept_problem = unpack_output(later, allow_weights=True) if later is not None else (one, None, None)
        if not same:
            book.failed("deterministic", case, result, f"{where}: two calls on the same inputs returned different results")
        elif kept_problem is not None or not same_values(one["tensor"], kept["tensor"]):
            book.failed("deterministic", case, result, f"{where}: {RESULT_OVERWRITTEN}")
        else:
            book.passed("deterministic")

    def _check_second_input(self, case, result, book, where):
        """The third call, on other inputs of the same shapes, graded like the first: code that
        reuses something from an earlier call passes two calls on the same inputs, not this."""
        again = second_case(case)
        (expected, _), ignore = self._expected(again)
        out, _, problem = unpack_output(result["calls"][2], allow_weights=True)
        said = f"{where}: called a third time, on other inputs of the same shapes ({self.second_inputs_said})"
        if problem or tuple(out["shape"]) != tuple(expected.shape):
            book.failed(AGAIN_CHECK, case, result, f"{said}, it {problem or 'returned another shape'}")
            return
        rtol, atol = self.tolerance(again)
        ok, err, index, got, want = compare_values(out["tensor"], expected, rtol, atol, ignore)
        if ok:
            book.passed(AGAIN_CHECK)
        else:
            book.failed(AGAIN_CHECK, case, result,
                        f"{said}, its output is off by {err:.3g} at output{format_index(index)} (got {got:.6g}, "
                        f"expected {want:.6g}), while the calls on the case's own inputs are right: "
                        + again_reason(result["calls"][0], result["calls"][2],
                                       "K/V or a mask stored on the module"))

    def tolerance(self, case: Case) -> tuple[float, float]:
        dtype = case.payload["Q"].dtype
        rtol, atol = DEFAULT_TOLERANCE[dtype]
        if case.tier == CORE:
            return rtol, max(atol, FLOOR_FACTOR * self._reference_error(case))
        return rtol, max(atol, LOW_PRECISION_FACTOR * self._reference_error(case))

    def _check_values(self, case, result, book, actual, expected, ignore, where) -> bool:
        rtol, atol = self.tolerance(case)
        ok, err, index, got, want = compare_values(actual, expected, rtol, atol, ignore)
        if ok:
            book.passed(case.value_check)
        else:
            book.failed(case.value_check, case, result,
                        f"{where}: largest error {err:.3g} at output{format_index(index)} "
                        f"(got {got:.6g}, expected {want:.6g}; tolerance {atol:.1g} + {rtol:.1g}*|expected|)")
        return ok

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
        """Name what the public failures show (the same on every seed); fresh ones only when no
        public case fails. Structural problems first, then the known mistake that explains every
        examined failure, then the device probe; a name is given only when it fits them all."""
        public = [f for f in failures if f.case.public]
        failures = public or failures
        probed = [f for f in failures if PROBE in f.case.payload]
        failures = [f for f in failures if PROBE not in f.case.payload] or probed
        for check in STRUCTURAL:
            if check in ("shape", "device"):
                continue
            if any(f.check == check for f in failures):
                return self.diagnose_without_match([f for f in failures if f.check == check])
        shaped = [f for f in failures if f.check == "shape"]
        valued = [f for f in failures if f.check not in (*STRUCTURAL, AGAIN_CHECK)]
        if shaped:  # a mistake named for a wrong shape must explain that shape
            return self.match_mistakes(shaped) or self.diagnose_without_match(shaped)
        named = self.match_mistakes(valued) if valued else None
        if named:
            return named
        again = [f for f in failures if f.check == AGAIN_CHECK]
        if again and not valued:  # right on every case's own inputs, wrong only when called again
            mistake = self.second_input_mistake
            return mistake, f"Looks like {self.mistakes.get(mistake, mistake)}. {AGAIN_CHECK}: {again[0].message}"
        if probed and "hard_coded_device" in self.mistakes:
            first = probed[0]
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. device: {first.message}"
        return self.diagnose_without_match(shaped or [f for f in failures if f.check == "device"] or valued)

    def match_mistakes(self, failures: list[Failure]):
        """The known mistake whose output matches the learner's on every examined failing case.

        Cases are examined smallest first, at most six; each mistake is re-enacted only while it
        still explains every case seen so far, so big cases cost little.
        """
        def judge(failure: Failure, alive: set[str] | None):
            out, weights, problem = unpack_output(failure.result["calls"][0], allow_weights=True)
            if problem:
                return None
            matched: dict[str, float] = {}
            # the mistake leaves this whole case NaN, or is as near the learner's output as the
            # right answer is (it passes the case): no evidence either way
            undefined: set[str] = set()
            for mistake, cand_out, cand_w in self.candidate_outputs(failure.case, alive):
                symptom = mistake in NAN_IS_THE_SYMPTOM and not bool(torch.isfinite(cand_out).all())
                if not symptom and bool(torch.isnan(cand_out).all()):
                    undefined.add(mistake)
                    continue
                # a NaN/inf the mistake produces is its symptom: it must be where the learner's is
                wildcard = not symptom
                distance = mistake_distance(out["tensor"], cand_out, wildcard)
                if weights is not None and cand_w is not None and distance < MISTAKE_MATCH:
                    distance = max(distance, mistake_distance(weights["tensor"], cand_w))
                if distance >= MISTAKE_MATCH:
                    continue
                if self._shows(failure.case, cand_out, cand_w if weights is not None else None):
                    matched[mistake] = min(matched.get(mistake, float("inf")), distance)
                else:  # close to the learner's, but right on this case: not what made it fail
                    undefined.add(mistake)
            return matched, undefined - set(matched)

        mistake = narrow_mistakes(failures, "calls", judge)
        if mistake is None:
            return None
        first = failures[0]
        return mistake, f"Looks like {self.mistakes[mistake]}. {first.check}: {first.message}"

    def _shows(self, case: Case, cand_out: torch.Tensor, cand_w: torch.Tensor | None) -> bool:
        """Whether a mistake's output (or its weights, when the learner's are graded) would fail
        this case: one that passes it cannot be what made the learner's output fail."""
        (expected, expected_w), ignore = self._expected(case)
        return self._fails(case, cand_out, expected, ignore) or (
            cand_w is not None and self._fails(case, cand_w, expected_w, ignore))

    def _fails(self, case: Case, tensor: torch.Tensor, expected: torch.Tensor, ignore) -> bool:
        rtol, atol = self.tolerance(case)
        return (tuple(tensor.shape) != tuple(expected.shape)
                or not compare_values(tensor, expected, rtol, atol, ignore)[0])

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
        if RESULT_OVERWRITTEN in first.message and "output_buffer_reused" in self.mistakes:
            mistake = "output_buffer_reused"
        return mistake, f"{first.check}: {first.message}.{advice.get(mistake, ' No known mistake matches; re-read the statement.')}"
