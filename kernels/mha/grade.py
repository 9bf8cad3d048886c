"""The `mha` drill: the learner's own nn.Module, loaded with the grader's weights and biases."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..attention import allowed_mask, merge_heads, mha_forward, split_heads
from ..device_probe import PROBE, probe_result
from ..grading import (
    AGAIN,
    BIG,
    CORE,
    EXTRA,
    ONE_CALL,
    Case,
    clone_tree,
    export,
    inputs_as_left,
    load_projections,
    plan_calls,
    shape_text,
)
from ..mistakes import ONE_MEMORY, ONE_TENSOR, mha_candidates
from ..tensor_drill import AttentionDrill, second_inputs

PUBLIC_SEED = 31415
LAYERS = ("W_q", "W_k", "W_v", "W_o")


def build_case(gen, name, *, batch=2, n=4, m=4, d_model=8, heads=2, dtype=torch.float32,
               mask=None, mask_kind="bool", tier=CORE, device="cpu", lengths=None, scale=1.0,
               mask_rank=2, layout="contiguous", public=True, again=False, one_tensor=False,
               one_memory=False) -> Case:
    """One mha case; `mask` is None, "causal" (n, m), "padding" (batch, 1, 1, m) or "combined".

    `scale` multiplies the inputs (large activations, large scores); `mask_rank=3` gives a causal
    mask as (1, n, m); `layout="strided"` hands over inputs stored transposed (non-contiguous).
    `one_tensor`: self-attention as callers write it, one tensor passed as Q, K and V (`ONE_TENSOR`);
    `one_memory`: cross-attention as callers write it, `mha(x, memory, memory)` (`ONE_MEMORY`).
    """
    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    weights = {layer: (randn(d_model, d_model) / d_model ** 0.5, 0.5 * randn(d_model)) for layer in LAYERS}
    Q, K, V = (scale * randn(batch, seq, d_model) for seq in (n, m, m))
    if one_tensor:
        assert n == m, "one tensor as Q, K and V: self-attention"
        K = V = Q
    if one_memory:
        V = K
    allowed = None
    if mask == "causal":
        allowed = torch.ones(n, m, dtype=torch.bool).tril()
        if mask_rank == 3:
            allowed = allowed.unsqueeze(0)
    elif mask in ("padding", "combined"):
        drawn = torch.randint(1, m + 1, (batch,), generator=gen)
        drawn[0] = max(1, m - 1)
        lengths = drawn if lengths is None else torch.tensor(lengths)
        allowed = (torch.arange(m)[None, :] < lengths[:, None]).reshape(batch, 1, 1, m)
        if mask == "combined":
            allowed = allowed & torch.ones(n, m, dtype=torch.bool).tril()
    cast = lambda t: t.to(dtype).to(device)  # noqa: E731
    mask_tensor = None
    if allowed is not None:
        mask_tensor = {"bool": allowed, "int": allowed.long(), "float": allowed.float()}[mask_kind].to(device)
    payload = {"d_model": d_model, "num_heads": heads, "Q": cast(Q), "K": cast(K), "V": cast(V),
               "mask": mask_tensor, "weights": {k: (cast(w), cast(b)) for k, (w, b) in weights.items()}}
    if layout == "strided":
        for key in ("Q", "K", "V"):
            payload[key] = payload[key].transpose(-2, -1).contiguous().transpose(-2, -1)
    mask_text = "no mask" if allowed is None else f"{mask_kind} {mask} mask {shape_text(mask_tensor.shape)}"
    notes = (f"Q {shape_text(Q.shape)}, K/V {shape_text(K.shape)}, d_model={d_model}, heads={heads}, "
             f"{str(dtype).replace('torch.', '')}, {mask_text}" + (f", inputs x{scale:g}" if scale != 1 else "")
             + (", transposed views" if layout == "strided" else ""))
    check = {torch.float32: "values float32", torch.float64: "values float64",
             torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}[dtype]
    # called again on other inputs: what an earlier call left shows
    if one_tensor:
        payload[ONE_TENSOR] = True
        notes += ", one tensor passed as Q, K and V"
    if one_memory:
        payload[ONE_MEMORY] = True
        notes += ", one memory tensor passed as K and V"
    plan_calls(payload, big=max(n, m) > BIG, core_public=tier == CORE and public,
               second=lambda: _shared_again(second_inputs(payload), payload), again=again)
    return Case(name, payload, tier=tier, value_check=check, notes=notes, public=public, size=max(n, m))


def _arguments(inputs: dict, payload: dict) -> list:
    """Copies of Q, K, V and the mask for one call; one tensor three times for a `ONE_TENSOR`
    case, one as K and V for a `ONE_MEMORY` one."""
    args = clone_tree([inputs[key] for key in ("Q", "K", "V", "mask")])
    if payload.get(ONE_TENSOR):
        args[1] = args[2] = args[0]
    elif payload.get(ONE_MEMORY):
        args[2] = args[1]
    return args


def _shared_again(second: dict, payload: dict) -> dict:
    """A case's second inputs, sharing tensors as its first call's do: one other tensor as Q, K
    and V for a `ONE_TENSOR` case, as K and V for a `ONE_MEMORY` one. The module's weights are
    others too, copied into its layers in place as an optimizer step does: what a module derives
    from its weights once (W_q, W_k, W_v stacked on the first call) is stale after training."""
    second = {**second, "weights": {layer: (-w.flip(0), b.flip(0)) for layer, (w, b) in payload["weights"].items()}}
    if payload.get(ONE_TENSOR):
        return {**second, "K": second["Q"], "V": second["Q"]}
    if payload.get(ONE_MEMORY):
        return {**second, "V": second["K"]}
    return second


class MhaDrill(AttentionDrill):
    """The learner's own nn.Module, loaded with the grader's weights and biases, against the float64 oracle."""

    def public_cases(self, device: str) -> list[Case]:
        public = torch.Generator().manual_seed(PUBLIC_SEED)
        f32, f64 = torch.float32, torch.float64
        cases = [build_case(public, f"public {name}", device=device, **kw) for name, kw in [
            ("self-attention", dict(batch=2, n=4, m=4, d_model=8, heads=2, dtype=f32)),
            ("self-attention, mha(x, x, x)", dict(batch=2, n=4, m=4, d_model=8, heads=2, dtype=f64,
                                                  one_tensor=True, mask="causal")),
            ("cross-attention, longer keys", dict(batch=2, n=3, m=5, d_model=12, heads=3, dtype=f64,
                                                  mask="padding")),
            ("cross-attention, shorter keys", dict(batch=3, n=5, m=2, d_model=8, heads=4, dtype=f32)),
            ("cross-attention, mha(x, memory, memory)", dict(batch=2, n=3, m=6, d_model=12, heads=3, dtype=f64,
                                                             one_memory=True, mask="padding")),
            ("causal int mask", dict(batch=2, n=4, m=4, d_model=6, heads=3, dtype=f64, mask="causal",
                                     mask_kind="int")),
            ("causal+padding float mask", dict(batch=2, n=5, m=5, d_model=8, heads=2, dtype=f32,
                                               mask="combined", mask_kind="float")),
            ("one head, one query", dict(batch=1, n=1, m=3, d_model=4, heads=1, dtype=f64)),
            ("float16", dict(batch=2, n=3, m=4, d_model=8, heads=2, dtype=torch.float16, mask="causal",
                             tier=EXTRA)),
            ("long cross-attention, per-item padding", dict(batch=3, n=130, m=260, d_model=24, heads=3,
                                                            dtype=f32, mask="padding", mask_kind="int",
                                                            lengths=[260, 131, 7])),
            ("long causal self-attention, 3-D mask, transposed views",
             dict(batch=2, n=150, m=150, d_model=16, heads=4, dtype=f64, mask="causal", mask_rank=3,
                  layout="strided")),
            ("large activations", dict(batch=2, n=6, m=9, d_model=8, heads=2, dtype=f32, scale=7.0)),
            ("large activations, past 64", dict(batch=2, n=70, m=100, d_model=8, heads=2, dtype=f32, scale=7.0)),
            # a memo kept only for long inputs ("to save projecting them") shows on a long case called again
            ("long keys, called again", dict(batch=1, n=3, m=260, d_model=8, heads=2, dtype=f64, again=True)),
            ("self-attention, mha(x, x, x), no mask (an encoder's)", dict(batch=2, n=4, m=4, d_model=8, heads=2,
                                                                          dtype=f64, one_tensor=True)),
        ]]
        probe = build_case(public, "public device probe", batch=2, n=3, m=5, d_model=8, heads=2, dtype=f32,
                           mask="padding")
        probe.payload[PROBE] = True
        probe.payload.pop(AGAIN, None)
        probe.notes = "inputs on a stand-in device: every tensor must follow them"
        return cases + [probe]

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        f32, f64 = torch.float32, torch.float64
        cases = []
        fresh = torch.Generator().manual_seed(seed)
        for i in range(2):
            pick = lambda k: int(torch.randint(0, k, (1,), generator=fresh))  # noqa: E731
            heads = 1 + pick(4)
            cases.append(build_case(
                fresh, f"seed {seed} #{i + 1}", device=device, batch=1 + pick(3), n=1 + pick(24),
                m=1 + pick(24), d_model=heads * (1 + pick(4)), heads=heads,
                dtype=[f32, f64][pick(2)], mask=[None, "padding"][pick(2)],
                mask_kind=["bool", "int", "float"][pick(3)], public=False))
        return cases

    second_input_mistake = "state_on_module"
    second_inputs_said = ("batch items swapped, queries reversed, K and V negated, and other weights copied into "
                          "W_q..W_o in place, as an optimizer step does")

    def run_case(self, entry_obj, payload: dict) -> dict:
        """In the child: build the learner's module, load our weights and biases, call it twice,
        then once more on the second inputs (same module: what it kept from a call shows)."""
        module = entry_obj(payload["d_model"], payload["num_heads"])
        if PROBE in payload:
            return self._probe(module, payload)
        Q = payload["Q"]
        module.to(device=Q.device, dtype=Q.dtype)
        load_projections(module, payload["weights"], Q.device, Q.dtype,
                         "(the grader loads its weights into W_q..W_o, so nn.MultiheadAttention cannot stand in)")
        module.eval()
        calls, inputs_after = [], []
        for attempt in range(1 if payload.get(ONE_CALL) else 2):
            args = _arguments(payload, payload)
            with torch.no_grad():
                value = module(*args) if args[3] is not None else module(*args[:3])
            calls.append(export(value))
            if attempt == 0:
                inputs_after = inputs_as_left(args, [payload[k] for k in ("Q", "K", "V", "mask")], payload)
        if AGAIN in payload and not payload.get(ONE_CALL):
            load_projections(module, payload[AGAIN]["weights"], Q.device, Q.dtype, "")  # in place, as a step does
            args = _arguments(payload[AGAIN], payload)
            with torch.no_grad():
                calls.append(export(module(*args) if args[3] is not None else module(*args[:3])))
        return {"calls": calls, "inputs": inputs_after}

    def _probe(self, module, payload: dict) -> dict:
        """The forward under the device audit, with the mask and without."""
        Q, K, V, mask = clone_tree([payload[key] for key in ("Q", "K", "V", "mask")])
        with torch.no_grad():
            masked = probe_result(lambda: module(Q, K, V, mask), default_is_wrong=True, module=module)
            if masked[PROBE].get("problems"):
                return masked
            return probe_result(lambda: module(Q, K, V), default_is_wrong=True, module=module)

    def _flat_weights(self, payload, convert):
        out = []
        for layer in LAYERS:
            weight, bias = payload["weights"][layer]
            out += [convert(weight), convert(bias)]
        return out

    def oracle(self, case):
        p = case.payload
        mask = None if p["mask"] is None else p["mask"].cpu()
        return mha_forward(p["Q"].cpu(), p["K"].cpu(), p["V"].cpu(),
                           *self._flat_weights(p, lambda t: t.cpu()), num_heads=p["num_heads"],
                           mask=mask, return_weights=True)

    def same_dtype_references(self, case):
        p = case.payload
        (wq, bq, wk, bk, wv, bv, wo, bo) = self._flat_weights(p, lambda t: t)
        heads = p["num_heads"]
        q = split_heads(F.linear(p["Q"], wq, bq), heads)
        k = split_heads(F.linear(p["K"], wk, bk), heads)
        v = split_heads(F.linear(p["V"], wv, bv), heads)
        allowed = None if p["mask"] is None else allowed_mask(p["mask"], q.device)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        return [F.linear(merge_heads(attended), wo, bo)]

    def candidates(self, case):
        return mha_candidates(case.payload)

    def weights_shape(self, case):
        p = case.payload
        return (p["Q"].shape[0], p["num_heads"], p["Q"].shape[1], p["K"].shape[1])


DRILL = MhaDrill.from_folder(__file__)
