"""The `causal_mask` drill: the (n, n) lower-triangular pattern, on sizes past every small buffer."""

from __future__ import annotations

import torch

from ..device_probe import PROBE
from ..grading import Case, shape_text
from ..mask_drills import CHECK_ORDER, MaskDrill, wrap_int8


class CausalMaskDrill(MaskDrill):
    """The (n, n) mask built from `n` alone: graded on every size, past the small-type and buffer limits."""

    arg_names = ("n",)
    check_order = [row for row in CHECK_ORDER if row[0] != "inputs unchanged"]
    """`n` is an int: there is no input the builder could change."""

    def public_cases(self, device: str) -> list[Case]:
        """Sizes on both sides of 8, 10, 32, 64, 128, 256 and 1024 and 2048 (buffers, blocks,
        int8/uint8 positions, a model's `block_size` tril buffer: GPT-2's 1024, 2048), and
        3000: float16 positions are whole numbers only up to 2048, so past it two positions
        round to one (2049 alone still compares right)."""
        cases = [Case(f"public n={n}", {"n": n}, notes=f"n={n}", size=n)
                 for n in (1, 2, 5, 8, 9, 11, 33, 65, 129, 257, 300, 1025, 2049, 3000)]
        probe = Case("public device probe", {"n": 6, PROBE: True}, size=6,
                     notes="a device named in the code is a hard-coded one")
        return cases + [probe]

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(seed)
        fresh = [int(n) for n in torch.randint(2, 80, (2,), generator=gen)]
        return [Case(f"seed {seed} n={n}", {"n": n}, notes=f"n={n}", public=False, size=n) for n in fresh]

    def expected_allowed(self, case):
        n = case.payload["n"]
        return torch.ones(n, n, dtype=torch.bool).tril()

    def normalize_shape(self, case, tensor):
        n = case.payload["n"]
        if tuple(tensor.shape) != (n, n):
            return None, f"shape {shape_text(tensor.shape)}, expected ({n}, {n})"
        return tensor != 0, ""

    def candidates(self, case):
        n = case.payload["n"]
        ones = torch.ones(n, n, dtype=torch.bool)
        positions = torch.arange(n)
        uint8, int8 = positions % 256, wrap_int8(positions)
        half = torch.arange(n, dtype=torch.float16)  # past 2048, neighbours round to one number
        return [("inverted_mask", ones.triu()), ("inverted_mask", ones.triu(1)),
                ("strict_diagonal", ones.tril(-1)),
                ("position_overflow", uint8[None, :] <= uint8[:, None]),
                ("position_overflow", int8[None, :] <= int8[:, None]),
                ("position_overflow", half[None, :] <= half[:, None])]


DRILL = CausalMaskDrill.from_folder(__file__)
