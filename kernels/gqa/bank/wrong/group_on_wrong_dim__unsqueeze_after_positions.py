"""repeat_kv with the new dim after the positions: x[:, :, :, None] instead of x[:, :, None]."""
import torch.nn.functional as F


def repeat_kv(x, n_rep):
    b, h_kv, m, d = x.shape
    return x[:, :, :, None, :].expand(b, h_kv, m, n_rep, d).reshape(b, h_kv * n_rep, m, d)


def gqa_attention(Q, K, V, mask=None):
    n_rep = Q.shape[1] // K.shape[1]
    return F.scaled_dot_product_attention(Q, repeat_kv(K, n_rep), repeat_kv(V, n_rep), attn_mask=mask)
