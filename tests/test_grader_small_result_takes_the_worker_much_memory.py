"""A result of 4 MB takes the worker (the app's side of grading) 150 MB: its peak memory went
from 252 MB to 402 MB for one grade. The frame is forged (the nonce and the result pipe are in
the harness's frame above the learner's import) and holds a pickle of two million empty lists,
two bytes each, which `torch.load(weights_only=True)` builds whole before the worker finds it
is "not the grader's outcome". `MAX_RESULT_BYTES` (512 MiB, "the parent must not be the one to
run out of memory") lets through a frame that would take the worker about 19 GiB at that rate.

A compressed entry in the torch file does more: a frame of 195 KB holding a tensor of 50 million
zeros, its storage deflated, takes the worker 200 MB (torch reads deflated zip entries), a
thousand times its size.

The channel's docstring grants that learner code can dig the nonce out and forge a frame, and
counts on the parent's checks to make it worthless; they come after the load."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from grader_helpers import grade_limits

from studyapp.grader.client import GraderClient

pytest.importorskip("torch")

COUNT = 2_000_000
FRAME_BYTES = 2 * COUNT
AMPLIFICATION = 8
"""How much more memory than the frame's bytes the worker may take to read it (generous)."""

# sends, in the harness's own sealed frame, a torch file whose pickle is an outer list and
# two million empty lists appended to it (`]a` each), then exits before the harness sends its own
MANY_LISTS_IN_A_SMALL_FRAME = r"""
    import io, os, struct, sys, zipfile
    COUNT = 2_000_000
    frame = sys._getframe()
    while frame is not None and not ("nonce" in frame.f_locals and "result_fd" in frame.f_locals):
        frame = frame.f_back
    nonce, fd = frame.f_locals["nonce"], frame.f_locals["result_fd"]
    pickle = b"\x80\x02]" + b"]a" * COUNT + b"."
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    payload = archive.getvalue()
    data = b"studyapp-result\0" + nonce + struct.pack("<Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os._exit(0)
"""
# the same forged frame, holding a torch file with one tensor of ZEROS float32 zeros whose
# storage entry is deflated (the pickle of a 10-element tensor, its numel and size made ZEROS)
DEFLATED_ZEROS_IN_A_SMALL_FRAME = r"""
    import io, os, struct, sys, zipfile
    import torch
    ZEROS = 50_000_000
    frame = sys._getframe()
    while frame is not None and not ("nonce" in frame.f_locals and "result_fd" in frame.f_locals):
        frame = frame.f_back
    nonce, fd = frame.f_locals["nonce"], frame.f_locals["result_fd"]
    small = io.BytesIO()
    torch.save({"t": torch.zeros(10)}, small)
    source = zipfile.ZipFile(io.BytesIO(small.getvalue()))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename.endswith("data.pkl"):
                data = data.replace(b"K\n", b"J" + ZEROS.to_bytes(4, "little"))
            if info.filename.endswith("/data/0"):
                z.writestr(info.filename, bytes(4 * ZEROS), compress_type=zipfile.ZIP_DEFLATED)
            else:
                z.writestr(info.filename, data)
    payload = archive.getvalue()
    data = b"studyapp-result\0" + nonce + struct.pack("<Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os._exit(0)
"""
RIGHT = """
    import math, torch
    def scaled_dot_product_attention(Q, K, V, mask=None):
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1)) @ V
"""


def _peak_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) >> 10
    raise AssertionError("no VmHWM")


def _growth(tmp_path: Path, source: str) -> tuple[dict, int, int]:
    """(verdict, peak MiB before, peak MiB after) of grading `source` on a worker of its own."""
    right, forged = tmp_path / "right.py", tmp_path / "forged.py"
    right.write_text(textwrap.dedent(RIGHT))
    forged.write_text(textwrap.dedent(source))
    with GraderClient(grade_limits(timeout=30.0)) as grader:  # its own worker: its peak is this test's
        assert grader.grade("sdpa", right, device="cpu", seed=7)["status"] == "pass"
        assert grader._proc is not None
        before = _peak_mib(grader._proc.pid)
        verdict = grader.grade("sdpa", forged, device="cpu", seed=7)
        return verdict, before, _peak_mib(grader._proc.pid)


def test_a_small_result_of_deflated_zeros_does_not_take_the_worker_many_times_its_size(tmp_path: Path):
    verdict, before, after = _growth(tmp_path, DEFLATED_ZEROS_IN_A_SMALL_FRAME)
    assert verdict["status"] != "pass", verdict
    frame_mib = 0.25  # about 195 KB
    assert after - before <= AMPLIFICATION * frame_mib, (
        f"a result of about 195 KB took the worker {after - before} MiB more ({before} -> {after} MiB)")


def test_a_small_result_does_not_take_the_worker_many_times_its_size(tmp_path: Path):
    verdict, before, after = _growth(tmp_path, MANY_LISTS_IN_A_SMALL_FRAME)
    assert verdict["status"] != "pass", verdict
    grown = after - before
    assert grown <= AMPLIFICATION * FRAME_BYTES / (1 << 20), (
        f"a {FRAME_BYTES / (1 << 20):.0f} MiB result took the worker {grown} MiB more ({before} -> {after} MiB)")
