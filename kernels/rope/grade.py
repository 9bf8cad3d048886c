"""The `rope` drill: rotary position embedding, graded on values and on the property it exists for.

Values are compared with a float64 oracle. On top of that, the relative-position property is
checked on the learner's own outputs: with the same q (and k) vector at every position, the
score between rotated q at position i and rotated k at position j must depend only on i - j,
and a position offset must shift positions, not restart them.

~430 lines on purpose: the cases, the oracle, the property checks and the second-input check
are this drill's alone, and read best in one place.
"""

from __future__ import annotations

import math

import torch

from ..device_probe import PROBE, DeviceAudit, check_probe, follow_inputs, probe_result
from ..grading import (
    AGAIN,
    AGAIN_CHECK,
    AT_ZERO,
    BIG,
    CORE,
    DEFAULT_TOLERANCE,
    EXTRA,
    ONE_CALL,
    Case,
    CheckBook,
    Failure,
    clone_tree,
    compare_values,
    export,
    failure_check,
    format_index,
    inputs_as_left,
    other_layout_values,
    plan_calls,
    shape_text,
    unpack_output,
)
from ..tensor_drill import FLOOR_FACTOR, LOW_PRECISION_FACTOR, AttentionDrill

PUBLIC_SEED = 20260035
"""Seed of the fixed public cases, the same on every run."""
LONG_FLOAT16 = "long positions float16"
"""The float16 check that is graded (CORE): past position 2048, angles computed in float16 are off
by whole radians, which is the mistake this drill teaches; other float16/bfloat16 cases are only
reported."""
LONG_BFLOAT16 = "long positions bfloat16"
"""The same for bfloat16 (graded): angles left in bfloat16 there are off by whole radians too (the
statement asks for float32 at least)."""
RELATIVE = "relative position"
RELATIVE_TOLERANCE = 1e-3
"""Largest violation of the relative-position property, as a fraction of the largest score.
Rounding gives ~1e-7 at worst; every known mistake that breaks the property gives ~0.1 or more."""
CHECKS = {torch.float32: "values float32", torch.float64: "values float64",
          torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}
CHECK_ORDER = [
    ("return type", CORE), ("shape", CORE), ("dtype", CORE), ("device", CORE),
    ("inputs unchanged", CORE), ("deterministic", CORE), ("values float32", CORE),
    ("values float64", CORE), (AGAIN_CHECK, CORE), (RELATIVE, CORE), (LONG_FLOAT16, CORE),
    (LONG_BFLOAT16, CORE),
    ("float16 accuracy", EXTRA), ("bfloat16 accuracy", EXTRA),
]
DEFAULTS = {"offset": 0, "base": 10000.0, "interleaved": False}


# --- the rotation, right and wrong ----------------------------------------------------------------
def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dim (the GPT-NeoX layout's partner)."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate_pairs(x: torch.Tensor) -> torch.Tensor:
    """(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...): the interleaved layout's partner."""
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def rotate(x: torch.Tensor, *, offset=0, base=10000.0, interleaved=False, exponent: float = 2.0,
           degrees: bool = False, sign: float = 1.0, angle_layout: str | None = None,
           partner_layout: str | None = None, positions: str = "sequence",
           angle_dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """RoPE on `(B, H, n, d)`, in float64 on CPU, with each knob a way to get it wrong.

    `exponent`: pair i turns at base ** (-exponent * i / d) (2 is right). `angle_layout` and
    `partner_layout` ("pairs" or "half"): which dims share an angle and which dim each is rotated
    with (both follow `interleaved` when right). `positions="heads"`: positions run along dim 1.
    `angle_dtype`: the dtype the angles are computed in (float64 is the oracle).
    """
    batch, heads, n, d = x.shape
    x64 = x.detach().cpu().to(torch.float64)
    pairs = "pairs" if interleaved else "half"
    index = torch.arange(d // 2, dtype=angle_dtype)
    inv_freq = 1.0 / (torch.tensor(float(base), dtype=angle_dtype) ** (exponent * index / d))
    count = n if positions == "sequence" else heads
    angles = (offset + torch.arange(count, dtype=angle_dtype))[:, None] * inv_freq[None, :]
    angles = angles.to(torch.float64)
    if degrees:
        angles = angles * (math.pi / 180)
    if (angle_layout or pairs) == "pairs":
        full = angles.repeat_interleave(2, dim=-1)
    else:
        full = torch.cat((angles, angles), dim=-1)
    cos, sin = full.cos(), sign * full.sin()
    if positions == "heads":
        cos, sin = cos[:, None, :], sin[:, None, :]
    partner = rotate_pairs(x64) if (partner_layout or pairs) == "pairs" else rotate_half(x64)
    return x64 * cos + partner * sin


def settings(payload: dict) -> dict:
    """The case's keyword arguments with the contract's defaults filled in."""
    return {**DEFAULTS, **payload["kwargs"]}


AFTER_D = "after a call with head size"
"""Payload key of a case graded right after another of the same positions, base and dtype with
this smaller head size: a cos/sin table cached without d serves that one's frequencies."""


def candidates(payload: dict) -> list[tuple[str, object]]:
    """[(mistake id, thunk)]: each thunk re-enacts a mistake and returns (output, None); a
    mistake that changes nothing on this case is left out."""
    x, right = payload["x"], settings(payload)
    other = "half" if right["interleaved"] else "pairs"

    def variant(**changes):
        return lambda: (rotate(x, **{**right, **changes}), None)

    out = [("other_layout", variant(interleaved=not right["interleaved"])),
           ("inv_freq_exponent", variant(exponent=1.0)),
           ("halves_unpaired", variant(angle_layout=other)),
           ("halves_unpaired", variant(partner_layout=other)),
           ("degrees", variant(degrees=True)),
           ("sign_flipped", variant(sign=-1.0)),
           ("positions_along_heads", variant(positions="heads"))]
    if right["offset"]:
        out.append(("offset_ignored", variant(offset=0)))
    if payload.get(AFTER_D) == 2:  # d = 2's one frequency is base ** 0: every pair turns at 1 rad a position
        out.append(("table_cached_without_d", variant(exponent=0.0)))
    if float(right["base"]) != DEFAULTS["base"]:
        out.append(("base_ignored", variant(base=DEFAULTS["base"])))
    return out


def same_dtype_references(payload: dict) -> list[torch.Tensor]:
    """Correct computations in the input's dtype, as careful code writes them: angles in float32
    (float64 for float64 inputs), cos/sin rounded to the input's dtype, the rotation in that dtype;
    and the rotation done in float32 and rounded once."""
    x, right = payload["x"], settings(payload)
    angle_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    d, n = x.shape[-1], x.shape[-2]
    index = torch.arange(0, d, 2, dtype=angle_dtype, device=x.device)
    inv_freq = 1.0 / (float(right["base"]) ** (index / d))
    angles = (right["offset"] + torch.arange(n, dtype=angle_dtype, device=x.device))[:, None] * inv_freq
    if right["interleaved"]:
        full, partner = angles.repeat_interleave(2, dim=-1), rotate_pairs
    else:
        full, partner = torch.cat((angles, angles), dim=-1), rotate_half
    low = x * full.cos().to(x.dtype) + partner(x) * full.sin().to(x.dtype)
    wide = x.to(angle_dtype)
    once = (wide * full.cos() + partner(wide) * full.sin()).to(x.dtype)
    return [low, once]


# --- cases ---------------------------------------------------------------------------------------
def build_case(gen, name, *, batch=2, heads=2, n=5, d=8, dtype=torch.float32, kwargs=None,
               scale=1.0, layout="contiguous", relative=False, check=None, tier=CORE, device="cpu",
               public=True) -> Case:
    """One case. `kwargs` are passed to the learner as keyword arguments (left out: the defaults).
    `layout="strided"`: x is the transposed view a `(B, n, H, d)` projection gives.
    `relative`: batch 0 holds one q vector per head at every position and batch 1 one k vector
    (an expanded view), for checking the relative-position property on the outputs."""
    kwargs = dict(kwargs or {})
    if relative:
        x = (scale * torch.randn(2, heads, 1, d, generator=gen, dtype=torch.float64)).to(dtype).to(device)
        x = x.expand(2, heads, n, d)
    else:
        x = (scale * torch.randn(batch, heads, n, d, generator=gen, dtype=torch.float64)).to(dtype).to(device)
        if layout == "strided":
            x = x.transpose(1, 2).contiguous().transpose(1, 2)
    payload = {"x": x, "kwargs": kwargs, "relative": relative}
    full = {**DEFAULTS, **kwargs}
    layout_text = "interleaved pairs" if full["interleaved"] else "rotate-half"
    given = ", ".join(f"{key}={value!r}" for key, value in kwargs.items()) or "defaults"
    notes = (f"x {shape_text(x.shape)} {str(dtype).replace('torch.', '')}, {layout_text}, {given}, "
             f"positions {full['offset']}..{full['offset'] + n - 1}"
             + (f", values x{scale:g}" if scale != 1 else "")
             + (", a transposed view" if layout == "strided" else "")
             + (", the same vector at every position (an expanded view)" if relative else ""))
    # called again on another x: a rotated x kept from a call shows
    plan_calls(payload, big=x.numel() > 4096 or n > BIG, core_public=tier == CORE and public,
               second=lambda: {"x": other_layout_values(x, flip=(0,), negate=True)})
    return Case(name, payload, tier=tier, value_check=check or CHECKS[dtype], notes=notes, public=public,
                size=n)


def public_cases(device: str) -> list[Case]:
    """Fixed cases: both layouts, defaults and every argument, offsets of decoding steps and
    chunks, other bases, n past 256 and positions past 2048, views, the property cases."""
    gen = torch.Generator().manual_seed(PUBLIC_SEED)
    f32, f64, f16 = torch.float32, torch.float64, torch.float16
    specs = [
        ("rotate-half, defaults", dict(batch=2, heads=3, n=5, d=8, dtype=f32)),
        # the same positions, head size and dtype with another base: a table cached without the
        # base would serve the default one's
        ("base 500000 after the defaults", dict(batch=1, heads=2, n=5, d=8, dtype=f32, kwargs={"base": 500000.0})),
        ("interleaved", dict(batch=1, heads=2, n=6, d=8, dtype=f64, kwargs={"interleaved": True})),
        ("rotate-half, one decode step", dict(batch=2, heads=2, n=1, d=8, dtype=f32,
                                              kwargs={"offset": 37, "interleaved": False})),
        ("interleaved, a chunk after a cache", dict(batch=1, heads=3, n=4, d=6, dtype=f64,
                                                    kwargs={"offset": 10, "interleaved": True})),
        ("base 500000", dict(batch=1, heads=2, n=7, d=16, dtype=f64, kwargs={"base": 500000.0})),
        ("base 100, interleaved, offset", dict(batch=2, heads=1, n=5, d=8, dtype=f32,
                                               kwargs={"base": 100.0, "interleaved": True, "offset": 3})),
        ("d = 2", dict(batch=1, heads=3, n=6, d=2, dtype=f64, kwargs={"offset": 2})),
        # the same positions, base and dtype with a wider head: a table cached without d would
        # serve d = 2's single frequency, which broadcasts over every pair without an error
        ("d = 8 after d = 2, same positions", dict(batch=1, heads=2, n=6, d=8, dtype=f64, kwargs={"offset": 2})),
        ("large values", dict(batch=1, heads=2, n=4, d=8, dtype=f32, scale=1e4, kwargs={"interleaved": True})),
        ("float16", dict(batch=1, heads=2, n=6, d=8, dtype=f16, tier=EXTRA, kwargs={"offset": 5})),
        ("bfloat16", dict(batch=1, heads=2, n=6, d=8, dtype=torch.bfloat16, tier=EXTRA,
                          kwargs={"interleaved": True})),
        # Past any fixed table (256 positions, 2048 of a float16-exact range):
        ("long, a transposed view", dict(batch=2, heads=4, n=300, d=32, dtype=f32, layout="strided")),
        # the same call in float32 first: a cos/sin table cached without its dtype serves the
        # float64 call below float32 angles
        ("interleaved, positions past 4096, float32", dict(batch=1, heads=2, n=70, d=16, dtype=f32,
                                                           kwargs={"offset": 4090, "interleaved": True})),
        ("interleaved, positions past 4096", dict(batch=1, heads=2, n=70, d=16, dtype=f64,
                                                  kwargs={"offset": 4090, "interleaved": True})),
        ("float16 past position 2048", dict(batch=1, heads=2, n=260, d=32, dtype=f16, check=LONG_FLOAT16,
                                            kwargs={"offset": 3000})),
        ("bfloat16 past position 2048", dict(batch=1, heads=2, n=260, d=32, dtype=torch.bfloat16,
                                             check=LONG_BFLOAT16, kwargs={"offset": 3000, "interleaved": True})),
        ("relative, rotate-half", dict(heads=2, n=300, d=16, dtype=f64, relative=True, kwargs={"offset": 11})),
        ("relative, interleaved, base 500", dict(heads=3, n=80, d=8, dtype=f64, relative=True,
                                                 kwargs={"offset": 40, "interleaved": True, "base": 500.0})),
        # positions across a model's context length (8k, 32k, 128k): a table of that many
        # positions grown by n alone, not by offset + n, is wrong only here
        *((f"positions across {end:,}", dict(batch=1, heads=1, n=8, d=8, dtype=f64, kwargs={"offset": end - 4}))
          for end in (8192, 32768, 131072)),
    ]
    cases = [build_case(gen, f"public {name}", device=device, **kwargs) for name, kwargs in specs]
    next(c for c in cases if c.name == "public d = 8 after d = 2, same positions").payload[AFTER_D] = 2
    probe = build_case(gen, "public device probe", batch=1, heads=2, n=5, d=8, dtype=f32,
                       kwargs={"offset": 3, "interleaved": True})
    probe.payload[PROBE] = True
    probe.payload.pop(AGAIN, None)
    probe.notes = "x on a stand-in device: every tensor must follow it"
    return cases + [probe]


def fresh_cases(seed: int, device: str, count: int = 4) -> list[Case]:
    """Random shapes, offsets, bases, layouts, dtypes and views drawn from `seed`."""
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(count):
        pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
        kwargs = {}
        if pick(3):
            kwargs["offset"] = [pick(8), pick(300), 2048 + pick(3000)][pick(3)]
        if pick(2):
            kwargs["base"] = [10000.0, 500000.0, 100.0, 1e6][pick(4)]
        if pick(3):
            kwargs["interleaved"] = bool(pick(2))
        relative = i == count - 1
        cases.append(build_case(
            gen, f"seed {seed} #{i + 1}", device=device, public=False, batch=1 + pick(2), heads=1 + pick(4),
            n=(20 + pick(60)) if relative else 1 + pick(40), d=2 * (1 + pick(8)),
            dtype=torch.float64 if relative else [torch.float32, torch.float64][pick(2)],
            layout=["contiguous", "strided"][pick(2)], relative=relative, kwargs=kwargs))
    return cases


# --- the drill -----------------------------------------------------------------------------------
def score_grid(rotated: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """(H, n, n): rotated q at position i (batch 0) dotted with rotated k at position j (batch 1)."""
    return rotated[0] @ keys[1].transpose(-2, -1)


def relative_violation(shifted: torch.Tensor, at_zero: torch.Tensor, offset: int):
    """(largest violation / largest score, where, what it is) for the relative-position property.

    `at_zero` is the learner's output from position 0, `shifted` from `offset`. With RoPE the
    score of q at i and k at j depends on i - j only (so the grid is constant along diagonals),
    and q rotated from `offset` + i scores like q at position `offset` + i rotated from 0.
    """
    grid = score_grid(at_zero, at_zero)
    scale = float(grid.abs().max()) or 1.0
    worst, where, what = 0.0, (), ""
    n = grid.shape[-1]
    if n > 1:
        diagonal = (grid[:, 1:, 1:] - grid[:, :-1, :-1]).abs()
        flat = int(diagonal.argmax())
        head, i, j = (int(v) for v in (flat // (n - 1) ** 2, flat // (n - 1) % (n - 1), flat % (n - 1)))
        worst = float(diagonal.max()) / scale
        what = (f"rotated q at position {i} · rotated k at position {j} = {float(grid[head, i, j]):.6g} but "
                f"at positions {i + 1}, {j + 1} it is {float(grid[head, i + 1, j + 1]):.6g} (head {head}, "
                "offset 0): the score must depend only on the distance i - j")
        where = (head, i, j)
    if 0 < offset < n:
        moved = score_grid(shifted, at_zero)[:, : n - offset]
        expected = grid[:, offset:]
        gap = (moved - expected).abs()
        if float(gap.max()) / scale > worst:
            flat = int(gap.argmax())
            head, i, j = (int(v) for v in (flat // ((n - offset) * n), flat // n % (n - offset), flat % n))
            worst = float(gap.max()) / scale
            what = (f"q at position {i} with offset={offset} · k at position {j} = {float(moved[head, i, j]):.6g}, "
                    f"but q at position {i + offset} with offset=0 gives {float(expected[head, i, j]):.6g} "
                    f"(head {head}): offset={offset} must start the positions at {offset}")
            where = (head, i, j)
    return worst, where, what


class RopeDrill(AttentionDrill):
    """`apply_rope(x, offset=0, base=10000.0, interleaved=False)` on `(B, H, n, d)`.

    The answer is the rotated x, not attention output; AttentionDrill is reused for what is the
    same (inputs unchanged, determinism, the device probe, diagnosis by re-enacted mistakes)."""

    check_order = CHECK_ORDER
    input_names = ("x",)
    second_inputs_said = "batch items swapped, x negated"

    def public_cases(self, device: str) -> list[Case]:
        return public_cases(device)

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        return fresh_cases(seed, device)

    def run_case(self, entry_obj, payload: dict) -> dict:
        """In the child: call the learner twice on fresh copies (once for a big case), then on
        the second x (`AGAIN`) and, for a property case, once more from position 0; export the
        results and the input."""
        kwargs = payload["kwargs"]
        if PROBE in payload:  # in both layouts: each has code of its own (a rotate-half matrix)
            audit = DeviceAudit(default_is_wrong=True, inputs=[])  # one for both: what the first
            for layout in (kwargs.get("interleaved", False), not kwargs.get("interleaved", False)):
                options = {**kwargs, "interleaved": layout}  # made on the stand-in may serve the second
                entry_obj(clone_tree(payload["x"]), **options)  # on the real device first: its tables kept
                x = clone_tree(payload["x"])  # then on the stand-in: a table cached without the device shows
                found = probe_result(lambda x=x, options=options: entry_obj(x, **options),
                                     default_is_wrong=True, inputs=[x], audit=audit)
                if found[PROBE]["problems"]:
                    return found
            return found
        calls, inputs_after = [], []
        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            x = clone_tree(payload["x"])
            calls.append(export(entry_obj(x, **kwargs)))
            if attempt == 0:
                inputs_after = inputs_as_left([x], [payload["x"]], payload)
        if AGAIN in payload and not payload.get(ONE_CALL):
            calls.append(export(entry_obj(clone_tree(payload[AGAIN]["x"]), **kwargs)))
        result = {"calls": calls, "inputs": inputs_after}
        if payload.get("relative"):
            x = clone_tree(payload["x"])
            result[AT_ZERO] = export(entry_obj(x, **{**kwargs, "offset": 0}))
        return result

    # --- parent side ----------------------------------------------------------------------------
    def oracle(self, case: Case) -> torch.Tensor:
        if "oracle" not in case.extra:
            case.extra["oracle"] = rotate(case.payload["x"], **settings(case.payload))
        return case.extra["oracle"]

    def _expected(self, case: Case):
        """(output, no weights), no fully masked rows: what `_check_second_input` compares with."""
        return (self.oracle(case), None), None

    def _reference_error(self, case: Case) -> float:
        if "reference_error" not in case.extra:
            expected = self.oracle(case)
            case.extra["reference_error"] = max(
                compare_values(ref.cpu(), expected, 0.0, 0.0)[1] for ref in same_dtype_references(case.payload))
        return case.extra["reference_error"]

    def _shows(self, case: Case, cand_out: torch.Tensor, cand_w: torch.Tensor | None) -> bool:
        return self._fails(case, cand_out, self.oracle(case), None)

    def tolerance(self, case: Case) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCE[case.payload["x"].dtype]
        factor = FLOOR_FACTOR if case.tier == CORE else LOW_PRECISION_FACTOR
        return rtol, max(atol, factor * self._reference_error(case))

    def candidates(self, case: Case):
        return candidates(case.payload)

    def check_case(self, case: Case, result: dict, book: CheckBook) -> None:
        if PROBE in case.payload:
            self._check_probe(case, result, book)
            return
        core = case.tier == CORE
        name = failure_check(case)
        where = f"{case.name} ({case.notes})"
        first, second = (result["calls"] * 2)[:2]
        out, _, problem = unpack_output(first, allow_weights=False)
        if problem:
            book.failed(name("return type"), case, result, f"{where}: {problem} (the rotated x)")
            return
        if core:
            book.passed("return type")
        x = case.payload["x"]
        if tuple(out["shape"]) != tuple(x.shape):
            book.failed(name("shape"), case, result,
                        f"{where}: output shape {shape_text(out['shape'])}, expected {shape_text(x.shape)} (x's shape)")
            return
        if core:
            book.passed("shape")
        if out["dtype"] != str(x.dtype):
            book.failed(name("dtype"), case, result,
                        f"{where}: output dtype {out['dtype']}, expected {x.dtype} (x's dtype)")
            return
        if core:
            book.passed("dtype")
        if out["device"] != str(x.device):
            book.failed(name("device"), case, result, f"{where}: output on {out['device']}, x on {x.device}")
        elif core:
            book.passed("device")
        if core:
            self._check_inputs(case, result, book, where)
        if core and len(result["calls"]) > 1:
            self._check_determinism(first, second, case, result, book, where)
        expected = self.oracle(case)
        rtol, atol = self.tolerance(case)
        ok, err, index, got, want = compare_values(out["tensor"], expected, rtol, atol)
        if ok:
            book.passed(case.value_check)
        else:
            book.failed(case.value_check, case, result,
                        f"{where}: largest error {err:.3g} at output{format_index(index)} "
                        f"(got {got:.6g}, expected {want:.6g}; tolerance {atol:.1g} + {rtol:.1g}*|expected|)")
        if core and ok and AGAIN in case.payload and len(result["calls"]) > 2:
            self._check_second_input(case, result, book, where)
        if case.payload.get("relative"):
            self._check_relative(case, result, book, out["tensor"], where)

    def _check_probe(self, case, result, book):
        check_probe(book, case, result, follow_inputs("x"))

    def _check_relative(self, case, result, book, shifted, where):
        at_zero, _, problem = unpack_output(result.get(AT_ZERO) or {}, allow_weights=False)
        if problem or tuple(at_zero["shape"]) != tuple(shifted.shape):
            book.failed(RELATIVE, case, result, f"{where}: with offset=0 it returned something else: {problem}")
            return
        offset = settings(case.payload)["offset"]
        worst, _, what = relative_violation(shifted.to(torch.float64), at_zero["tensor"].to(torch.float64), offset)
        if worst <= RELATIVE_TOLERANCE and torch.isfinite(shifted).all() and torch.isfinite(at_zero["tensor"]).all():
            book.passed(RELATIVE)
        else:
            book.failed(RELATIVE, case, result, f"{where}: {what}")

    def diagnose(self, failures: list[Failure]):
        """The known mistake whose output matches (see AttentionDrill.diagnose); else, when the
        code is right at float32 and wrong only where precision bites (float64 cases, float16
        past position 2048), angles computed in too low a precision."""
        named = super().diagnose(failures)
        if "angle_precision" not in self.mistakes or (named[0] in self.mistakes and named[0] != "hard_coded_device"):
            return named  # the device probe's finding comes after what the values show
        failures = [f for f in failures if PROBE not in f.case.payload]
        if not failures:
            return named
        public = [f for f in failures if f.case.public] or failures
        float32_failed = any(f.check == "values float32" for f in failures)
        if not float32_failed and all(f.check in ("values float64", LONG_FLOAT16, LONG_BFLOAT16) for f in public):
            first = public[0]
            return "angle_precision", f"Looks like {self.mistakes['angle_precision']}. {first.check}: {first.message}"
        return named


DRILL = RopeDrill.from_folder(__file__)
