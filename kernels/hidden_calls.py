"""Calls hidden from a `TorchFunctionMode` watch (the fused-call and autograd checks).

`torch._C.DisableTorchFunction()` switches every function mode off, so a call made inside it is
never seen by name. Dispatch modes stay on: an aten op they see while torch functions are all
disabled comes from such a call. `torch._C.DisableTorchFunctionSubclass()` switches off tensor
subclasses only; the function modes still see what runs inside it, so it hides nothing.
No drill needs either, and PyTorch itself enters the first only in debugging tools.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

HIDDEN_BY = "torch._C.DisableTorchFunction()"


class HiddenCalls(TorchDispatchMode):
    """Records (up to three) aten ops run while torch functions are all disabled."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """No torch.compile runs here: without this, PyTorch wraps `__torch_dispatch__` in a
        dynamo guard that imports torch._dynamo on first use (seconds, in every sandboxed child)."""
        return False

    def __init__(self) -> None:
        super().__init__()
        self.hidden: list[str] = []

    def note(self, func) -> None:
        if torch._C._is_torch_function_all_disabled() and len(self.hidden) < 3:
            name = str(func.overloadpacket).replace("aten.", "")
            if name not in self.hidden:
                self.hidden.append(name)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.note(func)
        return func(*args, **(kwargs or {}))


def hidden_message(hidden: list[str], watched: str) -> str:
    """What a record with hidden ops says: which ops, and which check they were hidden from."""
    return (f"ran {', '.join(hidden)} inside {HIDDEN_BY}, which hides calls from the {watched}; "
            "call torch ops plainly")
