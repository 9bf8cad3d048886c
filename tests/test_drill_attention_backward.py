"""attention_backward: the ban on autograd holds in the real sandboxed grader, whichever way in."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from studyapp.kernels_loader import load_kernels  # noqa: E402

INFO = load_kernels().CATALOG["attention_backward"]
FOLDER = Path(INFO.folder)
AUTOGRAD_WAYS = {
    "backward": "out.backward(dO)\n    return q.grad, k.grad, v.grad",
    "autograd_grad": "return torch.autograd.grad(out, (q, k, v), dO)",
    "func_vjp": "_, pull = torch.func.vjp(lambda a, b, c: attention(a, b, c), q, k, v)\n    return pull(dO)",
}
TEMPLATE = '''import torch


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5, dim=-1) @ v


def attention_backward(Q, K, V, dO, mask=None, scale=None):
    torch.set_grad_enabled(True)
    q, k, v = (t.detach().clone().requires_grad_() for t in (Q, K, V))
    out = attention(q, k, v)
    {tail}
'''


@pytest.fixture(scope="module")
def grader(warm_grader):
    """The test session's warm worker on the real drills (tests/conftest.py)."""
    return warm_grader


def test_reference_passes_in_the_sandbox(grader):
    verdict = grader.grade("attention_backward", FOLDER / "reference.py", device="cpu", seed=3)
    assert verdict["status"] == "pass", (verdict["summary"], verdict["hint"])


@pytest.mark.parametrize("way", sorted(AUTOGRAD_WAYS))
def test_every_way_into_autograd_is_named(grader, tmp_path, way):
    path = tmp_path / f"{way}.py"
    path.write_text(TEMPLATE.format(tail=AUTOGRAD_WAYS[way]))
    verdict = grader.grade("attention_backward", path, device="cpu", seed=3)
    assert f"looks like: {INFO.mistakes['used_autograd']}" in verdict["summary"], (verdict["summary"], verdict["hint"])
    row = next(row for row in verdict["checks"] if row["name"] == "no autograd")
    assert row["status"] == "fail" and "no_grad" in row["message"], row


def test_autograd_out_of_sight_of_the_function_watch_is_named(grader):
    """torch._C.DisableTorchFunction() hides enable_grad, requires_grad_ and autograd.grad from
    the function watch; the dispatch mode around the call still sees the ops run inside it."""
    path = FOLDER / "bank" / "wrong" / "hidden_calls__autograd_out_of_sight.py"
    verdict = grader.grade("attention_backward", path, device="cpu", seed=3)
    assert f"looks like: {INFO.mistakes['hidden_calls']}" in verdict["summary"], (verdict["summary"], verdict["hint"])
    row = next(row for row in verdict["checks"] if row["name"] == "no autograd")
    assert row["status"] == "fail" and "torch._C.DisableTorchFunction" in row["message"], row
