"""Work out of the watches' sight: `child.one_thread` replaces the thread starters on
`threading` and `_thread`, but a thread from a fresh copy of `_thread`, or a forked process, was
still to be had, and the full score matrix computed there passed flash_attention. Both are
refused now (`grader.guard`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grader_helpers import NOBODY_FORKS, grade_source

pytest.importorskip("torch")

FULL = """
    import math, torch
    def full(Q, K, V, causal):
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

# a fresh copy of the builtin _thread module (its init made again) has the original starters
THREAD_FROM_A_FRESH_THREAD_MODULE = FULL + """
    import _imp, _thread, importlib.util
    _start = _imp.create_builtin(importlib.util.find_spec("_thread")).start_new_thread
    def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
        box, done = {}, _thread.allocate_lock()
        done.acquire()
        def target():
            try:
                box["value"] = full(Q, K, V, causal)
            finally:
                done.release()
        _start(target, ())
        done.acquire()
        return box["value"]
"""

# the same work in a forked copy of the child, sent back through a pipe
IN_A_FORKED_PROCESS = FULL + """
    import io, os
    def flash_attention(Q, K, V, block_q=64, block_k=64, causal=False):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            buffer = io.BytesIO()
            torch.save(full(Q, K, V, causal), buffer)
            view = memoryview(buffer.getvalue())
            while view:
                view = view[os.write(w, view):]
            os._exit(0)
        os.close(w)
        chunks = []
        while chunk := os.read(r, 1 << 20):
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        return torch.load(io.BytesIO(b"".join(chunks)))
"""


def _grade(grader, tmp_path: Path, source: str) -> dict:
    return grade_source(grader, tmp_path, "flash_attention", source)


def test_a_thread_from_a_fresh_thread_module_is_refused_too(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, THREAD_FROM_A_FRESH_THREAD_MODULE)
    assert verdict["status"] != "pass", verdict


@NOBODY_FORKS
def test_full_score_matrix_in_a_forked_process_is_not_a_flash_attention_pass(warm_grader, tmp_path):
    verdict = _grade(warm_grader, tmp_path, IN_A_FORKED_PROCESS)
    assert verdict["status"] != "pass", verdict
