"""The `safe_softmax` drill: masked softmax and log-sum-exp, forward and gradient.

The learner's entry is `masked_softmax`; `masked_logsumexp` is looked up by name in the same
file. Every case calls both functions twice (determinism, mutation) and once more on an `x`
that requires grad, so the gradient through a fully masked row is graded like the values.

Longer than the other drills (~530 lines) because it is two drills' worth in one folder: two
functions, each graded on values and on gradients, each with its own known mistakes.
"""

from __future__ import annotations

import math

import torch

from ..device_probe import PROBE, probe_result, probe_verdict
from ..grading import (
    BIG,
    CORE,
    DEFAULT_TOLERANCE,
    DIM_LEFT_OUT,
    EXTRA,
    MISTAKE_MATCH,
    ONE_CALL,
    Case,
    CheckBook,
    Drill,
    Failure,
    clone_tree,
    compare_values,
    export,
    failure_check,
    format_index,
    inputs_as_left,
    same_values,
    shape_text,
    sibling,
)
from .known import (
    EARLIER_MASK,
    LSE_MISTAKES,
    SOFTMAX_MISTAKES,
    builtin_logsumexp,
    builtin_softmax,
    safe_logsumexp,
    safe_softmax,
)

PUBLIC_SEED = 20261123
FUNCTIONS = {"softmax": "masked_softmax", "lse": "masked_logsumexp"}
"""Result key -> the learner's function name."""
VALUES = {"softmax": "softmax values", "lse": "logsumexp values"}
GRADIENTS = {"softmax": "softmax gradient", "lse": "logsumexp gradient"}
CHECK_ORDER = [
    ("return type", CORE), ("shape", CORE), ("dtype", CORE), ("device", CORE),
    ("inputs unchanged", CORE), ("deterministic", CORE), ("default dim", CORE),
    ("softmax values", CORE), ("logsumexp values", CORE), ("fully masked rows", CORE),
    ("softmax gradient", CORE), ("logsumexp gradient", CORE),
    ("float16 accuracy", EXTRA), ("bfloat16 accuracy", EXTRA),
]
STRUCTURAL = ("return type", "dtype", "inputs unchanged", "deterministic", "default dim")
"""Checks diagnosed by what they are, before any comparison with known mistakes."""
FLOOR_FACTOR = 10.0
"""atol is at least this times the error of a correct same-dtype computation on the case."""
LOW_PRECISION_FACTOR = 4.0
MISSING = "missing"
HUGE = 1e4


class OncePerCase:
    """A case's view of the book: both functions feed the same rows, so a row's pass is counted
    once per case (and not at all if the other function failed it); failures go straight on."""

    def __init__(self, book: CheckBook):
        self.book = book
        self.passes: list[str] = []
        self.failures: set[str] = set()

    def passed(self, name: str) -> None:
        if name not in self.passes:
            self.passes.append(name)

    def failed(self, name: str, case: Case, result: dict, message: str) -> None:
        self.failures.add(name)
        self.book.failed(name, case, result, message)

    def flush(self) -> None:
        for name in self.passes:
            if name not in self.failures:
                self.book.passed(name)


# --- cases ------------------------------------------------------------------------------------
def _keep_pattern(gen, rows_shape, length, kind, empty_rows):
    """(*rows, length) bool: which entries are kept, with `empty_rows` rows fully masked."""
    keep = torch.rand(*rows_shape, length, generator=gen) < 0.6
    flat = keep.reshape(-1, length)
    first = torch.randint(0, length, (flat.shape[0],), generator=gen)
    flat[torch.arange(flat.shape[0]), first] = True  # no row is empty by chance
    if kind == "all":
        flat[:] = True
    elif kind == "none":
        flat[:] = False
    for row in torch.randperm(flat.shape[0], generator=gen)[:empty_rows].tolist():
        flat[row] = False
    return flat.reshape(*rows_shape, length)


def _stored_transposed(tensor: torch.Tensor) -> torch.Tensor:
    """The same values with the last two dims stored swapped: a non-contiguous input."""
    return tensor.transpose(-2, -1).contiguous().transpose(-2, -1)


def build_case(gen, name, *, shape, dim=-1, dtype=torch.float32, mask="random", scale="normal",
               empty_rows=1, layout="contiguous", tier=CORE, public=True, device="cpu") -> Case:
    """One case. `mask`: "random" (full shape), "padding" (a broadcast (B, 1, .., m) mask over the
    last dim, one item fully padded), "causal" (an (n, n) mask), "all" or "none" kept.
    `scale`: "normal", "large" (rows near +1e4 and -1e4), "huge_blocked" (blocked entries near
    1e4, kept ones small). `layout="strided"`: x stored transposed and the mask an expanded view."""
    shape = tuple(shape)
    given_dim, dim = dim, dim % len(shape)
    moved = shape[:dim] + shape[dim + 1:] + (shape[dim],)  # rows, then the softmax dim
    if mask in ("random", "all", "none"):
        keep_moved = _keep_pattern(gen, moved[:-1], moved[-1], mask, empty_rows if mask == "random" else 0)
        keep = keep_moved.movedim(-1, dim)
        given = keep
    elif mask == "shared":  # the mask's own dims: dim counted from x's would name another one
        local = dim - (len(shape) - 2)
        assert local in (0, 1), "a shared mask covers the last two dims, dim among them"
        plane = shape[-2:]
        given = _keep_pattern(gen, (plane[1 - local],), plane[local], "random", empty_rows).movedim(-1, local)
        keep = given.expand(shape)
    elif mask == "padding":  # dim is the last one: keys of a batch padded per item
        batch, m = shape[0], shape[-1]
        lengths = torch.randint(1, m + 1, (batch,), generator=gen)
        lengths[min(1, batch - 1)] = 0  # one item with no real key at all
        lengths[0] = m
        given = (torch.arange(m)[None, :] < lengths[:, None]).reshape(batch, *([1] * (len(shape) - 2)), m)
        keep = given.expand(shape)
    else:  # causal over the last two dims
        n = shape[-1]
        given = torch.ones(n, n, dtype=torch.bool).tril()
        keep = given.expand(shape)
    x = torch.randn(*shape, generator=gen, dtype=torch.float64)
    if scale == "large":
        signs = torch.where(torch.rand(*moved[:-1], 1, generator=gen) < 0.5, -1.0, 1.0).to(torch.float64)
        x = (signs * HUGE).movedim(-1, dim) + 3 * x
    elif scale == "huge_blocked":
        x = torch.where(keep, x, HUGE - 10 * torch.rand(*shape, generator=gen, dtype=torch.float64))
    payload = {"x": x.to(dtype).to(device), "mask": given.to(device), "dim": given_dim}
    if layout == "strided" and len(shape) >= 2:  # x stored transposed; the mask a transposed or expanded view
        payload["x"] = _stored_transposed(payload["x"])
        payload["mask"] = (_stored_transposed(payload["mask"]) if tuple(given.shape) == shape
                           else payload["mask"].expand(shape))
    if tier == CORE:
        reduced = shape[:dim] + shape[dim + 1:]
        payload["g_softmax"] = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype).to(device)
        payload["g_lse"] = torch.randn(reduced, generator=gen, dtype=torch.float64).to(dtype).to(device)
    size = max(shape)
    if size > BIG:
        payload[ONE_CALL] = True
    check = {torch.float32: "values", torch.float64: "values", torch.float16: "float16 accuracy",
             torch.bfloat16: "bfloat16 accuracy"}[dtype]
    notes = (f"x {shape_text(shape)} {str(dtype)[6:]}, dim={payload['dim']}, {mask} mask "
             f"{shape_text(payload['mask'].shape)}"
             + {"normal": "", "large": ", |x| near 1e4", "huge_blocked": ", blocked entries near 1e4"}[scale]
             + (", transposed x" if layout == "strided" else ""))
    return Case(name, payload, tier=tier, value_check=check, notes=notes, public=public, size=size)


def public_cases(device: str) -> list[Case]:
    gen = torch.Generator().manual_seed(PUBLIC_SEED)
    f64 = torch.float64
    specs = [
        ("one fully masked row", dict(shape=(3, 5))),
        ("1-D, nothing masked", dict(shape=(7,), mask="all", empty_rows=0)),
        ("every row fully masked", dict(shape=(2, 4), mask="none", dtype=f64)),
        ("|x| near 1e4", dict(shape=(2, 4, 7), scale="large", empty_rows=2)),
        ("the same shapes, another mask", dict(shape=(2, 4, 7), empty_rows=1)),  # nothing cached by shape
        ("|x| near 1e4, float64", dict(shape=(3, 6), scale="large", dtype=f64)),
        ("blocked entries near 1e4", dict(shape=(4, 6), scale="huge_blocked")),
        ("dim=1 of (B, n, m)", dict(shape=(2, 6, 4), dim=1, empty_rows=2)),
        ("dim=0", dict(shape=(5, 3), dim=0, dtype=f64, scale="large")),
        ("padding mask over heads, one item fully padded", dict(shape=(2, 3, 4, 9), mask="padding")),
        ("causal mask, transposed x", dict(shape=(2, 5, 5), mask="causal", layout="strided")),
        ("(n, n) mask shared by the batch, dim=1", dict(shape=(2, 6, 6), dim=1, mask="shared", empty_rows=2)),
        ("dim=-2, transposed x", dict(shape=(3, 6, 4), dim=-2, layout="strided", scale="huge_blocked")),
        ("float16, |x| near 1e4", dict(shape=(3, 8), dtype=torch.float16, scale="large", tier=EXTRA)),
        ("float16, padding", dict(shape=(2, 2, 3, 6), dtype=torch.float16, mask="padding", tier=EXTRA)),
        ("bfloat16", dict(shape=(3, 8), dtype=torch.bfloat16, tier=EXTRA)),
        # past any fixed buffer or block (64, 128, 256):
        ("rows of 300, padding", dict(shape=(3, 2, 20, 300), mask="padding")),
        ("rows of 257 along dim=1, |x| near 1e4", dict(shape=(2, 257, 3), dim=1, scale="large", empty_rows=2)),
        # a dim of size 1 beside the reduced one: a bare .squeeze() drops it too
        ("a batch of one, a head of one", dict(shape=(1, 3, 1, 6), empty_rows=1)),
    ]
    cases = [build_case(gen, f"public {name}", device=device, **kwargs) for name, kwargs in specs]
    twin = next(i for i, case in enumerate(cases) if case.name == "public the same shapes, another mask")
    cases[twin].payload[EARLIER_MASK] = cases[twin - 1].payload["mask"]
    probe = build_case(gen, "public device probe", shape=(2, 3, 5), empty_rows=1)
    probe.payload[PROBE] = True
    probe.notes = "x on a stand-in device: every tensor must follow it"
    return cases + [probe]


def fresh_cases(seed: int, device: str, count: int = 2) -> list[Case]:
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(count):
        pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
        rank = 1 + pick(4)
        shape = tuple(1 + pick(12) for _ in range(rank - 1)) + (2 + pick(40),)
        mask = ["random", "random", "padding", "shared"][pick(4)] if rank >= 2 else "random"
        dim = -1 if mask == "padding" else pick(rank) - rank * pick(2)  # negative or not
        if mask == "shared" and dim % rank < rank - 2:  # a shared mask's dims are x's last two
            dim = rank - 2
        kwargs = dict(shape=shape, dim=dim, mask=mask,
                      dtype=[torch.float32, torch.float64][pick(2)],
                      scale=["normal", "large", "huge_blocked"][pick(3)],
                      empty_rows=pick(3), layout=["contiguous", "strided"][pick(2)])
        cases.append(build_case(gen, f"seed {seed} #{i + 1}", device=device, public=False, **kwargs))
    return cases


# --- the truth --------------------------------------------------------------------------------
def oracle(x: torch.Tensor, mask: torch.Tensor, dim: int) -> dict[str, torch.Tensor]:
    """float64 softmax, log-sum-exp and which rows are empty."""
    x64 = x.detach().cpu().to(torch.float64)
    keep = mask.cpu().expand(x64.shape)
    softmax = safe_softmax(x64, keep, dim)
    return {"softmax": softmax, "lse": safe_logsumexp(x64, keep, dim), "empty": ~keep.any(dim)}


def oracle_gradients(truth: dict, g_softmax: torch.Tensor, g_lse: torch.Tensor, dim: int) -> dict[str, torch.Tensor]:
    """d/dx of sum(g * softmax) and of sum(g * lse), in closed form (float64)."""
    p = truth["softmax"]
    g = g_softmax.cpu().to(torch.float64)
    return {"softmax_grad": p * (g - (g * p).sum(dim, keepdim=True)),
            "lse_grad": g_lse.cpu().to(torch.float64).unsqueeze(dim) * p}


def run_with_grad(function, x: torch.Tensor, mask: torch.Tensor, dim: int, weight: torch.Tensor | None):
    """(output, x.grad or None) of `function` on a copy of x; the trusted re-enactments use it."""
    leaf = x.detach().clone().requires_grad_(weight is not None)
    out = function(leaf, mask, dim)
    if weight is None:
        return out.detach(), None
    (out * weight).sum().backward()
    return out.detach(), leaf.grad


class SafeSoftmaxDrill(Drill):
    """Grades both functions' values, fully masked rows and gradients; names the mistake."""

    check_order = CHECK_ORDER
    may_miss = True

    def public_cases(self, device: str) -> list[Case]:
        return public_cases(device)

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        return fresh_cases(seed, device)

    # --- in the child -------------------------------------------------------------------------
    def run_case(self, entry_obj, payload: dict) -> dict:
        functions = {"softmax": entry_obj, "lse": sibling(entry_obj, FUNCTIONS["lse"])}
        result: dict = {}
        for key, function in functions.items():
            if function is None:
                result[key] = {MISSING: FUNCTIONS[key]}
            elif PROBE in payload:
                args = clone_tree([payload["x"], payload["mask"], payload["dim"]])
                result[key] = probe_result(lambda f=function, a=args: f(*a), default_is_wrong=True)
            else:
                result[key] = self._calls(function, payload, payload.get(f"g_{key}"))
        return result

    @staticmethod
    def _calls(function, payload: dict, weight) -> dict:
        calls, inputs = [], []
        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            args = clone_tree([payload["x"], payload["mask"]])
            calls.append(export(function(*args, dim=payload["dim"])))
            if attempt == 0:
                inputs = inputs_as_left(args, [payload["x"], payload["mask"]], payload)
        part = {"calls": calls, "inputs": inputs}
        if payload["dim"] == -1 and payload["x"].dim() >= 2 and not payload.get(ONE_CALL):
            # once more with dim left out: the statement's default is -1 (a 1-D x would only
            # raise with another default, saying nothing about it)
            part[DIM_LEFT_OUT] = export(function(*clone_tree([payload["x"], payload["mask"]])))
        if weight is not None:
            part["grad"] = _gradient(function, payload, weight)
        return part

    # --- in the parent ------------------------------------------------------------------------
    def _truth(self, case: Case) -> dict:
        if "truth" not in case.extra:
            p = case.payload
            truth = oracle(p["x"], p["mask"], p["dim"])
            if "g_softmax" in p:
                truth.update(oracle_gradients(truth, p["g_softmax"], p["g_lse"], p["dim"]))
            case.extra["truth"] = truth
        return case.extra["truth"]

    def _reference_errors(self, case: Case) -> dict[str, float]:
        """Largest error of correct same-dtype computations, per quantity (sets the atol floor)."""
        if "reference_errors" not in case.extra:
            p, truth = case.payload, self._truth(case)
            errors = {}
            for key, ways in (("softmax", (safe_softmax, builtin_softmax)), ("lse", (safe_logsumexp, builtin_logsumexp))):
                worst, worst_grad = 0.0, 0.0
                for way in ways:
                    out, grad = run_with_grad(way, p["x"].cpu(), p["mask"].cpu(), p["dim"], p.get(f"g_{key}"))
                    worst = max(worst, _error(out, truth[key], truth["empty"], p["dim"], key))
                    if grad is not None:
                        worst_grad = max(worst_grad, _error(grad, truth[f"{key}_grad"], None, p["dim"], key))
                errors[key], errors[f"{key}_grad"] = worst, worst_grad
            case.extra["reference_errors"] = errors
        return case.extra["reference_errors"]

    def tolerance(self, case: Case, quantity: str) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCE[case.payload["x"].dtype]
        factor = FLOOR_FACTOR if case.tier == CORE else LOW_PRECISION_FACTOR
        return rtol, max(atol, factor * self._reference_errors(case)[quantity])

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        once = OncePerCase(book)
        for key in FUNCTIONS:
            if PROBE not in case.payload:
                self._check_function(case, result, key, once)
                continue
            on_device, why = probe_verdict(result[key]) if PROBE in result[key] else (None, "")
            if on_device is False:
                once.failed("device", case, dict(result, quantity=key), f"{FUNCTIONS[key]}: {why}. Create tensors "
                            "on x's device (*_like, device=x.device) and never name a device yourself")
            elif on_device:
                once.passed("device")
        once.flush()

    def _check_function(self, case: Case, result: dict, key: str, book: OncePerCase) -> None:
        core = case.tier == CORE
        name = failure_check(case)
        part, tagged = result[key], dict(result, quantity=key)
        function, p = FUNCTIONS[key], case.payload
        where = f"{function} on {case.name} ({case.notes})"
        if MISSING in part:
            book.failed(name("return type"), case, tagged, f"your file defines no function `{function}` "
                        "(both functions are top-level, next to each other)")
            return
        first = part["calls"][0]
        if first.get("type") != "Tensor":
            book.failed(name("return type"), case, tagged, f"{where}: returned {first.get('type')}; expected a Tensor")
            return
        truth = self._truth(case)
        expected = truth[key]
        if tuple(first["shape"]) != tuple(expected.shape):
            book.failed(name("shape"), case, tagged, f"{where}: shape {shape_text(first['shape'])}, expected "
                        f"{shape_text(expected.shape)}" + (" (dim removed)" if key == "lse" else ""))
            return
        dtype = str(p["x"].dtype)
        if first["dtype"] != dtype:
            book.failed(name("dtype"), case, tagged, f"{where}: dtype {first['dtype']}, expected {dtype} (x's dtype)")
            return
        if first["device"] != str(p["x"].device):
            book.failed(name("device"), case, tagged, f"{where}: on {first['device']}, x on {p['x'].device}")
            return
        if core:
            for check in ("return type", "shape", "dtype", "device"):
                book.passed(check)
            if len(part["calls"]) > 1:
                self._check_repeats(case, part, tagged, book, where)
        actual = first["tensor"]
        rtol, atol = self.tolerance(case, key)
        ok, err, index, got, want = _compare(actual, expected, truth["empty"], p["dim"], key, rtol, atol)
        values = VALUES[key] if core else case.value_check
        if ok:
            book.passed(values)
        else:
            book.failed(values, case, tagged, f"{where}: largest error {err:.3g} at {_at(index, p['dim'], key)} "
                        f"(got {got:.6g}, expected {want:.6g}; tolerance {atol:.1g} + {rtol:.1g}*|expected|)")
        self._check_empty_rows(case, actual, truth, key, tagged, book, where, name("fully masked rows"))
        if core and "grad" in part:
            self._check_gradient(case, part["grad"], truth, key, tagged, book, where)

    def _check_repeats(self, case, part, tagged, book, where):
        for input_name, before, after in zip(("x", "mask"), (case.payload["x"], case.payload["mask"]), part["inputs"]):
            if after.get("type") == "Tensor" and not same_values(after["tensor"], before.detach().cpu()):
                book.failed("inputs unchanged", case, tagged, f"{where}: {input_name} was modified in place "
                            "(masked_fill_, exp_, /= ...); use out-of-place ops")
                break
        else:
            book.passed("inputs unchanged")
        one, two = part["calls"][:2]
        if two.get("type") == "Tensor" and same_values(one["tensor"], two["tensor"]):
            book.passed("deterministic")
        else:
            book.failed("deterministic", case, tagged, f"{where}: two calls on the same inputs returned different results")
        if DIM_LEFT_OUT in part:
            bare = part[DIM_LEFT_OUT]
            if bare.get("type") == "Tensor" and same_values(one["tensor"], bare["tensor"]):
                book.passed("default dim")
            else:
                book.failed("default dim", case, tagged, f"{where}: called without dim, it did not answer as "
                            "with dim=-1 (the default the statement gives)")

    def _check_empty_rows(self, case, actual, truth, key, tagged, book, where, check):
        empty = truth["empty"]
        if not empty.any():
            return
        dim = case.payload["dim"]
        rows = actual.movedim(dim, -1)[empty] if key == "softmax" else actual[empty]
        if key == "softmax":
            right, wanted = bool((rows == 0).all()), "all zeros"
        else:
            right, wanted = bool((rows == float("-inf")).all()), "-inf"
        if right:
            book.passed(check)
            return
        bad = rows[rows != 0] if key == "softmax" else rows[rows != float("-inf")]
        seen = "NaN" if bool(torch.isnan(bad).any()) else f"{float(bad.reshape(-1)[0]):.6g}"
        book.failed(check, case, tagged, f"{where}: a row with no kept entry gave {seen}; expected {wanted}")

    def _check_gradient(self, case, grad, truth, key, tagged, book, where):
        check = GRADIENTS[key]
        tagged = dict(tagged, quantity=f"{key}_grad")
        if grad.get("type") != "Tensor":
            why = grad.get("why") or f"x.grad is {grad.get('type')}"
            book.failed(check, case, tagged, f"{where}: no gradient reached x ({why}); keep the computation in torch "
                        "ops on x (no .detach(), .item(), numpy or torch.no_grad())")
            return
        expected = truth[f"{key}_grad"]
        rtol, atol = self.tolerance(case, f"{key}_grad")
        ok, err, index, got, want = _compare(grad["tensor"], expected, None, case.payload["dim"], "softmax", rtol, atol)
        if ok:
            book.passed(check)
            return
        row = tuple(index[:-1])
        in_empty = bool(truth["empty"][row]) if truth["empty"].dim() == len(row) else False
        place = " (a fully masked row)" if in_empty else ""
        book.failed(check, case, tagged, f"{where}: x.grad error {err:.3g} at {_at(index, case.payload['dim'], 'softmax')}"
                    f"{place} (got {got:.6g}, expected {want:.6g})")

    # --- diagnosis ----------------------------------------------------------------------------
    def diagnose(self, failures: list[Failure]):
        """Structural problems by name; then, per function (softmax first), the known mistake
        whose outputs and gradients are the learner's on every examined failing case."""
        failures = [f for f in failures if f.case.public] or failures
        probed = [f for f in failures if PROBE in f.case.payload]
        failures = [f for f in failures if PROBE not in f.case.payload] or probed
        if failures is probed:
            return "hard_coded_device", f"Looks like {self.mistakes['hard_coded_device']}. {probed[0].message}"
        plain = {"return type": "wrong_return_type", "dtype": "wrong_dtype", "inputs unchanged": "mutates_inputs",
                 "deterministic": "nondeterministic", "device": "wrong_device",
                 "default dim": "default_dim_not_last"}
        for check in STRUCTURAL:
            found = [f for f in failures if f.check == check]
            if found:
                return plain[check], f"{check}: {found[0].message}"
        wrong = [key for key in FUNCTIONS if any(f.result.get("quantity", "").startswith(key) for f in failures)]
        also = f" Also wrong: {FUNCTIONS[wrong[1]]}." if len(wrong) > 1 else ""
        for key in wrong:
            mine = [f for f in failures if f.result.get("quantity", "").startswith(key)]
            mistake = self._match(mine, key)
            if mistake:
                return mistake, f"{FUNCTIONS[key]}: looks like {self.mistakes[mistake]}. {mine[0].check}: {mine[0].message}"
        first = failures[0]
        return "wrong_values", (f"{first.check}: {first.message}. No known mistake matches; re-read the statement."
                                f"{also if len(wrong) > 1 else ''}")

    def _match(self, failures: list[Failure], key: str) -> str | None:
        by_case: dict[int, list[Failure]] = {}
        for failure in failures:
            by_case.setdefault(id(failure.case), []).append(failure)
        examined = sorted(by_case.values(), key=lambda group: group[0].case.size)[:6]
        known = SOFTMAX_MISTAKES if key == "softmax" else LSE_MISTAKES
        alive = {mistake for mistake, _ in known}
        for group in examined:
            case = group[0].case
            quantities = {f.result["quantity"] for f in group}
            fits = set()
            for index, (mistake, _) in enumerate(known):
                if mistake not in alive:
                    continue
                outputs = self._variant(case, key, index)
                if outputs is not None and all(_same(_learner(group[0].result, q), outputs.get(q))
                                               for q in quantities):
                    fits.add(mistake)
            alive &= fits
            if not alive:
                return None
        return next(mistake for mistake, _ in known if mistake in alive)

    def _variant(self, case: Case, key: str, index: int) -> dict | None:
        """A known mistake's outputs (and gradient) on the case, computed once per case."""
        cache = case.extra.setdefault("variants", {})
        if (key, index) not in cache:
            p = case.payload
            mistake, function = (SOFTMAX_MISTAKES if key == "softmax" else LSE_MISTAKES)[index]
            mask = p.get(EARLIER_MASK) if mistake == "mask_cached" else p["mask"]
            if mask is None:  # no case before with the same shapes
                cache[(key, index)] = None
                return None
            try:
                out, grad = run_with_grad(function, p["x"].cpu(), mask.cpu(), p["dim"], p.get(f"g_{key}"))
                cache[(key, index)] = {key: out, f"{key}_grad": grad}
            except RuntimeError:  # the mistake cannot even run on these inputs
                cache[(key, index)] = None
        return cache[(key, index)]


def _gradient(function, payload: dict, weight) -> dict:
    """x.grad after back-propagating sum(weight * output), exported; why not, if it failed."""
    x = clone_tree(payload["x"]).requires_grad_(True)
    try:
        out = function(x, clone_tree(payload["mask"]), dim=payload["dim"])
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            return {"type": "NoneType", "why": "the output does not depend on x through autograd"}
        (out * weight.to(out.dtype)).sum().backward()
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as error:  # noqa: BLE001 - the values were graded already; say why here
        return {"type": "NoneType", "why": f"backward raised {type(error).__name__}: {str(error)[:200]}"}
    return export(x.grad) if x.grad is not None else {"type": "NoneType", "why": "x.grad stayed None"}


def _learner(result: dict, quantity: str) -> torch.Tensor | None:
    key = quantity.removesuffix("_grad")
    part = result.get(key) or {}
    exported = part.get("grad") if quantity.endswith("_grad") else (part.get("calls") or [{}])[0]
    return exported.get("tensor") if exported and exported.get("type") == "Tensor" else None


def _same(actual: torch.Tensor | None, candidate: torch.Tensor | None) -> bool:
    """Same shape, NaN and infinities at the same places, finite values within MISTAKE_MATCH."""
    if actual is None or candidate is None or tuple(actual.shape) != tuple(candidate.shape):
        return False
    a, c = actual.to(torch.float64), candidate.to(torch.float64)
    for where in (torch.isnan, torch.isposinf, torch.isneginf):
        if not torch.equal(where(a), where(c)):
            return False
    finite = torch.isfinite(c)
    if not finite.any():
        return True
    return float((a[finite] - c[finite]).abs().max() / (1.0 + c[finite].abs().max())) < MISTAKE_MATCH


def _rows_last(tensor: torch.Tensor, dim: int, key: str) -> torch.Tensor:
    """The tensor with the softmax dim last (log-sum-exp: a trailing dim of 1)."""
    return tensor.movedim(dim, -1) if key == "softmax" else tensor.unsqueeze(-1)


def _compare(actual, expected, empty, dim, key, rtol, atol):
    return compare_values(_rows_last(actual, dim, key), _rows_last(expected, dim, key), rtol, atol, empty)


def _error(actual, expected, empty, dim, key) -> float:
    _, err, *_ = _compare(actual.cpu(), expected, empty, dim, key, 0.0, 0.0)
    return 0.0 if math.isnan(err) else err


def _at(index: tuple, dim: int, key: str) -> str:
    """The index in x's own layout (compare_values reports it with the softmax dim last)."""
    if key == "lse":
        return f"output{format_index(index[:-1])}"
    index = list(index)
    index.insert(dim % (len(index)), index.pop())
    return f"[{', '.join(str(i) for i in index)}]"


DRILL = SafeSoftmaxDrill.from_folder(__file__)
