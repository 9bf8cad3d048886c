"""sdpa's scores reach +-100 only in small cases (n, m <= 40): every case past 64 has normal
scores. Code that streams over key chunks for long inputs (a memory saving, never the whole
(n, m) matrix) and forgets the max there (`exp(s)` summed as is) passes, although exp(100)
overflows float32 (inf / inf = NaN) on any long sequence with large scores: the statement's
"keep the softmax numerically stable" holds at every size, and the mistake (`unstable_softmax`)
is one the drill names. The same shape of bug as "in place only on long inputs"."""

from __future__ import annotations

import math

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

UNSTABLE_WHEN_LONG = """
    import math, torch
    CHUNK = 64
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scale = 1 / math.sqrt(Q.shape[-1])
        m = K.shape[-2]
        allowed = None if mask is None else mask != 0
        if m <= CHUNK:  # short: the plain (stable) softmax
            s = Q @ K.transpose(-2, -1) * scale
            if allowed is not None:
                s = s.masked_fill(~allowed, float("-inf"))
            return torch.nan_to_num(torch.softmax(s, -1)) @ V
        # long keys: stream over key chunks, never the whole (n, m) matrix -- but no max subtracted
        num, den = None, None
        for ks in range(0, m, CHUNK):
            e = torch.exp(Q @ K[..., ks:ks + CHUNK, :].transpose(-2, -1) * scale)
            if allowed is not None:
                e = e * allowed[..., ks:ks + CHUNK].to(e.dtype)
            part_num, part_den = e @ V[..., ks:ks + CHUNK, :], e.sum(-1, keepdim=True)
            num = part_num if num is None else num + part_num
            den = part_den if den is None else den + part_den
        return torch.where(den > 0, num / den.clamp_min(torch.finfo(den.dtype).tiny), torch.zeros_like(num))
"""


def test_the_long_path_really_is_unstable(tmp_path):
    """The code above is wrong: on 100 keys with scores near +-100 it returns NaN."""
    import textwrap

    import torch

    namespace: dict = {}
    exec(textwrap.dedent(UNSTABLE_WHEN_LONG), namespace)
    gen = torch.Generator().manual_seed(0)
    Q = torch.randn(2, 8, 16, generator=gen) * 10
    K = torch.randn(2, 100, 16, generator=gen) * 10
    V = torch.randn(2, 100, 4, generator=gen)
    out = namespace["scaled_dot_product_attention"](Q, K, V)
    right = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(16), -1) @ V
    assert not torch.allclose(out, right, equal_nan=False)


def test_an_unstable_softmax_only_on_long_inputs_fails(warm_grader, tmp_path):
    verdict = grade_source(warm_grader, tmp_path, "sdpa", UNSTABLE_WHEN_LONG)
    assert verdict["status"] == "fail", verdict


GQA_UNSTABLE_WHEN_LONG = """
    import math, torch
    def gqa_attention(Q, K, V, mask=None):
        g = Q.shape[1] // K.shape[1]
        K, V = K.repeat_interleave(g, 1), V.repeat_interleave(g, 1)
        s = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask.bool(), float("-inf"))
        if s.shape[-1] > 64:  # long rows: exp() as is, no max subtracted
            e = torch.exp(s)
            w = e / e.sum(-1, keepdim=True)
        else:
            w = torch.softmax(s, -1)
        return torch.nan_to_num(w) @ V
"""

BACKWARD_UNSTABLE_WHEN_LONG = """
    import math, torch
    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        if scale is None:
            scale = 1 / math.sqrt(Q.shape[-1])
        S = Q @ K.transpose(-2, -1) * scale
        if mask is not None:
            S = S.masked_fill(~mask, float("-inf"))
        if S.shape[-1] > 64:  # long rows: exp() as is, no max subtracted
            E = torch.exp(S)
            P = E / E.sum(-1, keepdim=True)
        else:
            P = torch.softmax(S, dim=-1)
        P = torch.where(torch.isnan(P), torch.zeros_like(P), P)
        dV = P.transpose(-2, -1) @ dO
        dP = dO @ V.transpose(-2, -1)
        dS = P * (dP - (dP * P).sum(dim=-1, keepdim=True))
        return dS @ K * scale, dS.transpose(-2, -1) @ Q * scale, dV
"""


@pytest.mark.parametrize("drill, source", [("gqa", GQA_UNSTABLE_WHEN_LONG),
                                           ("attention_backward", BACKWARD_UNSTABLE_WHEN_LONG)],
                         ids=["gqa", "attention_backward"])
def test_other_drills_an_unstable_softmax_only_on_long_rows_fails(warm_grader, tmp_path, drill, source):
    """gqa and attention_backward: the same gap (large scores only on rows of at most 64 keys)."""
    verdict = grade_source(warm_grader, tmp_path, drill, source)
    assert verdict["status"] == "fail", verdict
