"""The gqa drill's own promises, beyond the dev check: its oracle maps query head h to KV head
h // G (checked against PyTorch's own enable_gqa and by perturbing one KV head), and the public
cases hold a batch equal to H_kv, where a mask on the wrong dim gives wrong values, not an error."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
from studyapp_kernels.gqa.grade import gqa_oracle  # noqa: E402


def test_the_oracle_agrees_with_pytorchs_grouped_attention():
    gen = torch.Generator().manual_seed(3)
    Q = torch.randn(2, 6, 5, 4, generator=gen, dtype=torch.float64)
    K = torch.randn(2, 2, 7, 4, generator=gen, dtype=torch.float64)
    V = torch.randn(2, 2, 7, 3, generator=gen, dtype=torch.float64)
    mask = torch.rand(2, 1, 5, 7, generator=gen) < 0.7
    mask[..., 0] = True
    out, weights = gqa_oracle(Q, K, V, mask)
    assert torch.allclose(out, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, enable_gqa=True))
    assert weights.shape == (2, 6, 5, 7)


def test_changing_one_kv_head_changes_exactly_its_group():
    gen = torch.Generator().manual_seed(4)
    Q = torch.randn(1, 8, 3, 4, generator=gen, dtype=torch.float64)
    K = torch.randn(1, 2, 5, 4, generator=gen, dtype=torch.float64)
    V = torch.randn(1, 2, 5, 4, generator=gen, dtype=torch.float64)
    before, _ = gqa_oracle(Q, K, V, None)
    V2 = V.clone()
    V2[:, 1] += 1.0
    after, _ = gqa_oracle(Q, K, V2, None)
    changed = [h for h in range(8) if not torch.equal(before[:, h], after[:, h])]
    assert changed == [4, 5, 6, 7]  # G = 4: heads 4..7 read KV head 1


def test_a_public_case_can_show_a_mask_on_the_kv_heads_dim():
    cases = [c for c in kernels.DRILLS["gqa"].make_cases(0, "cpu") if c.public and "probe" not in c.payload]
    assert any(c.payload["mask"] is not None and c.payload["mask"].dim() == 4 and c.payload["mask"].shape[0] > 1
               and c.payload["Q"].shape[0] == c.payload["K"].shape[1] for c in cases)
    assert {c.payload["K"].shape[1] == 1 for c in cases} == {True, False}  # MQA and not
    assert max(c.size for c in cases) > 256
