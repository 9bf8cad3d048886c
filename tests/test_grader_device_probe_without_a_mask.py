"""Each drill's device probe is one call, with a mask; code that makes a tensor on the
default device only when no mask is given (`if mask is None: mask = torch.ones(n, m)`, a common
way to share one masked path) is never audited, and passes on CPU. On a GPU its
`masked_fill` meets a CPU mask of two dims and raises ("Expected all tensors to be on the same
device"): the mistake is `hard_coded_device`, which the probe exists to catch without a GPU.
(mha's probe catches the same file; sdpa's, gqa's and cross_attention's do not.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

BODY = """
    if mask is None:
        mask = torch.ones(Q.shape[-2], K.shape[-2], dtype=torch.bool)  # no device=: the default one
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    allowed = mask if mask.dtype == torch.bool else mask != 0
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1)) @ V
"""

SOURCES = {
    "sdpa": "import math, torch\ndef scaled_dot_product_attention(Q, K, V, mask=None):" + BODY,
    "gqa": "import math, torch\ndef gqa_attention(Q, K, V, mask=None):\n"
           "    group = Q.shape[1] // K.shape[1]\n"
           "    K, V = K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1)" + BODY,
    # cross_attention's probe has a source mask too: the same mistake when src_mask is None
    "cross_attention": """import math
import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, y):
        batch, length, _ = y.shape
        return y.reshape(batch, length, self.num_heads, self.d_head).transpose(1, 2)

    def forward(self, x, memory, src_mask=None, cache=None):
        batch, n, d_model = x.shape
        if src_mask is None:
            src_mask = torch.ones(batch, memory.shape[1], dtype=torch.bool)  # no device=
        if cache is None:
            cache = (self._split(self.W_k(memory)), self._split(self.W_v(memory)))
        k, v = cache
        q = self._split(self.W_q(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        scores = scores.masked_fill((src_mask == 0)[:, None, None, :], float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        merged = (weights @ v).transpose(1, 2).reshape(batch, n, d_model)
        return self.W_o(merged), cache
""",
}


@pytest.mark.parametrize("drill", sorted(SOURCES))
def test_a_default_device_mask_made_only_without_a_mask_fails_the_device_check(warm_grader, tmp_path: Path, drill):
    verdict = grade_source(warm_grader, tmp_path, drill, SOURCES[drill])
    assert verdict["status"] == "fail", verdict
    device = [row for row in verdict["checks"] if row["name"] == "device"]
    assert device and device[0]["status"] == "fail", verdict["checks"]
