"""Known mistakes, re-enacted: attention and MHA written wrong in the ways learners write them.

The judge runs these on a failing case's inputs (in the parent) and names the one whose output
the learner's matches. They compute in float64 unless a mistake is about precision, and leave
rows they cannot define (fully masked under -inf) as NaN, which matches anything.
"""

from __future__ import annotations

import math

import torch

from .attention import allowed_mask, merge_heads, split_heads


def attention_variant(Q, K, V, mask=None, *, scale: str = "sqrt_dk", softmax_dim: int = -1,
                      mask_mode: str = "fill", unstable: bool = False, dtype=torch.float64):
    """(output, weights) of SDPA with one knob turned the wrong way."""
    q, k, v = (t.to(dtype) for t in (Q, K, V))
    factor = {"sqrt_dk": 1 / math.sqrt(q.shape[-1]), "none": 1.0, "dk": 1 / q.shape[-1],
              "sqrt_dv": 1 / math.sqrt(v.shape[-1])}[scale]
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
    if unstable:
        exps = torch.exp(scores)
        weights = exps / exps.sum(dim=softmax_dim, keepdim=True)
    else:
        weights = torch.softmax(scores, dim=softmax_dim)
    if allowed is not None and mask_mode == "after_softmax":
        weights = weights * allowed
    return weights @ v, weights


SDPA_MISTAKES = {
    "no_scaling": "no scaling: the scores are not divided by sqrt(d_k)",
    "scale_by_d_k": "scaling by d_k instead of sqrt(d_k)",
    "scale_by_sqrt_d_v": "scaling by sqrt(d_v) (V's last dim) instead of sqrt(d_k)",
    "softmax_wrong_dim": "softmax over the wrong dim (queries, dim=-2) instead of the keys (dim=-1)",
    "inverted_mask": "inverted mask: blocking where the mask is 1/True instead of 0/False",
    "mask_ignored": "the mask is ignored",
    "mask_after_softmax": "the mask is applied after the softmax (weights no longer sum to 1)",
    "mask_leak": "attention leaks through the mask (a finite fill like -1e4, or scores multiplied by the mask)",
    "unstable_softmax": "unstable softmax: exp() of raw scores overflows to inf/NaN on large scores (subtract the row max)",
    "transposed_output": "transposed output: (*, d_v, n) instead of (*, n, d_v)",
    "returns_weights": "missing the multiplication by V: the attention weights are returned as the output",
}


def sdpa_candidates(Q, K, V, mask, case_dtype):
    """[(mistake id, output, weights)] for every known SDPA mistake on these inputs."""
    out = []
    for mistake, kwargs in [
        ("no_scaling", {"scale": "none"}),
        ("scale_by_d_k", {"scale": "dk"}),
        ("scale_by_sqrt_d_v", {"scale": "sqrt_dv"}),
        ("softmax_wrong_dim", {"softmax_dim": -2}),
        ("inverted_mask", {"mask_mode": "inverted"}),
        ("mask_ignored", {"mask_mode": "ignore"}),
        ("mask_after_softmax", {"mask_mode": "after_softmax"}),
        ("mask_leak", {"mask_mode": "small_fill"}),
        ("mask_leak", {"mask_mode": "multiply"}),
        ("unstable_softmax", {"unstable": True, "dtype": case_dtype}),
    ]:
        if mask is None and kwargs.get("mask_mode"):
            continue
        if Q.shape[-1] == V.shape[-1] and kwargs.get("scale") == "sqrt_dv":
            continue
        output, weights = attention_variant(Q, K, V, mask, **kwargs)
        out.append((mistake, output, weights))
    right, weights = attention_variant(Q, K, V, mask)
    out.append(("transposed_output", right.transpose(-2, -1), weights))
    out.append(("returns_weights", weights, weights))
    return out


MHA_MISTAKES = {
    "split_without_transpose": "heads split without transposing: .view(batch, heads, seq, d_head) mixes positions across heads",
    "merge_without_transpose": "heads merged without transposing back: .view(batch, seq, d_model) on (batch, heads, seq, d_head)",
    "no_output_projection": "missing the output projection W_o",
    "missing_biases": "the Linear biases are not applied (using .weight only)",
    "scale_by_d_model": "scaling by sqrt(d_model) instead of sqrt(d_head)",
    "mask_not_broadcast_over_heads": "the mask is not broadcast over heads (its batch dim lands on the heads dim)",
    "no_scaling": "no scaling: the scores are not divided by sqrt(d_head)",
    "mask_ignored": "the mask is ignored",
    "inverted_mask": "inverted mask: blocking where the mask is 1/True instead of 0/False",
    "softmax_wrong_dim": "softmax over the wrong dim (queries) instead of the keys",
}


def mha_variant(payload: dict, *, split: str = "transpose", merge: str = "transpose",
                out_proj: bool = True, biases: str = "all", scale: str = "d_head",
                mask_mode: str = "fill", softmax_dim: int = -1):
    """(output, weights) of multi-head attention with one step done wrong, in float64."""
    weights = {name: (w.to(torch.float64).cpu(), b.to(torch.float64).cpu())
               for name, (w, b) in payload["weights"].items()}
    heads = payload["num_heads"]
    Q, K, V = (payload[name].to(torch.float64).cpu() for name in ("Q", "K", "V"))

    def linear(x, name, is_output=False):
        w, b = weights[name]
        use_bias = biases == "all" or (biases == "no_qkv" and is_output) or (biases == "no_out" and not is_output)
        return x @ w.T + (b if use_bias else 0)

    def split_(x):
        if split == "transpose":
            return split_heads(x, heads)
        batch, seq, d_model = x.shape
        return x.reshape(batch, heads, seq, d_model // heads)

    q, k, v = split_(linear(Q, "W_q")), split_(linear(K, "W_k")), split_(linear(V, "W_v"))
    d_model = Q.shape[-1]
    factor = {"d_head": 1 / math.sqrt(q.shape[-1]), "d_model": 1 / math.sqrt(d_model), "none": 1.0}[scale]
    scores = (q @ k.transpose(-2, -1)) * factor
    mask = payload.get("mask")
    if mask is not None and mask_mode != "ignore":
        allowed = allowed_mask(mask).cpu()
        if mask_mode == "inverted":
            allowed = ~allowed
        if mask_mode == "heads_as_batch":
            batch, n, m = scores.shape[0], scores.shape[-2], scores.shape[-1]
            per_batch = allowed.expand(batch, 1, n, m).reshape(batch, n, m)
            if per_batch.shape[0] != heads:
                return None
            allowed = per_batch.unsqueeze(0)
        scores = scores.masked_fill(~allowed, float("-inf"))
    attn = torch.softmax(scores, dim=softmax_dim)
    attended = attn @ v
    if merge == "transpose":
        merged = merge_heads(attended)
    else:
        batch, _, n, _ = attended.shape
        merged = attended.reshape(batch, n, d_model)
    output = linear(merged, "W_o", is_output=True) if out_proj else merged
    return output, attn


def mha_candidates(payload: dict):
    """[(mistake id, output, weights)] for every known MHA mistake on this case."""
    out = []
    for mistake, kwargs in [
        ("split_without_transpose", {"split": "reshape"}),
        ("merge_without_transpose", {"merge": "reshape"}),
        ("split_without_transpose", {"split": "reshape", "merge": "reshape"}),
        ("no_output_projection", {"out_proj": False}),
        ("missing_biases", {"biases": "none"}),
        ("missing_biases", {"biases": "no_qkv"}),
        ("missing_biases", {"biases": "no_out"}),
        ("scale_by_d_model", {"scale": "d_model"}),
        ("no_scaling", {"scale": "none"}),
        ("mask_not_broadcast_over_heads", {"mask_mode": "heads_as_batch"}),
        ("mask_ignored", {"mask_mode": "ignore"}),
        ("inverted_mask", {"mask_mode": "inverted"}),
        ("softmax_wrong_dim", {"softmax_dim": -2}),
    ]:
        if payload.get("mask") is None and "mask_mode" in kwargs:
            continue
        result = mha_variant(payload, **kwargs)
        if result is not None:
            out.append((mistake, *result))
    return out
