"""What the learner's call did, recorded in the child: fused attention calls, the largest tensor
it created, the work its matmuls and exps did (so the parent can grade memory and skipping), the
extent of its score tiles, and ops run out of the function mode's sight.

Two modes run around the call. `TorchFunctionMode` sees the functions called by name, before
PyTorch decomposes them (`F.scaled_dot_product_attention` is one op there). `TorchDispatchMode`
sees every aten op with its real outputs: a tensor is counted as created when its storage is
shared with none of the op's inputs (views and in-place ops create nothing). Both are plain
Python and need no GPU, no memory accounting from the allocator and no files.

The record is taken in the learner's own process, so code written to fool it could (by leaving
the modes); it is there to catch the honest mistakes, which it names reliably, not to stop a
determined cheat, who fools only themselves. The easy way out, `torch._C.DisableTorchFunction()`
around a fused call, is recorded: the dispatch mode still sees the ops run inside it (`HiddenCalls`),
on the public cases it watches, which every grade runs.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from ..hidden_calls import HiddenCalls

FUSED_NAMES = ("scaled_dot_product_attention", "flash_attention", "efficient_attention",
               "multi_head_attention", "cudnn_attention", "_fused_sdp")
"""Substrings of function names that do the whole attention in one call."""
aten = torch.ops.aten
MATMULS = {aten.mm: 0, aten.bmm: 0, aten.mv: 0, aten.dot: 0, aten.vdot: 0,
           aten.addmm: 1, aten.baddbmm: 1, aten.addmv: 1, aten.addbmm: 1}
"""Matmul ops and the position of their first matrix operand."""
EXPS = {aten.exp, aten.exp_, aten.exp2, aten.exp2_, aten.expm1, aten._softmax, aten._safe_softmax,
        aten._log_softmax, aten.logsumexp}


def _tensors(values) -> list[torch.Tensor]:
    out = []
    for value in values:
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, torch.Tensor))
    return out


def _storage(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return -1


class _Calls(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.fused: list[str] = []
        self.outside: list[str] = []
        """Ways the work left torch, where no watch sees its memory or the blocks it skips."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if any(part in name for part in FUSED_NAMES) and name not in self.fused:
            self.fused.append(name)
        if func in _TO_NUMPY and name not in self.outside:  # full attention written in NumPy passed
            self.outside.append(name)
        return func(*args, **(kwargs or {}))


_TO_NUMPY = (torch.Tensor.numpy, torch.Tensor.__array__)


class _Ops(HiddenCalls):
    """Records what `HiddenCalls` does as well (whose dynamo opt-out also saves ~50 us per op)."""

    def __init__(self, score_dim: int | None = None) -> None:
        super().__init__()
        self.score_dim = score_dim
        self.widest_tile = 0
        self.widest_tile_shape: list[int] = []
        self.tallest_tile = 0
        self.tallest_tile_shape: list[int] = []
        self.largest = 0
        self.largest_op = ""
        self.largest_shape: list[int] = []
        self.matmul_work = 0
        self.exp_elements = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.note(func)
        result = func(*args, **kwargs)
        packet = func.overloadpacket
        if packet in MATMULS:
            operand = args[MATMULS[packet]]
            contraction = operand.shape[-1] if operand.dim() else 1
            outputs = _tensors([result])
            batch = operand.shape[0] if packet is aten.addbmm else 1
            self.matmul_work += sum(o.numel() for o in outputs) * contraction * batch
            if contraction == self.score_dim:  # a score tile: queries x keys, over d
                for out in outputs:
                    if out.dim() and out.shape[-1] > self.widest_tile:
                        self.widest_tile, self.widest_tile_shape = out.shape[-1], list(out.shape)
                    if out.dim() > 1 and out.shape[-2] > self.tallest_tile:
                        self.tallest_tile, self.tallest_tile_shape = out.shape[-2], list(out.shape)
        elif packet in EXPS or func is aten.pow.Scalar:
            operands = _tensors(list(args))
            self.exp_elements += operands[0].numel() if operands else 0
        storages = {_storage(t) for t in _tensors(list(args) + list(kwargs.values()))}
        for tensor in _tensors([result]):
            if tensor.numel() > self.largest and _storage(tensor) not in storages:
                self.largest, self.largest_op, self.largest_shape = tensor.numel(), str(packet), list(tensor.shape)
        return result


class Watch:
    """`with Watch(ops) as watch: entry(...)`, then `watch.record()`: plain data for the parent.

    `ops=False` records only the functions called: the dispatch mode costs ~0.1 ms per op, so it
    runs only on the cases that grade memory, skipping or tiles. `score_dim` (d, Q's last dim):
    matmuls contracting over it make score tiles, and the widest one's key extent and the
    tallest one's query extent are recorded.
    """

    def __init__(self, ops: bool = True, score_dim: int | None = None) -> None:
        self._calls, self._ops = _Calls(), _Ops(score_dim)
        self._watch_ops = ops

    def __enter__(self) -> Watch:
        self._calls.__enter__()
        if self._watch_ops:
            self._ops.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._watch_ops:
            self._ops.__exit__(*exc)
        self._calls.__exit__(*exc)

    @staticmethod
    def worst(records: list[dict]) -> dict:
        """One record for several calls: each measure at its largest over them (with the op
        and shapes that came with it), and every fused call and hidden function any made."""
        worst = dict(records[0])
        for record in records[1:]:
            for measure, company in (("largest", ("largest_op", "largest_shape")), ("matmul_work", ()),
                                     ("exp_elements", ()), ("widest_tile", ("widest_tile_shape",)),
                                     ("tallest_tile", ("tallest_tile_shape",))):
                if record[measure] > worst[measure]:
                    worst[measure] = record[measure]
                    worst.update({key: record[key] for key in company})
            for seen in ("fused", "hidden", "outside"):
                worst[seen] = (worst[seen] + [name for name in record[seen] if name not in worst[seen]])[:3]
        return worst

    def record(self) -> dict:
        ops = self._ops
        return {"fused": list(self._calls.fused[:3]), "largest": int(ops.largest),
                "largest_op": ops.largest_op.replace("aten.", "")[:80], "largest_shape": ops.largest_shape[:6],
                "matmul_work": int(ops.matmul_work), "exp_elements": int(ops.exp_elements),
                "widest_tile": int(ops.widest_tile), "widest_tile_shape": ops.widest_tile_shape[:6],
                "tallest_tile": int(ops.tallest_tile), "tallest_tile_shape": ops.tallest_tile_shape[:6],
                "hidden": list(ops.hidden), "outside": list(self._calls.outside[:3])}
