"""flash_attention: what the dev check does not cover. The memory cap, the causal skip and the
fused-call ban are recorded inside the sandboxed child (a dispatch mode around the call) and must
survive the real grader; the record counts created tensors, not views."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from studyapp.kernels_loader import load_kernels  # noqa: E402

kernels = load_kernels()
from studyapp_kernels.flash_attention.watch import Watch  # noqa: E402

FOLDER = Path(kernels.CATALOG["flash_attention"].folder)


@pytest.fixture(scope="module")
def grader(warm_grader):
    """The test session's warm worker on the real drills (tests/conftest.py)."""
    return warm_grader


def test_reference_passes_in_the_sandbox(grader):
    verdict = grader.grade("flash_attention", FOLDER / "reference.py", device="cpu", seed=7)
    assert verdict["status"] == "pass", (verdict["summary"], verdict["hint"])


@pytest.mark.parametrize("name, check, words", [
    ("full_score_matrix__naive", "memory cap", "the cap is"),
    ("full_score_matrix__query_blocks_only", "memory cap", "the cap is"),
    ("fused_call__sdpa_and_logsumexp", "no fused call", "scaled_dot_product_attention"),
    ("no_causal_skip__mask_every_block", "causal blocks skipped", "above the diagonal"),
    ("wrong_block_size__fixed_64", "block sizes", "keys wide"),
    ("query_block_ignored__key_loop_all_queries", "query blocks", "queries tall"),
    ("query_block_ignored__fixed_query_tile", "query blocks", "queries tall"),
    ("hidden_calls__fused_kernel_with_lse", "no fused call", "torch._C.DisableTorchFunction"),
])
def test_recorded_checks_fail_in_the_sandbox_with_a_message_saying_so(grader, name, check, words):
    verdict = grader.grade("flash_attention", FOLDER / "bank" / "wrong" / f"{name}.py", device="cpu", seed=7)
    described = kernels.CATALOG["flash_attention"].mistakes[name.split("__")[0]]
    assert verdict["status"] == "fail" and f"looks like: {described}" in verdict["summary"], verdict["summary"]
    row = next(row for row in verdict["checks"] if row["name"] == check)
    assert row["status"] == "fail" and words in row["message"], row


def test_views_and_in_place_results_create_nothing():
    big = torch.randn(4, 256, 64)
    with Watch() as watch:
        big.transpose(-2, -1).expand(2, 4, 64, 256)
        big[..., :8].add_(1.0)
        small = torch.zeros(3, 5)
    record = watch.record()
    assert record["largest"] == small.numel()
    assert not record["fused"] and record["matmul_work"] == 0


def test_the_widest_score_tile_counts_only_matmuls_over_d():
    """A score tile contracts over d; P @ V contracts over the keys and is not one (the tiles
    cases have d > block_k, so the two never share a contraction size)."""
    q, k, v = torch.randn(2, 8, 4), torch.randn(2, 16, 4), torch.randn(2, 16, 20)
    with Watch(score_dim=4) as watch:
        p = (q @ k.transpose(-2, -1)).softmax(-1)
        p @ v
    record = watch.record()
    assert (record["widest_tile"], record["widest_tile_shape"]) == (16, [2, 8, 16])
    with Watch() as watch:
        q @ k.transpose(-2, -1)
    assert watch.record()["widest_tile"] == 0


def test_the_tallest_score_tile_is_its_query_extent():
    """Tiles of every query block at once, batched as (blocks, block_q, block_k), are block_q
    tall; one tile of all the queries is n tall."""
    q, k = torch.randn(2, 12, 10), torch.randn(2, 6, 10)
    with Watch(score_dim=10) as watch:
        q.reshape(2, 3, 4, 10) @ k.transpose(-2, -1).unsqueeze(1)
    assert watch.record()["tallest_tile"] == 4
    with Watch(score_dim=10) as watch:
        q @ k.transpose(-2, -1)
    assert (watch.record()["tallest_tile"], watch.record()["tallest_tile_shape"]) == (12, [2, 12, 6])


def test_calls_made_with_torch_functions_disabled_are_recorded():
    """torch._C.DisableTorchFunction() switches the function watch off, not the dispatch mode,
    which records the ops it runs; DisableTorchFunctionSubclass switches off subclasses only,
    and the function watch still sees the fused call."""
    import torch.nn.functional as F

    q = torch.randn(2, 8, 4)
    with Watch() as watch:
        with torch._C.DisableTorchFunction():
            F.scaled_dot_product_attention(q, q, q)
    record = watch.record()
    assert not record["fused"] and record["hidden"], record
    with Watch() as watch:
        with torch._C.DisableTorchFunctionSubclass():
            F.scaled_dot_product_attention(q, q, q)
    record = watch.record()
    assert record["fused"] == ["scaled_dot_product_attention"] and not record["hidden"], record
    with Watch() as watch:  # the reference, and plain code, hide nothing
        (q @ q.transpose(-2, -1)).softmax(-1) @ q
    assert not watch.record()["hidden"]


def test_matmul_work_is_counted_for_every_matmul_spelling():
    q, k = torch.randn(2, 8, 4), torch.randn(2, 16, 4)
    with Watch() as watch:
        q @ k.transpose(-2, -1)
        torch.einsum("bnd,bmd->bnm", q, k)
        torch.baddbmm(torch.zeros(2, 8, 16), q, k.transpose(-2, -1))
    assert watch.record()["matmul_work"] == 3 * 2 * 8 * 16 * 4


def test_the_watch_and_the_reference_import_nothing_heavy_in_the_child():
    """Each sandboxed child is forked from the worker: torch._dynamo (PyTorch's default guard
    around a dispatch mode) or sympy (torch.broadcast_shapes) would cost seconds in every grade."""
    import subprocess
    import sys

    code = ("import sys, torch; from studyapp.kernels_loader import load_kernels; load_kernels(); "
            "from studyapp_kernels.flash_attention.watch import Watch; "
            "import importlib.util as u; s = u.spec_from_file_location('ref', sys.argv[1]); "
            "m = u.module_from_spec(s); s.loader.exec_module(m); q = torch.randn(2, 9, 4)\n"
            "with Watch(): m.flash_attention(q, q, q, block_q=4, block_k=4, causal=True)\n"
            "print(sorted(name for name in ('torch._dynamo', 'sympy') if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(FOLDER / "reference.py")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
