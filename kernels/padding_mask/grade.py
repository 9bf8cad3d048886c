"""The `padding_mask` drill: padding keys blocked per sequence, whatever the batch's lengths."""

from __future__ import annotations

import torch

from ..device_probe import PROBE
from ..grading import Case, shape_text
from ..mask_drills import MaskDrill, wrap_int8


class PaddingMaskDrill(MaskDrill):
    """The mask built from `(lengths, max_len)`: graded on the rows of real queries only."""

    arg_names = ("lengths", "max_len")

    def public_cases(self, device: str) -> list[Case]:
        """Lengths that differ per item, on both sides of 10, 32, 64, 128, 256, 512, 1024 and 2048."""
        specs = [
            ("public list", [3, 1, 5, 2], 5),
            ("public tensor", torch.tensor([2, 6, 4]), 6),
            ("public single sequence", torch.tensor([3], dtype=torch.int32), 5),
            ("public batch = max_len", [1, 3, 2], 3),
            ("public int32, past 32", torch.tensor([40, 33, 12], dtype=torch.int32), 40),
            ("public list, past 128", [130, 64, 128, 129], 130),
            ("public tensor, past 256", torch.tensor([300, 257, 129, 1, 200]), 300),
            ("public list, past 512, 1024 and 2048", [2049, 1025, 513], 2049),  # a `block_size` buffer
            # lengths in a small type: positions made in their dtype wrap (uint8 at 256, int8 at 128)
            ("public uint8 lengths, max_len past 256", torch.tensor([200, 100, 255], dtype=torch.uint8), 300),
            ("public int8 lengths, max_len past 128", torch.tensor([100, 50, 127], dtype=torch.int8), 200),
        ]
        cases = [self._case(name, lengths, max_len) for name, lengths, max_len in specs]
        probe = Case("public device probe", {"lengths": torch.tensor([3, 5, 1]), "max_len": 6, PROBE: True},
                     size=6, notes="lengths on a stand-in device: a device named in the code is a hard-coded one")
        return cases + [probe]

    def fresh_cases(self, seed: int, device: str) -> list[Case]:
        gen = torch.Generator().manual_seed(seed)
        batch = 2 + int(torch.randint(0, 4, (1,), generator=gen))
        max_len = batch + 1 + int(torch.randint(0, 60, (1,), generator=gen))
        fresh = torch.randint(1, max_len + 1, (batch,), generator=gen)
        fresh[0] = max_len - 1
        return [self._case(f"seed {seed}", fresh, max_len, public=False)]

    @staticmethod
    def _case(name, lengths, max_len, public=True) -> Case:
        kind = "list" if isinstance(lengths, list) else f"tensor {str(lengths.dtype).replace('torch.', '')}"
        return Case(name, {"lengths": lengths, "max_len": max_len}, public=public, size=max_len,
                    notes=f"lengths {list(map(int, lengths))} ({kind}), max_len={max_len}")

    def _lengths(self, case):
        return torch.as_tensor(case.payload["lengths"]).reshape(-1).to(torch.int64)

    def expected_allowed(self, case):
        lengths, max_len = self._lengths(case), case.payload["max_len"]
        keys = torch.arange(max_len)[None, :] < lengths[:, None]
        return keys[:, None, :].expand(len(lengths), max_len, max_len)

    def graded(self, case):
        lengths, max_len = self._lengths(case), case.payload["max_len"]
        real_queries = torch.arange(max_len)[None, :] < lengths[:, None]
        return real_queries[:, :, None].expand(len(lengths), max_len, max_len)

    def normalize_shape(self, case, tensor):
        batch, max_len = len(self._lengths(case)), case.payload["max_len"]
        target = (batch, max_len, max_len)
        shape = tuple(tensor.shape)
        if len(shape) == 4 and shape[1] == 1:
            tensor, shape = tensor[:, 0], shape[:1] + shape[2:]
        ok = len(shape) == 3 and shape[0] == batch
        try:
            torch.broadcast_shapes(shape, target)
        except RuntimeError:
            ok = False
        if not ok or torch.broadcast_shapes(shape, target) != target:
            return None, (f"shape {shape_text(tensor.shape)} does not broadcast to (batch, max_len, max_len) = "
                          f"{shape_text(target)} with batch first; expected e.g. ({batch}, 1, {max_len})")
        return (tensor != 0).expand(target), ""

    def candidates(self, case):
        lengths, max_len = self._lengths(case), case.payload["max_len"]
        positions = torch.arange(max_len)[None, :]
        target = (len(lengths), max_len, max_len)
        keys = lambda allowed: allowed[:, None, :].expand(target)  # noqa: E731
        found = [("inverted_mask", keys(positions >= lengths[:, None])),
                 ("off_by_one", keys(positions <= lengths[:, None])),
                 ("off_by_one", keys(positions < lengths[:, None] - 1)),
                 ("blocks_queries", (positions < lengths[:, None])[:, :, None].expand(target)),
                 ("position_overflow", keys(positions % 256 < lengths[:, None] % 256)),
                 ("position_overflow", keys(positions < wrap_int8(lengths)[:, None]))]
        given = case.payload["lengths"]
        if isinstance(given, torch.Tensor) and given.dtype in (torch.uint8, torch.int8):  # positions in their dtype
            own = torch.arange(max_len, dtype=given.dtype)[None, :]
            found.append(("position_overflow", keys(own < given.reshape(-1)[:, None])))
        return found

    def match_shape(self, case, tensor):
        batch, max_len = len(self._lengths(case)), case.payload["max_len"]
        if tuple(tensor.shape) == (batch, max_len):
            return "missing_query_dim"
        return None


DRILL = PaddingMaskDrill.from_folder(__file__)
