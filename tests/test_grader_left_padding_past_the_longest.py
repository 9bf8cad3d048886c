"""masks_advanced's `left_padding_mask(lengths, n)` public cases all have
`max(lengths) == n` ([3, 1, 5, 2] n=5, [2, 6, 4] n=6, [1, 3] n=3, [300, ...] n=300,
[130, ...] n=130). A builder that takes the padded length from the lengths (`n =
lengths.max()`, ignoring its `n`) is right on all of them; only the one fresh case can show it
(its lengths[0] is n - 1), and on about one seed in five another item's length is n there too,
so the file passes (seeds 1, 4, 5, 6, 15, 19, 20, 40 of 1..40). With a batch left-padded past its
longest sequence (a fixed generation length) the mask has the wrong width."""

from __future__ import annotations

import textwrap

import pytest
from grader_helpers import grade_limits

pytest.importorskip("torch")

LENGTH_FROM_LENGTHS = """
    import torch

    def causal_mask(n_q, n_k):
        return torch.ones(n_q, n_k, dtype=torch.bool).tril(diagonal=n_k - n_q)

    def sliding_window_mask(n, window):
        back = torch.arange(n)[:, None] - torch.arange(n)[None, :]
        return (back >= 0) & (back < window)

    def causal_padding_mask(lengths, n):
        lengths = torch.as_tensor(lengths)
        pos = torch.arange(n, device=lengths.device)
        return ((pos[None, None, None, :] <= pos[None, None, :, None])
                & (pos[None, None, None, :] < lengths[:, None, None, None]))

    def left_padding_mask(lengths, n):
        lengths = torch.as_tensor(lengths)
        n = int(lengths.max())  # the padded length taken from the longest sequence: wrong
        return (torch.arange(n, device=lengths.device)[None, :] >= (n - lengths)[:, None])[:, None, None, :]
"""


@pytest.mark.parametrize("seed", [1, 4])
def test_left_padding_mask_that_ignores_n_fails_whatever_the_seed(warm_grader, tmp_path, seed):
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(LENGTH_FROM_LENGTHS))
    verdict = warm_grader.grade("masks_advanced", path, device="cpu", seed=seed, limits=grade_limits(timeout=60.0))
    assert verdict["status"] == "fail", verdict
    failing = [row["name"] for row in verdict["checks"] if row["status"] == "fail"]
    assert failing and all("left_padding" in name or name == "shape" for name in failing), verdict
