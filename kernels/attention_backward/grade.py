"""The `attention_backward` drill: dQ, dK, dV by hand, checked against autograd in float64."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..device_probe import PROBE, probe_result
from ..grading import (
    AGAIN,
    BIG,
    CORE,
    EXTRA,
    ONE_CALL,
    SAME_TENSORS,
    Case,
    CheckBook,
    Failure,
    clone_tree,
    export,
    inputs_as_left,
    other_layout_values,
    plan_calls,
    shape_text,
)
from ..hidden_calls import HiddenCalls, hidden_message
from ..mistakes import as_key_padding
from ..tuple_drill import Candidate, TupleDrill
from .variants import autograd_backward, by_hand

PUBLIC_SEED = 20261124
CHECK_VALUES = {torch.float32: "values float32", torch.float64: "values float64",
                torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}
AUTOGRAD_NAMES = ("backward", "grad", "requires_grad_", "vjp", "jacrev", "jacfwd", "jvp")
"""Functions that hand the work to autograd (Tensor.backward, torch.autograd.grad, torch.func...)."""


FUSED_ATTENTION = ("scaled_dot_product", "flash_attention", "efficient_attention", "cudnn_attention",
                   "multi_head_attention", "_fused_sdp")
"""Name parts of PyTorch's fused attention kernels: their backward (`torch.ops.aten.
_scaled_dot_product_flash_attention_for_cpu_backward`) gives the gradients with no autograd
reached, and this drill is written by hand (fused_allowed = false)."""


GRAD_MODE_ON = "grad mode switched on where the watch could not see it"


class AutogradWatch(TorchFunctionMode):
    """Records autograd entry points the learner's call reaches (it runs under torch.no_grad())."""

    def __init__(self) -> None:
        super().__init__()
        self.used: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        enabling = name == "_set_grad_enabled" and bool(args and args[0])
        fused = any(part in name for part in FUSED_ATTENTION)
        if (name in AUTOGRAD_NAMES or enabling or fused) and len(self.used) < 3:
            self.used.append("torch.enable_grad()" if enabling else f"{name} (a fused attention kernel)" if fused
                             else name)
        elif torch.is_grad_enabled() and GRAD_MODE_ON not in self.used and len(self.used) < 3:
            # the call runs under no_grad: grad mode back on means it was switched on out of
            # sight (torch._C._set_grad_enabled inside DisableTorchFunction), for the engine
            self.used.append(GRAD_MODE_ON)
        return func(*args, **(kwargs or {}))


def _strided(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.transpose(-2, -1).contiguous().transpose(-2, -1)


def second_inputs(payload: dict) -> dict:
    """Other inputs of the same kind (`AGAIN`): batch items trade places in every input (a
    per-item mask with its item) and dO is negated, which flips the sign of all three gradients
    (dV = P^T dO; dQ and dK through dP = dO V^T) whether or not there is a batch to swap."""
    def swap(tensor, negate=False):
        if tensor is None:
            return None
        return other_layout_values(tensor, flip=(0,) if tensor.dim() > 2 else (), negate=negate)

    return {"Q": swap(payload["Q"]), "K": swap(payload["K"]), "V": swap(payload["V"]),
            "dO": swap(payload["dO"], negate=True), "mask": swap(payload["mask"])}


def build_case(gen, name, *, lead=(), n=4, m=5, d=4, dv=3, mask=None, scale=None, dtype=torch.float32,
               scores="normal", layout="contiguous", masked_row=False, tier=CORE, public=True,
               device="cpu", again=False, same_tensors: dict | None = None) -> Case:
    """One case; `mask` is None, "random" (per item), "causal" ((n, m), bottom-right) or "padding".
    `again`: called on other inputs though longer than `BIG` (a memo kept only for big inputs)."""
    Q = torch.randn(*lead, n, d, generator=gen, dtype=torch.float64)
    K = torch.randn(*lead, m, d, generator=gen, dtype=torch.float64)
    V = torch.randn(*lead, m, dv, generator=gen, dtype=torch.float64)
    dO = torch.randn(*lead, n, dv, generator=gen, dtype=torch.float64)
    if scores == "large":  # scores of about +-100: the softmax is nearly one-hot
        Q, K = Q * 10, K * 10
    allowed = None
    if mask == "random":
        allowed = torch.rand(*lead, n, m, generator=gen) < 0.6
        allowed[..., torch.arange(n), torch.randint(0, m, (n,), generator=gen)] = True
        if masked_row:
            allowed[..., min(1, n - 1), :] = False
    elif mask == "causal":
        allowed = torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)
    elif mask == "padding":
        lengths = torch.randint(1, m + 1, (lead[0] if lead else 1,), generator=gen)
        lengths[0] = max(1, m - 1)
        keys = torch.arange(m) < lengths[:, None]
        allowed = keys.reshape(*lead[:1], *(1,) * (len(lead) - 1), 1, m) if lead else keys.reshape(1, m)
    payload = {"Q": Q.to(dtype).to(device), "K": K.to(dtype).to(device), "V": V.to(dtype).to(device),
               "dO": dO.to(dtype).to(device), "mask": None if allowed is None else allowed.to(device),
               "scale": scale}
    if layout == "strided":
        for key in ("Q", "V", "dO"):
            payload[key] = _strided(payload[key])
        if lead:
            payload["K"] = payload["K"].narrow(0, 0, 1).expand(payload["K"].shape)
    # called again on other inputs: an answer kept from a call shows
    plan_calls(payload, big=max(n, m) > BIG, core_public=tier == CORE and public,
               second=lambda: second_inputs(payload), again=again, same_tensors=same_tensors,
               tensors=("Q", "K", "V", "dO", "mask"))
    mask_text = "no mask" if allowed is None else f"{mask} mask {shape_text(allowed.shape)}"
    notes = (f"Q {shape_text(Q.shape)}, K {shape_text(K.shape)}, V {shape_text(V.shape)}, "
             f"{str(dtype).replace('torch.', '')}, {mask_text}, scale "
             + ("default" if scale is None else f"{scale:g}") + (", large scores" if scores == "large" else "")
             + (", transposed and expanded views" if layout == "strided" else ""))
    return Case(name, payload, tier=tier, value_check=CHECK_VALUES[dtype], notes=notes, public=public,
                size=max(n, m))


def public_cases(device: str) -> list[Case]:
    gen = torch.Generator().manual_seed(PUBLIC_SEED)
    f64 = torch.float64
    specs: list[tuple[str, dict[str, Any]]] = [
        ("n < m, no mask", dict(n=3, m=5, d=4, dv=6)),
        ("square, explicit scale", dict(lead=(2,), n=6, m=6, d=4, dv=3, scale=0.3, dtype=f64)),
        # 0 is a scale like any other (`scale or default` took it for none): uniform P, dQ = dK = 0
        ("scale 0", dict(lead=(2,), n=6, m=4, d=4, dv=3, scale=0.0, dtype=f64)),
        ("random mask, n < m", dict(lead=(2, 3), n=4, m=7, d=8, dv=5, mask="random")),
        ("square, random mask, a fully masked row", dict(lead=(2,), n=5, m=5, dv=4, mask="random",
                                                         masked_row=True, dtype=f64)),
        ("square, causal", dict(lead=(3,), n=8, m=8, d=4, dv=5, mask="causal", scale=0.5)),
        ("n > m, causal: fully masked rows", dict(lead=(2,), n=7, m=4, d=4, dv=3, mask="causal", dtype=f64)),
        ("large scores", dict(lead=(2,), n=8, m=8, d=8, dv=4, scores="large")),
        ("large scores, past 64", dict(lead=(2,), n=70, m=130, d=8, dv=4, scores="large")),
        ("long keys, called again", dict(lead=(2,), n=70, m=300, d=8, dv=4, dtype=f64, again=True)),
        # the very tensors of the first call again, with another mask or scale: a P kept for the same
        # Q and K (`is`) answers for the old ones
        ("no mask, then a causal one on the same tensors",
         dict(lead=(2,), n=6, m=6, dtype=f64, same_tensors={"mask": torch.ones(6, 6, dtype=torch.bool).tril()})),
        ("default scale, then 0.1 on the same tensors", dict(lead=(3,), n=5, m=7, dtype=f64,
                                                             same_tensors={"scale": 0.1})),
        ("float16", dict(lead=(2,), n=12, m=20, d=8, dv=4, mask="padding", dtype=torch.float16, tier=EXTRA)),
        ("bfloat16", dict(lead=(2,), n=12, m=12, d=8, dv=4, mask="causal", dtype=torch.bfloat16, tier=EXTRA)),
        ("long keys, padding, transposed and expanded views",
         dict(lead=(2, 2), n=70, m=300, d=16, dv=8, mask="padding", layout="strided")),
        ("square past 256, causal", dict(lead=(2,), n=260, m=260, d=8, dv=8, mask="causal", dtype=f64)),
        # a (n, m) mask whose first dim is also the batch's: still (n, m), not (batch, m) padding
        ("causal (n, m) mask, as many queries as the batch", dict(lead=(3,), n=3, m=5, d=4, dv=4, mask="causal",
                                                                   dtype=f64)),
    ]
    cases = [build_case(gen, f"public {name}", device=device, **kwargs) for name, kwargs in specs]
    probe = build_case(gen, "public device probe", lead=(2,), n=5, m=7, mask="random")
    probe.payload[PROBE] = True
    probe.payload.pop(AGAIN, None)
    probe.notes = "inputs on a stand-in device: every tensor must follow them"
    return cases + [probe]


def fresh_cases(seed: int, device: str, count: int = 3) -> list[Case]:
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(count):
        pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
        n = 1 + pick(40)
        m = n if pick(2) else 1 + pick(40)
        kwargs = dict(lead=[(), (2,), (2, 3)][pick(3)], n=n, m=m, d=2 + pick(7), dv=1 + pick(8),
                      mask=[None, "random", "causal", "padding"][pick(4)],
                      scale=[None, 0.25, 1.0][pick(3)], dtype=[torch.float32, torch.float64][pick(2)],
                      scores=["normal", "large"][pick(2)], layout=["contiguous", "strided"][pick(2)])
        cases.append(build_case(gen, f"seed {seed} #{i + 1}", device=device, public=False, **kwargs))
    return cases


def _arguments(payload: dict) -> tuple[list, dict]:
    """Copies of the inputs, and the keywords the call passes (only those the case sets)."""
    tensors = clone_tree([payload["Q"], payload["K"], payload["V"], payload["dO"], payload["mask"]])
    keywords = {}
    if tensors[4] is not None:
        keywords["mask"] = tensors[4]
    if payload["scale"] is not None:
        keywords["scale"] = payload["scale"]
    return tensors, keywords


class AttentionBackwardDrill(TupleDrill):
    output_names = ("dQ", "dK", "dV")
    input_names = ("Q", "K", "V", "dO", "mask")
    masked_values = (0.0, 0.0, 0.0)
    record_checks = [("no autograd", CORE)]
    second_inputs_said = "batch items swapped, dO negated"

    def public_cases(self, device):
        return public_cases(device)

    def fresh_cases(self, seed, device):
        return fresh_cases(seed, device)

    def run_case(self, entry_obj, payload: dict) -> dict:
        """In the child, under torch.no_grad(): autograd has nothing recorded to differentiate,
        and `AutogradWatch` names any way back into it (`HiddenCalls`: any it was kept from
        seeing), on every call. Small cases are called twice, then once on their second inputs
        (`AGAIN`)."""
        if PROBE in payload:  # with the mask, then without: code often makes one there (torch.ones)
            found = None
            for masked in (True, False):
                tensors, keywords = _arguments(payload)
                if not masked:
                    keywords.pop("mask", None)
                with torch.no_grad():
                    found = probe_result(lambda t=tensors, k=keywords: entry_obj(*t[:4], **k), default_is_wrong=True)
                if found[PROBE]["problems"]:
                    return found
            return found
        calls, inputs_after, used, hidden = [], [], [], []

        def watched(arguments: dict, same: list | None = None):
            """One call under the watches; every call is watched (code that saw no watch on a
            later call could use autograd there unseen). `same`: Q, K, V and dO of an earlier call."""
            tensors, keywords = _arguments(arguments)
            if same is not None:
                tensors[:4] = same[:4]
            watch, out_of_sight = AutogradWatch(), HiddenCalls()
            with torch.no_grad(), watch, out_of_sight:
                value = entry_obj(*tensors[:4], **keywords)
            returned = value if isinstance(value, (tuple, list)) else [value]
            for way in watch.used + ["a result with a grad_fn" for t in returned
                                     if isinstance(t, torch.Tensor) and t.grad_fn is not None][:1]:
                if way not in used:
                    used.append(way)
            hidden.extend(name for name in out_of_sight.hidden if name not in hidden)
            return tensors, value

        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            tensors, value = watched(payload)
            calls.append(export(value))
            if attempt == 0:
                originals = [payload[key] for key in ("Q", "K", "V", "dO", "mask")]
                inputs_after = inputs_as_left([t for t in tensors if t is not None],
                                              [t for t in originals if t is not None], payload)
        if AGAIN in payload and not payload.get(ONE_CALL):
            same = tensors if payload.get(SAME_TENSORS) else None  # the last call's very tensors
            calls.append(export(watched({**payload, **payload[AGAIN]}, same)[1]))
        return {"calls": calls, "inputs": inputs_after, "record": {"autograd": used, "hidden": hidden}}

    def oracle(self, case):
        p = case.payload
        return autograd_backward(p["Q"], p["K"], p["V"], p["dO"], p["mask"], p["scale"])

    def masked_positions(self, case):
        p = case.payload
        n, m = p["Q"].shape[-2], p["K"].shape[-2]
        lead = p["Q"].shape[:-2]
        if p["mask"] is None:
            rows = torch.zeros((*lead, n), dtype=torch.bool)
        else:
            rows = ~p["mask"].cpu().expand(*lead, n, m).any(dim=-1)
        return rows.unsqueeze(-1).expand(*lead, n, p["Q"].shape[-1]), None, None

    def output_dtypes(self, case):
        return (case.payload["Q"].dtype,) * 3

    def same_dtype_references(self, case):
        p = case.payload
        args = (p["Q"], p["K"], p["V"], p["dO"], p["mask"], p["scale"])
        dtype = p["Q"].dtype
        return [autograd_backward(*args, dtype=dtype), by_hand(*args, dtype=dtype)]

    def candidates(self, case):
        p = case.payload
        args = (p["Q"], p["K"], p["V"], p["dO"], p["mask"], p["scale"])
        run = lambda **knobs: (lambda: by_hand(*args, **knobs))  # noqa: E731
        return [
            Candidate("scale_missing", run(dq_scale=False, dk_scale=False)),
            Candidate("scale_missing", run(dq_scale=False)),
            Candidate("scale_missing", run(dk_scale=False)),
            Candidate("no_rowsum_term", run(rowsum=False)),
            Candidate("rowsum_wrong_dim", run(rowsum_dim=-2)),
            Candidate("transposes_swapped", run(dk_transposed=False)),
            Candidate("transposes_swapped", run(dq_transposed=False)),
            Candidate("transposes_swapped", run(dk_transposed=False, dq_transposed=False)),
            Candidate("dv_not_transposed", run(dv_transposed=False)),
            Candidate("mask_not_in_backward", run(mask_in_backward=False)),
            Candidate("nan_masked_rows", run(safe=False), symptom=True),
        ] + ([Candidate("scale_zero_ignored", lambda: by_hand(*args[:5], None))] if p["scale"] == 0 else []) + (
            [Candidate("mask_2d_as_key_padding", lambda: by_hand(*args[:4], padding, p["scale"]))]
            if (padding := as_key_padding(p["mask"], p["Q"])) is not None else [])

    def check_record(self, case: Case, record: dict, book: CheckBook, where: str) -> None:
        used = record.get("autograd") or []
        if used:
            book.failed("no autograd", case, {"record": record},
                        f"{where}: the call reached autograd ({', '.join(used)}); this drill asks for the "
                        "gradients from the formulas, and the grader runs it under torch.no_grad()")
        elif record.get("hidden"):
            book.failed("no autograd", case, {"record": record},
                        f"{where}: {hidden_message(record['hidden'], 'check for autograd')}")
        else:
            book.passed("no autograd")

    def diagnose_record(self, failures: list[Failure]):
        for failure in failures:
            if failure.check == "no autograd":
                record = failure.result.get("record") or {}
                mistake = "hidden_calls" if record.get("hidden") and not record.get("autograd") else "used_autograd"
                return mistake, f"Looks like {self.mistakes[mistake]}. no autograd: {failure.message}"
        return None


DRILL = AttentionBackwardDrill.from_folder(__file__)

