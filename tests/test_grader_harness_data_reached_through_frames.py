"""Known gap, kept as strict expected failures: learner code walks its frames up to the
child's harness and changes what it records: it empties the device probe's list of problems, or
drops the payload keys from which the harness decides what to watch (flash_attention's
"cap"/"skip"/"tiles", safe_softmax's "g_softmax"/"g_lse"). Each file is wrong code; today each
passes. When a fix makes one fail as it should, its mark goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

KNOWN_GAP = pytest.mark.xfail(strict=True, reason=(
    "learner code can still reach the harness's objects through its own frames (studyapp/grader/"
    "guard.py says what is refused; refusing frames refused torch's own use of them too)"))

# hard-codes the host device (`.cpu()`), then empties the device probe's list of problems
# (the `audit` local of `kernels.device_probe.probe_result`, a frame above the call)
PROBE_PROBLEMS_CLEARED = """
    import math, sys, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask.cpu() == 0, float("-inf"))
        out = (torch.nan_to_num(torch.softmax(scores, -1)) @ V).cpu()
        frame = sys._getframe()
        while frame is not None:
            audit = frame.f_locals.get("audit")
            if audit is not None and hasattr(audit, "problems"):
                audit.problems.clear()
            frame = frame.f_back
        return out
"""

FIND_PAYLOADS = """
    import sys
    frame = sys._getframe()
    while frame is not None and "payloads" not in frame.f_locals:
        frame = frame.f_back
    PAYLOADS = frame.f_locals["payloads"]
"""

# the full score matrix at once (flash_attention's bank: full_score_matrix); the child's copy of
# every payload loses "cap", "skip" and "tiles", from which the harness decides to record ops
# (`watched` in FlashAttentionDrill.run_case): the record says 0 elements and 0 work, which the
# parent grades as under the memory cap, causal blocks skipped, tiles not judged
UNWATCHED_FULL_MATRIX = FIND_PAYLOADS + """
    for payload in PAYLOADS:
        for key in ("cap", "skip", "tiles"):
            payload.pop(key, None)
    import math, torch
    def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
        n, m = Q.shape[-2], K.shape[-2]
        wide = torch.promote_types(Q.dtype, torch.float32)
        scores = (Q.to(wide) @ K.to(wide).transpose(-2, -1)) / math.sqrt(Q.shape[-1])
        if causal:
            keep = torch.ones(n, m, dtype=torch.bool, device=Q.device).tril(diagonal=m - n)
            scores = scores.masked_fill(~keep, float("-inf"))
        lse = torch.logsumexp(scores, dim=-1)
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return (weights @ V.to(wide)).to(Q.dtype), lse
"""

# safe_softmax's bank file nan_gradient_on_masked_rows__where_after_exp (NaN gradients), with the
# child's payloads stripped of "g_softmax" and "g_lse": the harness then sends back no "grad",
# and the parent grades no gradient ("not exercised")
NAN_GRADIENT_UNGRADED = FIND_PAYLOADS + """
    for payload in PAYLOADS:
        payload.pop("g_softmax", None)
        payload.pop("g_lse", None)
    # a where AFTER exp: zeros forward, NaN backward
    import torch


    def masked_softmax(x, mask, dim=-1):
        row_max = x.masked_fill(~mask, float("-inf")).amax(dim=dim, keepdim=True)
        exps = torch.where(mask, torch.exp(x - row_max), torch.zeros_like(x))
        total = exps.sum(dim=dim, keepdim=True)
        return torch.where(total > 0, exps / total, torch.zeros_like(exps))


    def masked_logsumexp(x, mask, dim=-1):
        scores = x.masked_fill(~mask, float("-inf"))
        lse = torch.logsumexp(scores, dim=dim)
        return torch.where(mask.expand_as(x).any(dim=dim), lse, torch.full_like(lse, float("-inf")))
"""


def _grade(grader, tmp_path: Path, source: str, drill: str = "sdpa") -> dict:
    return grade_source(grader, tmp_path, drill, source, timeout=30.0)


@KNOWN_GAP
def test_clearing_the_device_probes_problems_does_not_pass_a_hard_coded_device(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, PROBE_PROBLEMS_CLEARED)
    assert verdict["status"] != "pass", verdict


@KNOWN_GAP
def test_dropping_the_watch_flags_does_not_pass_the_full_score_matrix(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, UNWATCHED_FULL_MATRIX, drill="flash_attention")
    assert verdict["status"] != "pass", verdict


@KNOWN_GAP
def test_dropping_the_gradient_weights_does_not_skip_the_gradient_checks(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, NAN_GRADIENT_UNGRADED, drill="safe_softmax")
    assert verdict["status"] != "pass", verdict
