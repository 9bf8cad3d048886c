"""The `gqa` drill: grouped-query attention on heads already projected, graded against the oracle.

Query head h reads KV head h // G, G = H // H_kv. The known mistakes are re-enacted as which KV
head (and which keys) each query head reads, so the diagnosis says which mapping the code used.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..attention import sdpa_oracle
from ..device_probe import PROBE
from ..grading import AGAIN, BIG, CORE, EXTRA, Case, CheckBook, plan_calls, shape_text
from ..tensor_drill import AttentionDrill, second_inputs

PUBLIC_SEED = 20260042
"""Seed of the fixed public cases, the same on every run."""
HUGE = 1e4
"""Scale of V at keys no query of a KV group may see (fits float16): a leak through the mask shows."""
CHECKS = {torch.float32: "values float32", torch.float64: "values float64",
          torch.float16: "float16 accuracy", torch.bfloat16: "bfloat16 accuracy"}


def kv_index(heads: int, kv_heads: int, mapping: str) -> torch.Tensor:
    """Which KV head each query head reads: "grouped" (right, h // G), "tiled" (h % H_kv, what
    `.repeat` gives) or "first" (KV head 0 for every query head)."""
    h = torch.arange(heads)
    if mapping == "grouped":
        return h // (heads // kv_heads)
    if mapping == "tiled":
        return h % kv_heads
    return torch.zeros_like(h)


def per_query_head(K: torch.Tensor, heads: int, mapping: str = "grouped") -> torch.Tensor:
    """`(B, H_kv, m, d)` -> `(B, H, m, d)`: every query head gets the KV head `mapping` gives it."""
    return K.index_select(1, kv_index(heads, K.shape[1], mapping).to(K.device))


def attend(q, k, v, allowed, factor: float):
    """(output, weights) of masked softmax attention in q's dtype; a fully masked row is NaN
    (matches anything when compared with a learner's output)."""
    scores = (q @ k.transpose(-2, -1)) * factor
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def gqa_oracle(Q, K, V, mask):
    """float64 (output, weights) on CPU; fully masked rows are zeros."""
    heads = Q.shape[1]
    q, k, v = (t.cpu().to(torch.float64) for t in (Q, K, V))
    return sdpa_oracle(q, per_query_head(k, heads), per_query_head(v, heads),
                       None if mask is None else mask.cpu(), return_weights=True)


def candidates(Q, K, V, mask) -> list[tuple[str, object]]:
    """[(mistake id, thunk)]: each thunk re-enacts a mistake in float64 and returns (output,
    weights), or None where the mistake cannot show on these inputs."""
    q, k, v = (t.cpu().to(torch.float64) for t in (Q, K, V))
    allowed = None if mask is None else mask.cpu()
    batch, heads, n, d = q.shape
    kv_heads, m, d_v = k.shape[1], k.shape[2], v.shape[-1]
    group = heads // kv_heads
    right = 1 / math.sqrt(d)

    def mapped(mapping):
        if mapping == "tiled" and kv_heads in (1, heads) or mapping == "first" and kv_heads == 1:
            return None
        return lambda: attend(q, per_query_head(k, heads, mapping), per_query_head(v, heads, mapping), allowed, right)

    def scaled(size):
        if size == d:
            return None
        return lambda: attend(q, per_query_head(k, heads), per_query_head(v, heads), allowed, 1 / math.sqrt(size))

    def copies_along_positions():
        """Group copies made along the sequence dim, then reshaped into heads (keys scrambled)."""
        if group == 1:
            return None
        scramble = lambda t: t.repeat_interleave(group, dim=2).reshape(batch, heads, t.shape[2], t.shape[3])  # noqa: E731
        return attend(q, scramble(k), scramble(v), allowed, right)

    def mask_without_group_dim():
        """Grouped (B, H_kv, G, n, m) scores masked by the 4-D mask as is: it aligns from the
        right, so its batch dim lands on the KV heads and its heads dim on the group."""
        if allowed is None or allowed.dim() != 4:
            return None
        scores_shape = (batch, kv_heads, group, n, m)
        try:
            if torch.broadcast_shapes(allowed.shape, scores_shape) != scores_shape:
                return None
        except RuntimeError:
            return None
        wrong = allowed.expand(scores_shape).reshape(batch, heads, n, m)
        return attend(q, per_query_head(k, heads), per_query_head(v, heads), wrong, right)

    out = [("repeat_not_interleave", mapped("tiled")), ("mqa_single_kv_head", mapped("first"))]
    out += [("scale_wrong_dim", scaled(size)) for size in sorted({heads * d, d_v, m, heads})]
    out.append(("no_scaling", lambda: attend(q, per_query_head(k, heads), per_query_head(v, heads), allowed, 1.0)))
    out += [("group_on_wrong_dim", copies_along_positions), ("mask_wrong_dim", mask_without_group_dim)]
    if allowed is not None:
        out.append(("mask_ignored", lambda: attend(q, per_query_head(k, heads), per_query_head(v, heads), None, right)))

    def leaky(how):
        """Blocked keys kept in the softmax: a finite fill (-1e4, which a score of -2e4 beats)
        or scores multiplied by the mask (a blocked score becomes 0)."""
        scores = (q @ per_query_head(k, heads).transpose(-2, -1)) * right
        scores = scores.masked_fill(~allowed, -1e4) if how == "fill" else scores * allowed
        weights = torch.softmax(scores, dim=-1)
        return weights @ per_query_head(v, heads), weights

    if allowed is not None:
        out += [("mask_leak", lambda: leaky("fill")), ("mask_leak", lambda: leaky("multiply"))]
    return [(mistake, thunk) for mistake, thunk in out if thunk is not None]


def _random_allowed(gen, shape, masked_row=False):
    allowed = torch.rand(shape, generator=gen) < 0.6
    first = torch.randint(0, shape[-1], shape[:-1], generator=gen)
    allowed.scatter_(-1, first.unsqueeze(-1), True)  # every query may attend to some key
    if masked_row:
        allowed[..., min(1, shape[-2] - 1), :] = False
    return allowed


def build_case(gen, name, *, batch=2, heads=4, kv_heads=2, n=5, m=6, d=8, d_v=None,
               dtype=torch.float32, mask=None, scores="normal", layout="contiguous", lengths=None,
               masked_row=False, tier=CORE, device="cpu", public=True, again=False) -> Case:
    """One case. `mask`: None, "causal" (n, m), "padding" (B, 1, 1, m), "random" (B, 1, n, m)
    or "per_head" (B, H, n, m), all bool. `layout="strided"`: Q as the transposed view a
    (B, n, H, d) projection gives, K shared across the batch as an expanded view, V stored
    transposed, the mask expanded to (B, H, n, m)."""
    d_v = d_v or d
    randn = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64)  # noqa: E731
    Q, K, V = randn(batch, heads, n, d), randn(batch, kv_heads, m, d), randn(batch, kv_heads, m, d_v)
    if scores == "large":  # |scores| around 100: exp() overflows without subtracting the row max
        Q, K = Q * 10.0, K * 10.0
    elif scores == "very_negative":  # every score near -2e4: a -1e4 fill would win the softmax
        push = math.sqrt(2e4 * math.sqrt(d) / d)
        Q, K = Q + push, K - push
    allowed = None
    if mask == "causal":
        allowed = torch.ones(n, m, dtype=torch.bool).tril()
    elif mask == "padding":
        drawn = torch.randint(1, m + 1, (batch,), generator=gen)
        drawn[0] = max(1, m - 1)
        chosen = drawn if lengths is None else torch.tensor(lengths)
        allowed = (torch.arange(m) < chosen[:, None]).reshape(batch, 1, 1, m)
    elif mask == "random":
        allowed = _random_allowed(gen, (batch, 1, n, m), masked_row)
    elif mask == "per_head":
        allowed = _random_allowed(gen, (batch, heads, n, m), masked_row)
    if allowed is not None:  # keys no query of a KV group may see get huge, distinct values
        seen = allowed.expand(batch, heads, n, m).reshape(batch, kv_heads, heads // kv_heads * n, m).any(dim=2)
        V = torch.where(~seen.unsqueeze(-1), HUGE * (1 + V.abs()), V)
    cast = lambda t: t.to(dtype).to(device)  # noqa: E731
    payload = {"Q": cast(Q), "K": cast(K), "V": cast(V), "mask": None if allowed is None else allowed.to(device)}
    if layout == "strided":
        payload["Q"] = payload["Q"].transpose(1, 2).contiguous().transpose(1, 2)
        payload["V"] = payload["V"].transpose(-2, -1).contiguous().transpose(-2, -1)
        if batch > 1:
            payload["K"] = payload["K"].narrow(0, 0, 1).expand(payload["K"].shape)
        if payload["mask"] is not None:
            payload["mask"] = payload["mask"].expand(batch, heads, n, m)
    kind = "MHA" if kv_heads == heads else "MQA" if kv_heads == 1 else f"GQA, groups of {heads // kv_heads}"
    mask_text = "no mask" if allowed is None else f"bool {mask} mask {shape_text(payload['mask'].shape)}"
    notes = (f"Q {shape_text(Q.shape)}, K {shape_text(K.shape)}, V {shape_text(V.shape)} ({kind}), "
             f"{str(dtype).replace('torch.', '')}, {mask_text}" + {"normal": "", "large": ", large scores", "very_negative": ", scores near -2e4"}[scores]
             + (", transposed and expanded views" if layout == "strided" else ""))
    # called again on other inputs: what an earlier call left shows
    plan_calls(payload, big=max(n, m) > BIG, core_public=tier == CORE and public,
               second=lambda: second_inputs(payload), again=again)
    return Case(name, payload, tier=tier, value_check=CHECKS[dtype], notes=notes, public=public, size=max(n, m))


def public_cases(device: str) -> list[Case]:
    """Fixed cases: GQA, MQA and MHA; every mask form; batch == H_kv where a mask's batch dim
    could be mistaken for the KV heads; large scores; lengths past 256; views."""
    gen = torch.Generator().manual_seed(PUBLIC_SEED)
    f32, f64 = torch.float32, torch.float64
    specs = [
        ("GQA, no mask", dict(batch=2, heads=4, kv_heads=2, n=5, m=6, d=8, dtype=f32)),
        ("MQA, causal", dict(batch=2, heads=4, kv_heads=1, n=5, m=5, d=4, dtype=f64, mask="causal")),
        ("MHA, padding", dict(batch=3, heads=3, kv_heads=3, n=4, m=6, d=4, dtype=f32, mask="padding")),
        ("groups of 3, d_v != d, per-batch mask", dict(batch=2, heads=6, kv_heads=2, n=4, m=7, d=4, d_v=6,
                                                       dtype=f64, mask="random")),
        ("groups of 4, per-head mask", dict(batch=2, heads=8, kv_heads=2, n=6, m=5, d=6, dtype=f32,
                                            mask="per_head")),
        ("groups of 2, padding, batch == H_kv", dict(batch=3, heads=6, kv_heads=3, n=3, m=9, d=4, d_v=3,
                                                     dtype=f32, mask="padding")),
        ("single query (decode step)", dict(batch=2, heads=8, kv_heads=4, n=1, m=7, d=8, dtype=f64)),
        ("single query, padding (decode step of a padded batch)", dict(batch=2, heads=8, kv_heads=4, n=1, m=7,
                                                                       d=8, dtype=f64, mask="padding")),
        ("large scores", dict(batch=2, heads=4, kv_heads=2, n=4, m=6, d=8, dtype=f32, scores="large",
                              mask="random")),
        ("large scores, past 64", dict(batch=2, heads=4, kv_heads=2, n=70, m=130, d=8, dtype=f32,
                                       scores="large", mask="random")),
        ("very negative scores", dict(batch=1, heads=2, kv_heads=1, n=3, m=6, d=4, dtype=f64,
                                      mask="padding", lengths=[3], scores="very_negative")),
        ("fully masked row", dict(batch=2, heads=4, kv_heads=2, n=3, m=4, d=4, dtype=f32, mask="random",
                                  masked_row=True)),
        ("float16", dict(batch=2, heads=4, kv_heads=2, n=4, m=6, d=8, dtype=torch.float16,
                         mask="random", tier=EXTRA)),
        ("bfloat16", dict(batch=2, heads=4, kv_heads=1, n=4, m=6, d=8, dtype=torch.bfloat16,
                          mask="causal", tier=EXTRA)),
        # Past any fixed buffer or block (64, 128, 256):
        ("long causal GQA, transposed and expanded views",
         dict(batch=2, heads=4, kv_heads=2, n=260, m=260, d=16, dtype=f32, mask="causal", layout="strided")),
        ("long keys MQA, per-item padding", dict(batch=3, heads=4, kv_heads=1, n=70, m=300, d=8, d_v=12,
                                                 dtype=f64, mask="padding", lengths=[300, 257, 5])),
        # a memo kept only for long inputs ("to save expanding them") shows on a long case called
        # again: as long as the longest case, whatever length the memo starts at
        ("long keys, called again", dict(batch=1, heads=4, kv_heads=2, n=5, m=300, d=8, dtype=f64, again=True)),
    ]
    cases = [build_case(gen, f"public {name}", device=device, **kwargs) for name, kwargs in specs]
    probe = build_case(gen, "public device probe", batch=2, heads=4, kv_heads=2, n=3, m=5, d=4,
                       dtype=f32, mask="random")
    probe.payload[PROBE] = True
    probe.payload.pop(AGAIN, None)
    probe.notes = "inputs on a stand-in device: every tensor must follow them"
    return cases + [probe]


def fresh_cases(seed: int, device: str, count: int = 4) -> list[Case]:
    """Random head counts, shapes, dtypes, masks and layouts drawn from `seed`."""
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(count):
        pick = lambda k: int(torch.randint(0, k, (1,), generator=gen))  # noqa: E731
        kv_heads, group = 1 + pick(3), 1 + pick(4)
        d = 2 + pick(7)
        kwargs = dict(batch=1 + pick(3), heads=kv_heads * group, kv_heads=kv_heads, n=1 + pick(40),
                      m=1 + pick(40), d=d, d_v=d + pick(3), dtype=[torch.float32, torch.float64][pick(2)],
                      mask=[None, "causal", "padding", "random", "per_head"][pick(5)],
                      scores=["normal", "large"][pick(2)], layout=["contiguous", "strided"][pick(2)])
        cases.append(build_case(gen, f"seed {seed} #{i + 1}", device=device, public=False, **kwargs))
    return cases


def heads_of(case: Case) -> tuple[int, int]:
    return case.payload["Q"].shape[1], case.payload["K"].shape[1]


class GqaDrill(AttentionDrill):
    """Grouped-query attention: `gqa_attention(Q, K, V, mask=None)`."""

    def public_cases(self, device: str) -> list[Case]:
        return public_cases(device)

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        return fresh_cases(seed, device)

    def oracle(self, case):
        p = case.payload
        return gqa_oracle(p["Q"], p["K"], p["V"], p["mask"])

    def same_dtype_references(self, case):
        p = case.payload
        heads = p["Q"].shape[1]
        k, v = per_query_head(p["K"], heads), per_query_head(p["V"], heads)
        fused = F.scaled_dot_product_attention(p["Q"], k, v, attn_mask=p["mask"])
        naive, _ = attend(p["Q"], k, v, p["mask"], 1 / math.sqrt(p["Q"].shape[-1]))
        return [fused, naive]

    def candidates(self, case):
        p = case.payload
        return candidates(p["Q"], p["K"], p["V"], p["mask"])

    def weights_shape(self, case):
        p = case.payload
        return (*p["Q"].shape[:-1], p["K"].shape[-2])

    def diagnose_errors(self, book: CheckBook):
        """Name code that raises on grouped heads: `.expand` on H_kv > 1 heads, or code written
        for H_kv == H (it runs on MHA cases and raises on the others)."""
        found = super().diagnose_errors(book)
        if found:
            return found
        errors = [(case, error) for case, error in book.errors if case.public] or book.errors
        messages = [str(error.get("message", "")) for _, error in errors]
        if "expand_kv_heads" in self.mistakes and any("expanded size of the tensor" in m for m in messages):
            return "expand_kv_heads", (
                "`.expand` only stretches dims of size 1, and K's heads dim has size H_kv: give K a new "
                "size-1 group dim after the KV heads, expand that, then merge: "
                "K[:, :, None].expand(B, H_kv, G, m, d).reshape(B, H, m, d) (or K.repeat_interleave(G, dim=1)).")
        unequal = [case for case, _ in book.errors if heads_of(case)[0] != heads_of(case)[1]]
        passing = {id(case) for case in book.passing_cases()}
        equal_ran = all(id(case) in passing for case in book.cases
                        if PROBE not in case.payload and heads_of(case)[0] == heads_of(case)[1])
        if "assumes_equal_heads" in self.mistakes and unequal and len(unequal) == len(book.errors) and equal_ran:
            case = unequal[0]
            heads, kv_heads = heads_of(case)
            return "assumes_equal_heads", (
                f"It runs when K and V have as many heads as Q and raises when they have fewer "
                f"({case.name}: H = {heads}, H_kv = {kv_heads}). Each KV head serves G = H // H_kv query "
                "heads: give every query head its KV head (h // G) before the matmul.")
        return None


DRILL = GqaDrill.from_folder(__file__)
