"""attention_backward passes, "no autograd" included, a file that forks with libc's `fork()`
(through ctypes), runs autograd in the copy and reads the gradients back over a pipe:
`studyapp grade attention_backward` prints PASS.

README: "Your code runs in one process and on one thread (starting either raises ...)".
`grader.guard` refuses a process through CPython's audit events (`os.fork`, `os.posix_spawn`,
`subprocess.Popen`...) and `_posixsubprocess.fork_exec`; libc's own `fork`, called through
ctypes, raises no audit event. The copy is out of the drills' watches: what it records is never
sent."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import NOBODY_FORKS, grade_limits

pytest.importorskip("torch")

pytestmark = NOBODY_FORKS

# autograd of the textbook forward, in a process made by libc's fork
AUTOGRAD_IN_A_LIBC_FORK = """
    import ctypes
    import io
    import math
    import os
    import torch

    _libc = ctypes.CDLL(None)


    def attention_backward(Q, K, V, dO, mask=None, scale=None):
        scale = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale
        read_fd, write_fd = os.pipe()
        pid = _libc.fork()  # libc's fork: no audit event, no os.fork
        if pid < 0:
            raise OSError(ctypes.get_errno(), "fork failed")
        if pid == 0:  # another process: whatever it records is never sent
            with torch.enable_grad():
                q, k, v = (t.detach().clone().requires_grad_() for t in (Q, K, V))
                scores = scale * (q @ k.transpose(-2, -1))
                if mask is not None:
                    scores = scores.masked_fill(~mask, float("-inf"))
                weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
                ((weights @ v) * dO).sum().backward()
            buffer = io.BytesIO()
            torch.save([q.grad.detach(), k.grad.detach(), v.grad.detach()], buffer)
            data = buffer.getvalue()
            while data:
                data = data[os.write(write_fd, data):]
            os._exit(0)
        os.close(write_fd)
        chunks = []
        while chunk := os.read(read_fd, 1 << 20):
            chunks.append(chunk)
        os.close(read_fd)
        os.waitpid(pid, 0)
        return tuple(torch.load(io.BytesIO(b"".join(chunks))))
"""


def test_autograd_in_a_process_from_libc_fork_does_not_pass(warm_grader, tmp_path: Path):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(AUTOGRAD_IN_A_LIBC_FORK))
    verdict = warm_grader.grade("attention_backward", path, device="cpu", seed=7, limits=grade_limits(timeout=30.0))
    assert verdict["status"] != "pass", (verdict["summary"], [(c["name"], c["status"]) for c in verdict["checks"]])
