"""Grading a module called several times in a row, each call returning `(output, (K, V))`.

The KV-cache and cross-attention drills share this shape of answer: the learner's module gets
the grader's weights, is called step after step (the cache it returned fed back in, or one the
grader made), and every step's output AND cache are graded. A run is reduced to a *trace*, one
`(output, K, V)` per step, so the oracle, the correct same-dtype computations that set the
error floor, and the re-enacted known mistakes are all compared the same way.

~500 lines on purpose: running the steps, the checks and the diagnosis share the trace, and
split across files they would pass it back and forth.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .device_probe import PROBE, check_probe, follow_inputs, probe_result
from .grading import (
    AGAIN,
    AGAIN_CHECK,
    CORE,
    DEFAULT_TOLERANCE,
    EXTRA,
    MISTAKE_MATCH,
    ONE_CALL,
    SIDE_BY_SIDE,
    WEIGHTS_AFTER,
    Case,
    CheckBook,
    Drill,
    Failure,
    clone_tree,
    compare_values,
    describe_returned,
    export,
    failure_check,
    format_index,
    inputs_as_left,
    load_projections,
    mistake_distance,
    narrow_mistakes,
    other_layout_values,
    same_values,
    second_case,
    shape_text,
)
from .tensor_drill import FLOOR_FACTOR, LOW_PRECISION_FACTOR

LAYERS = ("W_q", "W_k", "W_v", "W_o")
CHECK_ORDER = [
    ("return type", CORE), ("output shape", CORE), ("cache shape", CORE), ("dtype", CORE),
    ("device", CORE), ("inputs unchanged", CORE), ("weights unchanged", CORE), ("fresh sequence", CORE),
    ("values float32", CORE), ("values float64", CORE), ("cache values", CORE), (AGAIN_CHECK, CORE),
    (SIDE_BY_SIDE, CORE),
    ("float16 accuracy", EXTRA), ("bfloat16 accuracy", EXTRA), ("fully masked rows", EXTRA),
]
STRUCTURAL = ("return type", "dtype", "inputs unchanged", "weights unchanged", "fresh sequence")
"""Checks diagnosed by what they are, before any comparison with known mistakes' traces."""
SHAPED = ("output shape", "cache shape")
def weights_as_left(module) -> list:
    """In the child: the module's projections after its runs, exported in `LAYERS` order (the
    statement: keep no state on the module; the grader's weights were loaded in); [] where
    they cannot be read (the checks of its outputs say what is wrong then)."""
    try:
        return [export(getattr(getattr(module, layer), part)) for layer in LAYERS for part in ("weight", "bias")]
    except Exception:  # noqa: BLE001 - a layer the learner's module replaced with something else
        return []
VALUE_CHECK = {torch.float32: "values float32", torch.float64: "values float64",
               torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}

Trace = list  # [(output, K, V)] per step, plain tensors


def strided(tensor: torch.Tensor) -> torch.Tensor:
    """The same values stored transposed: a non-contiguous input, as a `.transpose` would give."""
    return tensor.transpose(-2, -1).contiguous().transpose(-2, -1)


def random_weights(gen: torch.Generator, d_model: int) -> dict:
    """float64 (weight, bias) per layer, nn.Linear-sized, biases clearly non-zero."""
    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)
    return {layer: (randn(d_model, d_model) / d_model ** 0.5, 0.5 * randn(d_model)) for layer in LAYERS}


OPTIONAL_MASKS = ("mask", "src_mask")
"""Step inputs a module takes as optional (None: nothing masked): the device probe runs with
them and without."""


def step_tensors(steps: list[dict]) -> list[torch.Tensor]:
    """Every input tensor of a case's steps, in a fixed order (for the mutation check)."""
    found = []
    for step in steps:
        for key in sorted(step):
            value = step[key]
            found += [value] if isinstance(value, torch.Tensor) else [
                t for t in value if isinstance(t, torch.Tensor)] if isinstance(value, (tuple, list)) else []
    return found


def second_steps(steps: list[dict], count: int = 2) -> list[dict]:
    """The first `count` steps as other inputs of the same kind (`AGAIN`): batch items trade
    places in every tensor (states, memory, masks, caches handed in) and the float ones but
    masks are negated, so each item keeps its own padding and whatever the module kept from the
    first run is stale (a float mask stays 0/1, as the contract has it: negated, a right
    `mask > 0` read it as all blocked). Two steps (a call with cache=None, then one with the
    cache it returned) show what is kept; the later steps are graded on the case's own inputs,
    and skipping them keeps the third run cheap."""
    def other(value, negate: bool):
        if isinstance(value, torch.Tensor):
            return other_layout_values(value, flip=(0,), negate=negate and value.is_floating_point())
        if isinstance(value, (tuple, list)):
            return type(value)(other(item, negate) for item in value)
        return value
    return [{key: other(value, "mask" not in key) for key, value in step.items()} for step in steps[:count]]


def _flat_graded(trace: Trace, ignored: list[torch.Tensor] | None) -> torch.Tensor:
    """Every step's output, K and V in one float64 vector, output rows that are not graded
    (fully masked) set to 0: one `compare_values` for a whole trace."""
    parts = []
    for index, step in enumerate(trace):
        for part, tensor in enumerate(step):
            tensor = tensor.to(torch.float64)
            if part == 0 and ignored is not None and bool(ignored[index].any()):
                tensor = tensor.masked_fill(ignored[index].unsqueeze(-1), 0.0)
            parts.append(tensor.reshape(-1))
    return torch.cat(parts)


def parse_step(exported: dict):
    """(output, K, V) exported records from one call's exported value, or (None, why)."""
    items = exported.get("items") or []
    if exported.get("type") in ("tuple", "list") and exported.get("length") == 2 and items[0].get("type") == "Tensor":
        cache = items[1]
        parts = cache.get("items") or []
        if (cache.get("type") in ("tuple", "list") and cache.get("length") == 2
                and all(part.get("type") == "Tensor" for part in parts)):
            return (items[0], parts[0], parts[1]), None
        return None, f"returned (output, {describe_returned(cache)}); the cache must be a tuple (K, V) of two Tensors"
    got = describe_returned(exported)
    return None, f"returned {got}; expected a tuple (output, (K, V))"


def trace_distance(actual: Trace, candidate: Trace) -> float:
    """`mistake_distance` over a whole trace: inf unless every step has the same shapes."""
    if len(actual) != len(candidate):
        return float("inf")
    for got, want in zip(actual, candidate):
        if any(tuple(a.shape) != tuple(c.shape) for a, c in zip(got, want)):
            return float("inf")
    flat = lambda trace: torch.cat([t.reshape(-1).to(torch.float64) for step in trace for t in step])  # noqa: E731
    return mistake_distance(flat(actual), flat(candidate))


class StepsDrill(Drill):
    """A drill whose module is called step by step; subclasses say how and what is right."""

    check_order = CHECK_ORDER
    late_checks: dict[str, str] = {AGAIN_CHECK: "state_on_module", SIDE_BY_SIDE: "state_on_module"}
    """Check -> the mistake it names, when no known mistake's trace explains the failures (a
    check of HOW the code ran, e.g. work redone or state kept, whose values can be right)."""
    second_inputs_said = "batch items swapped, states and memory negated"
    """How the second inputs' steps differ from the case's, in the message (`second_steps`)."""

    # --- per-drill pieces -------------------------------------------------------------------
    def call_step(self, module, step: dict, previous_cache):
        """In the child: one call of the learner's module (its return value, unchanged)."""
        raise NotImplementedError

    def oracle(self, case: Case) -> Trace:
        """The right trace in float64 on CPU."""
        raise NotImplementedError

    def same_dtype_traces(self, case: Case) -> list[Trace]:
        """Correct traces computed in the case's dtype (they set the error floor)."""
        raise NotImplementedError

    def candidates(self, case: Case) -> list[tuple[str, Callable[[], Trace | None]]]:
        """[(mistake id, thunk)]: each thunk re-enacts a mistake over the case's steps and
        returns its trace, or None where the mistake cannot happen (it would raise)."""
        raise NotImplementedError

    def ignored_rows(self, case: Case) -> list[torch.Tensor] | None:
        """Per step, a bool (batch, t) of output rows not graded (fully masked); None: all graded."""
        return None

    def describe_step(self, case: Case, index: int) -> str:
        return f"step {index + 1}"

    # --- the child ----------------------------------------------------------------------------
    def build_module(self, entry_obj, payload: dict):
        module = entry_obj(payload["d_model"], payload["num_heads"])
        first = payload["steps"][0]["x"]
        module.to(device=first.device, dtype=first.dtype)
        load_projections(module, payload["weights"], first.device, first.dtype,
                         "(the grader loads its weights into W_q..W_o)")
        module.eval()
        return module

    def watch_step(self, module, step: dict, previous_cache):
        """In the child: (return value, a note of plain data on how the call went, or None).
        A drill that must see what the call did (not only what it returned) overrides this."""
        return self.call_step(module, step, previous_cache), None

    def _run_steps(self, module, steps: list[dict], watched: bool = False) -> tuple[list, list]:
        """Every step's raw return value (and note); stops after one that returns no usable cache."""
        values, notes, cache = [], [], None
        for step in steps:
            with torch.no_grad():
                if watched:
                    value, note = self.watch_step(module, step, cache)
                else:
                    value, note = self.call_step(module, step, cache), None
            values.append(value)
            notes.append(note)
            if not (isinstance(value, (tuple, list)) and len(value) == 2):
                break
            cache = value[1]
        return values, notes

    def run_case(self, entry_obj, payload: dict) -> dict:
        """In the child: the steps once (a big case) or twice on the same module (a second
        sequence, started with cache=None, must not see the first), then the second inputs'
        steps on it (`AGAIN`); inputs sent back once."""
        module = self.build_module(entry_obj, payload)
        if PROBE in payload:
            steps = clone_tree(payload["steps"])
            found = probe_result(lambda: self._run_steps(module, steps)[0][-1], default_is_wrong=True, module=module)
            if found[PROBE]["problems"] or not any(step.get(key) is not None for step in steps
                                                   for key in OPTIONAL_MASKS):
                return found
            # and without the mask: code often makes one there (`torch.ones(...)`), without device=
            bare = [{key: None if key in OPTIONAL_MASKS else value for key, value in step.items()}
                    for step in clone_tree(payload["steps"])]
            unmasked = probe_result(lambda: self._run_steps(module, bare)[0][-1], default_is_wrong=True, module=module)
            return unmasked if unmasked[PROBE]["problems"] else found
        runs, inputs_after, notes = [], [], []

        def keep(step_notes: list) -> None:
            """Each step's note from whichever run's says the most (every run is watched: code
            that saw no watch on a later run could do there what the watch forbids, unseen)."""
            for index, note in enumerate(step_notes):
                if index >= len(notes):
                    notes.append(note)
                elif note and any(note.values()) and not (notes[index] and any(notes[index].values())):
                    notes[index] = note

        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            steps = clone_tree(payload["steps"])
            values, step_notes = self._run_steps(module, steps, watched=True)
            runs.append([export(value) for value in values])
            keep(step_notes)
            if attempt == 0:
                inputs_after = inputs_as_left(step_tensors(steps), step_tensors(payload["steps"]), payload)
        if AGAIN in payload and not payload.get(ONE_CALL):
            values, step_notes = self._run_steps(module, clone_tree(payload[AGAIN]["steps"]), watched=True)
            runs.append([export(value) for value in values])
            keep(step_notes)
        if AGAIN in payload and payload.get(SIDE_BY_SIDE):
            values = self._run_side_by_side(module, clone_tree(payload[AGAIN]["steps"]),
                                            clone_tree(payload["steps"]))
            runs.append([export(value) for value in values])
            values, step_notes = self._run_forked(module, clone_tree(payload["steps"]),
                                                  clone_tree(payload[AGAIN]["steps"]))
            runs.append([export(value) for value in values])
            keep(step_notes)
        return {"runs": runs, "inputs": inputs_after, "notes": notes, WEIGHTS_AFTER: weights_as_left(module)}

    def _run_forked(self, module, steps: list[dict], forks: list[dict]) -> tuple[list, list]:
        """`steps`' values from cache=None, and after each step past the first a fork from the
        cache that step was handed (beam search tries another token, `forks`' step, from it),
        its answer dropped: a cache grown in place in a buffer the fork shares loses the step's
        own keys to the fork's (`SIDE_BY_SIDE`'s last run)."""
        values, notes, cache = [], [], None
        for index, step in enumerate(steps):
            with torch.no_grad():
                value, note = self.watch_step(module, step, cache)
                values.append(value)
                notes.append(note)
                if not (isinstance(value, (tuple, list)) and len(value) == 2):
                    break
                if cache is not None:  # any step of the other sequence is tokens of the same kind
                    self.watch_step(module, forks[index % len(forks)], cache)
                cache = value[1]
        return values, notes

    def _run_side_by_side(self, module, first: list[dict], other: list[dict]) -> list:
        """`first`'s steps' values, each step run just before `other`'s step of the same index
        on the same module, each sequence with its own cache (`SIDE_BY_SIDE`)."""
        values, caches = [], [None, None]
        for step, beside in zip(first, other):
            with torch.no_grad():  # watched as every call is (code must not tell these calls apart)
                value = self.watch_step(module, step, caches[0])[0]
                values.append(value)
                if not (isinstance(value, (tuple, list)) and len(value) == 2):
                    break
                caches[0] = value[1]
                after = self.watch_step(module, beside, caches[1])[0]
                if not (isinstance(after, (tuple, list)) and len(after) == 2):
                    break
                caches[1] = after[1]
        return values

    # --- the parent ---------------------------------------------------------------------------
    def _expected(self, case: Case) -> Trace:
        if "oracle" not in case.extra:
            case.extra["oracle"] = self.oracle(case)
        return case.extra["oracle"]

    def _ignored(self, case: Case):
        if "ignored" not in case.extra:
            case.extra["ignored"] = self.ignored_rows(case)
        return case.extra["ignored"]

    def _reference_error(self, case: Case) -> float:
        if "reference_error" not in case.extra:
            expected, ignored = self._expected(case), self._ignored(case)
            worst = 0.0
            for trace in self.same_dtype_traces(case):
                for index, (got, want) in enumerate(zip(trace, expected)):
                    for part, (a, e) in enumerate(zip(got, want)):
                        rows = ignored[index] if ignored is not None and part == 0 else None
                        worst = max(worst, compare_values(a.cpu(), e, 0.0, 0.0, rows)[1])
            case.extra["reference_error"] = worst
        return case.extra["reference_error"]

    def tolerance(self, case: Case) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCE[case.payload["steps"][0]["x"].dtype]
        factor = FLOOR_FACTOR if case.tier == CORE else LOW_PRECISION_FACTOR
        return rtol, max(atol, factor * self._reference_error(case))

    def learner_trace(self, run: list[dict]):
        """(trace of plain tensors, None) or (None, (step index, why))."""
        trace = []
        for index, exported in enumerate(run):
            parts, problem = parse_step(exported)
            if problem:
                return None, (index, problem)
            trace.append(tuple(part["tensor"] for part in parts))
        return trace, None

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        if PROBE in case.payload:
            check_probe(book, case, result, follow_inputs("x"))
            return
        core = case.tier == CORE
        name = failure_check(case)
        where = f"{case.name} ({case.notes})"
        expected = self._expected(case)
        run = result["runs"][0]
        for index, exported in enumerate(run):
            parts, problem = parse_step(exported)
            if problem:
                book.failed(name("return type"), case, result, f"{where}, {self.describe_step(case, index)}: {problem}")
                return
            out, k, v = parts
            want_out, want_k, want_v = expected[index]
            if tuple(out["shape"]) != tuple(want_out.shape):
                book.failed(name("output shape"), case, result,
                            f"{where}, {self.describe_step(case, index)}: output shape {shape_text(out['shape'])}, "
                            f"expected {shape_text(want_out.shape)}")
                return
            for label, got, want in (("K", k, want_k), ("V", v, want_v)):
                if tuple(got["shape"]) != tuple(want.shape):
                    book.failed(name("cache shape"), case, result,
                                f"{where}, after {self.describe_step(case, index)}: cache {label} has shape "
                                f"{shape_text(got['shape'])}, expected {shape_text(want.shape)} "
                                f"(batch, heads, length {want.shape[-2]}, d_head)")
                    return
            dtype = str(case.payload["steps"][0]["x"].dtype)
            for label, got in (("output", out), ("cache K", k), ("cache V", v)):
                if got["dtype"] != dtype:
                    book.failed(name("dtype"), case, result, f"{where}: {label} dtype {got['dtype']}, expected {dtype} "
                                "(the inputs' dtype)")
                    return
            device = str(case.payload["steps"][0]["x"].device)
            if any(got["device"] != device for got in parts):
                book.failed(name("device"), case, result, f"{where}: a result is not on the inputs' device {device}")
                return
        if len(run) != len(expected):
            book.failed(name("return type"), case, result, f"{where}: only {len(run)} of {len(expected)} steps ran")
            return
        if core:
            for check in ("return type", "output shape", "cache shape", "dtype", "device"):
                book.passed(check)
            self._check_inputs(case, result, book, where)
            if len(result["runs"]) > 1:
                self._check_fresh_sequence(case, result, book, where)
        trace, _ = self.learner_trace(run)
        right = self._check_values(case, result, book, trace, expected, where)
        if core and right and AGAIN in case.payload and len(result["runs"]) > 2:
            # only where the case's own inputs come out right: else the values checks say it
            self._check_second_input(case, result, book, where)
        if core and right and case.payload.get(SIDE_BY_SIDE) and len(result["runs"]) > 4:
            before = len(book.failures)
            self._check_second_input(case, result, book, where, run=3, check=SIDE_BY_SIDE,
                                     how="run step by step beside the case's own sequence (each step "
                                         "just before the other's, each with its own cache)",
                                     why="it answered from keys of the other sequence: a buffer kept on "
                                         "the module, not the cache handed in")
            if len(book.failures) == before:  # one failure of the check a case: the first found
                self._check_forked(case, result, book, where)
        if core:
            self.check_notes(case, result.get("notes") or [], result, book, where)

    def check_notes(self, case: Case, notes: list, result: dict, book: CheckBook, where: str) -> None:
        """Judge what `watch_step` noted in the child (in the parent, like every check)."""

    def _check_inputs(self, case, result, book, where):
        for before, after in zip(step_tensors(case.payload["steps"]), result.get("inputs", [])):
            if after.get("type") == "Tensor" and not same_values(after["tensor"], before.detach().cpu()):
                book.failed("inputs unchanged", case, result, f"{where}: an input was modified in place "
                            "(use out-of-place ops on x, memory, masks and caches handed in)")
                break
        else:
            book.passed("inputs unchanged")
        loaded = [tensor for layer in LAYERS for tensor in case.payload["weights"][layer]]
        for index, (before, after) in enumerate(zip(loaded, result.get(WEIGHTS_AFTER) or [])):
            if after.get("type") != "Tensor" or not same_values(after["tensor"], before.detach().cpu()):
                name = f"{LAYERS[index // 2]}.{('weight', 'bias')[index % 2]}"
                book.failed("weights unchanged", case, result, f"{where}: the module's {name} changed during "
                            "its calls (keep no state on the module: the weights loaded in stay as they are)")
                return
        if result.get(WEIGHTS_AFTER):
            book.passed("weights unchanged")

    def _check_fresh_sequence(self, case, result, book, where):
        first, second = result["runs"][0], result["runs"][1]
        one, _ = self.learner_trace(first)
        two, _ = self.learner_trace(second)
        same = (two is not None and len(one) == len(two)
                and all(same_values(a, b) for x, y in zip(one, two) for a, b in zip(x, y)))
        if same:
            book.passed("fresh sequence")
        else:
            book.failed("fresh sequence", case, result,
                        f"{where}: the same steps run again from cache=None on the same module gave different "
                        "results (state kept on the module between calls, or randomness)")

    def _check_forked(self, case, result, book, where) -> None:
        """The run with a beam fork after each step (`_run_forked`), graded against the case's own
        values: a fork from an older cache must leave the newer cache as it was."""
        self._check_run(case, result, book, run=4, check=SIDE_BY_SIDE, against=case,
                        said=f"{where}: run again with a beam fork after each step (another token tried "
                             "from the cache that step was handed, its answer dropped)",
                        why="the fork wrote over this sequence's cache (grown in place in a buffer they "
                            "share); a cache handed in must stay as it was")

    def _check_second_input(self, case, result, book, where, run: int = 2, check: str = AGAIN_CHECK,
                            how: str = "run a third time on the same module", why: str | None = None):
        """The third run, on other inputs of the same shapes, graded like the first: a module
        that keeps what it computed (the memory's K/V, a mask) passes two runs on the same inputs.
        (`run=3`: the same inputs' run side by side with the case's own, `SIDE_BY_SIDE`.)"""
        why = why or ("something kept from an earlier call was reused (K/V or a mask stored on the module)")
        self._check_run(case, result, book, run=run, check=check, against=second_case(case),
                        said=f"{where}: {how}, on other inputs of the same shapes ({self.second_inputs_said})",
                        why=f"while the runs on the case's own inputs are right: {why}")

    def _check_run(self, case, result, book, *, run: int, check: str, against: Case, said: str,
                   why: str) -> None:
        """Run `run` of the case graded against `against`'s values (the case's own, or its second
        inputs'): the first step and part that is off, and why that says what it says."""
        expected, ignored = self._expected(against), self._ignored(against)
        trace, _ = self.learner_trace(result["runs"][run])
        if trace is None or len(trace) != len(expected) or any(
                tuple(a.shape) != tuple(e.shape) for got, want in zip(trace, expected) for a, e in zip(got, want)):
            book.failed(check, case, result, f"{said}, it did not return the same kind of results")
            return
        rtol, atol = self.tolerance(against)
        if compare_values(*(_flat_graded(t, ignored) for t in (trace, expected)), rtol, atol)[0]:
            book.passed(check)  # one comparison of the whole trace when it is right
            return
        for index, (got, want) in enumerate(zip(trace, expected)):
            rows = ignored[index] if ignored is not None else None
            for part, (a, e) in enumerate(zip(got, want)):
                ok, err, at, value, target = compare_values(a, e, rtol, atol, rows if part == 0 else None)
                if not ok:
                    label = ("output", "cache K", "cache V")[part]
                    book.failed(check, case, result,
                                f"{said}, {self.describe_step(against, index)}: {label} off by {err:.3g} at "
                                f"{format_index(at)} (got {value:.6g}, expected {target:.6g}), {why}")
                    return
        book.passed(check)

    def _check_values(self, case, result, book, trace, expected, where) -> bool:
        rtol, atol = self.tolerance(case)
        ignored = self._ignored(case)
        out_check = case.value_check
        cache_check = "cache values" if case.tier == CORE else case.value_check
        out_failed = cache_failed = None
        for index, (got, want) in enumerate(zip(trace, expected)):
            rows = ignored[index] if ignored is not None else None
            if out_failed is None:
                ok, err, at, a, e = compare_values(got[0], want[0], rtol, atol, rows)
                if not ok:
                    out_failed = (f"{where}, {self.describe_step(case, index)}: largest output error {err:.3g} at "
                                  f"output{format_index(at)} (got {a:.6g}, expected {e:.6g}; tolerance "
                                  f"{atol:.1g} + {rtol:.1g}*|expected|)")
            if cache_failed is None:
                for label, g, w in (("K", got[1], want[1]), ("V", got[2], want[2])):
                    ok, err, at, a, e = compare_values(g, w, rtol, atol)
                    if not ok:
                        cache_failed = (f"{where}, after {self.describe_step(case, index)}: cache {label} is off by "
                                        f"{err:.3g} at {label}{format_index(at)} (got {a:.6g}, expected {e:.6g})")
                        break
        for check, failed in ((out_check, out_failed), (cache_check, cache_failed)):
            if failed:
                book.failed(check, case, result, failed)
            else:
                book.passed(check)
        if ignored is not None and any(rows.any() for rows in ignored):
            self._report_masked_rows(case, trace, expected, ignored, book, where)
        return out_failed is None and cache_failed is None

    def _report_masked_rows(self, case, trace, expected, ignored, book, where):
        """Rows with no allowed key: compared with what a zero attention output gives (W_o's bias)."""
        got = torch.cat([step[0][rows] for step, rows in zip(trace, ignored)]).to(torch.float64)
        bias = case.payload["weights"]["W_o"][1].cpu().to(torch.float64)
        rtol, atol = self.tolerance(case)
        if torch.isnan(got).any():
            book.note("fully masked rows", "fail",
                      f"{where}: NaN on a query whose source is all padding (what masked_fill(-inf) + softmax "
                      "gives). Not graded; F.scaled_dot_product_attention gives a zero attention output there, "
                      "so the block returns W_o's bias: torch.nan_to_num(weights) or a mask-aware softmax does too.")
        elif bool(((got - bias).abs() <= atol + rtol * bias.abs()).all()):
            book.note("fully masked rows", "pass", "zero attention on all-padding sources (W_o's bias), like "
                      "F.scaled_dot_product_attention")
        else:
            book.note("fully masked rows", "fail",
                      f"{where}: a query whose source is all padding got something other than a zero attention "
                      "output (a finite fill like -1e9 averages the padding's values). Not graded.")

    # --- diagnosis ---------------------------------------------------------------------------
    def candidate_traces(self, case: Case, wanted: set[str] | None):
        cache = case.extra.setdefault("candidates", {})
        for index, (mistake, thunk) in enumerate(self.candidates(case)):
            if wanted is not None and mistake not in wanted:
                continue
            if index not in cache:
                cache[index] = thunk()
            if cache[index] is not None:
                yield mistake, cache[index]

    def diagnose(self, failures: list[Failure]):
        """Public failures first; structural checks by name, then the known mistake whose trace
        matches the learner's on every examined failing case, then the device probe."""
        public = [f for f in failures if f.case.public]
        failures = public or failures
        probed = [f for f in failures if PROBE in f.case.payload]
        failures = [f for f in failures if PROBE not in f.case.payload] or probed
        for check in STRUCTURAL:
            found = [f for f in failures if f.check == check]
            if found:
                return self.diagnose_without_match(found)
        shaped = [f for f in failures if f.check in SHAPED]
        shaped = [f for f in shaped if f.case.tier == CORE] or shaped  # a half case's trace is only near
        if shaped:
            return self.match_mistakes(shaped) or self.diagnose_without_match(shaped)
        late = [f for f in failures if f.check in self.late_checks]
        valued = [f for f in failures if f.check not in (*STRUCTURAL, *SHAPED, "device", *self.late_checks)]
        named = self.match_mistakes(valued) if valued else None
        if named:
            return named
        if late and not valued:
            mistake = self.late_checks[late[0].check]
            return mistake, f"Looks like {self.mistakes[mistake]}. {late[0].check}: {late[0].message}"
        if probed and "hard_coded_device" in self.mistakes:
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. device: {probed[0].message}"
        return self.diagnose_without_match(valued or failures)

    def match_mistakes(self, failures: list[Failure]):
        """The known mistake whose trace matches on every examined failing case (six smallest)."""
        def judge(failure: Failure, alive: set[str] | None):
            trace, problem = self.learner_trace(failure.result["runs"][0])
            if problem:
                return None
            matched: dict[str, float] = {}
            for mistake, candidate in self.candidate_traces(failure.case, alive):
                distance = trace_distance(trace, candidate)
                if distance < MISTAKE_MATCH:
                    matched[mistake] = min(matched.get(mistake, float("inf")), distance)
            return matched, set()

        mistake = narrow_mistakes(failures, "runs", judge)
        if mistake is None:
            return None
        first = failures[0]
        return mistake, f"Looks like {self.mistakes[mistake]}. {first.check}: {first.message}"

    def diagnose_without_match(self, failures: list[Failure]):
        first = failures[0]
        plain = {"return type": "wrong_return_type", "output shape": "wrong_shape", "cache shape": "wrong_cache_shape",
                 "dtype": "wrong_dtype", "device": "wrong_device", "inputs unchanged": "mutates_inputs",
                 "weights unchanged": "mutates_parameters" if "mutates_parameters" in self.mistakes else "state_on_module",
                 "fresh sequence": "state_on_module" if "state_on_module" in self.mistakes else "nondeterministic",
                 "cache values": "wrong_cache"}
        mistake = plain.get(first.check, "wrong_values")
        if mistake in self.mistakes:
            return mistake, f"Looks like {self.mistakes[mistake]}. {first.check}: {first.message}"
        advice = {
            "wrong_dtype": " Compute in any precision you like, but return the inputs' dtype (.to(x.dtype)).",
            "mutates_inputs": " Don't use in-place ops (+=, masked_fill_, copy_ ...) on what you are handed.",
            "nondeterministic": " Remove randomness (dropout, torch.rand) and state kept between calls.",
            "wrong_return_type": " Return a tuple (out, (K, V)): the output and the cache.",
        }
        return mistake, f"{first.check}: {first.message}.{advice.get(mistake, ' No known mistake matches; re-read the statement.')}"
