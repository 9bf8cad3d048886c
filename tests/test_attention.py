"""The reference kernels agree with PyTorch's own attention over many shapes and mask forms."""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from studyapp.kernels_loader import load_kernels  # noqa: E402

load_kernels()
from studyapp_kernels import attention as att  # noqa: E402

LEADING = [(), (2,), (2, 3)]
LENGTHS = [(1, 1), (1, 4), (4, 1), (3, 5), (5, 3)]


def random_qkv(leading, n, m, d_k=4, d_v=6, dtype=torch.float64, scale=1.0, seed=0):
    gen = torch.Generator().manual_seed(seed)
    Q = torch.randn(*leading, n, d_k, generator=gen, dtype=dtype) * scale
    K = torch.randn(*leading, m, d_k, generator=gen, dtype=dtype) * scale
    V = torch.randn(*leading, m, d_v, generator=gen, dtype=dtype)
    return Q, K, V


def random_allowed(shape, seed=1):
    """A random bool mask with at least one allowed key per row (no fully masked rows)."""
    gen = torch.Generator().manual_seed(seed)
    allowed = torch.rand(shape, generator=gen) < 0.6
    allowed[..., 0] = True
    return allowed


@pytest.mark.parametrize("leading,lengths", list(itertools.product(LEADING, LENGTHS)))
def test_oracle_matches_pytorch_without_mask(leading, lengths):
    Q, K, V = random_qkv(leading, *lengths)
    expected = F.scaled_dot_product_attention(Q, K, V)
    torch.testing.assert_close(att.sdpa_oracle(Q, K, V), expected)


@pytest.mark.parametrize("leading,lengths", list(itertools.product(LEADING, LENGTHS)))
@pytest.mark.parametrize("form", ["bool", "int", "float"])
def test_oracle_matches_pytorch_with_every_mask_form(leading, lengths, form):
    Q, K, V = random_qkv(leading, *lengths)
    allowed = random_allowed((*leading, *lengths))
    mask = {"bool": allowed, "int": allowed.long(), "float": allowed.double()}[form]
    # PyTorch: a bool mask uses our polarity (True = may attend); a float mask is ADDED to scores.
    additive = torch.zeros(allowed.shape, dtype=torch.float64).masked_fill(~allowed, float("-inf"))
    torch.testing.assert_close(att.sdpa_oracle(Q, K, V, mask),
                               F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed))
    torch.testing.assert_close(att.sdpa_oracle(Q, K, V, mask),
                               F.scaled_dot_product_attention(Q, K, V, attn_mask=additive))


def test_mask_broadcasts_over_leading_dims_and_queries():
    Q, K, V = random_qkv((2, 3), 4, 5)
    per_batch_keys = random_allowed((2, 1, 1, 5))
    torch.testing.assert_close(
        att.sdpa_oracle(Q, K, V, per_batch_keys),
        F.scaled_dot_product_attention(Q, K, V, attn_mask=per_batch_keys),
    )


def test_oracle_is_stable_with_scores_around_a_hundred():
    Q, K, V = random_qkv((2,), 3, 5, d_k=8, dtype=torch.float32, scale=6.0)
    scores = (Q.double() @ K.double().mT) / 8 ** 0.5
    assert scores.abs().max() > 80  # a softmax without max subtraction would overflow here
    out = att.sdpa_oracle(Q, K, V)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q.double(), K.double(), V.double()))


def test_oracle_computes_in_float64_whatever_the_input_dtype():
    Q, K, V = random_qkv((2,), 3, 4, dtype=torch.float16)
    out, weights = att.sdpa_oracle(Q, K, V, return_weights=True)
    assert out.dtype == weights.dtype == torch.float64
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q.double(), K.double(), V.double()))


def test_weights_are_a_distribution_over_allowed_keys():
    Q, K, V = random_qkv((2,), 4, 6)
    allowed = random_allowed((2, 4, 6))
    out, weights = att.sdpa_oracle(Q, K, V, allowed, return_weights=True)
    assert weights.shape == (2, 4, 6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, dtype=torch.float64))
    assert (weights[~allowed] == 0).all()
    torch.testing.assert_close(out, weights @ V)


def test_fully_masked_rows_give_zeros_like_pytorch():
    Q, K, V = random_qkv((), 3, 4)
    allowed = torch.ones(3, 4, dtype=torch.bool)
    allowed[1] = False
    out, weights = att.sdpa_oracle(Q, K, V, allowed, return_weights=True)
    assert (out[1] == 0).all() and (weights[1] == 0).all()
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed))
    assert att.fully_masked_rows(allowed, weights.shape).tolist() == [False, True, False]
    naive = (Q @ K.mT / 2).masked_fill(~allowed, float("-inf")).softmax(-1) @ V
    assert torch.isnan(naive[1]).all()  # why the drills report this row rather than fail it


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_path_matches_oracle(dtype):
    Q, K, V = random_qkv((2, 2), 5, 3, dtype=dtype)
    allowed = random_allowed((2, 1, 5, 3)).long()
    out = att.sdpa_fast(Q, K, V, allowed)
    assert out.dtype == dtype
    torch.testing.assert_close(out, att.sdpa_oracle(Q, K, V, allowed).to(dtype))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_causal_mask_matches_pytorch_is_causal(n):
    mask = att.causal_mask(n)
    assert mask.dtype == torch.bool and mask.shape == (n, n)
    assert mask.tolist() == [[j <= i for j in range(n)] for i in range(n)]
    Q, K, V = random_qkv((2,), n, n)
    torch.testing.assert_close(att.sdpa_oracle(Q, K, V, mask),
                               F.scaled_dot_product_attention(Q, K, V, is_causal=True))


def test_padding_mask_blocks_keys_at_or_past_the_length():
    mask = att.padding_mask([3, 1, 4], 4)
    assert mask.shape == (3, 1, 4)
    assert mask[:, 0].tolist() == [[True, True, True, False], [True, False, False, False],
                                   [True, True, True, True]]
    assert torch.equal(att.padding_mask(torch.tensor([3, 1, 4]), 4), mask)
    assert mask.expand(3, 4, 4).shape == (3, 4, 4)


def test_combine_masks_is_an_and_that_skips_none():
    causal = att.causal_mask(3)
    padding = att.padding_mask([2, 3], 3)
    combined = att.combine_masks(causal, None, padding.float())
    assert combined.shape == (2, 3, 3) and combined.dtype == torch.bool
    assert combined[0].tolist() == [[True, False, False], [True, True, False], [True, True, False]]
    assert torch.equal(combined[1], causal)
    assert att.combine_masks(None, None) is None


def _torch_mha(d_model, heads, weights):
    """An nn.MultiheadAttention carrying exactly our W_q..W_o and biases."""
    W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o = weights
    module = torch.nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.cat([W_q, W_k, W_v]))
        module.in_proj_bias.copy_(torch.cat([b_q, b_k, b_v]))
        module.out_proj.weight.copy_(W_o)
        module.out_proj.bias.copy_(b_o)
    return module.eval()


def _random_weights(d_model, seed=3):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(4):
        out.append(torch.randn(d_model, d_model, generator=gen, dtype=torch.float64) / d_model ** 0.5)
        out.append(torch.randn(d_model, generator=gen, dtype=torch.float64))
    return out


@pytest.mark.parametrize("batch,n,m,d_model,heads", [
    (1, 1, 1, 4, 1), (2, 3, 5, 8, 2), (2, 5, 3, 12, 3), (3, 4, 4, 8, 4), (1, 2, 6, 6, 2),
])
def test_mha_matches_torch_multihead_attention(batch, n, m, d_model, heads):
    weights = _random_weights(d_model)
    Q, K, V = random_qkv((batch,), n, m, d_k=d_model, d_v=d_model, seed=batch + n)
    expected, expected_w = _torch_mha(d_model, heads, weights)(Q, K, V, average_attn_weights=False)
    out, w = att.mha_forward(Q, K, V, *weights, num_heads=heads, return_weights=True)
    assert out.shape == (batch, n, d_model) and w.shape == (batch, heads, n, m)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(w, expected_w)


def test_mha_masks_translate_to_torch_polarity():
    batch, n, d_model, heads = 2, 4, 8, 2
    weights = _random_weights(d_model, seed=7)
    Q, K, V = random_qkv((batch,), n, n, d_k=d_model, d_v=d_model, seed=11)
    lengths = [4, 2]
    ours = att.combine_masks(att.causal_mask(n), att.padding_mask(lengths, n).unsqueeze(1))
    assert ours.shape == (batch, 1, n, n)
    # nn.MultiheadAttention: True = BLOCKED, for both attn_mask and key_padding_mask.
    blocked_keys = ~att.padding_mask(lengths, n)[:, 0]
    blocked_future = ~att.causal_mask(n)
    expected, expected_w = _torch_mha(d_model, heads, weights)(
        Q, K, V, key_padding_mask=blocked_keys, attn_mask=blocked_future, average_attn_weights=False)
    out, w = att.mha_forward(Q, K, V, *weights, num_heads=heads, mask=ours, return_weights=True)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(w, expected_w)
