"""cross_attention's "memory projected once" passes a module that projects the memory again on
every call handed a cache: it hands the whole block to `F.multi_head_attention_forward` with
`key=value=memory` and the cache as `static_k`/`static_v`. PyTorch projects `key` and `value`
with `W_k`/`W_v` first (`_in_projection`) and only then swaps in the static ones, so every
cached call runs two (batch * m, d_model) matmuls on the memory (counted with a dispatch mode:
mm (100, 8) twice for batch 2, m 50) and throws them away, which the statement fails "even if
its result is thrown away". `studyapp grade cross_attention` prints PASS, "memory projected
once 12 cases".

`MemoryReads` is a `TorchFunctionMode`: it sees the outer call, `multi_head_attention_forward`
(not in `PROJECTIONS`), and none of the calls made inside it (a mode is off while it handles a
call). Fused calls are allowed in this drill."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

# the cache is made once, then every call runs F.multi_head_attention_forward over the memory
# with the cache as static_k / static_v: right values, memory projected again each time
MEMORY_PROJECTED_INSIDE_A_LIBRARY_CALL = """
    import torch
    import torch.nn.functional as F
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
            if cache is None:
                cache = (self._split(self.W_k(memory)), self._split(self.W_v(memory)))
            k, v = cache
            flat = lambda t: t.reshape(batch * self.num_heads, t.shape[-2], self.d_head)
            out, _ = F.multi_head_attention_forward(
                x.transpose(0, 1), memory.transpose(0, 1), memory.transpose(0, 1), d_model, self.num_heads,
                None, torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias]), None, None, False, 0.0,
                self.W_o.weight, self.W_o.bias, training=False,
                key_padding_mask=None if src_mask is None else (src_mask == 0), need_weights=False,
                use_separate_proj_weight=True, q_proj_weight=self.W_q.weight, k_proj_weight=self.W_k.weight,
                v_proj_weight=self.W_v.weight, static_k=flat(k), static_v=flat(v))
            return out.transpose(0, 1), cache
"""


def test_memory_projected_inside_multi_head_attention_forward_fails_memory_projected_once(warm_grader, tmp_path: Path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(MEMORY_PROJECTED_INSIDE_A_LIBRARY_CALL))
    verdict = warm_grader.grade("cross_attention", path, device="cpu", seed=7, limits=grade_limits(timeout=30.0))
    row = next(c for c in verdict["checks"] if c["name"] == "memory projected once")
    assert verdict["status"] != "pass", verdict["summary"]
    assert row["status"] == "fail", row
