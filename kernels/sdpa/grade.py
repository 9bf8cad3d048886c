"""The `sdpa` drill: cases that expose every realistic mistake, graded against the oracle."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..attention import allowed_mask, sdpa_oracle
from ..device_probe import PROBE
from ..grading import AGAIN, BIG, CORE, EXTRA, Case, plan_calls, shape_text
from ..mistakes import attention_variant, sdpa_candidates
from ..tensor_drill import AttentionDrill, second_inputs

PUBLIC_SEED = 20240611
"""Seed of the fixed public cases, the same on every run; `make_cases(seed)` adds fresh ones."""
HUGE = 1e4
"""Scale of V at keys no query may attend to (fits float16): any leak through the mask shows."""


def _mask_tensor(allowed: torch.Tensor, kind: str) -> torch.Tensor:
    return {"bool": allowed, "int": allowed.to(torch.int64), "int32": allowed.to(torch.int32),
            "uint8": allowed.to(torch.uint8), "float": allowed.to(torch.float32),
            "float64": allowed.to(torch.float64)}[kind]


def _strided(tensor: torch.Tensor) -> torch.Tensor:
    """The same values stored transposed: a non-contiguous input, as a `.transpose` would give."""
    return tensor.transpose(-2, -1).contiguous().transpose(-2, -1)


def log_domain_attention(Q, K, V, allowed):
    """exp(scores - logsumexp(scores)) @ V in the inputs' dtype: as right as the fused kernel,
    a little less accurate on large scores (the subtraction of two large numbers rounds)."""
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return weights @ V


def _random_allowed(gen, shape, keep_rows=True):
    allowed = torch.rand(shape, generator=gen) < 0.6
    if keep_rows:  # every query may attend to at least one key
        first = torch.randint(0, shape[-1], shape[:-1], generator=gen)
        allowed.scatter_(-1, first.unsqueeze(-1), True)
    return allowed


def build_case(gen, name, *, leading=(), n=3, m=4, d_k=4, d_v=6, dtype=torch.float32,
               mask=None, mask_kind="bool", mask_shape=None, scores="normal", tier=CORE,
               masked_row=False, padding_length=None, lengths=None, layout="contiguous",
               device="cpu", public=True, again=False) -> Case:
    """One sdpa case; `mask` is None, "random", "causal", "padding" or "combined".

    `again`: called on other inputs after its own, though longer than `BIG` (a cache kept only
    for long masks, "to save rebuilding them", shows only on a long case called again).

    `layout="strided"` hands over Q and V stored transposed, K shared across the first leading
    dim as an expanded view, and the mask expanded to the full scores shape (all non-contiguous).
    """
    Q = torch.randn(*leading, n, d_k, generator=gen, dtype=torch.float64)
    K = torch.randn(*leading, m, d_k, generator=gen, dtype=torch.float64)
    V = torch.randn(*leading, m, d_v, generator=gen, dtype=torch.float64)
    if scores == "large":  # |scores| around 100: exp() overflows float32 without max subtraction
        scale = math.sqrt(100.0)
        Q, K = Q * scale, K * scale
    elif scores == "very_negative":  # every score near -2e4: a -1e4 fill would win the softmax
        push = math.sqrt(2e4 * math.sqrt(d_k) / d_k)
        Q, K = Q + push, K - push
    allowed = None
    if mask is not None:
        full = (*leading, n, m)
        shape = mask_shape or full
        if mask == "random":
            allowed = _random_allowed(gen, shape)
            if masked_row:
                allowed[..., min(1, n - 1), :] = False
        elif mask == "causal":
            allowed = torch.ones(n, m, dtype=torch.bool).tril().reshape(shape)
        else:
            batch = shape[0] if len(shape) > 2 else 1
            drawn = torch.randint(1, m + 1, (batch,), generator=gen)
            drawn[0] = padding_length or max(1, m - 1)
            lengths = drawn if lengths is None else torch.tensor(lengths)
            keys = torch.arange(m) < lengths[:, None]
            allowed = keys.reshape(*shape[:-2], 1, m) if len(shape) > 2 else keys.reshape(1, m)
            if mask == "combined":
                allowed = allowed & torch.ones(n, m, dtype=torch.bool).tril()
        never_seen = ~allowed.expand(full).any(dim=-2)  # (*leading, m): keys no query may see
        V = torch.where(never_seen.unsqueeze(-1), HUGE * (1 + V.abs()), V)  # distinct, so leaks differ
    payload = {"Q": Q.to(dtype).to(device), "K": K.to(dtype).to(device), "V": V.to(dtype).to(device),
               "mask": None if allowed is None else _mask_tensor(allowed, mask_kind).to(device)}
    if layout == "strided":
        payload["Q"], payload["V"] = _strided(payload["Q"]), _strided(payload["V"])
        if leading:
            payload["K"] = payload["K"].narrow(0, 0, 1).expand(payload["K"].shape)
        if payload["mask"] is not None:
            payload["mask"] = payload["mask"].expand(*leading, n, m)
    mask_text = "no mask" if allowed is None else f"{mask_kind} {mask} mask {shape_text(payload['mask'].shape)}"
    notes = (f"Q {shape_text(Q.shape)}, K {shape_text(K.shape)}, V {shape_text(V.shape)}, "
             f"{str(dtype).replace('torch.', '')}, {mask_text}" + (", large scores" if scores != "normal" else "")
             + (", transposed and expanded views" if layout == "strided" else ""))
    check = {torch.float32: "values float32", torch.float64: "values float64",
             torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}[dtype]
    # called again on other inputs: what an earlier call left shows
    plan_calls(payload, big=max(n, m) > BIG, core_public=tier == CORE and public,
               second=lambda: second_inputs(payload), again=again)
    return Case(name, payload, tier=tier, value_check=check, notes=notes, public=public, size=max(n, m))


def public_cases(device: str) -> list[Case]:
    """Fixed cases covering the issue's list: shapes, every mask form, large scores, leaks."""
    gen = torch.Generator().manual_seed(PUBLIC_SEED)
    f32, f64 = torch.float32, torch.float64
    specs = [
        ("unbatched", dict(n=3, m=3, d_k=4, d_v=4, dtype=f32)),
        ("n<m, d_k!=d_v", dict(leading=(2,), n=3, m=5, d_k=4, d_v=6, dtype=f32)),
        ("n>m, two leading dims", dict(leading=(2, 3), n=5, m=2, d_k=8, d_v=3, dtype=f64)),
        ("single query", dict(leading=(2,), n=1, m=4, d_k=4, d_v=2, dtype=f32, mask="random")),
        ("single key", dict(leading=(3,), n=4, m=1, d_k=2, d_v=5, dtype=f64)),
        ("causal bool, broadcast over batch and heads",
         dict(leading=(2, 2), n=5, m=5, d_k=4, d_v=3, dtype=f32, mask="causal", mask_shape=(5, 5))),
        ("padding int", dict(leading=(3,), n=4, m=4, d_k=4, d_v=6, dtype=f64, mask="padding",
                             mask_kind="int", mask_shape=(3, 1, 4))),
        ("causal+padding float", dict(leading=(2,), n=5, m=5, d_k=6, d_v=4, dtype=f32, mask="combined",
                                      mask_kind="float", mask_shape=(2, 1, 5))),
        ("random mask broadcast over heads", dict(leading=(2, 3), n=4, m=6, d_k=4, d_v=5, dtype=f64,
                                                  mask="random", mask_shape=(2, 1, 4, 6))),
        ("large scores", dict(leading=(2,), n=4, m=6, d_k=8, d_v=3, dtype=f32, mask="random",
                              scores="large")),
        ("large scores, no mask", dict(leading=(3,), n=3, m=5, d_k=8, d_v=4, dtype=f32, scores="large")),
        ("very negative scores", dict(n=3, m=6, d_k=4, d_v=3, dtype=f64, mask="padding",
                                      mask_shape=(1, 6), padding_length=3, scores="very_negative")),
        ("int32 mask, fully masked row", dict(leading=(2,), n=3, m=4, d_k=4, d_v=2, dtype=f32,
                                              mask="random", mask_kind="int32", masked_row=True)),
        ("float16", dict(leading=(2,), n=4, m=6, d_k=8, d_v=4, dtype=torch.float16, mask="random",
                         tier=EXTRA)),
        ("bfloat16", dict(leading=(2,), n=4, m=6, d_k=8, d_v=4, dtype=torch.bfloat16,
                          mask="causal", mask_shape=(4, 6), tier=EXTRA)),
        # Past any fixed buffer, block or small integer type (8, 10, 32, 64, 128, 256):
        ("long keys, per-item padding", dict(leading=(4,), n=130, m=300, d_k=24, d_v=40, dtype=f32,
                                             mask="padding", mask_kind="int", mask_shape=(4, 1, 300),
                                             lengths=[300, 257, 129, 1])),
        ("long queries, 2-D mask", dict(leading=(2, 3), n=257, m=70, d_k=16, d_v=8, dtype=f64,
                                        mask="random", mask_kind="uint8", mask_shape=(257, 70))),
        ("causal, transposed and expanded views", dict(leading=(2, 2), n=200, m=200, d_k=32, d_v=20,
                                                       dtype=f32, mask="causal", mask_shape=(200, 200),
                                                       layout="strided")),
        ("no mask, past 64", dict(leading=(3,), n=100, m=129, d_k=8, d_v=12, dtype=f32)),
        ("a batch of one", dict(leading=(1,), n=4, m=5, d_k=8, d_v=8, dtype=f64, mask="causal",
                                mask_shape=(4, 5))),  # its leading 1 stays: no squeeze
        ("long keys, called again", dict(leading=(2,), n=5, m=300, d_k=8, d_v=4, dtype=f64, mask="random",
                                         again=True)),
        # large scores at every size: a softmax that streams long rows must keep its max too
        ("large scores, past 64", dict(leading=(2,), n=70, m=130, d_k=8, d_v=6, dtype=f32, mask="random",
                                       scores="large")),
        # more batch x head items than a chunk of 64 (each with a mask of its own)
        ("80 batch x head items, a mask each", dict(leading=(5, 16), n=3, m=4, d_k=4, d_v=3, dtype=f32,
                                                    mask="random")),
        ("3-D mask over heads", dict(leading=(3, 3), n=9, m=11, d_k=4, d_v=5, dtype=f32, mask="random",
                                     mask_kind="float64", mask_shape=(3, 9, 11))),
        # a (n, m) mask whose first dim is also the batch's: still (n, m), not (batch, m) padding
        ("2-D mask, as many queries as the batch", dict(leading=(3,), n=3, m=5, d_k=4, d_v=3, dtype=f64,
                                                        mask="random", mask_shape=(3, 5))),
    ]
    cases = [build_case(gen, f"public {name}", device=device, **kwargs) for name, kwargs in specs]
    probe = build_case(gen, "public device probe", leading=(2,), n=5, m=7, d_k=4, d_v=3, dtype=f32,
                       mask="random", mask_shape=(2, 5, 7), device="cpu")
    probe.payload[PROBE] = True
    probe.payload.pop(AGAIN, None)
    probe.notes = "inputs on a stand-in device: every tensor must follow them"
    return cases + [probe]


def fresh_cases(seed: int, device: str, count: int = 4) -> list[Case]:
    """Random shapes, dtypes and mask forms drawn from `seed` (new on every run)."""
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(count):
        pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
        leading = [(), (2,), (2, 3)][pick(3)]
        n, m = 1 + pick(40), 1 + pick(40)
        d_k = 2 + pick(6)
        d_v = d_k + 1 + pick(3)
        mask = [None, "random", "causal", "padding", "combined"][pick(5)]
        mask_shape = None
        if mask == "causal":
            mask_shape = (n, m)
        elif mask in ("padding", "combined"):
            mask_shape = (*leading[:1], 1, m) if leading else (1, m)
            if len(leading) == 2:
                mask_shape = (leading[0], 1, 1, m)
        kwargs = dict(leading=leading, n=n, m=m, d_k=d_k, d_v=d_v, mask=mask, mask_shape=mask_shape,
                      dtype=[torch.float32, torch.float64][pick(2)],
                      mask_kind=["bool", "int", "float"][pick(3)],
                      scores=["normal", "large"][pick(2)], layout=["contiguous", "strided"][pick(2)])
        cases.append(build_case(gen, f"seed {seed} #{i + 1}", device=device, public=False, **kwargs))
    return cases


class SdpaDrill(AttentionDrill):
    """The learner's function against the float64 oracle, on the public cases and the seed's fresh ones."""

    def public_cases(self, device: str) -> list[Case]:
        return public_cases(device)

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        return fresh_cases(seed, device)

    def oracle(self, case):
        p = case.payload
        return sdpa_oracle(p["Q"].cpu(), p["K"].cpu(), p["V"].cpu(),
                           None if p["mask"] is None else p["mask"].cpu(), return_weights=True)

    def same_dtype_references(self, case):
        p = case.payload
        allowed = None if p["mask"] is None else allowed_mask(p["mask"], p["Q"].device)
        fused = F.scaled_dot_product_attention(p["Q"], p["K"], p["V"], attn_mask=allowed)
        naive, _ = attention_variant(p["Q"], p["K"], p["V"], allowed, dtype=p["Q"].dtype)
        return [fused, naive, log_domain_attention(p["Q"], p["K"], p["V"], allowed)]

    def candidates(self, case):
        p = case.payload
        mask = None if p["mask"] is None else p["mask"].cpu()
        return sdpa_candidates(p["Q"].cpu(), p["K"].cpu(), p["V"].cpu(), mask, p["Q"].dtype)

    def weights_shape(self, case):
        p = case.payload
        return (*torch.broadcast_shapes(p["Q"].shape[:-2], p["K"].shape[:-2]), p["Q"].shape[-2], p["K"].shape[-2])


DRILL = SdpaDrill.from_folder(__file__)
