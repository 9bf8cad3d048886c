"""attention_backward passes, "no autograd" included, a file that hands the whole computation to
autograd on a thread it starts with libc's `pthread_create` (through ctypes) and joins:
`studyapp grade attention_backward` prints PASS.

README: "Your code runs in one process and on one thread (starting either raises, fresh module
copies included)". `child.one_thread` replaces the starters of `threading` and `_thread`, and
`guard` stops a fresh `_thread`; a native thread made by libc needs neither, and ctypes runs
Python on it. The drills' watches (`AutogradWatch`, `torch.no_grad()`) are thread-local: on the
new thread grad mode is on and no mode is watching."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

# autograd of the textbook forward, on a thread from pthread_create
AUTOGRAD_ON_A_NATIVE_THREAD = """
    import ctypes
    import math
    import torch

    _libc = ctypes.CDLL(None)
    _START = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
    _libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, _START, ctypes.c_void_p]
    _libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.c_void_p]


    def _in_a_native_thread(work):
        # work() on a thread made by pthread_create, not by _thread: the watches are thread-local
        box = {}

        def start(_arg):
            try:
                box["value"] = work()
            except BaseException as exc:  # noqa: BLE001
                box["error"] = exc
            return None

        callback = _START(start)
        thread = ctypes.c_ulong()
        if _libc.pthread_create(ctypes.byref(thread), None, callback, None) != 0:
            raise OSError("pthread_create failed")
        _libc.pthread_join(thread.value, None)
        if "error" in box:
            raise box["error"]
        return box["value"]


    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        scale = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale

        def work():  # a new thread: grad mode on, no function mode, no dispatch mode
            q, k, v = (t.detach().clone().requires_grad_() for t in (Q, K, V))
            scores = scale * (q @ k.transpose(-2, -1))
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
            ((weights @ v) * dO).sum().backward()
            return q.grad.detach(), k.grad.detach(), v.grad.detach()

        return _in_a_native_thread(work)
"""


def test_autograd_on_a_thread_from_pthread_create_does_not_pass(warm_grader, tmp_path: Path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(AUTOGRAD_ON_A_NATIVE_THREAD))
    verdict = warm_grader.grade("attention_backward", path, device="cpu", seed=7, limits=grade_limits(timeout=30.0))
    assert verdict["status"] != "pass", (verdict["summary"], [(c["name"], c["status"]) for c in verdict["checks"]])
