"""The watches around a learner's call (`TorchFunctionMode` / `TorchDispatchMode`) are
thread-local, so work done in a thread the call starts and joins is recorded nowhere.

flash_attention grades "no fused call", the memory cap, causal skipping and tile sizes from
that record; attention_backward grades "no autograd" from it. A record that saw no work at all
on a case that must compute attention is read as a pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import grade_source

pytest.importorskip("torch")

IN_A_THREAD = """
    import threading
    def in_a_thread(work):
        box = {}
        def target():
            try:
                box["value"] = work()
            except BaseException as exc:
                box["error"] = exc
        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]
"""

# the full score matrix at once (no tiles, no online softmax, no skipped blocks), in a thread
FULL_MATRIX_FLASH = IN_A_THREAD + """
    import math, torch
    def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
        def full():
            n, m = Q.shape[-2], K.shape[-2]
            wide = torch.promote_types(Q.dtype, torch.float32)
            scores = (Q.to(wide) @ K.to(wide).transpose(-2, -1)) / math.sqrt(Q.shape[-1])
            if causal:
                keep = torch.ones(n, m, dtype=torch.bool, device=Q.device).tril(diagonal=m - n)
                scores = scores.masked_fill(~keep, float("-inf"))
            lse = torch.logsumexp(scores, dim=-1)
            weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
            return (weights @ V.to(wide)).to(Q.dtype), lse
        return in_a_thread(full)
"""

# the gradients from autograd (Tensor.backward), in a thread: grad mode is on there
AUTOGRAD_BACKWARD = IN_A_THREAD + """
    import math, torch
    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        def by_autograd():
            q, k, v = (t.detach().clone().requires_grad_(True) for t in (Q, K, V))
            s = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(Q.shape[-1]) if scale is None else scale)
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
            (torch.nan_to_num(torch.softmax(s, dim=-1)) @ v).backward(dO)
            return tuple(t.grad.detach() for t in (q, k, v))
        return in_a_thread(by_autograd)
"""


def _grade(grader, tmp_path: Path, drill: str, source: str) -> dict:
    return grade_source(grader, tmp_path, drill, source)


def test_full_score_matrix_attention_in_a_thread_is_not_a_flash_attention_pass(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "flash_attention", FULL_MATRIX_FLASH)
    assert verdict["status"] != "pass", verdict


def test_autograd_in_a_thread_is_not_an_attention_backward_pass(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "attention_backward", AUTOGRAD_BACKWARD)
    assert verdict["status"] != "pass", verdict


def test_the_verdict_says_why_a_thread_is_refused(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, "flash_attention", FULL_MATRIX_FLASH)
    said = " ".join(str(verdict.get(k) or "") for k in ("summary", "hint", "detail"))
    assert verdict["status"] == "error" and verdict["origin"] == "learner", verdict
    assert "one thread" in said, said


def test_a_thread_started_through_a_reloaded_thread_module_is_refused_too(warm_grader, tmp_path):
    source = FULL_MATRIX_FLASH.replace("import threading", "import importlib, threading, _thread\n"
                                       "    importlib.reload(_thread)\n    importlib.reload(threading)")
    verdict = _grade(warm_grader, tmp_path, "flash_attention", source)
    assert verdict["status"] != "pass", verdict
