"""Known mistakes, re-enacted: attention and MHA written wrong in the ways learners write them.

The judge runs these on a failing case's inputs (in the parent) and names the one whose output
the learner's matches. They compute in float64 unless a mistake is about precision, and leave
rows they cannot define (fully masked under -inf) as NaN, which matches anything.
"""

from __future__ import annotations

import math

import torch

from .attention import allowed_mask, merge_heads, split_heads

SCALES = {
    "sqrt_dk": lambda d_k, d_v, m: 1 / math.sqrt(d_k),
    "none": lambda d_k, d_v, m: 1.0,
    "dk": lambda d_k, d_v, m: 1 / d_k,
    "sqrt_dv": lambda d_k, d_v, m: 1 / math.sqrt(d_v),
    "sqrt_m": lambda d_k, d_v, m: 1 / math.sqrt(m),
    "over_dk_over_2": lambda d_k, d_v, m: 1 / d_k / 2,  # scores / d_k ** 1/2
    "over_half_dk": lambda d_k, d_v, m: 2 / d_k,  # scale = d_k ** 1/2; scores / scale
}
BLOCKS = (8, 16, 32, 64, 128)
"""Block sizes that block-wise attention is written with; a mistake shows past one block."""


def softmax_variant(scores: torch.Tensor, how: str, dim: int = -1) -> torch.Tensor:
    """Softmax done right ("stable") or in one of the ways that underflow or overflow."""
    if how == "stable":
        return torch.softmax(scores, dim=dim)
    if how == "no_max":
        exps = torch.exp(scores)
    elif how == "global_max":
        exps = torch.exp(scores - scores.max())
    else:  # "naive_logsumexp": exp(scores - log(sum(exp(scores)))), whose sum overflows
        return torch.exp(scores - torch.log(torch.exp(scores).sum(dim=dim, keepdim=True)))
    return exps / exps.sum(dim=dim, keepdim=True)


def as_key_padding(mask: torch.Tensor, scores: torch.Tensor) -> torch.Tensor | None:
    """A 2-D `(n, m)` mask misread as `(batch, m)` key padding (Hugging Face's key_padding_mask)
    and shaped to broadcast so over `scores` (or any tensor with the batch first); None where its
    first dim is not the batch's, so the misreading cannot happen."""
    if mask is None or mask.dim() != 2 or scores.dim() < 3 or mask.shape[0] != scores.shape[0]:
        return None
    return mask.reshape(mask.shape[0], *([1] * (scores.dim() - 2)), mask.shape[1])


def attention_variant(Q, K, V, mask=None, *, scale: str = "sqrt_dk", softmax_dim: int = -1,
                      mask_mode: str = "fill", softmax: str = "stable", dtype=torch.float64):
    """(output, weights) of SDPA with one knob turned the wrong way; None where the mistake
    cannot happen on these inputs (e.g. an additive reading of a bool mask)."""
    q, k, v = (t.to(dtype) for t in (Q, K, V))
    factor = SCALES[scale](q.shape[-1], v.shape[-1], k.shape[-2])
    scores = (q @ k.transpose(-2, -1)) * factor
    allowed = None if mask is None else allowed_mask(mask, scores.device)
    if allowed is not None:
        if mask_mode == "fill":
            scores = scores.masked_fill(~allowed, float("-inf"))
        elif mask_mode == "inverted":
            scores = scores.masked_fill(allowed, float("-inf"))
        elif mask_mode == "small_fill":
            scores = scores.masked_fill(~allowed, -1e4)
        elif mask_mode == "multiply":
            scores = scores * allowed
        elif mask_mode == "additive":  # a 0/1 mask added as if it were 0/-inf
            if mask.dtype == torch.bool:
                return None
            scores = scores + mask.to(dtype)
        elif mask_mode == "rank2_as_padding":
            shaped = as_key_padding(allowed, scores)
            if shaped is None:
                return None
            scores = scores.masked_fill(~shaped, float("-inf"))
        elif mask_mode == "rank3_as_batch":
            if allowed.dim() != 3 or scores.dim() != 4:
                return None
            try:
                scores = scores.masked_fill(~allowed.unsqueeze(1), float("-inf"))
            except RuntimeError:
                return None
    weights = softmax_variant(scores, softmax, softmax_dim)
    if allowed is not None and mask_mode == "after_softmax":
        weights = weights * allowed
    return weights @ v, weights


def remapped_mask_attention(Q, K, V, mask, block: int, axis: str):
    """Block-wise attention whose mask slice never moves with the block: every block of queries
    (axis "queries") or keys ("keys") reads the first block's mask rows or columns, or every
    chunk of the flattened batch x head items ("items") the first chunk's masks."""
    allowed = allowed_mask(mask)
    n, m = Q.shape[-2], K.shape[-2]
    if axis == "items":
        lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2], allowed.shape[:-2])
        items = math.prod(lead)
        if items <= block:
            return None
        flat = allowed.expand(*lead, n, m).reshape(items, n, m)
        wrong = flat.index_select(0, torch.arange(items) % block).reshape(*lead, n, m)
    elif axis == "queries":
        if allowed.shape[-2] != n or n <= block:
            return None
        wrong = allowed.index_select(-2, torch.arange(n) % block)
    else:
        if m <= block:
            return None
        lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
        full = allowed.expand(*lead, n, m)
        wrong = full.index_select(-1, torch.arange(m) % block)
    return attention_variant(Q, K, V, wrong)


def unrescaled_attention(Q, K, V, mask, block: int, keep_running_max: bool):
    """Block-wise (online) softmax that forgets to rescale what it summed under an older max."""
    q, k, v = (t.to(torch.float64) for t in (Q, K, V))
    n, m = q.shape[-2], k.shape[-2]
    if m <= block:
        return None
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    allowed = None if mask is None else allowed_mask(mask).expand(*lead, n, m)
    best = torch.full((*lead, n, 1), float("-inf"), dtype=torch.float64)
    total = torch.zeros((*lead, n, 1), dtype=torch.float64)
    acc = torch.zeros((*lead, n, v.shape[-1]), dtype=torch.float64)
    for start in range(0, m, block):
        s = q @ k[..., start:start + block, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        if allowed is not None:
            s = s.masked_fill(~allowed[..., start:start + block], float("-inf"))
        block_max = s.amax(dim=-1, keepdim=True)
        best = torch.maximum(best, block_max) if keep_running_max else block_max
        p = torch.exp(s - torch.nan_to_num(best, neginf=0.0))
        total = total + p.sum(dim=-1, keepdim=True)
        acc = acc + p @ v[..., start:start + block, :]
    return acc / total, attention_variant(Q, K, V, mask)[1]


def sdpa_candidates(Q, K, V, mask, case_dtype):
    """[(mistake id, thunk)] for every known SDPA mistake; a thunk returns (output, weights) or None."""
    out = []
    d_k, d_v, m = Q.shape[-1], V.shape[-1], K.shape[-2]

    def variant(**kwargs):
        return lambda: attention_variant(Q, K, V, mask, **kwargs)

    for mistake, kwargs in [
        ("no_scaling", {"scale": "none"}),
        ("scale_by_d_k", {"scale": "dk"}),
        ("scale_by_sqrt_d_v", {"scale": "sqrt_dv"}),
        ("scale_by_sqrt_m", {"scale": "sqrt_m"}),
        ("power_precedence", {"scale": "over_dk_over_2"}),
        ("power_precedence", {"scale": "over_half_dk"}),
        ("softmax_wrong_dim", {"softmax_dim": -2}),
        ("inverted_mask", {"mask_mode": "inverted"}),
        ("mask_ignored", {"mask_mode": "ignore"}),
        ("mask_after_softmax", {"mask_mode": "after_softmax"}),
        ("mask_leak", {"mask_mode": "small_fill"}),
        ("mask_leak", {"mask_mode": "multiply"}),
        ("additive_float_mask", {"mask_mode": "additive"}),
        ("mask_rank3_as_batch", {"mask_mode": "rank3_as_batch"}),
        ("mask_2d_as_key_padding", {"mask_mode": "rank2_as_padding"}),
        ("unstable_softmax", {"softmax": "no_max", "dtype": case_dtype}),
        ("unstable_softmax", {"softmax": "global_max", "dtype": case_dtype}),
        ("unstable_softmax", {"softmax": "naive_logsumexp", "dtype": case_dtype}),
    ]:
        if mask is None and kwargs.get("mask_mode"):
            continue
        if kwargs.get("scale") == "sqrt_dv" and d_k == d_v or kwargs.get("scale") == "sqrt_m" and d_k == m:
            continue
        out.append((mistake, variant(**kwargs)))

    def transposed(kind):
        def thunk():
            right, weights = attention_variant(Q, K, V, mask)
            if kind == "output":
                return right.transpose(-2, -1), weights
            if kind == "weights":
                return right, weights.transpose(-2, -1)
            return weights, weights
        return thunk

    out += [("transposed_output", transposed("output")), ("transposed_weights", transposed("weights")),
            ("returns_weights", transposed("returns_weights"))]
    if Q.dim() > 2 and Q.shape[0] == 1:  # unbatched inputs given a batch dim, then squeeze(0) for all
        def squeezed():
            right, weights = attention_variant(Q, K, V, mask)
            return right.squeeze(0), weights.squeeze(0)
        out.append(("batch_of_one_dropped", squeezed))
    for block in BLOCKS:
        out.append(("online_softmax_no_rescale", lambda b=block: unrescaled_attention(Q, K, V, mask, b, True)))
        out.append(("online_softmax_no_rescale", lambda b=block: unrescaled_attention(Q, K, V, mask, b, False)))
        if mask is not None:
            out.append(("chunk_mask_offset", lambda b=block: remapped_mask_attention(Q, K, V, mask, b, "queries")))
            out.append(("chunk_mask_offset", lambda b=block: remapped_mask_attention(Q, K, V, mask, b, "keys")))
            out.append(("chunk_mask_offset", lambda b=block: remapped_mask_attention(Q, K, V, mask, b, "items")))
    return out


ONE_TENSOR = "one tensor as Q, K and V"
"""Payload key of an MHA self-attention case called as `mha(x, x, x)`: code with a fast path for
`Q is K is V` (as nn.MultiheadAttention has) runs it only then; separate copies never reach it."""
ONE_MEMORY = "one tensor as K and V"
"""Payload key of an MHA cross-attention case called as `mha(x, memory, memory)`: code with a
fast path for `K is V` runs it only then."""


def mha_variant(payload: dict, *, split: str = "transpose", merge: str = "transpose",
                out_proj: bool = True, biases: str = "all", scale: str = "d_head",
                mask_mode: str = "fill", softmax_dim: int = -1, softmax: str = "stable",
                project_inputs: bool = True, causal_by_default: bool = False, dtype=torch.float64):
    """(output, weights) of multi-head attention with one step done wrong (float64 unless the
    mistake is about precision); None where the mistake cannot happen on this case.
    `causal_by_default`: `mha(x, x, x)` with no mask taken for a decoder's, masked causally."""
    weights = {name: (w.to(dtype).cpu(), b.to(dtype).cpu()) for name, (w, b) in payload["weights"].items()}
    heads = payload["num_heads"]
    Q, K, V = (payload[name].to(dtype).cpu() for name in ("Q", "K", "V"))
    batch, n, d_model = Q.shape
    m, d_head = K.shape[1], d_model // heads
    mask = payload.get("mask")

    def linear(x, name, is_output=False):
        w, b = weights[name]
        use_bias = biases == "all" or (biases == "no_qkv" and is_output) or (biases == "no_out" and not is_output)
        return x @ w.T + (b if use_bias else 0)

    def split_(x):
        if split == "transpose":
            return split_heads(x, heads)
        if split == "interleaved":
            return x.reshape(x.shape[0], x.shape[1], d_head, heads).permute(0, 3, 1, 2)
        if split == "across_heads":
            return x.reshape(x.shape[0], x.shape[1], heads, d_head)
        return x.reshape(x.shape[0], heads, x.shape[1], d_head)

    if split == "across_heads" and (mask is not None or n != m):
        return None
    if split == "packed":  # nn.MultiheadAttention's fast path for x, x, x, split per head first
        if not payload.get(ONE_TENSOR):
            return None
        packed = torch.cat([weights[name][0] for name in ("W_q", "W_k", "W_v")])
        bias = torch.cat([weights[name][1] for name in ("W_q", "W_k", "W_v")])
        qkv = (Q @ packed.T + bias).reshape(batch, n, heads, 3 * d_head).transpose(1, 2)
        q, k, v = qkv.chunk(3, dim=-1)
    elif split == "packed_kv":  # the same for `mha(x, memory, memory)`: K and V packed, split per head first
        if not payload.get(ONE_MEMORY):
            return None
        packed = torch.cat([weights[name][0] for name in ("W_k", "W_v")])
        bias = torch.cat([weights[name][1] for name in ("W_k", "W_v")])
        kv = (K @ packed.T + bias).reshape(batch, m, heads, 2 * d_head).transpose(1, 2)
        q = split_heads(linear(Q, "W_q"), heads)
        k, v = kv.chunk(2, dim=-1)
    else:
        project = linear if project_inputs else (lambda x, name: x)
        q, k, v = split_(project(Q, "W_q")), split_(project(K, "W_k")), split_(project(V, "W_v"))
    factor = {"d_head": 1 / math.sqrt(d_head), "d_model": 1 / math.sqrt(d_model), "none": 1.0,
              "over_d_head_over_2": 1 / d_head / 2, "over_half_d_head": 2 / d_head, "sqrt_m": 1 / math.sqrt(m)}[scale]
    scores = (q @ k.transpose(-2, -1)) * factor
    if causal_by_default:
        if mask is not None or not payload.get(ONE_TENSOR):
            return None
        scores = scores.masked_fill(~torch.ones(n, m, dtype=torch.bool).tril(), float("-inf"))
    elif mask is not None and mask_mode != "ignore":
        allowed = allowed_mask(mask).cpu()
        if mask_mode == "additive":
            if mask.dtype == torch.bool:
                return None
            scores = scores + mask.cpu().to(dtype)
        else:
            if mask_mode == "inverted":
                allowed = ~allowed
            if mask_mode == "heads_as_batch":
                per_batch = allowed.expand(batch, 1, n, m).reshape(batch, n, m)
                if per_batch.shape[0] != heads:
                    return None
                allowed = per_batch.unsqueeze(0)
            scores = scores.masked_fill(~allowed, float("-inf"))
    attn = softmax_variant(scores, softmax, softmax_dim)
    attended = attn @ v
    if split == "across_heads":
        merged = attended.reshape(batch, n, d_model)
    elif merge == "transpose":
        merged = merge_heads(attended)
    elif merge == "interleaved":
        merged = attended.permute(0, 2, 3, 1).reshape(batch, n, d_model)
    else:
        merged = attended.reshape(batch, n, d_model)
    output = linear(merged, "W_o", is_output=True) if out_proj else merged
    return output, attn


def mha_candidates(payload: dict):
    """[(mistake id, thunk)] for every known MHA mistake on this case."""
    out = []
    case_dtype = payload["Q"].dtype
    for mistake, kwargs in [
        ("split_without_transpose", {"split": "reshape"}),
        ("split_without_transpose", {"split": "reshape", "merge": "reshape"}),
        ("heads_not_transposed", {"split": "across_heads"}),
        ("split_interleaved", {"split": "interleaved"}),
        ("split_interleaved", {"split": "interleaved", "merge": "interleaved"}),
        ("packed_qkv_split", {"split": "packed"}),
        ("packed_qkv_split", {"split": "packed_kv"}),
        ("merge_without_transpose", {"merge": "reshape"}),
        ("merge_interleaved", {"merge": "interleaved"}),
        ("no_output_projection", {"out_proj": False}),
        ("missing_biases", {"biases": "none"}),
        ("missing_biases", {"biases": "no_qkv"}),
        ("missing_biases", {"biases": "no_out"}),
        ("inputs_already_projected", {"project_inputs": False}),
        ("scale_by_d_model", {"scale": "d_model"}),
        ("power_precedence", {"scale": "over_d_head_over_2"}),
        ("power_precedence", {"scale": "over_half_d_head"}),
        ("scale_by_sqrt_m", {"scale": "sqrt_m"}),
        ("no_scaling", {"scale": "none"}),
        ("mask_not_broadcast_over_heads", {"mask_mode": "heads_as_batch"}),
        ("mask_ignored", {"mask_mode": "ignore"}),
        ("inverted_mask", {"mask_mode": "inverted"}),
        ("additive_float_mask", {"mask_mode": "additive"}),
        ("softmax_wrong_dim", {"softmax_dim": -2}),
        ("unstable_softmax", {"softmax": "no_max", "dtype": case_dtype}),
        ("causal_by_default", {"causal_by_default": True}),
    ]:
        if payload.get("mask") is None and "mask_mode" in kwargs:
            continue
        if kwargs.get("scale") == "sqrt_m" and payload["K"].shape[1] == payload["d_model"] // payload["num_heads"]:
            continue  # sqrt(m) is sqrt(d_head) here: not a mistake on this case
        out.append((mistake, lambda kw=kwargs: mha_variant(payload, **kw)))

    def transposed_weights():
        output, attn = mha_variant(payload)
        return output, attn.transpose(-2, -1)

    out.append(("transposed_weights", transposed_weights))
    return out


_MISTAKES_OF = {"SDPA_MISTAKES": "sdpa", "MHA_MISTAKES": "mha"}


def __getattr__(name: str) -> dict[str, str]:
    """`SDPA_MISTAKES` and `MHA_MISTAKES`: the known mistakes named in those drills' `drill.toml`
    (kept importable for drills that extend them; the folder is the one place they live)."""
    if name not in _MISTAKES_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .catalog import CATALOG

    return dict(CATALOG[_MISTAKES_OF[name]].mistakes)

