"""The drill machinery shared by every drill: cases, exporting results, checks, verdicts.

A drill builds `Case`s in the trusted parent, `run_case` runs the learner's code in the child
and exports plain data, and `judge` (parent again) turns the results into a verdict. Only
plain data crosses from child to parent (`torch.save` there, `torch.load(weights_only=True)`
here), so the learner's code can never reach the oracle or the verdict; the process model
itself lives in `studyapp/grader/` (worker, sandbox, child).

Past 400 lines (~580 lines) on purpose: cases, the export of results, the comparisons, the
check book, the diagnosis of known mistakes and the verdict are one pipeline every drill runs,
and a drill's `grade.py` reads it in one module instead of following it across six.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field

import torch

from .catalog import DrillInfo

CORE, EXTRA = "core", "extra"
STRUCTURAL_CHECKS = frozenset({"return type", "shape", "output shape", "cache shape", "dtype", "device"})
"""What the statements ask of a result in every dtype: a half-precision (extra) case that gets
one wrong fails that core check; only its accuracy is an extra note. A KV cache's shape too: a
cache laid out otherwise in float16 only (a flash-attention layout "for speed") passed."""


def failure_check(case: Case):
    """The check a failure on `case` counts under, by name: its own in a core case; in an extra
    case its accuracy check (`value_check`), except the structural ones (`STRUCTURAL_CHECKS`)."""
    if case.tier == CORE:
        return lambda check: check
    return lambda check: check if check in STRUCTURAL_CHECKS else case.value_check



# torch.testing.assert_close's defaults, per dtype: (rtol, atol).
DEFAULT_TOLERANCE = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}
FRESH_SEEDS_KEPT = 32
"""Per drill and device, the seeds whose fresh cases the dev check keeps (`Drill.make_cases`)."""
MISTAKE_MATCH = 1e-3
"""Largest scaled distance at which a learner's output counts as 'the same' as a known mistake."""


@dataclass
class Case:
    """One set of inputs. The parent keeps `payload` pristine for the oracle; the child gets a copy."""

    name: str
    payload: dict
    tier: str = CORE
    """EXTRA cases (float16/bfloat16): their accuracy is reported but never decides pass/fail;
    raising on them still fails, since the dtype is part of the contract."""
    value_check: str = "values"
    """Name of the check this case's values feed, e.g. "values float32"."""
    notes: str = ""
    """The case's shapes and mask in words, quoted in messages."""
    extra: dict = field(default_factory=dict)
    public: bool = True
    """Public cases are the same on every run and decide the diagnosis; fresh ones come from the seed."""
    size: int = 0
    """The largest sequence length in the case (n, m, max_len), for 'works only up to size X'."""


ONE_CALL = "one_call"
"""Payload key of a big case: called once, inputs not sent back (the small cases check determinism
and mutation; a big case is there for its size, and sending it back twice costs each file)."""
BIG = 64
"""Cases longer than this are ONE_CALL cases."""
AGAIN = "again"
"""Payload key of a small case's second inputs: other values of the same shapes, dtypes, devices
and layouts, handed to the same function (or module) after the two calls on the case's own
inputs. Those two calls alone let code pass that keeps something from an earlier call (a
projection or a mask stored on the module, an output cached by shape): it gets back the same
inputs it saw. `other_layout_values` builds them. Public cases only: they run on every grade
and decide the diagnosis, and fresh ones would add a call per case per seed to the dev check."""
AGAIN_CHECK = "second input"


def plan_calls(payload: dict, *, big: bool, core_public: bool, second, again: bool = False,
               same_tensors: dict | None = None, tensors: tuple[str, ...] = ()) -> None:
    """How a case is called, marked on its payload: a big case once (`ONE_CALL`, its inputs
    not sent back twice), a small core public one again on `second()`'s inputs (`AGAIN`); and
    with `again`, big or not (a memo kept only for big inputs, "to save rebuilding them",
    shows only on a big case called again). With `same_tensors`, the second call gets the
    first call's very `tensors` with those other arguments instead (`SAME_TENSORS`)."""
    if same_tensors:
        payload[AGAIN] = {key: payload[key] for key in tensors} | same_tensors
        payload[SAME_TENSORS] = True
    elif big and not again:
        payload[ONE_CALL] = True
    elif core_public or again:
        payload[AGAIN] = second()


SAME_TENSORS = "the first call's tensors again"
"""Payload key of a case whose second call (`AGAIN`) gets the very tensor objects of its first
call, with another of the other arguments (`causal`, a mask, a scale): a result kept for the same
tensors (`Q is self._last_Q`) and reused whatever else changed shows. Other second inputs are
copies, never the same objects."""
SIDE_BY_SIDE = "sequences side by side"
"""Payload key and check of a step drill's case whose second inputs' steps also run interleaved
with its own on one module, each with its own cache, the second inputs' step first (beam search
decodes so): a module that reads a buffer of its own instead of the cache handed in answers the
first with the second's keys; and a run of its own steps with a beam fork from each step's
cache (a cache grown in place in a buffer the fork shares). Two more runs (`harness_altered`
counts them)."""


FIRST_AFTER = "first result after the later calls"
"""Result key: the tensor a case's first call returned, exported again after its later calls."""
WEIGHTS_AFTER = "weights after"
"""Result key: a module's projections (weight, bias of each layer) as its runs left them."""
DIM_LEFT_OUT = "dim left out"
"""Result key: a dim=-1 case's call with `dim` left out (safe_softmax)."""
AT_ZERO = "at_zero"
"""Result key: rope's call on the same x from position 0."""
ONE_EXPORT = (FIRST_AFTER, DIM_LEFT_OUT, AT_ZERO)
"""Result keys holding one exported value; "calls" and `WEIGHTS_AFTER` hold a list of them,
"runs" a list of such lists (`exports_problem` checks their form)."""


def _broadcast_dims(tensor: torch.Tensor) -> list[int]:
    """The dims an expanded view repeats (stride 0, more than one element)."""
    return [d for d in range(tensor.dim()) if tensor.stride(d) == 0 and tensor.shape[d] > 1]


def refilled(tensors: list, values: list) -> list:
    """`tensors` (a call's arguments) holding `values` (other inputs of the same shapes and
    layouts), written in place: the same objects and storage with other contents. An argument
    that is no tensor (None) is replaced by its value."""
    out = []
    for tensor, value in zip(tensors, values, strict=True):
        if not isinstance(tensor, torch.Tensor) or not isinstance(value, torch.Tensor):
            out.append(clone_tree(value))
            continue
        base, source = tensor, value
        for dim in _broadcast_dims(tensor):  # an expanded view: its one row of memory takes the value's
            base, source = base.narrow(dim, 0, 1), source.narrow(dim, 0, 1)
        base.copy_(source)
        out.append(tensor)
    return out


def other_layout_values(like: torch.Tensor, *, flip: tuple[int, ...] = (), negate: bool = False) -> torch.Tensor:
    """`like` with its order reversed along `flip` (and negated), stored as `like` is: a
    transposed tensor stays transposed and an expanded dim stays expanded (stride 0), so the
    second inputs meet the same code paths as the first (a `.view` that fails on one fails on
    both). A broadcast dim is constant, so reversing it changes nothing."""
    values = like.flip(flip) if flip else like
    if negate:
        values = -values
    broadcast = _broadcast_dims(like)
    base = like
    for dim in broadcast:
        base, values = base.narrow(dim, 0, 1), values.narrow(dim, 0, 1)
    copy = torch.empty_like(base)  # preserve_format: a dense permuted layout is kept
    copy.copy_(values)
    return copy.expand(like.shape) if broadcast else copy

def second_case(case: Case) -> Case:
    """The case's second inputs (`AGAIN`: other tensors of the same shapes, or other steps) as a
    case of their own, made once and kept in `case.extra`, so its oracle and error floor are
    computed once, like the case's."""
    if "second" not in case.extra:
        payload = {key: value for key, value in case.payload.items() if key != AGAIN}
        payload.update(case.payload[AGAIN])
        case.extra["second"] = Case(f"{case.name}, second inputs", payload, tier=case.tier,
                                    value_check=case.value_check, notes=case.notes,
                                    public=case.public, size=case.size)
    return case.extra["second"]


def sibling(entry_obj, name: str):
    """The learner's function `name` from the file that defines the entry (None if absent): a
    drill of several functions (masks_advanced, safe_softmax) names one entry and finds the
    rest by name. A function's `__globals__` is its module's namespace, so this works in the
    grader's child and in-process alike."""
    namespace = getattr(entry_obj, "__globals__", None)
    if namespace is None:
        module = sys.modules.get(getattr(entry_obj, "__module__", "") or "")
        namespace = vars(module) if module is not None else {}
    found = namespace.get(name)
    return found if callable(found) else None


GRADABLE_DTYPES = frozenset((torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool,
                             torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64))
"""The dtypes a returned tensor may have: the judges compare no other (torch.equal raises for
torch.bits8, and a complex tensor's imaginary part would be dropped)."""


def export(value, depth: int = 0):
    """Turn whatever learner code returned into plain data that `torch.load(weights_only=True)` accepts."""
    if isinstance(value, torch.Tensor):
        try:  # the base class's own methods only: a subclass's code must not run here, out of the
            # watches' sight (a placeholder whose detach() ran autograd passed a "by hand" drill),
            # nor a mode the learner's code left on (one whose detach() gave back the input as it was)
            with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():
                tensor = torch.Tensor.detach(value)
                if tensor.layout != torch.strided:
                    tensor = tensor.to_dense()
                plain = tensor.as_subclass(torch.Tensor).resolve_conj().resolve_neg().cpu().clone()
        except Exception as error:  # noqa: BLE001 - a subclass with no data of its own to read
            return {"type": type(value).__name__, "repr": f"<a tensor subclass the grader cannot read: "
                                                          f"{type(error).__name__}>"}
        if plain.dtype not in GRADABLE_DTYPES:  # torch.bits8, float8, complex: no drill's values
            return {"type": f"a Tensor of dtype {str(plain.dtype).replace('torch.', '')}", "repr": ""}
        return {"type": "Tensor", "tensor": plain, "dtype": str(plain.dtype),
                "device": str(tensor.device), "shape": list(plain.shape)}
    if isinstance(value, (tuple, list)) and depth < 2:  # a namedtuple is a tuple, as the statements say
        return {"type": "tuple" if isinstance(value, tuple) else type(value).__name__,
                "items": [export(v, depth + 1) for v in value[:4]], "length": len(value)}
    try:
        text = repr(value)[:200]
    except Exception as error:  # a learner object whose __repr__ raises
        text = f"<repr failed: {type(error).__name__}>"
    return {"type": type(value).__name__, "repr": text}


def clone_tree(value):
    """Deep copy of the tensors in a payload, so the learner gets inputs it may (wrongly) mutate.

    Layouts survive the copy: a transposed input stays transposed and an expanded one stays an
    expanded view (stride 0), so code that needs contiguous inputs meets the inputs it must handle.
    """
    if isinstance(value, torch.Tensor):
        return clone_keeping_layout(value)
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tree(v) for v in value)
    return value


def clone_keeping_layout(tensor: torch.Tensor) -> torch.Tensor:
    broadcast = _broadcast_dims(tensor)
    base = tensor
    for dim in broadcast:
        base = base.narrow(dim, 0, 1)
    copy = base.clone()  # preserve_format keeps a dense permuted layout
    return copy.expand(tensor.shape) if broadcast else copy


def describe_returned(exported: dict) -> str:
    """'a tuple of 3', 'NoneType', 'ndarray' ... for messages about wrong return types."""
    kind = exported.get("type")
    if kind in ("tuple", "list"):
        return f"a {kind} of {exported.get('length')}"
    return kind if kind != "Tensor" else "a Tensor"


def unpack_output(exported: dict, allow_weights: bool):
    """(output, weights or None, problem or None) from an exported return value."""
    if exported.get("type") == "Tensor":
        return exported, None, None
    items = exported.get("items")
    if (allow_weights and exported.get("type") == "tuple" and exported.get("length") == 2
            and all(item.get("type") == "Tensor" for item in items)):
        return items[0], items[1], None
    wanted = "a Tensor or a tuple (output, weights)" if allow_weights else "a Tensor"
    got = describe_returned(exported)
    if exported.get("type") == "ndarray":
        got += " (a numpy array: keep it a torch.Tensor)"
    return None, None, f"returned {got}; expected {wanted}"


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise-equal, with NaN equal to NaN (for the determinism and mutation checks)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)



EXAMINED_CASES = 6
"""How many failing cases (the smallest) a diagnosis re-enacts the known mistakes on."""


def narrow_mistakes(failures: list[Failure], result_key: str, judge) -> str | None:
    """The known mistake that explains every examined failing case, or None.

    The failing cases holding `result_key` in their result (one failure per case, smallest
    first, at most `EXAMINED_CASES`) are judged one by one: `judge(failure, alive)` returns
    None when the learner's result cannot be compared, else `(matched, neutral)`: the mistakes
    it reproduces, with their distances, and those that fit without showing on this case (no
    evidence either way). `alive` is the set still in the running (None before the first
    case), so a mistake is re-enacted only while it explains all seen so far: big cases cost
    little. The winner matched at least once and has the smallest summed distance.
    """
    by_case: dict[int, Failure] = {}
    for failure in failures:
        if result_key in failure.result:
            by_case.setdefault(id(failure.case), failure)
    examined = sorted(by_case.values(), key=lambda f: f.case.size)[:EXAMINED_CASES]
    alive: set[str] | None = None
    distances: dict[str, float] = {}
    for failure in examined:
        judged = judge(failure, alive)
        if judged is None:
            return None
        matched, neutral = judged
        fits = set(matched) | neutral
        alive = fits if alive is None else alive & fits
        if not alive:
            return None
        for mistake in alive & set(matched):
            distances[mistake] = distances.get(mistake, 0.0) + matched[mistake]
    shown = {mistake for mistake in alive or () if mistake in distances}
    return min(shown, key=lambda m: (distances[m], m)) if shown else None


UNCHANGED = {"type": "Unchanged"}
"""An input a big case's call left as it was handed in (`inputs_as_left`)."""


def inputs_as_left(args: list, originals: list, payload: dict) -> list[dict]:
    """In the child: each tensor argument as the learner's first call left it, for the "inputs
    unchanged" check, in the order of `originals` (the payload's tensors the arguments are
    copies of). A small case sends each back whole; a big one (`ONE_CALL`: a copy of each would
    cost as much as the case) only one that changed, else `UNCHANGED`. In-place work saves
    memory on long inputs, so big cases are where it happens."""
    if not payload.get(ONE_CALL):
        return [export(arg) for arg in args]
    return [UNCHANGED if _unchanged(arg, original) else export(arg) for arg, original in zip(args, originals)]


def _unchanged(after, before) -> bool:
    return (isinstance(after, torch.Tensor) and isinstance(before, torch.Tensor)
            and type(after) is torch.Tensor and after.dtype == before.dtype and after.shape == before.shape
            and after.device == before.device and after.stride() == before.stride()
            and bool(torch.equal(after, before)))


def export_argument(value) -> dict:
    """An argument as the learner's call left it, for the "inputs unchanged" check: a tensor
    exported, a list or tuple by its repr (code may sort, pop or append to a list of lengths)."""
    if isinstance(value, (list, tuple)):
        try:
            return {"type": type(value).__name__, "repr": repr(value)[:20000]}
        except Exception as error:  # an item the learner put there whose __repr__ raises
            return {"type": type(value).__name__, "repr": f"<repr failed: {type(error).__name__}>"}
    return export(value)


def check_inputs_unchanged(input_names, case: Case, result: dict, book: CheckBook, where: str) -> None:
    """The "inputs unchanged" check: each named tensor (or list) input as the child saw it after
    the call (`result["inputs"]`, in the order of `input_names`) equals the one the case handed
    in. Nothing is booked when no input could be changed (plain ints): it is not exercised."""
    compared = False
    for input_name, after in zip(input_names, result.get("inputs", [])):
        before = case.payload.get(input_name)
        if isinstance(before, torch.Tensor) and after.get("type") == UNCHANGED["type"]:
            same = True
        elif isinstance(before, torch.Tensor) and after.get("type") == "Tensor":
            same = same_values(after["tensor"], before.detach().cpu())
        elif isinstance(before, (list, tuple)) and "repr" in after:
            same = after.get("type") == type(before).__name__ and after["repr"] == repr(before)[:20000]
        else:
            continue
        compared = True
        if not same:
            book.failed("inputs unchanged", case, result,
                        f"{where}: {input_name} was modified in place (use out-of-place ops)")
            return
    if compared:
        book.passed("inputs unchanged")


def load_projections(module, weights: dict, device, dtype, missing: str) -> None:
    """Copy the grader's weights and biases (`weights`: layer name -> (weight, bias)) into the
    learner's module's `nn.Linear` layers of those names, on `device` in `dtype`. `missing`
    ends the error for a layer that is not there (what the learner should write instead)."""
    with torch.no_grad():
        for layer, (weight, bias) in weights.items():
            linear = getattr(module, layer, None)
            if linear is None or getattr(linear, "weight", None) is None:
                raise AttributeError(f"{type(module).__name__} has no {layer} = nn.Linear(d_model, d_model) {missing}")
            if getattr(linear, "bias", None) is None:
                raise AttributeError(f"{layer} has no bias: the contract needs nn.Linear(d_model, d_model) with bias")
            linear.weight.copy_(weight.to(device, dtype))
            linear.bias.copy_(bias.to(device, dtype))


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Index of element `flat` in a tensor of `shape` (torch.unravel_index imports sympy: ~0.7 s)."""
    index = []
    for size in reversed(shape):
        flat, rem = divmod(flat, size)
        index.append(rem)
    return tuple(reversed(index))

def compare_values(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float,
                   ignore_rows: torch.Tensor | None = None):
    """Check |actual - expected| <= atol + rtol |expected| elementwise, like assert_close.

    `ignore_rows` is a bool `(*, n)` tensor of query rows left out (fully masked rows).
    Returns (ok, largest abs error, its index as a tuple, actual there, expected there).
    """
    a = actual.to(torch.float64)
    e = expected.to(torch.float64)
    error = (a - e).abs_()
    error.masked_fill_(torch.isnan(error), math.inf)  # a NaN is the worst error there is
    if ignore_rows is not None and ignore_rows.any():  # (an all-False mask may not even broadcast)
        error.masked_fill_(ignore_rows.unsqueeze(-1).expand(e.shape), 0.0)
    if not error.numel():
        return True, 0.0, (), 0.0, 0.0  # nothing to compare: no element can be off
    excess = error - (atol + rtol * e.abs())
    flat = int(torch.argmax(error))
    largest = float(error.reshape(-1)[flat])
    if not math.isfinite(largest):  # the first inf, wherever argmax landed among several
        flat = int(torch.argmax(torch.isinf(error).reshape(-1).to(torch.int8)))
        largest = float(error.reshape(-1)[flat])
    index = _unravel(flat, tuple(e.shape))
    return bool((excess <= 0).all()), largest, index, float(a[index]), float(e[index])


def mistake_distance(actual: torch.Tensor, candidate: torch.Tensor, nan_is_wildcard: bool = True) -> float:
    """How far the learner's output is from a known mistake's output, scaled by its magnitude.

    NaN in the candidate (a row it leaves undefined) matches anything unless `nan_is_wildcard`
    is False (a mistake whose symptom IS the NaN); inf if shapes differ.
    """
    if tuple(actual.shape) != tuple(candidate.shape):
        return float("inf")
    a = actual.to(torch.float64)
    c = candidate.to(torch.float64)
    if nan_is_wildcard and c.numel():
        # Both outputs finite everywhere (the usual case) needs none of the masks below: a NaN
        # or inf anywhere makes one of these maxima non-finite and takes the general path.
        diff, scale = float((a - c).abs().max()), float(c.abs().max())
        if math.isfinite(diff) and math.isfinite(scale):
            return diff / (1.0 + scale)
    return masked_distance(a, c, nan_is_wildcard)


def masked_distance(a: torch.Tensor, c: torch.Tensor, nan_is_wildcard: bool) -> float:
    """`mistake_distance` of two float64 tensors of one shape, every NaN and inf masked as its
    rule says (the general path; on finite outputs it equals the shortcut, which a test checks)."""
    if not nan_is_wildcard:
        c_bad, a_bad = ~torch.isfinite(c), ~torch.isfinite(a)
        if not c_bad.any() or bool((c_bad != a_bad).any()):
            return float("inf")
        c, a = torch.where(c_bad, 0.0, c), torch.where(a_bad, 0.0, a)
    defined = ~torch.isnan(c)
    if not defined.any():
        return float("inf")
    a, c = a[defined], c[defined]
    same_nonfinite = (a == c) & ~torch.isfinite(c)
    if bool((~torch.isfinite(a) & ~same_nonfinite).any()) or bool((~torch.isfinite(c) & ~same_nonfinite).any()):
        return float("inf")
    finite = torch.isfinite(c)
    if not finite.any():
        return 0.0
    diff = (a[finite] - c[finite]).abs().max()
    return float(diff / (1.0 + c[finite].abs().max()))


def format_index(index: tuple) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def shape_text(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


@dataclass
class Failure:
    """One failed check on one case, kept for the diagnosis."""

    check: str
    case: Case
    result: dict
    message: str


class CheckBook:
    """Aggregates per-case outcomes into a few readable checks (one row per check kind)."""

    def __init__(self, order: list[tuple[str, str]], cases: list[Case] = ()):
        self.order = order
        self.cases = list(cases)
        self.tiers = dict(order)
        self.status: dict[str, str] = {}
        self.messages: dict[str, str] = {}
        self.counts: dict[str, list[int]] = {name: [0, 0] for name, _ in order}
        self.failures: list[Failure] = []
        self.errors: list[tuple[Case, dict]] = []

    def passed(self, name: str, message: str = "") -> None:
        self.counts[name][0] += 1
        if self.status.get(name) != "fail":
            self.status[name] = "pass"
            if message and not self.messages.get(name):
                self.messages[name] = message

    def failed(self, name: str, case: Case, result: dict, message: str) -> None:
        self.counts[name][1] += 1
        if self.status.get(name) != "fail":
            self.status[name] = "fail"
            self.messages[name] = message
        self.failures.append(Failure(name, case, result, message))

    def note(self, name: str, status: str, message: str) -> None:
        """Set an informational outcome (extra tier), keeping the first failure's message."""
        if self.status.get(name) == "fail":
            return
        if status == "fail" or name not in self.status:
            self.status[name], self.messages[name] = status, message

    def error(self, case: Case, error: dict) -> None:
        """Raising fails on every tier: a float16 case may be loose on accuracy, not on running."""
        self.errors.append((case, error))
        if case.tier != CORE:
            text = f"{case.name}: raised {error.get('type')}: {error.get('message', '')}"
            self.failed(case.value_check, case, {"error": error}, text)

    def core_failures(self) -> list[Failure]:
        """Core failures, public cases first (they are the same on every run, so diagnoses are too)."""
        core = [f for f in self.failures if self.tiers.get(f.check) == CORE]
        return sorted(core, key=lambda f: not f.case.public)

    def passing_cases(self) -> list[Case]:
        """Cases that neither failed a check nor raised."""
        bad = {id(f.case) for f in self.failures} | {id(case) for case, _ in self.errors}
        return [case for case in self.cases if id(case) not in bad]

    def rows(self) -> list[dict]:
        rows = []
        for name, tier in self.order:
            status = self.status.get(name, "skip")
            message = self.messages.get(name, "")
            ok, bad = self.counts[name]
            if status == "pass" and not message:
                message = f"{ok} case{'s' if ok != 1 else ''}"
            elif status == "fail" and ok + bad > 1:
                message = f"{bad} of {ok + bad} cases fail; first: {message}"
            elif status == "skip" and not message:
                message = "not exercised"
            rows.append({"name": name, "tier": tier, "status": status, "message": message})
        return rows


VIEW_ERROR = "view size is not compatible with input tensor's size and stride"
SIZE_MISMATCH = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)")


class CheckLog(CheckBook):
    """A book that also writes down each outcome, to be replayed onto another book."""

    def __init__(self, order: list[tuple[str, str]], cases: list[Case] = ()):
        super().__init__(order, cases)
        self.calls: list[tuple[str, tuple]] = []

    def passed(self, name: str, message: str = "") -> None:
        self.calls.append(("passed", (name, message)))

    def failed(self, name: str, case: Case, result: dict, message: str) -> None:
        self.calls.append(("failed", (name, case, result, message)))

    def note(self, name: str, status: str, message: str) -> None:
        self.calls.append(("note", (name, status, message)))


def buffer_limit(book: CheckBook, errors: list[tuple[Case, dict]]) -> int | None:
    """The size L when every error is a size mismatch against L, on a case longer than L, and no
    case of size <= L went wrong: the signature of a fixed-size buffer sliced to the inputs."""
    limits = set()
    for case, error in errors:
        found = SIZE_MISMATCH.search(str(error.get("message", "")))
        if not found:
            return None
        limit = min(int(found.group(1)), int(found.group(2)))
        if not limit < case.size:
            return None
        limits.add(limit)
    if len(limits) != 1:
        return None
    limit = limits.pop()
    wrong = [f.case for f in book.failures] + [case for case, _ in book.errors]
    return limit if all(case.size > limit for case in wrong) else None


def again_reason(first: dict, third: dict, kept: str) -> str:
    """Why a call on other inputs of the same shapes went wrong when the case's own calls were
    right: the first call's result returned again is a result cached by shape; otherwise some
    `kept` state, or a mistake the case's own inputs happen not to show (a missing scale hides
    behind a saturated softmax), which the other checks tell apart."""
    if first.get("type") == third.get("type") == "Tensor" and same_values(first["tensor"], third["tensor"]):
        return "it returned the first call's result again: a result cached by shape?"
    return (f"either something kept from an earlier call was reused ({kept}), or a mistake these "
            "inputs show and the case's own do not (see the other checks)")


def harness_altered(case: Case, result: dict, may_miss: bool = False) -> str | None:
    """Why a case's result is not what the child's harness makes of the case the parent sent,
    or None. The learner's code runs in the child beside the harness and can reach its data
    (a flag on a payload, the results so far): a case made "one call" skips the checks that
    need a second call, one stripped of its probe flag skips the device check, and results
    emptied broke the judge. The parent owns the cases, so it checks what came back against
    them: as many calls as the case asks for (every drill's harness sends its calls, or its
    steps' `runs`, or names the function missing), and the probe's record where, and only
    where, the probe ran. A function named missing (`may_miss`: drills of several functions) is
    accepted by name only: marking results "missing" otherwise broke the judge."""
    from .device_probe import PROBE

    parts = [result] + [v for v in result.values() if isinstance(v, dict)]  # safe_softmax: per function
    missing = [part["missing"] for part in parts if "missing" in part]
    if missing and may_miss and all(type(name) is str for name in missing):
        return None  # a function the file lacks: named by the drill's own checks
    if missing:
        return ("your code changed the grader's own data while it ran (a result marked as a "
                "missing function's): a drill's code may only compute its result")
    probed = any(PROBE in part for part in parts)
    if (PROBE in case.payload) != probed:
        return ("your code changed the grader's own data while it ran (the device probe "
                f"{'did not run' if not probed else 'ran where it was not asked for'}): "
                "a drill's code may only compute its result")
    if probed:
        return None
    wanted = (1 if case.payload.get(ONE_CALL) else 2 + (AGAIN in case.payload)) + 2 * bool(case.payload.get(SIDE_BY_SIDE))
    lists = [part[key] for part in parts for key in ("calls", "runs") if key in part]
    if not lists or any(not isinstance(calls, list) or len(calls) != wanted for calls in lists):
        return ("your code changed the grader's own data while it ran (the calls of a case): "
                "a drill's code may only compute its result")
    if any(exports_problem(part) for part in parts):
        return ("your code changed the grader's own data while it ran (what a call returned is not "
                "the grader's record of it): a drill's code may only compute its result")
    return None


def exports_problem(part: dict) -> bool:
    """Whether a result's returned values are not in the form `export` gives them: a call forged
    as a plain int got "internal grader error", blamed on the grader, when the judge read it."""
    lists = [part.get(key, []) for key in ("calls", WEIGHTS_AFTER)]
    runs = part.get("runs", [])
    if not all(isinstance(value, list) for value in (*lists, runs)) or not all(isinstance(r, list) for r in runs):
        return True
    single = [part[key] for key in ONE_EXPORT if key in part]
    return not all(_exported(value) for value in (*single, *(v for value in (*lists, *runs) for v in value)))


def _exported(value, depth: int = 0) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str) or depth > 2:
        return False
    if value["type"] == "Tensor":  # as `export` makes one: a tensor of a dtype the judges compare
        tensor = value.get("tensor")
        return isinstance(tensor, torch.Tensor) and tensor.dtype in GRADABLE_DTYPES
    if value["type"] in ("tuple", "list") and "items" in value:
        items = value["items"]
        return (isinstance(items, list) and len(items) <= 4 and type(value.get("length")) is int
                and all(_exported(item, depth + 1) for item in items))
    return True


class Drill:
    """Base class: metadata from the catalog, the judge loop and verdict assembly."""

    info: DrillInfo
    check_order: list[tuple[str, str]] = []
    mistakes: dict[str, str] = {}
    """Known mistake id -> what it is, in plain words (used in hints)."""
    may_miss = False
    """A drill of several functions, whose harness names one the file lacks ("missing")."""

    def __init__(self, info: DrillInfo | None = None):
        """A folder drill passes its folder's `DrillInfo`; its mistakes come from `drill.toml`."""
        if info is not None:
            self.info = info
            if info.mistakes:
                self.mistakes = dict(info.mistakes)

    @classmethod
    def from_folder(cls, grade_file: str) -> Drill:
        """`DRILL = MyDrill.from_folder(__file__)` in a drill folder's `grade.py`."""
        from pathlib import Path

        from .catalog import load_folder

        return cls(load_folder(Path(grade_file).resolve().parent))

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def tags(self) -> list[str]:
        return list(self.info.tags)

    @property
    def statement(self) -> str:
        return self.info.statement

    @property
    def entry(self) -> str:
        return self.info.entry

    @property
    def starter_path(self):
        return self.info.starter_path

    @property
    def hints(self) -> list[str]:
        return list(self.info.hints)

    def public_cases(self, device: str) -> list[Case]:
        """The fixed cases: the same on every run, sized past any fixed buffer or block."""
        raise NotImplementedError

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        """Random cases drawn from `seed`, added on top of the public ones (never instead)."""
        raise NotImplementedError

    def make_cases(self, seed: int, device: str, keep_fresh: bool = False) -> list[Case]:
        """Public cases (built once per device and kept: their oracle and known-mistake outputs
        are computed once per worker), then the seed's fresh ones. With `keep_fresh` those are
        kept alike for the last `FRESH_SEEDS_KEPT` seeds: the dev check grades three hundred
        bank files on the same twenty seeds (the grader's worker draws a new seed per grade,
        so it keeps none, and no GPU memory is held for them). Kept cases are safe to share:
        what a case keeps in `extra` depends on the case alone (or, `public_checks`, on one
        result object), and `run_case` hands the learner's code copies of its inputs."""
        cache = self.__dict__.setdefault("_public", {})
        if device not in cache:
            cache[device] = self.public_cases(device)
        if not keep_fresh:
            return cache[device] + self.fresh_cases(seed, device)
        kept = self.__dict__.setdefault("_fresh", {})  # insertion order: least recent first
        fresh = kept.pop((device, seed), None)
        if fresh is None:
            fresh = self.fresh_cases(seed, device)
        kept[(device, seed)] = fresh
        while len(kept) > FRESH_SEEDS_KEPT:
            del kept[next(iter(kept))]
        return cache[device] + fresh

    def run_case(self, entry_obj, payload: dict) -> dict:
        raise NotImplementedError

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        raise NotImplementedError

    def diagnose(self, failures: list[Failure]) -> tuple[str | None, str]:
        """(mistake id, hint) for the core failures; drills override with known mistakes."""
        first = failures[0]
        return None, f"{first.check}: {first.message}"

    def judge(self, cases: list[Case], results: list[dict], device: str) -> dict:
        """The verdict for one submission (runs in the trusted parent).

        `results[k]` is case k's result: the grader has already checked that every case produced
        exactly one; `strict` makes a mismatch a grader error here, never a silently shorter pass.
        """
        book = CheckBook(self.check_order, cases)
        for case, result in zip(cases, results, strict=True):
            if not isinstance(result, dict) or "error" in result:
                error = result.get("error") if isinstance(result, dict) else None
                book.error(case, error or {"type": "GraderError", "message": "no result"})
            elif (altered := harness_altered(case, result, self.may_miss)) is not None:
                book.error(case, {"type": "HarnessAltered", "message": altered})
            elif case.public:
                for method, args in self._public_checks(case, result):
                    getattr(book, method)(*args)
            else:
                self.check_case(case, result, book)
        return self.verdict(book)

    def _public_checks(self, case: Case, result: dict) -> list[tuple[str, tuple]]:
        """A public case's check outcomes, worked out once per result object: the dev check
        judges one run of the public cases once per seed, and the outcomes are a function of
        the case and its result alone. Keeping `result` itself (not its id) rules out a
        later result reusing a freed one's address."""
        kept = case.extra.get("public_checks")
        if kept is None or kept[0] is not result:
            log = CheckLog(self.check_order, [case])
            self.check_case(case, result, log)
            kept = case.extra["public_checks"] = (result, log.calls)
        return kept[1]

    def diagnose_errors(self, book: CheckBook) -> tuple[str, str] | None:
        """(mistake id, hint) when what the code raised names the mistake, else None."""
        public = [(case, error) for case, error in book.errors if case.public] or book.errors
        messages = [str(error.get("message", "")) for _, error in public]
        if "view_on_noncontiguous" in self.mistakes and any(VIEW_ERROR in m for m in messages):
            return "view_on_noncontiguous", ("`.view` needs a contiguous tensor, and inputs (or a transposed "
                                             "intermediate) may not be: use `.reshape`, or `.contiguous()` first.")
        if "fill_overflows_float16" in self.mistakes and any(
                "without overflow" in m and ("Half" in m or "BFloat16" in m) for m in messages):
            return "fill_overflows_float16", ("A fill value like -1e9 or float32's minimum does not fit in "
                                              "float16 (largest ~65504): fill with float('-inf') or "
                                              "torch.finfo(scores.dtype).min.")
        limit = buffer_limit(book, public)
        if limit is not None and "fixed_size_buffer" in self.mistakes:
            return "fixed_size_buffer", (f"It works up to size {limit} and raises past it: a buffer or table "
                                         f"of {limit} made once and sliced? Build it from the inputs' sizes.")
        return None

    def verdict(self, book: CheckBook) -> dict:
        checks = book.rows()
        core_raised = any(case.tier == CORE for case, _ in book.errors)
        if book.errors and (core_raised or not book.core_failures()):  # else the core failures say more
            book.errors.sort(key=lambda item: not item[0].public)
            case, error = book.errors[0]
            where = f"{case.name} ({case.notes})" if case.notes else case.name
            summary = f"raised {error.get('type')} on {where}: {error.get('message', '')}".strip()
            mistake, hint = "raises", (error.get("traceback") or summary)[-1500:]
            failures = book.core_failures()
            named = self.diagnose(failures) if failures else (None, "")
            by_error = self.diagnose_errors(book)
            if named[0] in self.mistakes:  # the cases that ran may still name the mistake behind the crash
                mistake, hint = named[0], f"{hint}\nOn the cases that ran: {named[1]}"
                if by_error:
                    hint += f"\nAnd what it raised: {by_error[1]}"
            elif by_error:
                mistake, hint = by_error[0], f"{by_error[1]}\n{hint}"
            if mistake in self.mistakes:
                summary += f" (looks like: {self.mistakes[mistake]})"
            return {"status": "error", "summary": summary[:300], "mistake": mistake,
                    "hint": hint, "checks": checks}
        failures = book.core_failures()
        if failures:
            mistake, hint = self.diagnose(failures)
            failing = [row["name"] for row in checks if row["tier"] == CORE and row["status"] == "fail"]
            if len(failing) > 1 and AGAIN_CHECK in failing:  # the others say more; the table keeps it
                failing.remove(AGAIN_CHECK)
            summary = "failed: " + ", ".join(failing)
            if mistake in self.mistakes:
                summary += f" (looks like: {self.mistakes[mistake]})"
            return {"status": "fail", "summary": summary, "mistake": mistake, "hint": hint,
                    "checks": checks}
        notes = [row["name"] for row in checks if row["tier"] == EXTRA and row["status"] == "fail"]
        summary = "all core checks pass"
        if notes:
            summary += " (extra notes: " + ", ".join(notes) + ")"
        hint = next((row["message"] for row in checks if row["tier"] == EXTRA
                     and row["status"] == "fail"), "")
        return {"status": "pass", "summary": summary, "mistake": None, "hint": hint, "checks": checks}
